//===- loss_ops.cc - ONNX NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss -===//
//
// The class picked per element by a one-hot mask (iota == target) rather
// than a gather, so out-of-range ignore_index values need no clamping.
//
//===----------------------------------------------------------------------===//
#include "axle/frontends/graph/xla_op_registry.h"
#include "axle/frontends/onnx/kernels/kernel_util.h"
#include "axle/frontends/onnx/kernels/kernels.h"

namespace axle::onnx {
namespace {

// NLL of `log_prob` [N, C, d...] at `target` [N, d...] (input indices
// `target_index` and `weight_index` of the node, -1: no weight).
absl::Status NllLoss(XlaOpKernelContext* ctx, XlaOp log_prob, const Shape& shape, int target_index,
                     int weight_index) {
  absl::StatusOr<std::string> reduction = ctx->GetAttrString("reduction", "mean");
  if (!reduction.ok()) return reduction.status();
  if (*reduction != "none" && *reduction != "sum" && *reduction != "mean") {
    return ctx->Error("reduction '", *reduction, "' is not one of none, sum, mean");
  }
  const Shape& target = ctx->InputShape(target_index);
  if (shape.rank() < 2 || target.rank() != shape.rank() - 1 ||
      target.dimensions(0) != shape.dimensions(0) ||
      !primitive_util::IsIntegralType(target.element_type())) {
    return ctx->Error("input ", shape.ToString(false), " and target ", target.ToString(false),
                      " do not match ([N, C, d...] and integer [N, d...])");
  }
  for (int64_t d = 1; d < target.rank(); ++d) {
    if (target.dimensions(d) != shape.dimensions(d + 1)) {
      return ctx->Error("target ", target.ToString(false), " does not match input ",
                        shape.ToString(false));
    }
  }
  XlaBuilder* b = ctx->builder();
  PrimitiveType t = shape.element_type();
  PrimitiveType it = target.element_type();
  std::vector<int64_t> target_dims = {0};
  for (int64_t d = 1; d < target.rank(); ++d) target_dims.push_back(d + 1);
  XlaOp labels = ctx->Input(target_index);
  XlaOp hot = Eq(Iota(b, ShapeUtil::MakeShape(it, shape.dimensions()), 1),
                 BroadcastInDim(labels, shape.dimensions(), target_dims));
  XlaOp zeros = Broadcast(Zero(b, t), shape.dimensions());
  XlaComputation add = ReducerComputation(Reducer::kAdd, t);
  XlaOp picked = Reduce(Select(hot, log_prob, zeros), Zero(b, t), add, {1});
  XlaOp weight;
  if (weight_index >= 0 && ctx->HasInput(weight_index)) {
    XlaOp w = BroadcastInDim(ctx->Input(weight_index), shape.dimensions(), {1});
    weight = Reduce(Select(hot, w, zeros), Zero(b, t), add, {1});
  } else {
    weight = Broadcast(One(b, t), target.dimensions());
  }
  if (ctx->HasAttr("ignore_index")) {
    absl::StatusOr<int64_t> ignore = ctx->GetAttrInt("ignore_index");
    if (!ignore.ok()) return ignore.status();
    XlaOp keep = Ne(labels, ScalarLike(b, it, *ignore));
    weight = Select(keep, weight, Broadcast(Zero(b, t), target.dimensions()));
  }
  XlaOp loss = Neg(Mul(picked, weight));
  std::vector<int64_t> all(target.rank());
  for (int64_t d = 0; d < target.rank(); ++d) all[d] = d;
  if (*reduction == "sum") {
    loss = Reduce(loss, Zero(b, t), add, all);
  } else if (*reduction == "mean") {
    loss = Div(Reduce(loss, Zero(b, t), add, all), Reduce(weight, Zero(b, t), add, all));
  }
  ctx->SetOutput(0, loss);
  return absl::OkStatus();
}

class NllLossOp : public XlaOpKernel {
 public:
  absl::Status Compile(XlaOpKernelContext* ctx) override {
    return NllLoss(ctx, ctx->Input(0), ctx->InputShape(0), 1, 2);
  }
};
REGISTER_XLA_OP(Name("NegativeLogLikelihoodLoss"), NllLossOp);

class SoftmaxCrossEntropyLossOp : public XlaOpKernel {
 public:
  absl::Status Compile(XlaOpKernelContext* ctx) override {
    const Shape& shape = ctx->InputShape(0);
    if (shape.rank() < 2) return ctx->Error("scores ", shape.ToString(false), " need rank >= 2");
    XlaBuilder* b = ctx->builder();
    PrimitiveType t = shape.element_type();
    XlaOp x = ctx->Input(0);
    std::vector<int64_t> kept;
    for (int64_t d = 0; d < shape.rank(); ++d) {
      if (d != 1) kept.push_back(d);
    }
    XlaOp max =
        Reduce(x, ReducerInit(b, Reducer::kMax, t), ReducerComputation(Reducer::kMax, t), {1});
    XlaOp shifted = Sub(x, BroadcastInDim(max, shape.dimensions(), kept));
    XlaOp sum = Reduce(Exp(shifted), Zero(b, t), ReducerComputation(Reducer::kAdd, t), {1});
    XlaOp log_prob = Sub(shifted, BroadcastInDim(Log(sum), shape.dimensions(), kept));
    if (absl::Status s = NllLoss(ctx, log_prob, shape, 1, 2); !s.ok()) return s;
    if (ctx->HasOutput(1)) ctx->SetOutput(1, log_prob);
    return absl::OkStatus();
  }
};
REGISTER_XLA_OP(Name("SoftmaxCrossEntropyLoss"), SoftmaxCrossEntropyLossOp);

}  // namespace

AXLE_ONNX_KERNEL_FILE(loss)

}  // namespace axle::onnx
