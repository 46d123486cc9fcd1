//===- training_ops.cc - ONNX's optimizer ops (ai.onnx.preview.training) ---===//
//
// Adagrad, Momentum (standard and Nesterov) and Adam: one update step of n
// tensors. Inputs are R (learning rate), T (update count), then n tensors
// of each kind (X, G and the optimizer's state); outputs are the n new X
// then the n new states of each kind, as ONNX's preview training domain
// defines them.
//
//===----------------------------------------------------------------------===//
#include "axle/frontends/graph/xla_op_registry.h"
#include "axle/frontends/onnx/kernels/kernel_util.h"
#include "axle/frontends/onnx/kernels/kernels.h"

namespace axle::onnx {
namespace {

constexpr char kTrainingDomain[] = "ai.onnx.preview.training";

// Checks the inputs are R, T and `kinds` groups of n tensors of one shape,
// and returns n.
absl::StatusOr<int> TensorCount(const XlaOpKernelContext& ctx, int kinds) {
  int tensors = ctx.num_inputs() - 2;
  if (tensors < kinds || tensors % kinds != 0) {
    return ctx.Error("expects R, T and ", kinds, " groups of n tensors, got ", ctx.num_inputs(),
                     " inputs");
  }
  int n = tensors / kinds;
  if (ctx.num_outputs() > (kinds - 1) * n) {
    return ctx.Error("has ", ctx.num_outputs(), " outputs, at most ", (kinds - 1) * n, " expected");
  }
  for (int i = 0; i < 2; ++i) {
    if (!ctx.HasInput(i) || ctx.InputShape(i).num_elements() != 1) {
      return ctx.Error("input ", i, " (", i == 0 ? "R" : "T", ") must be a scalar");
    }
  }
  for (int k = 0; k < kinds; ++k) {
    for (int j = 0; j < n; ++j) {
      int i = 2 + k * n + j;
      if (!ctx.HasInput(i)) return ctx.Error("input ", i, " is missing");
      const Shape& x = ctx.InputShape(2 + j);
      if (!IsFloat(x.element_type())) return ctx.Error("X_", j, " must be floating-point");
      if (!ShapeUtil::Equal(ctx.InputShape(i), x)) {
        return ctx.Error("input ", i, " ", ctx.InputShape(i).ToString(false),
                         " must have the shape of X_", j, " ", x.ToString(false));
      }
    }
  }
  return n;
}

// Scalar input `i` as a scalar of `type`.
XlaOp ScalarInput(XlaOpKernelContext* ctx, int i, PrimitiveType type) {
  return ConvertElementType(Reshape(ctx->Input(i), {}), type);
}

struct Attrs {
  float alpha, beta, epsilon, norm, norm_post, decay;
  std::string mode;
};

absl::StatusOr<Attrs> GetAttrs(const XlaOpKernelContext& ctx, float alpha, float beta,
                               float epsilon) {
  Attrs a;
  absl::StatusOr<float> v[6] = {ctx.GetAttrFloat("alpha", alpha),
                                ctx.GetAttrFloat("beta", beta),
                                ctx.GetAttrFloat("epsilon", epsilon),
                                ctx.GetAttrFloat("norm_coefficient", 0),
                                ctx.GetAttrFloat("norm_coefficient_post", 0),
                                ctx.GetAttrFloat("decay_factor", 0)};
  for (const auto& s : v) {
    if (!s.ok()) return s.status();
  }
  a = {*v[0], *v[1], *v[2], *v[3], *v[4], *v[5], ""};
  absl::StatusOr<std::string> mode = ctx.GetAttrString("mode", "standard");
  if (!mode.ok()) return mode.status();
  a.mode = *mode;
  return a;
}

// What the update of one tensor X_j sees: R and T as scalars of X's type,
// X, G and the optimizer's state tensors.
struct Step {
  XlaBuilder* b;
  PrimitiveType t;
  std::vector<int64_t> dims;
  XlaOp r, tt, x, g;
  std::vector<XlaOp> state;
  // A constant of X's shape.
  XlaOp c(double v) const { return Broadcast(ScalarLike(b, t, v), dims); }
};

// New X, then the new state tensors in input order.
using UpdateFn = std::vector<XlaOp> (*)(const Attrs&, const Step&);

// The inputs are R, T, X..., G..., then `kinds` - 2 groups of state; output
// group k holds the k-th result of `update` for every tensor.
absl::Status CompileUpdates(XlaOpKernelContext* ctx, int kinds, const Attrs& attrs,
                            UpdateFn update) {
  absl::StatusOr<int> n = TensorCount(*ctx, kinds);
  if (!n.ok()) return n.status();
  for (int j = 0; j < *n; ++j) {
    const Shape& s = ctx->InputShape(2 + j);
    Step step{ctx->builder(), s.element_type(), s.dimensions(), {}, {}, {}, {}, {}};
    step.r = ScalarInput(ctx, 0, step.t);
    step.tt = ScalarInput(ctx, 1, step.t);
    step.x = ctx->Input(2 + j);
    step.g = ctx->Input(2 + *n + j);
    for (int k = 2; k < kinds; ++k) step.state.push_back(ctx->Input(2 + k * *n + j));
    std::vector<XlaOp> results = update(attrs, step);
    for (int k = 0; k < static_cast<int>(results.size()); ++k) {
      if (ctx->HasOutput(k * *n + j)) ctx->SetOutput(k * *n + j, results[k]);
    }
  }
  return absl::OkStatus();
}

std::vector<XlaOp> AdagradUpdate(const Attrs& a, const Step& s) {
  // r = R / (1 + T * decay_factor)
  XlaOp r = Div(s.r, Add(ScalarLike(s.b, s.t, 1), Mul(s.tt, ScalarLike(s.b, s.t, a.decay))));
  const XlaOp& h = s.state[0];
  XlaOp g_reg = Add(Mul(s.c(a.norm), s.x), s.g);
  XlaOp h_new = Add(h, Mul(g_reg, g_reg));
  XlaOp h_adaptive = Add(Sqrt(h_new), s.c(a.epsilon));
  XlaOp x_new = Sub(s.x, Div(Mul(Broadcast(r, s.dims), g_reg), h_adaptive));
  return {x_new, h_new};
}

std::vector<XlaOp> MomentumUpdate(const Attrs& a, const Step& s) {
  const XlaOp& v = s.state[0];
  // The first update (T = 0) takes the whole gradient.
  XlaOp beta = Select(Gt(s.tt, ScalarLike(s.b, s.t, 0)), ScalarLike(s.b, s.t, a.beta),
                      ScalarLike(s.b, s.t, 1));
  XlaOp g_reg = Add(Mul(s.c(a.norm), s.x), s.g);
  XlaOp v_new = Add(Mul(s.c(a.alpha), v), Mul(Broadcast(beta, s.dims), g_reg));
  XlaOp step = a.mode == "standard" ? v_new : Add(g_reg, Mul(s.c(a.alpha), v_new));
  XlaOp x_new = Sub(s.x, Mul(Broadcast(s.r, s.dims), step));
  return {x_new, v_new};
}

std::vector<XlaOp> AdamUpdate(const Attrs& a, const Step& s) {
  const XlaOp& v = s.state[0];
  const XlaOp& h = s.state[1];
  XlaOp g_reg = Add(Mul(s.c(a.norm), s.x), s.g);
  XlaOp v_new = Add(Mul(s.c(a.alpha), v), Mul(s.c(1.0 - a.alpha), g_reg));
  XlaOp h_new = Add(Mul(s.c(a.beta), h), Mul(s.c(1.0 - a.beta), Mul(g_reg, g_reg)));
  XlaOp h_sqrt = Add(Sqrt(h_new), s.c(a.epsilon));
  // Bias correction after the first update:
  // R * sqrt(1 - beta^T) / (1 - alpha^T).
  XlaOp one = ScalarLike(s.b, s.t, 1);
  XlaOp corrected = Div(Mul(s.r, Sqrt(Sub(one, Pow(ScalarLike(s.b, s.t, a.beta), s.tt)))),
                        Sub(one, Pow(ScalarLike(s.b, s.t, a.alpha), s.tt)));
  XlaOp r = Select(Gt(s.tt, ScalarLike(s.b, s.t, 0)), corrected, s.r);
  XlaOp x_new = Sub(s.x, Mul(Broadcast(r, s.dims), Div(v_new, h_sqrt)));
  x_new = Mul(s.c(1.0 - a.norm_post), x_new);
  return {x_new, v_new, h_new};
}

class AdagradOp : public XlaOpKernel {
 public:
  absl::Status Compile(XlaOpKernelContext* ctx) override {
    absl::StatusOr<Attrs> attrs = GetAttrs(*ctx, 0, 0, 1e-6f);
    if (!attrs.ok()) return attrs.status();
    return CompileUpdates(ctx, 3, *attrs, AdagradUpdate);
  }
};
REGISTER_XLA_OP(Name("Adagrad").Domain(kTrainingDomain), AdagradOp);

class MomentumOp : public XlaOpKernel {
 public:
  absl::Status Compile(XlaOpKernelContext* ctx) override {
    for (const char* name : {"alpha", "beta", "mode", "norm_coefficient"}) {
      if (!ctx->HasAttr(name)) return ctx->Error("attribute '", name, "' is required");
    }
    absl::StatusOr<Attrs> attrs = GetAttrs(*ctx, 0, 0, 0);
    if (!attrs.ok()) return attrs.status();
    if (attrs->mode != "standard" && attrs->mode != "nesterov") {
      return ctx->Unimplemented("attribute 'mode' = '", attrs->mode, "' is not supported");
    }
    return CompileUpdates(ctx, 3, *attrs, MomentumUpdate);
  }
};
REGISTER_XLA_OP(Name("Momentum").Domain(kTrainingDomain), MomentumOp);

class AdamOp : public XlaOpKernel {
 public:
  absl::Status Compile(XlaOpKernelContext* ctx) override {
    absl::StatusOr<Attrs> attrs = GetAttrs(*ctx, 0.9f, 0.999f, 1e-6f);
    if (!attrs.ok()) return attrs.status();
    return CompileUpdates(ctx, 4, *attrs, AdamUpdate);
  }
};
REGISTER_XLA_OP(Name("Adam").Domain(kTrainingDomain), AdamOp);

}  // namespace

AXLE_ONNX_KERNEL_FILE(training)

}  // namespace axle::onnx
