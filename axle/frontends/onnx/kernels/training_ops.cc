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

class AdagradOp : public XlaOpKernel {
 public:
  absl::Status Compile(XlaOpKernelContext* ctx) override {
    absl::StatusOr<int> n = TensorCount(*ctx, 3);
    if (!n.ok()) return n.status();
    absl::StatusOr<Attrs> attrs = GetAttrs(*ctx, 0, 0, 1e-6f);
    if (!attrs.ok()) return attrs.status();
    XlaBuilder* b = ctx->builder();
    for (int j = 0; j < *n; ++j) {
      const Shape& s = ctx->InputShape(2 + j);
      PrimitiveType t = s.element_type();
      auto c = [&](double v) { return Broadcast(ScalarLike(b, t, v), s.dimensions()); };
      // r = R / (1 + T * decay_factor)
      XlaOp r = Div(
          ScalarInput(ctx, 0, t),
          Add(ScalarLike(b, t, 1), Mul(ScalarInput(ctx, 1, t), ScalarLike(b, t, attrs->decay))));
      XlaOp x = ctx->Input(2 + j), g = ctx->Input(2 + *n + j), h = ctx->Input(2 + 2 * *n + j);
      XlaOp g_reg = Add(Mul(c(attrs->norm), x), g);
      XlaOp h_new = Add(h, Mul(g_reg, g_reg));
      XlaOp h_adaptive = Add(Sqrt(h_new), c(attrs->epsilon));
      XlaOp x_new = Sub(x, Div(Mul(Broadcast(r, s.dimensions()), g_reg), h_adaptive));
      if (ctx->HasOutput(j)) ctx->SetOutput(j, x_new);
      if (ctx->HasOutput(*n + j)) ctx->SetOutput(*n + j, h_new);
    }
    return absl::OkStatus();
  }
};
REGISTER_XLA_OP(Name("Adagrad").Domain(kTrainingDomain), AdagradOp);

class MomentumOp : public XlaOpKernel {
 public:
  absl::Status Compile(XlaOpKernelContext* ctx) override {
    absl::StatusOr<int> n = TensorCount(*ctx, 3);
    if (!n.ok()) return n.status();
    for (const char* name : {"alpha", "beta", "mode", "norm_coefficient"}) {
      if (!ctx->HasAttr(name)) return ctx->Error("attribute '", name, "' is required");
    }
    absl::StatusOr<Attrs> attrs = GetAttrs(*ctx, 0, 0, 0);
    if (!attrs.ok()) return attrs.status();
    if (attrs->mode != "standard" && attrs->mode != "nesterov") {
      return ctx->Unimplemented("attribute 'mode' = '", attrs->mode, "' is not supported");
    }
    XlaBuilder* b = ctx->builder();
    for (int j = 0; j < *n; ++j) {
      const Shape& s = ctx->InputShape(2 + j);
      PrimitiveType t = s.element_type();
      const std::vector<int64_t>& dims = s.dimensions();
      auto c = [&](double v) { return Broadcast(ScalarLike(b, t, v), dims); };
      XlaOp x = ctx->Input(2 + j), g = ctx->Input(2 + *n + j), v = ctx->Input(2 + 2 * *n + j);
      // The first update (T = 0) takes the whole gradient.
      XlaOp beta = Select(Gt(ScalarInput(ctx, 1, S64), ConstantR0<int64_t>(b, 0)),
                          ScalarLike(b, t, attrs->beta), ScalarLike(b, t, 1));
      XlaOp g_reg = Add(Mul(c(attrs->norm), x), g);
      XlaOp v_new = Add(Mul(c(attrs->alpha), v), Mul(Broadcast(beta, dims), g_reg));
      XlaOp step = attrs->mode == "standard" ? v_new : Add(g_reg, Mul(c(attrs->alpha), v_new));
      XlaOp x_new = Sub(x, Mul(Broadcast(ScalarInput(ctx, 0, t), dims), step));
      if (ctx->HasOutput(j)) ctx->SetOutput(j, x_new);
      if (ctx->HasOutput(*n + j)) ctx->SetOutput(*n + j, v_new);
    }
    return absl::OkStatus();
  }
};
REGISTER_XLA_OP(Name("Momentum").Domain(kTrainingDomain), MomentumOp);

class AdamOp : public XlaOpKernel {
 public:
  absl::Status Compile(XlaOpKernelContext* ctx) override {
    absl::StatusOr<int> n = TensorCount(*ctx, 4);
    if (!n.ok()) return n.status();
    absl::StatusOr<Attrs> attrs = GetAttrs(*ctx, 0.9f, 0.999f, 1e-6f);
    if (!attrs.ok()) return attrs.status();
    XlaBuilder* b = ctx->builder();
    for (int j = 0; j < *n; ++j) {
      const Shape& s = ctx->InputShape(2 + j);
      PrimitiveType t = s.element_type();
      const std::vector<int64_t>& dims = s.dimensions();
      auto c = [&](double v) { return Broadcast(ScalarLike(b, t, v), dims); };
      XlaOp x = ctx->Input(2 + j), g = ctx->Input(2 + *n + j);
      XlaOp v = ctx->Input(2 + 2 * *n + j), h = ctx->Input(2 + 3 * *n + j);
      XlaOp g_reg = Add(Mul(c(attrs->norm), x), g);
      XlaOp v_new = Add(Mul(c(attrs->alpha), v), Mul(c(1.0 - attrs->alpha), g_reg));
      XlaOp h_new = Add(Mul(c(attrs->beta), h), Mul(c(1.0 - attrs->beta), Mul(g_reg, g_reg)));
      XlaOp h_sqrt = Add(Sqrt(h_new), c(attrs->epsilon));
      // Bias correction after the first update:
      // R * sqrt(1 - beta^T) / (1 - alpha^T).
      XlaOp r = ScalarInput(ctx, 0, t), tt = ScalarInput(ctx, 1, t);
      XlaOp one = ScalarLike(b, t, 1);
      XlaOp corrected = Div(Mul(r, Sqrt(Sub(one, Pow(ScalarLike(b, t, attrs->beta), tt)))),
                            Sub(one, Pow(ScalarLike(b, t, attrs->alpha), tt)));
      r = Select(Gt(tt, ScalarLike(b, t, 0)), corrected, r);
      XlaOp x_new = Sub(x, Mul(Broadcast(r, dims), Div(v_new, h_sqrt)));
      x_new = Mul(c(1.0 - attrs->norm_post), x_new);
      if (ctx->HasOutput(j)) ctx->SetOutput(j, x_new);
      if (ctx->HasOutput(*n + j)) ctx->SetOutput(*n + j, v_new);
      if (ctx->HasOutput(2 * *n + j)) ctx->SetOutput(2 * *n + j, h_new);
    }
    return absl::OkStatus();
  }
};
REGISTER_XLA_OP(Name("Adam").Domain(kTrainingDomain), AdamOp);

}  // namespace

AXLE_ONNX_KERNEL_FILE(training)

}  // namespace axle::onnx
