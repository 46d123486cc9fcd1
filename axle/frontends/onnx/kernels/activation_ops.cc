//===- activation_ops.cc - ONNX activations, Softmax and LogSoftmax ---------===//
#include "axle/frontends/graph/xla_op_registry.h"
#include "axle/frontends/onnx/kernels/kernel_util.h"
#include "axle/frontends/onnx/kernels/kernels.h"

namespace axle::onnx {
namespace {

// Activations of one input with optional float attributes alpha / beta.
class ActivationOp : public XlaOpKernel {
 public:
  absl::Status Compile(XlaOpKernelContext* ctx) override {
    const std::string& op = ctx->node().op_type;
    XlaOp x = ctx->Input(0);
    XlaBuilder* b = ctx->builder();
    PrimitiveType t = ctx->InputType(0);
    auto c = [&](double v) { return ScalarLike(b, t, v); };
    auto attr = [&](const char* name, float def) { return ctx->GetAttrFloat(name, def); };
    absl::StatusOr<float> alpha = 0, beta = 0, gamma = 0;
    XlaOp y;
    if (op == "Relu") {
      y = Max(x, c(0));
    } else if (op == "Sigmoid") {
      y = Logistic(x);
    } else if (op == "Tanh") {
      y = Tanh(x);
    } else if (op == "LeakyRelu") {
      if (!(alpha = attr("alpha", 0.01f)).ok()) return alpha.status();
      y = Select(Ge(x, c(0)), x, Mul(x, c(*alpha)));
    } else if (op == "Elu") {
      if (!(alpha = attr("alpha", 1.0f)).ok()) return alpha.status();
      y = Select(Ge(x, c(0)), x, Mul(c(*alpha), Expm1(x)));
    } else if (op == "Selu") {
      if (!(alpha = attr("alpha", 1.67326319217681884765625f)).ok()) return alpha.status();
      if (!(gamma = attr("gamma", 1.05070102214813232421875f)).ok()) return gamma.status();
      y = Mul(c(*gamma), Select(Gt(x, c(0)), x, Mul(c(*alpha), Expm1(x))));
    } else if (op == "ThresholdedRelu") {
      if (!(alpha = attr("alpha", 1.0f)).ok()) return alpha.status();
      y = Select(Gt(x, c(*alpha)), x, Broadcast(c(0), ctx->InputShape(0).dimensions()));
    } else if (op == "Softplus") {
      y = Log1p(Exp(x));
    } else if (op == "Softsign") {
      y = Div(x, Add(c(1), Abs(x)));
    } else if (op == "HardSigmoid") {
      if (!(alpha = attr("alpha", 0.2f)).ok()) return alpha.status();
      if (!(beta = attr("beta", 0.5f)).ok()) return beta.status();
      y = Clamp(c(0), Add(Mul(c(*alpha), x), c(*beta)), c(1));
    } else if (op == "HardSwish") {
      y = Mul(x, Clamp(c(0), Add(Mul(c(1.0 / 6), x), c(0.5)), c(1)));
    } else if (op == "Celu") {
      if (!(alpha = attr("alpha", 1.0f)).ok()) return alpha.status();
      y = Add(Max(c(0), x), Min(c(0), Mul(c(*alpha), Expm1(Div(x, c(*alpha))))));
    } else if (op == "Shrink") {
      absl::StatusOr<float> lambd = attr("lambd", 0.5f);
      if (!lambd.ok()) return lambd.status();
      if (!(beta = attr("bias", 0.0f)).ok()) return beta.status();
      XlaOp zero = Broadcast(c(0), ctx->InputShape(0).dimensions());
      y = Select(Lt(x, c(-*lambd)), Add(x, c(*beta)),
                 Select(Gt(x, c(*lambd)), Sub(x, c(*beta)), zero));
    } else if (op == "Mish") {
      y = Mul(x, Tanh(Log1p(Exp(x))));
    } else {
      return ctx->Unimplemented("no activation named ", op);
    }
    ctx->SetOutput(0, y);
    return absl::OkStatus();
  }
};
REGISTER_XLA_OP(Name("Relu"), ActivationOp);
REGISTER_XLA_OP(Name("Sigmoid"), ActivationOp);
REGISTER_XLA_OP(Name("Tanh"), ActivationOp);
REGISTER_XLA_OP(Name("LeakyRelu"), ActivationOp);
REGISTER_XLA_OP(Name("Elu"), ActivationOp);
REGISTER_XLA_OP(Name("Selu"), ActivationOp);
REGISTER_XLA_OP(Name("ThresholdedRelu"), ActivationOp);
REGISTER_XLA_OP(Name("Softplus"), ActivationOp);
REGISTER_XLA_OP(Name("Softsign"), ActivationOp);
REGISTER_XLA_OP(Name("HardSigmoid"), ActivationOp);
REGISTER_XLA_OP(Name("HardSwish"), ActivationOp);
REGISTER_XLA_OP(Name("Celu"), ActivationOp);
REGISTER_XLA_OP(Name("Mish"), ActivationOp);
REGISTER_XLA_OP(Name("Shrink"), ActivationOp);

class PReluOp : public XlaOpKernel {
 public:
  absl::Status Compile(XlaOpKernelContext* ctx) override {
    absl::StatusOr<std::vector<XlaOp>> ops = BroadcastInputs(ctx, {0, 1});
    if (!ops.ok()) return ops.status();
    XlaOp x = (*ops)[0];
    XlaOp zero = ScalarLike(ctx->builder(), ctx->InputType(0), 0);
    ctx->SetOutput(0, Select(Lt(x, zero), Mul(x, (*ops)[1]), x));
    return absl::OkStatus();
  }
};
REGISTER_XLA_OP(Name("PRelu"), PReluOp);

// Softmax / LogSoftmax / Hardmax. Before opset 13 the input is seen as 2-D
// (dimensions before `axis` x the rest, default axis 1); from 13 on the op
// works along `axis` alone (default -1).
template <bool kLog>
class SoftmaxOp : public XlaOpKernel {
 public:
  absl::Status Compile(XlaOpKernelContext* ctx) override {
    const Shape& shape = ctx->InputShape(0);
    int64_t rank = shape.rank();
    bool legacy = ctx->opset() < 13;
    absl::StatusOr<int64_t> a = AxisAttr(*ctx, legacy ? 1 : -1, rank);
    if (!a.ok()) return a.status();
    XlaOp x = ctx->Input(0);
    std::vector<int64_t> dims = shape.dimensions();
    std::vector<int64_t> reduce_dims;
    if (legacy) {
      for (int64_t d = *a; d < rank; ++d) reduce_dims.push_back(d);
    } else {
      reduce_dims.push_back(*a);
    }
    std::vector<int64_t> kept;
    for (int64_t d = 0; d < rank; ++d) {
      if (std::find(reduce_dims.begin(), reduce_dims.end(), d) == reduce_dims.end()) {
        kept.push_back(d);
      }
    }
    PrimitiveType t = shape.element_type();
    XlaBuilder* b = ctx->builder();
    XlaOp max = Reduce(x, ReducerInit(b, Reducer::kMax, t), ReducerComputation(Reducer::kMax, t),
                       reduce_dims);
    XlaOp shifted = Sub(x, BroadcastInDim(max, dims, kept));
    XlaOp e = Exp(shifted);
    XlaOp sum = Reduce(e, Zero(b, t), ReducerComputation(Reducer::kAdd, t), reduce_dims);
    XlaOp sum_b = BroadcastInDim(sum, dims, kept);
    ctx->SetOutput(0, kLog ? Sub(shifted, Log(sum_b)) : Div(e, sum_b));
    return absl::OkStatus();
  }
};
REGISTER_XLA_OP(Name("Softmax"), SoftmaxOp<false>);
REGISTER_XLA_OP(Name("LogSoftmax"), SoftmaxOp<true>);

}  // namespace

AXLE_ONNX_KERNEL_FILE(activation)

}  // namespace axle::onnx
