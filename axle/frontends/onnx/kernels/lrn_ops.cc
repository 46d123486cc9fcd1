//===- lrn_ops.cc - ONNX LRN and MeanVarianceNormalization ------------------===//
//
// LRN: a channel-window sum of squares (ReduceWindow) scaling x.
// MeanVarianceNormalization: (x - E[x]) / (sqrt(E[x^2] - E[x]^2) + 1e-9)
// over `axes`, as ONNX's function body defines it.
//
//===----------------------------------------------------------------------===//
#include "axle/frontends/graph/xla_op_registry.h"
#include "axle/frontends/onnx/kernels/kernel_util.h"
#include "axle/frontends/onnx/kernels/kernels.h"

namespace axle::onnx {
namespace {

class LrnOp : public XlaOpKernel {
 public:
  absl::Status Compile(XlaOpKernelContext* ctx) override {
    const Shape& x = ctx->InputShape(0);
    if (x.rank() < 3 || !IsFloat(x.element_type())) {
      return ctx->Error("X ", x.ToString(false), " must be floating-point of rank >= 3");
    }
    absl::StatusOr<int64_t> size = ctx->GetAttrInt("size");
    absl::StatusOr<float> alpha = ctx->GetAttrFloat("alpha", 1e-4f);
    absl::StatusOr<float> beta = ctx->GetAttrFloat("beta", 0.75f);
    absl::StatusOr<float> bias = ctx->GetAttrFloat("bias", 1.0f);
    for (const absl::Status& s : {size.status(), alpha.status(), beta.status(), bias.status()}) {
      if (!s.ok()) return s;
    }
    if (*size < 1) return ctx->Error("attribute 'size' must be positive, got ", *size);
    PrimitiveType t = x.element_type();
    XlaBuilder* b = ctx->builder();
    const std::vector<int64_t>& dims = x.dimensions();
    std::vector<int64_t> window(x.rank(), 1), strides(x.rank(), 1);
    std::vector<std::pair<int64_t, int64_t>> pads(x.rank(), {0, 0});
    window[1] = *size;
    pads[1] = {(*size - 1) / 2, *size / 2};
    XlaOp in = ctx->Input(0);
    XlaOp sum = ReduceWindowWithGeneralPadding(Mul(in, in), Zero(b, t),
                                               ReducerComputation(Reducer::kAdd, t), window,
                                               strides, {}, {}, pads);
    auto c = [&](double v) { return Broadcast(ScalarLike(b, t, v), dims); };
    XlaOp denom = Pow(Add(c(*bias), Mul(c(*alpha / static_cast<double>(*size)), sum)), c(*beta));
    ctx->SetOutput(0, Div(in, denom));
    return absl::OkStatus();
  }
};
REGISTER_XLA_OP(Name("LRN"), LrnOp);

class MeanVarianceNormalizationOp : public XlaOpKernel {
 public:
  absl::Status Compile(XlaOpKernelContext* ctx) override {
    const Shape& x = ctx->InputShape(0);
    if (!IsFloat(x.element_type())) return ctx->Error("X must be floating-point");
    std::vector<int64_t> axes = {0, 2, 3};
    if (ctx->HasAttr("axes")) {
      absl::StatusOr<std::vector<int64_t>> v = ctx->GetAttrInts("axes");
      if (!v.ok()) return v.status();
      axes = *v;
    }
    int64_t count = 1;
    std::vector<int64_t> kept;
    for (int64_t& a : axes) {
      absl::StatusOr<int64_t> n = NormalizeAxis(*ctx, a, x.rank());
      if (!n.ok()) return n.status();
      a = *n;
      count *= x.dimensions(a);
    }
    for (int64_t d = 0; d < x.rank(); ++d) {
      if (std::find(axes.begin(), axes.end(), d) == axes.end()) kept.push_back(d);
    }
    PrimitiveType t = x.element_type();
    XlaBuilder* b = ctx->builder();
    const std::vector<int64_t>& dims = x.dimensions();
    XlaComputation add = ReducerComputation(Reducer::kAdd, t);
    XlaOp n = ScalarLike(b, t, static_cast<double>(count));
    auto mean = [&](XlaOp v) {
      return BroadcastInDim(Div(Reduce(v, Zero(b, t), add, axes), n), dims, kept);
    };
    XlaOp in = ctx->Input(0);
    XlaOp m = mean(in);
    XlaOp std_dev = Sqrt(Sub(mean(Mul(in, in)), Mul(m, m)));
    XlaOp eps = Broadcast(ScalarLike(b, t, 1e-9), dims);
    ctx->SetOutput(0, Div(Sub(in, m), Add(std_dev, eps)));
    return absl::OkStatus();
  }
};
REGISTER_XLA_OP(Name("MeanVarianceNormalization"), MeanVarianceNormalizationOp);

}  // namespace

AXLE_ONNX_KERNEL_FILE(lrn)

}  // namespace axle::onnx
