//===- normalization_ops.cc - ONNX BatchNormalization and friends -----------===//
//
// BatchNormalization (running statistics, or batch statistics in training
// mode), written out elementwise so both platforms fuse it; InstanceNormalization and
// LayerNormalization from reductions.
//
//===----------------------------------------------------------------------===//
#include "axle/frontends/graph/xla_op_registry.h"
#include "axle/frontends/onnx/kernels/kernel_util.h"
#include "axle/frontends/onnx/kernels/kernels.h"

namespace axle::onnx {
namespace {

class BatchNormOp : public XlaOpKernel {
 public:
  absl::Status Compile(XlaOpKernelContext* ctx) override {
    const Shape& x = ctx->InputShape(0);
    absl::StatusOr<float> epsilon = ctx->GetAttrFloat("epsilon", 1e-5f);
    if (!epsilon.ok()) return epsilon.status();
    absl::StatusOr<int64_t> training = ctx->GetAttrInt("training_mode", 0);
    if (!training.ok()) return training.status();
    if (ctx->opset() < 14 && ctx->HasOutput(1)) {
      return ctx->Unimplemented("training mode before opset 14 is not supported");
    }
    if (x.rank() < 2) return ctx->Error("X ", x.ToString(false), " must have rank >= 2");
    int64_t c = x.dimensions(1);
    for (int i = 1; i <= 4; ++i) {
      const Shape& s = ctx->InputShape(i);
      if (s.rank() != 1 || s.dimensions(0) != c) {
        return ctx->Error("input ", i, " of shape ", s.ToString(false), " must have ", c,
                          " elements (X is ", x.ToString(false), ")");
      }
    }
    PrimitiveType t = x.element_type();
    XlaBuilder* b = ctx->builder();
    auto channel = [&](XlaOp v) { return BroadcastInDim(v, x.dimensions(), {1}); };
    XlaOp mean = ctx->Input(3), var = ctx->Input(4);
    if (*training) {
      // Batch statistics (biased variance); outputs 1 and 2 are the running
      // statistics updated with momentum.
      absl::StatusOr<float> momentum = ctx->GetAttrFloat("momentum", 0.9f);
      if (!momentum.ok()) return momentum.status();
      std::vector<int64_t> axes = {0};
      int64_t count = x.dimensions(0);
      for (int64_t d = 2; d < x.rank(); ++d) {
        axes.push_back(d);
        count *= x.dimensions(d);
      }
      XlaComputation add = ReducerComputation(Reducer::kAdd, t);
      XlaOp n = ScalarLike(b, t, static_cast<double>(count));
      mean = Div(Reduce(ctx->Input(0), Zero(b, t), add, axes), n);
      XlaOp centered = Sub(ctx->Input(0), channel(mean));
      var = Div(Reduce(Mul(centered, centered), Zero(b, t), add, axes), n);
      XlaOp m = ScalarLike(b, t, *momentum), one_m = ScalarLike(b, t, 1.0 - *momentum);
      if (ctx->HasOutput(1)) ctx->SetOutput(1, Add(Mul(ctx->Input(3), m), Mul(mean, one_m)));
      if (ctx->HasOutput(2)) ctx->SetOutput(2, Add(Mul(ctx->Input(4), m), Mul(var, one_m)));
    } else {
      for (int i = 1; i < ctx->num_outputs(); ++i) {
        if (ctx->HasOutput(i)) return ctx->Error("outputs past Y need training_mode=1");
      }
    }
    XlaOp scale = Mul(ctx->Input(1), Rsqrt(Add(var, ScalarLike(b, t, *epsilon))));
    XlaOp shift = Sub(ctx->Input(2), Mul(mean, scale));
    ctx->SetOutput(0, Add(Mul(ctx->Input(0), channel(scale)), channel(shift)));
    return absl::OkStatus();
  }
};
REGISTER_XLA_OP(Name("BatchNormalization"), BatchNormOp);

// Normalizes over `axes` of x; returns (x - mean) / sqrt(var + eps).
XlaOp Normalize(XlaOp x, const Shape& shape, const std::vector<int64_t>& axes, float epsilon) {
  XlaBuilder* b = x.builder();
  PrimitiveType t = shape.element_type();
  std::vector<int64_t> kept;
  int64_t count = 1;
  for (int64_t d = 0; d < shape.rank(); ++d) {
    if (std::find(axes.begin(), axes.end(), d) == axes.end()) {
      kept.push_back(d);
    } else {
      count *= shape.dimensions(d);
    }
  }
  XlaComputation add = ReducerComputation(Reducer::kAdd, t);
  XlaOp n = ScalarLike(b, t, count);
  XlaOp mean = BroadcastInDim(Div(Reduce(x, Zero(b, t), add, axes), n), shape.dimensions(), kept);
  XlaOp centered = Sub(x, mean);
  XlaOp var = Div(Reduce(Mul(centered, centered), Zero(b, t), add, axes), n);
  XlaOp inv = Rsqrt(Add(var, ScalarLike(b, t, epsilon)));
  return Mul(centered, BroadcastInDim(inv, shape.dimensions(), kept));
}

class InstanceNormOp : public XlaOpKernel {
 public:
  absl::Status Compile(XlaOpKernelContext* ctx) override {
    const Shape& x = ctx->InputShape(0);
    absl::StatusOr<float> epsilon = ctx->GetAttrFloat("epsilon", 1e-5f);
    if (!epsilon.ok()) return epsilon.status();
    if (x.rank() < 3) return ctx->Error("X ", x.ToString(false), " must have rank >= 3");
    std::vector<int64_t> axes;
    for (int64_t d = 2; d < x.rank(); ++d) axes.push_back(d);
    XlaOp y = Normalize(ctx->Input(0), x, axes, *epsilon);
    y = Mul(y, BroadcastInDim(ctx->Input(1), x.dimensions(), {1}));
    ctx->SetOutput(0, Add(y, BroadcastInDim(ctx->Input(2), x.dimensions(), {1})));
    return absl::OkStatus();
  }
};
REGISTER_XLA_OP(Name("InstanceNormalization"), InstanceNormOp);

// LayerNormalization over the dimensions from `axis` on; the optional
// outputs Mean and InvStdDev keep the reduced dimensions as 1.
class LayerNormOp : public XlaOpKernel {
 public:
  absl::Status Compile(XlaOpKernelContext* ctx) override {
    const Shape& x = ctx->InputShape(0);
    absl::StatusOr<float> epsilon = ctx->GetAttrFloat("epsilon", 1e-5f);
    absl::StatusOr<int64_t> axis = ctx->GetAttrInt("axis", -1);
    if (!epsilon.ok()) return epsilon.status();
    if (!axis.ok()) return axis.status();
    absl::StatusOr<int64_t> a = NormalizeAxis(*ctx, *axis, x.rank());
    if (!a.ok()) return a.status();
    absl::StatusOr<std::vector<int64_t>> scaled = BroadcastShape(*ctx, {0, 1});
    if (!scaled.ok()) return scaled.status();
    if (*scaled != x.dimensions()) return ctx->Error("Scale does not broadcast to X");
    std::vector<int64_t> axes, kept, stat_dims;
    int64_t count = 1;
    for (int64_t d = 0; d < x.rank(); ++d) {
      if (d >= *a) {
        axes.push_back(d);
        count *= x.dimensions(d);
        stat_dims.push_back(1);
      } else {
        kept.push_back(d);
        stat_dims.push_back(x.dimensions(d));
      }
    }
    XlaBuilder* b = ctx->builder();
    PrimitiveType t = x.element_type();
    XlaComputation add = ReducerComputation(Reducer::kAdd, t);
    XlaOp n = ScalarLike(b, t, count);
    XlaOp in = ctx->Input(0);
    XlaOp mean = Div(Reduce(in, Zero(b, t), add, axes), n);
    XlaOp centered = Sub(in, BroadcastInDim(mean, x.dimensions(), kept));
    XlaOp var = Div(Reduce(Mul(centered, centered), Zero(b, t), add, axes), n);
    XlaOp inv = Rsqrt(Add(var, ScalarLike(b, t, *epsilon)));
    XlaOp y = Mul(centered, BroadcastInDim(inv, x.dimensions(), kept));
    y = Mul(y, BroadcastTo(ctx->Input(1), ctx->InputShape(1).dimensions(), x.dimensions()));
    if (ctx->HasInput(2)) {
      y = Add(y, BroadcastTo(ctx->Input(2), ctx->InputShape(2).dimensions(), x.dimensions()));
    }
    ctx->SetOutput(0, y);
    if (ctx->HasOutput(1)) ctx->SetOutput(1, Reshape(mean, stat_dims));
    if (ctx->HasOutput(2)) ctx->SetOutput(2, Reshape(inv, stat_dims));
    return absl::OkStatus();
  }
};
REGISTER_XLA_OP(Name("LayerNormalization"), LayerNormOp);

}  // namespace

AXLE_ONNX_KERNEL_FILE(normalization)

}  // namespace axle::onnx
