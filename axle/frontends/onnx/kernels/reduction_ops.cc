//===- reduction_ops.cc - ONNX Reduce* and ArgMax / ArgMin ------------------===//
#include "axle/frontends/graph/xla_op_registry.h"
#include "axle/frontends/onnx/kernels/kernel_util.h"
#include "axle/frontends/onnx/kernels/kernels.h"

namespace axle::onnx {
namespace {

enum class ReduceKind { kSum, kMean, kMax, kMin, kProd, kL1, kL2, kLogSum, kLogSumExp, kSumSquare };

// ReduceSum takes its axes as an input from opset 13, the others from 18.
template <ReduceKind kKind, int64_t kAxesInputSince>
class ReduceOp : public XlaOpKernel {
 public:
  absl::Status Compile(XlaOpKernelContext* ctx) override {
    const Shape& shape = ctx->InputShape(0);
    int64_t rank = shape.rank();
    absl::StatusOr<int64_t> keepdims = ctx->GetAttrInt("keepdims", 1);
    absl::StatusOr<int64_t> noop = ctx->GetAttrInt("noop_with_empty_axes", 0);
    if (!keepdims.ok()) return keepdims.status();
    if (!noop.ok()) return noop.status();
    std::vector<int64_t> axes;
    if (ctx->opset() < kAxesInputSince) {
      if (ctx->HasAttr("axes")) {
        absl::StatusOr<std::vector<int64_t>> v = ctx->GetAttrInts("axes");
        if (!v.ok()) return v.status();
        axes = *v;
      }
    } else if (ctx->HasInput(1)) {
      absl::StatusOr<std::vector<int64_t>> v = ctx->ConstantInputAsIntVector(1);
      if (!v.ok()) return v.status();
      axes = *v;
    }
    XlaOp x = ctx->Input(0);
    if (axes.empty() && *noop) {
      ctx->SetOutput(0, x);
      return absl::OkStatus();
    }
    std::vector<bool> reduced(rank, axes.empty());
    for (int64_t axis : axes) {
      absl::StatusOr<int64_t> a = NormalizeAxis(*ctx, axis, rank);
      if (!a.ok()) return a.status();
      reduced[*a] = true;
    }
    std::vector<int64_t> dims, kept_shape, keep_shape;
    int64_t count = 1;
    for (int64_t d = 0; d < rank; ++d) {
      if (reduced[d]) {
        dims.push_back(d);
        count *= shape.dimensions(d);
        keep_shape.push_back(1);
      } else {
        kept_shape.push_back(shape.dimensions(d));
        keep_shape.push_back(shape.dimensions(d));
      }
    }
    PrimitiveType t = shape.element_type();
    XlaBuilder* b = ctx->builder();
    Reducer r = Reducer::kAdd;
    if (kKind == ReduceKind::kMax) r = Reducer::kMax;
    if (kKind == ReduceKind::kMin) r = Reducer::kMin;
    if (kKind == ReduceKind::kProd) r = Reducer::kMul;
    if (kKind == ReduceKind::kL1) x = Abs(x);
    if (kKind == ReduceKind::kL2 || kKind == ReduceKind::kSumSquare) x = Mul(x, x);
    XlaOp max;
    if (kKind == ReduceKind::kLogSumExp) {
      max = Reduce(x, ReducerInit(b, Reducer::kMax, t), ReducerComputation(Reducer::kMax, t), dims);
      std::vector<int64_t> kept_dims;
      for (int64_t d = 0; d < rank; ++d) {
        if (!reduced[d]) kept_dims.push_back(d);
      }
      // An all -inf row stays -inf instead of becoming NaN.
      max = Select(IsFinite(max), max, Broadcast(Zero(b, t), kept_shape));
      x = Exp(Sub(x, BroadcastInDim(max, shape.dimensions(), kept_dims)));
    }
    XlaOp y = Reduce(x, ReducerInit(b, r, t), ReducerComputation(r, t), dims);
    if (kKind == ReduceKind::kMean) y = Div(y, ScalarLike(b, t, count));
    if (kKind == ReduceKind::kL2) y = Sqrt(y);
    if (kKind == ReduceKind::kLogSum) y = Log(y);
    if (kKind == ReduceKind::kLogSumExp) y = Add(Log(y), max);
    ctx->SetOutput(0, *keepdims ? Reshape(y, keep_shape) : y);
    return absl::OkStatus();
  }
};
REGISTER_XLA_OP(Name("ReduceSum").CompileTimeConstantInput(1), ReduceOp<ReduceKind::kSum, 13>);
REGISTER_XLA_OP(Name("ReduceMean").CompileTimeConstantInput(1), ReduceOp<ReduceKind::kMean, 18>);
REGISTER_XLA_OP(Name("ReduceMax").CompileTimeConstantInput(1), ReduceOp<ReduceKind::kMax, 18>);
REGISTER_XLA_OP(Name("ReduceMin").CompileTimeConstantInput(1), ReduceOp<ReduceKind::kMin, 18>);
REGISTER_XLA_OP(Name("ReduceProd").CompileTimeConstantInput(1), ReduceOp<ReduceKind::kProd, 18>);
REGISTER_XLA_OP(Name("ReduceL1").CompileTimeConstantInput(1), ReduceOp<ReduceKind::kL1, 18>);
REGISTER_XLA_OP(Name("ReduceL2").CompileTimeConstantInput(1), ReduceOp<ReduceKind::kL2, 18>);
REGISTER_XLA_OP(Name("ReduceLogSum").CompileTimeConstantInput(1),
                ReduceOp<ReduceKind::kLogSum, 18>);
REGISTER_XLA_OP(Name("ReduceLogSumExp").CompileTimeConstantInput(1),
                ReduceOp<ReduceKind::kLogSumExp, 18>);
REGISTER_XLA_OP(Name("ReduceSumSquare").CompileTimeConstantInput(1),
                ReduceOp<ReduceKind::kSumSquare, 18>);

// The index of the first (or, with select_last_index, last) extreme value.
template <bool kMax>
class ArgOp : public XlaOpKernel {
 public:
  absl::Status Compile(XlaOpKernelContext* ctx) override {
    const Shape& shape = ctx->InputShape(0);
    absl::StatusOr<int64_t> axis = ctx->GetAttrInt("axis", 0);
    absl::StatusOr<int64_t> keepdims = ctx->GetAttrInt("keepdims", 1);
    absl::StatusOr<int64_t> last = ctx->GetAttrInt("select_last_index", 0);
    for (const absl::Status& s : {axis.status(), keepdims.status(), last.status()}) {
      if (!s.ok()) return s;
    }
    absl::StatusOr<int64_t> a = NormalizeAxis(*ctx, *axis, shape.rank());
    if (!a.ok()) return a.status();
    PrimitiveType t = shape.element_type();
    XlaBuilder* b = ctx->builder();
    Reducer r = kMax ? Reducer::kMax : Reducer::kMin;
    XlaOp x = ctx->Input(0);
    std::vector<int64_t> kept_dims, kept_shape, keep_shape;
    for (int64_t d = 0; d < shape.rank(); ++d) {
      keep_shape.push_back(d == *a ? 1 : shape.dimensions(d));
      if (d == *a) continue;
      kept_dims.push_back(d);
      kept_shape.push_back(shape.dimensions(d));
    }
    XlaOp extreme = Reduce(x, ReducerInit(b, r, t), ReducerComputation(r, t), {*a});
    XlaOp hit = Eq(x, BroadcastInDim(extreme, shape.dimensions(), kept_dims));
    Shape index_shape = ShapeUtil::MakeShape(S64, shape.dimensions());
    XlaOp iota = Iota(b, index_shape, *a);
    XlaOp y;
    if (*last) {
      XlaOp none = Broadcast(ConstantR0<int64_t>(b, -1), shape.dimensions());
      y = Reduce(Select(hit, iota, none), ConstantR0<int64_t>(b, -1),
                 ReducerComputation(Reducer::kMax, S64), {*a});
    } else {
      XlaOp none = Broadcast(ConstantR0<int64_t>(b, shape.dimensions(*a)), shape.dimensions());
      y = Reduce(Select(hit, iota, none), ConstantR0<int64_t>(b, shape.dimensions(*a)),
                 ReducerComputation(Reducer::kMin, S64), {*a});
    }
    ctx->SetOutput(0, *keepdims ? Reshape(y, keep_shape) : y);
    return absl::OkStatus();
  }
};
REGISTER_XLA_OP(Name("ArgMax"), ArgOp<true>);
REGISTER_XLA_OP(Name("ArgMin"), ArgOp<false>);

}  // namespace

AXLE_ONNX_KERNEL_FILE(reduction)

}  // namespace axle::onnx
