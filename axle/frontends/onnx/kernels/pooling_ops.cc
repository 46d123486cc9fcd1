//===- pooling_ops.cc - ONNX MaxPool, AveragePool and the global pools ------===//
#include "axle/frontends/graph/xla_op_registry.h"
#include "axle/frontends/onnx/kernels/kernel_util.h"
#include "axle/frontends/onnx/kernels/kernels.h"

namespace axle::onnx {
namespace {

// (v1, i1, v2, i2) -> the greater value with its index; the lower index on
// ties.
XlaComputation ArgMaxComputation(PrimitiveType type) {
  XlaBuilder b("argmax");
  Shape scalar = ShapeUtil::MakeScalarShape(type), index = ShapeUtil::MakeScalarShape(S64);
  XlaOp v1 = Parameter(&b, 0, scalar, "v1");
  XlaOp i1 = Parameter(&b, 1, index, "i1");
  XlaOp v2 = Parameter(&b, 2, scalar, "v2");
  XlaOp i2 = Parameter(&b, 3, index, "i2");
  XlaOp second = Or(Gt(v2, v1), And(Eq(v2, v1), Lt(i2, i1)));
  Tuple(&b, {Select(second, v2, v1), Select(second, i2, i1)});
  return b.BuildAndNoteError();
}

// MaxPool's Indices: each element's offset in the flattened input (NCHW
// order; with `column_major`, the last two dimensions swapped).
XlaOp FlatIndices(XlaBuilder* b, const std::vector<int64_t>& dims, bool column_major) {
  Shape s = ShapeUtil::MakeShape(S64, dims);
  int64_t r = static_cast<int64_t>(dims.size());
  std::vector<int64_t> order(r);
  for (int64_t d = 0; d < r; ++d) order[d] = d;
  if (column_major) std::swap(order[r - 1], order[r - 2]);
  XlaOp idx = Broadcast(ConstantR0<int64_t>(b, 0), dims);
  for (int64_t d : order) {
    idx = Add(Mul(idx, Broadcast(ConstantR0<int64_t>(b, dims[d]), dims)), Iota(b, s, d));
  }
  return idx;
}

template <bool kMax>
class PoolOp : public XlaOpKernel {
 public:
  absl::Status Compile(XlaOpKernelContext* ctx) override {
    const Shape& x = ctx->InputShape(0);
    if (x.rank() < 3) return ctx->Error("X ", x.ToString(false), " must have rank >= 3");
    std::vector<int64_t> spatial(x.dimensions().begin() + 2, x.dimensions().end());
    absl::StatusOr<WindowAttrs> w = GetWindowAttrs(*ctx, spatial, nullptr);
    if (!w.ok()) return w.status();
    if (absl::Status fits = CheckWindowFitsInput(*ctx, spatial, *w); !fits.ok()) return fits;
    absl::StatusOr<int64_t> ceil_mode = ctx->GetAttrInt("ceil_mode", 0);
    absl::StatusOr<int64_t> include_pad = ctx->GetAttrInt("count_include_pad", 0);
    if (!ceil_mode.ok()) return ceil_mode.status();
    if (!include_pad.ok()) return include_pad.status();
    size_t n = spatial.size();
    std::vector<int64_t> dims = {1, 1}, strides = {1, 1}, dilations = {1, 1}, base = {1, 1, 1};
    base.resize(n + 2, 1);
    std::vector<std::pair<int64_t, int64_t>> pads = {{0, 0}, {0, 0}};
    for (size_t i = 0; i < n; ++i) {
      dims.push_back(w->kernel[i]);
      strides.push_back(w->strides[i]);
      dilations.push_back(w->dilations[i]);
      auto pad = w->pads[i];
      if (*ceil_mode) {
        int64_t effective = (w->kernel[i] - 1) * w->dilations[i] + 1;
        int64_t span = spatial[i] + pad.first + pad.second - effective;
        int64_t out = (span + w->strides[i] - 1) / w->strides[i] + 1;
        // The last window must start inside the input or the low padding.
        if ((out - 1) * w->strides[i] >= spatial[i] + pad.first) --out;
        pad.second =
            std::max(pad.second, (out - 1) * w->strides[i] + effective - spatial[i] - pad.first);
      }
      pads.push_back(pad);
    }
    PrimitiveType t = x.element_type();
    XlaBuilder* b = ctx->builder();
    XlaOp in = ctx->Input(0);
    if (kMax && ctx->HasOutput(1)) {
      absl::StatusOr<int64_t> storage_order = ctx->GetAttrInt("storage_order", 0);
      if (!storage_order.ok()) return storage_order.status();
      if (*storage_order != 0 && (*storage_order != 1 || n != 2)) {
        return ctx->Unimplemented("attribute 'storage_order' = ", *storage_order,
                                  " is not supported for ", n, " spatial dimensions");
      }
      XlaOp idx = FlatIndices(b, x.dimensions(), *storage_order == 1);
      XlaOp pooled = ReduceWindowWithGeneralPadding(
          {in, idx}, {ReducerInit(b, Reducer::kMax, t), ConstantR0<int64_t>(b, -1)},
          ArgMaxComputation(t), dims, strides, base, dilations, pads);
      ctx->SetOutput(0, GetTupleElement(pooled, 0));
      ctx->SetOutput(1, GetTupleElement(pooled, 1));
      return absl::OkStatus();
    }
    if (kMax) {
      ctx->SetOutput(0, ReduceWindowWithGeneralPadding(in, ReducerInit(b, Reducer::kMax, t),
                                                       ReducerComputation(Reducer::kMax, t), dims,
                                                       strides, base, dilations, pads));
      return absl::OkStatus();
    }
    XlaOp sum = ReduceWindowWithGeneralPadding(in, Zero(b, t), ReducerComputation(Reducer::kAdd, t),
                                               dims, strides, base, dilations, pads);
    // Without padding (none given, none added by ceil_mode) every window
    // lies inside the input, so its count is the kernel's size too: a
    // scalar divisor, which the channels-last transposes around the pool
    // move past (reshape_mover.h) where an array of counts would stop them.
    bool padded = false;
    for (const auto& pad : pads) padded |= pad.first != 0 || pad.second != 0;
    if ((*include_pad && !*ceil_mode) || !padded) {
      int64_t count = 1;
      for (int64_t k : w->kernel) count *= k;
      ctx->SetOutput(0, Div(sum, ScalarLike(b, t, count)));
      return absl::OkStatus();
    }
    // The number of input (or, with count_include_pad, explicitly padded)
    // elements under each window.
    std::vector<int64_t> ones_dims = x.dimensions();
    std::vector<std::pair<int64_t, int64_t>> count_pads = pads;
    if (*include_pad) {
      for (size_t i = 0; i < n; ++i) {
        ones_dims[2 + i] += w->pads[i].first + w->pads[i].second;
        count_pads[2 + i] = {0, pads[2 + i].second - w->pads[i].second};
      }
    }
    XlaOp ones = Broadcast(ScalarLike(b, t, 1), ones_dims);
    XlaOp counts =
        ReduceWindowWithGeneralPadding(ones, Zero(b, t), ReducerComputation(Reducer::kAdd, t), dims,
                                       strides, base, dilations, count_pads);
    ctx->SetOutput(0, Div(sum, counts));
    return absl::OkStatus();
  }
};
REGISTER_XLA_OP(Name("MaxPool"), PoolOp<true>);
REGISTER_XLA_OP(Name("AveragePool"), PoolOp<false>);

template <bool kMax>
class GlobalPoolOp : public XlaOpKernel {
 public:
  absl::Status Compile(XlaOpKernelContext* ctx) override {
    const Shape& x = ctx->InputShape(0);
    if (x.rank() < 3) return ctx->Error("X ", x.ToString(false), " must have rank >= 3");
    std::vector<int64_t> reduce, out = {x.dimensions(0), x.dimensions(1)};
    int64_t count = 1;
    for (int64_t d = 2; d < x.rank(); ++d) {
      reduce.push_back(d);
      out.push_back(1);
      count *= x.dimensions(d);
    }
    PrimitiveType t = x.element_type();
    XlaBuilder* b = ctx->builder();
    Reducer r = kMax ? Reducer::kMax : Reducer::kAdd;
    XlaOp y = Reduce(ctx->Input(0), ReducerInit(b, r, t), ReducerComputation(r, t), reduce);
    if (!kMax) y = Div(y, ScalarLike(b, t, count));
    ctx->SetOutput(0, Reshape(y, out));
    return absl::OkStatus();
  }
};
REGISTER_XLA_OP(Name("GlobalMaxPool"), GlobalPoolOp<true>);
REGISTER_XLA_OP(Name("GlobalAveragePool"), GlobalPoolOp<false>);

}  // namespace

AXLE_ONNX_KERNEL_FILE(pooling)

}  // namespace axle::onnx
