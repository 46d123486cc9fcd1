//===- unpool_ops.cc - ONNX MaxUnpool ---------------------------------------===//
//
// MaxUnpool: X's values scattered into a zero tensor of the output shape at
// MaxPool's flat indices I (offsets in the whole output, NCHW order). The
// output shape is output_shape when given (coordinates kept), else the
// inverse of the pool's window arithmetic.
//
//===----------------------------------------------------------------------===//
#include "absl/strings/str_join.h"
#include "axle/frontends/graph/xla_op_registry.h"
#include "axle/frontends/onnx/kernels/kernel_util.h"
#include "axle/frontends/onnx/kernels/kernels.h"

namespace axle::onnx {
namespace {

class MaxUnpoolOp : public XlaOpKernel {
 public:
  absl::Status Compile(XlaOpKernelContext* ctx) override {
    const Shape& x = ctx->InputShape(0);
    const Shape& idx = ctx->InputShape(1);
    if (x.rank() < 3 || idx.dimensions() != x.dimensions() ||
        !primitive_util::IsIntegralType(idx.element_type())) {
      return ctx->Error("X ", x.ToString(false), " (rank >= 3) and I ", idx.ToString(false),
                        " (integers) must have one shape");
    }
    std::vector<int64_t> spatial(x.dimensions().begin() + 2, x.dimensions().end());
    absl::StatusOr<WindowAttrs> w = GetWindowAttrs(*ctx, spatial, nullptr);
    if (!w.ok()) return w.status();
    std::vector<int64_t> out = {x.dimensions(0), x.dimensions(1)};
    for (size_t i = 0; i < spatial.size(); ++i) {
      out.push_back((spatial[i] - 1) * w->strides[i] + w->kernel[i] - w->pads[i].first -
                    w->pads[i].second);
    }
    std::vector<int64_t> inferred = out;
    if (ctx->HasInput(2)) {
      absl::StatusOr<std::vector<int64_t>> shape = ctx->ConstantInputAsIntVector(2);
      if (!shape.ok()) return shape.status();
      if (static_cast<int64_t>(shape->size()) != x.rank() || (*shape)[0] != out[0] ||
          (*shape)[1] != out[1]) {
        return ctx->Error("output_shape [", absl::StrJoin(*shape, ","),
                          "] must keep the batch and channels of X ", x.ToString(false));
      }
      out = *shape;
    }
    // I holds offsets in the inferred shape; an explicit output_shape keeps
    // each element's coordinates (the extra space is padding at the end).
    XlaBuilder* b = ctx->builder();
    XlaOp flat_idx = ConvertElementType(ctx->Input(1), S64);
    if (out != inferred) {
      const std::vector<int64_t>& dims = x.dimensions();
      auto k = [&](int64_t v) { return Broadcast(ConstantR0<int64_t>(b, v), dims); };
      XlaOp rest = flat_idx, remapped = k(0), scale = k(1);
      for (int64_t d = x.rank() - 1; d >= 0; --d) {
        XlaOp coord = d == 0 ? rest : Rem(rest, k(inferred[d]));
        rest = Div(rest, k(inferred[d]));
        remapped = Add(remapped, Mul(coord, scale));
        scale = Mul(scale, k(out[d]));
      }
      flat_idx = remapped;
    }
    int64_t total = 1;
    for (int64_t d : out) total *= d;
    PrimitiveType t = x.element_type();
    int64_t count = x.num_elements();
    flat_idx = Reshape(flat_idx, {count, 1});
    XlaOp values = Reshape(ctx->Input(0), {count});
    ScatterDimensionNumbers dnums;
    dnums.add_inserted_window_dims(0);
    dnums.add_scatter_dims_to_operand_dims(0);
    dnums.set_index_vector_dim(1);
    XlaBuilder assign("assign");
    Shape scalar = ShapeUtil::MakeScalarShape(t);
    Parameter(&assign, 0, scalar, "old");
    Parameter(&assign, 1, scalar, "new");
    absl::StatusOr<XlaComputation> update = assign.Build();
    if (!update.ok()) return update.status();
    XlaOp y = Scatter(Broadcast(Zero(b, t), {total}), flat_idx, values, *update, dnums);
    ctx->SetOutput(0, Reshape(y, out));
    return absl::OkStatus();
  }
};
REGISTER_XLA_OP(Name("MaxUnpool").SinceVersion(9).CompileTimeConstantInput(2), MaxUnpoolOp);

}  // namespace

AXLE_ONNX_KERNEL_FILE(unpool)

}  // namespace axle::onnx
