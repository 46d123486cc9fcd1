//===- aten_pointwise.cc - Pointwise ATen kernels of the xla device ---------===//
//
// Arithmetic (Tensor and Scalar overloads, in place too), comparisons,
// where, masked_fill, neg/abs, activations and their backwards, and the optimizers'
// addcmul/addcdiv: elementwise IR with PyTorch's type promotion and
// broadcasting. The unary math functions (exp, log, sqrt, ...) are
// generated from aten_ops.yaml (gen_aten.py).
//
//===----------------------------------------------------------------------===//
#include <ATen/ATen.h>
#include <ATen/ExpandUtils.h>
#include <torch/library.h>

#include <cstring>
#include <string>

#include "axle/core/primitive_type.h"
#include "axle/core/shape_util.h"
#include "axle/frontends/torch/aten_ir.h"

namespace axle::torch_device {
namespace {

Value ScaledOther(const at::Tensor& other, const at::Scalar& alpha, PrimitiveType type) {
  Value v = Convert(Operand(other, "other"), type);
  if (alpha.toDouble() == 1.0) return v;
  return BinaryValues("mul", v, ScalarValue(alpha, type), type);
}

// --- Arithmetic ---------------------------------------------------------------

Value AddSubValue(const char* op, const at::Tensor& self, const at::Tensor& other,
                  const at::Scalar& alpha) {
  Count(op);
  PrimitiveType t = ToPrimitiveType(ResultType(self, other));
  return BinaryValues(op, Operand(self, "self"), ScaledOther(other, alpha, t), t);
}

at::Tensor add(const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha) {
  return Wrap(AddSubValue("add", self, other, alpha));
}
at::Tensor& add_(at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha) {
  return Assign(self, AddSubValue("add", self, other, alpha));
}
at::Tensor sub(const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha) {
  return Wrap(AddSubValue("sub", self, other, alpha));
}
at::Tensor& sub_(at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha) {
  return Assign(self, AddSubValue("sub", self, other, alpha));
}

// The .Scalar overloads: `other` is a scalar parameter (0 and 1 constants).
Value ScalarBinaryValue(const char* op, const at::Tensor& self, const at::Scalar& other,
                        const at::Scalar& alpha) {
  Count(op);
  at::ScalarType type = ResultType(self, other);
  if (std::strcmp(op, "div") == 0 && at::isIntegralType(type, /*includeBool=*/true)) {
    type = at::typeMetaToScalarType(at::get_default_dtype());
  }
  PrimitiveType t = ToPrimitiveType(type);
  Value rhs = ScalarValue(other, t);
  if (alpha.toDouble() != 1.0) rhs = BinaryValues("mul", rhs, ScalarValue(alpha, t), t);
  return BinaryValues(op, Operand(self, "self"), rhs, t);
}

template <const char* kOp>
at::Tensor ScalarBinary(const at::Tensor& self, const at::Scalar& other) {
  return Wrap(ScalarBinaryValue(kOp, self, other, 1));
}
template <const char* kOp>
at::Tensor& ScalarBinary_(at::Tensor& self, const at::Scalar& other) {
  return Assign(self, ScalarBinaryValue(kOp, self, other, 1));
}
template <const char* kOp>
at::Tensor ScalarBinaryAlpha(const at::Tensor& self, const at::Scalar& other,
                             const at::Scalar& alpha) {
  return Wrap(ScalarBinaryValue(kOp, self, other, alpha));
}
template <const char* kOp>
at::Tensor& ScalarBinaryAlpha_(at::Tensor& self, const at::Scalar& other, const at::Scalar& alpha) {
  return Assign(self, ScalarBinaryValue(kOp, self, other, alpha));
}

constexpr char kAdd[] = "add", kSub[] = "sub", kMul[] = "mul", kDiv[] = "div";

Value MulValue(const at::Tensor& self, const at::Tensor& other) {
  Count("mul");
  return Binary("mul", self, other, ResultType(self, other));
}
at::Tensor mul(const at::Tensor& self, const at::Tensor& other) {
  return Wrap(MulValue(self, other));
}
at::Tensor& mul_(at::Tensor& self, const at::Tensor& other) {
  return Assign(self, MulValue(self, other));
}

Value DivValue(const at::Tensor& self, const at::Tensor& other) {
  Count("div");
  at::ScalarType type = ResultType(self, other);
  if (at::isIntegralType(type, /*includeBool=*/true))
    type = at::typeMetaToScalarType(at::get_default_dtype());
  return Binary("div", self, other, type);
}
at::Tensor div(const at::Tensor& self, const at::Tensor& other) {
  return Wrap(DivValue(self, other));
}
at::Tensor& div_(at::Tensor& self, const at::Tensor& other) {
  return Assign(self, DivValue(self, other));
}

at::Tensor maximum(const at::Tensor& self, const at::Tensor& other) {
  Count("maximum");
  return Wrap(Binary("max", self, other, ResultType(self, other)));
}
at::Tensor minimum(const at::Tensor& self, const at::Tensor& other) {
  Count("minimum");
  return Wrap(Binary("min", self, other, ResultType(self, other)));
}

at::Tensor pow_scalar(const at::Tensor& self, const at::Scalar& exponent) {
  Count("pow");
  Value v = Operand(self, "self");
  PrimitiveType t = TypeOf(v);
  if (exponent.toDouble() == 2.0) return Wrap(Elementwise("mul", v, v));
  return Wrap(BinaryValues("pow", v, ScalarValue(exponent, t), t));
}

at::Tensor Compare(const char* op, const at::Tensor& self, const at::Tensor& other) {
  Count(op);
  return Wrap(CompareValues(op, Operand(self, "self"), Operand(other, "other"),
                            ToPrimitiveType(ResultType(self, other))));
}
at::Tensor Compare(const char* op, const at::Tensor& self, const at::Scalar& other) {
  Count(op);
  PrimitiveType t = ToPrimitiveType(ResultType(self, other));
  return Wrap(CompareValues(op, Operand(self, "self"), ScalarValue(other, t), t));
}

at::Tensor where(const at::Tensor& condition, const at::Tensor& self, const at::Tensor& other) {
  Count("where");
  PrimitiveType t = ToPrimitiveType(ResultType(self, other));
  Value c = Operand(condition, "condition");
  Value a = Convert(Operand(self, "self"), t);
  Value b = Convert(Operand(other, "other"), t);
  Ints out = ToInts(at::infer_size(at::infer_size(Dims(c), Dims(a)), Dims(b)));
  return Wrap(MakeValue(
      "select", {BroadcastTo(Convert(c, PRED), out), BroadcastTo(a, out), BroadcastTo(b, out)},
      MakeShape(t, out)));
}

// self where mask is false, value where it is true (mask broadcast to self).
Value MaskedFillValue(const at::Tensor& self, const at::Tensor& mask, const Value& value) {
  Count("masked_fill");
  TORCH_CHECK(mask.scalar_type() == at::kBool, "axle: masked_fill's mask must be bool, got ",
              mask.scalar_type());
  Value x = Operand(self, "self");
  Ints out = Dims(x);
  Value m = Operand(mask, "mask");
  TORCH_CHECK(at::infer_size(Dims(m), out) == at::IntArrayRef(out),
              "axle: masked_fill's mask of shape ", mask.sizes(),
              " does not broadcast to self's shape ", self.sizes());
  return MakeValue("select", {BroadcastTo(m, out), BroadcastTo(Convert(value, TypeOf(x)), out), x},
                   MakeShape(TypeOf(x), out));
}

Value FillValue(const at::Tensor& value) {
  TORCH_CHECK(value.dim() == 0, "axle: masked_fill's value must be a 0-dim tensor, got shape ",
              value.sizes());
  return Operand(value, "value");
}

at::Tensor masked_fill_scalar(const at::Tensor& self, const at::Tensor& mask,
                              const at::Scalar& value) {
  return Wrap(MaskedFillValue(self, mask, ScalarValue(value, ToPrimitiveType(self.scalar_type()))));
}
at::Tensor& masked_fill_scalar_(at::Tensor& self, const at::Tensor& mask, const at::Scalar& value) {
  return Assign(
      self, MaskedFillValue(self, mask, ScalarValue(value, ToPrimitiveType(self.scalar_type()))));
}
at::Tensor masked_fill_tensor(const at::Tensor& self, const at::Tensor& mask,
                              const at::Tensor& value) {
  return Wrap(MaskedFillValue(self, mask, FillValue(value)));
}
at::Tensor& masked_fill_tensor_(at::Tensor& self, const at::Tensor& mask, const at::Tensor& value) {
  return Assign(self, MaskedFillValue(self, mask, FillValue(value)));
}

// --- Unary --------------------------------------------------------------------

at::Tensor neg(const at::Tensor& self) {
  Count("neg");
  return Wrap(Unary("neg", Operand(self, "self")));
}
at::Tensor abs(const at::Tensor& self) {
  Count("abs");
  return Wrap(Unary("abs", Operand(self, "self")));
}

// The backwards of the generated sigmoid and tanh, from their outputs y:
// g * y * (1 - y) and g * (1 - y * y).
at::Tensor sigmoid_backward(const at::Tensor& grad_output, const at::Tensor& output) {
  Count("sigmoid_backward");
  Value y = Operand(output, "output");
  Value g = BroadcastTo(Convert(Operand(grad_output, "grad_output"), TypeOf(y)), Dims(y));
  Value one_minus = Elementwise("sub", Constant(1, TypeOf(y), Dims(y)), y);
  return Wrap(Elementwise("mul", g, Elementwise("mul", y, one_minus)));
}
at::Tensor tanh_backward(const at::Tensor& grad_output, const at::Tensor& output) {
  Count("tanh_backward");
  Value y = Operand(output, "output");
  Value g = BroadcastTo(Convert(Operand(grad_output, "grad_output"), TypeOf(y)), Dims(y));
  Value one_minus = Elementwise("sub", Constant(1, TypeOf(y), Dims(y)), Elementwise("mul", y, y));
  return Wrap(Elementwise("mul", g, one_minus));
}

Value ReluValue(const at::Tensor& self) {
  Count("relu");
  Value v = Operand(self, "self");
  return Elementwise("max", v, Constant(0, TypeOf(v), Dims(v)));
}
at::Tensor relu(const at::Tensor& self) { return Wrap(ReluValue(self)); }
at::Tensor& relu_(at::Tensor& self) { return Assign(self, ReluValue(self)); }

at::Tensor threshold_backward(const at::Tensor& grad_output, const at::Tensor& self,
                              const at::Scalar& threshold) {
  Count("threshold_backward");
  Value x = Operand(self, "self");
  Value g = Operand(grad_output, "grad_output");
  PrimitiveType t = TypeOf(g);
  Ints out = Dims(g);
  Value pred =
      BinaryValues("gt", BroadcastTo(x, out), ScalarValue(threshold, TypeOf(x)), TypeOf(x));
  return Wrap(MakeValue("select", {pred, g, Constant(0, t, out)}, MakeShape(t, out)));
}

// gelu(x) = x/2 (1 + erf(x/sqrt 2)); 'tanh': x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
at::Tensor gelu(const at::Tensor& self, c10::string_view approximate) {
  Count("gelu");
  Value x = Operand(self, "self");
  PrimitiveType t = TypeOf(x);
  Ints d = Dims(x);
  Value inner;
  if (approximate == "tanh") {
    Value x3 = Elementwise("mul", Elementwise("mul", x, x), x);
    Value poly = Elementwise("add", x, Elementwise("mul", Constant(0.044715, t, d), x3));
    inner = Unary("tanh", Elementwise("mul", Constant(0.7978845608028654, t, d), poly));
  } else {
    inner = Unary("erf", Elementwise("mul", x, Constant(0.7071067811865476, t, d)));
  }
  Value half_x = Elementwise("mul", x, Constant(0.5, t, d));
  return Wrap(Elementwise("mul", half_x, Elementwise("add", Constant(1, t, d), inner)));
}

at::Tensor gelu_backward(const at::Tensor& grad_output, const at::Tensor& self,
                         c10::string_view approximate) {
  Count("gelu_backward");
  Value x = Operand(self, "self");
  Value g = Operand(grad_output, "grad_output");
  PrimitiveType t = TypeOf(x);
  Ints d = Dims(x);
  auto c = [&](double v) { return Constant(v, t, d); };
  Value grad;
  if (approximate == "tanh") {
    const double kBeta = 0.7978845608028654, kKappa = 0.044715;
    Value x2 = Elementwise("mul", x, x);
    Value inner = Elementwise(
        "mul", c(kBeta),
        Elementwise("add", x, Elementwise("mul", c(kKappa), Elementwise("mul", x2, x))));
    Value th = Unary("tanh", inner);
    Value left = Elementwise("mul", c(0.5), Elementwise("add", c(1), th));
    Value sech2 = Elementwise("sub", c(1), Elementwise("mul", th, th));
    Value dinner = Elementwise("mul", c(kBeta),
                               Elementwise("add", c(1), Elementwise("mul", c(3 * kKappa), x2)));
    Value right =
        Elementwise("mul", Elementwise("mul", c(0.5), x), Elementwise("mul", sech2, dinner));
    grad = Elementwise("add", left, right);
  } else {
    Value cdf = Elementwise(
        "mul", c(0.5),
        Elementwise("add", c(1), Unary("erf", Elementwise("mul", x, c(0.7071067811865476)))));
    Value pdf = Elementwise("mul", c(0.3989422804014327),
                            Unary("exp", Elementwise("mul", c(-0.5), Elementwise("mul", x, x))));
    grad = Elementwise("add", cdf, Elementwise("mul", x, pdf));
  }
  return Wrap(Elementwise("mul", g, grad));
}

// --- Optimizer arithmetic -------------------------------------------------------------

Value AddcValue(const char* op, const at::Tensor& self, const at::Tensor& tensor1,
                const at::Tensor& tensor2, const at::Scalar& value) {
  Count(op[4] == 'm' ? "addcmul" : "addcdiv");
  PrimitiveType t = ToPrimitiveType(self.scalar_type());
  Value product = BinaryValues(op[4] == 'm' ? "mul" : "div", Operand(tensor1, "tensor1"),
                               Operand(tensor2, "tensor2"), t);
  if (value.toDouble() != 1.0) product = BinaryValues("mul", product, ScalarValue(value, t), t);
  return BinaryValues("add", Operand(self, "self"), product, t);
}

at::Tensor addcmul(const at::Tensor& self, const at::Tensor& t1, const at::Tensor& t2,
                   const at::Scalar& value) {
  return Wrap(AddcValue("addcmul", self, t1, t2, value));
}
at::Tensor& addcmul_(at::Tensor& self, const at::Tensor& t1, const at::Tensor& t2,
                     const at::Scalar& value) {
  return Assign(self, AddcValue("addcmul", self, t1, t2, value));
}
at::Tensor addcdiv(const at::Tensor& self, const at::Tensor& t1, const at::Tensor& t2,
                   const at::Scalar& value) {
  return Wrap(AddcValue("addcdiv", self, t1, t2, value));
}
at::Tensor& addcdiv_(at::Tensor& self, const at::Tensor& t1, const at::Tensor& t2,
                     const at::Scalar& value) {
  return Assign(self, AddcValue("addcdiv", self, t1, t2, value));
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, XLA, m) {
  m.impl("add.Tensor", TORCH_FN(add));
  m.impl("add_.Tensor", TORCH_FN(add_));
  m.impl("sub.Tensor", TORCH_FN(sub));
  m.impl("sub_.Tensor", TORCH_FN(sub_));
  m.impl("mul.Tensor", TORCH_FN(mul));
  m.impl("mul_.Tensor", TORCH_FN(mul_));
  m.impl("div.Tensor", TORCH_FN(div));
  m.impl("div_.Tensor", TORCH_FN(div_));
  m.impl("add.Scalar", TORCH_FN(ScalarBinaryAlpha<kAdd>));
  m.impl("add_.Scalar", TORCH_FN(ScalarBinaryAlpha_<kAdd>));
  m.impl("sub.Scalar", TORCH_FN(ScalarBinaryAlpha<kSub>));
  m.impl("sub_.Scalar", TORCH_FN(ScalarBinaryAlpha_<kSub>));
  m.impl("mul.Scalar", TORCH_FN(ScalarBinary<kMul>));
  m.impl("mul_.Scalar", TORCH_FN(ScalarBinary_<kMul>));
  m.impl("div.Scalar", TORCH_FN(ScalarBinary<kDiv>));
  m.impl("div_.Scalar", TORCH_FN(ScalarBinary_<kDiv>));
  m.impl("maximum", TORCH_FN(maximum));
  m.impl("minimum", TORCH_FN(minimum));
  m.impl("pow.Tensor_Scalar", TORCH_FN(pow_scalar));
  m.impl("gt.Tensor", [](const at::Tensor& a, const at::Tensor& b) { return Compare("gt", a, b); });
  m.impl("lt.Tensor", [](const at::Tensor& a, const at::Tensor& b) { return Compare("lt", a, b); });
  m.impl("ge.Tensor", [](const at::Tensor& a, const at::Tensor& b) { return Compare("ge", a, b); });
  m.impl("le.Tensor", [](const at::Tensor& a, const at::Tensor& b) { return Compare("le", a, b); });
  m.impl("eq.Tensor", [](const at::Tensor& a, const at::Tensor& b) { return Compare("eq", a, b); });
  m.impl("ne.Tensor", [](const at::Tensor& a, const at::Tensor& b) { return Compare("ne", a, b); });
  m.impl("gt.Scalar", [](const at::Tensor& a, const at::Scalar& b) { return Compare("gt", a, b); });
  m.impl("lt.Scalar", [](const at::Tensor& a, const at::Scalar& b) { return Compare("lt", a, b); });
  m.impl("ge.Scalar", [](const at::Tensor& a, const at::Scalar& b) { return Compare("ge", a, b); });
  m.impl("le.Scalar", [](const at::Tensor& a, const at::Scalar& b) { return Compare("le", a, b); });
  m.impl("eq.Scalar", [](const at::Tensor& a, const at::Scalar& b) { return Compare("eq", a, b); });
  m.impl("ne.Scalar", [](const at::Tensor& a, const at::Scalar& b) { return Compare("ne", a, b); });
  m.impl("where.self", TORCH_FN(where));
  m.impl("masked_fill.Scalar", TORCH_FN(masked_fill_scalar));
  m.impl("masked_fill_.Scalar", TORCH_FN(masked_fill_scalar_));
  m.impl("masked_fill.Tensor", TORCH_FN(masked_fill_tensor));
  m.impl("masked_fill_.Tensor", TORCH_FN(masked_fill_tensor_));
  m.impl("neg", TORCH_FN(neg));
  m.impl("abs", TORCH_FN(abs));
  m.impl("sigmoid_backward", TORCH_FN(sigmoid_backward));
  m.impl("tanh_backward", TORCH_FN(tanh_backward));
  m.impl("relu", TORCH_FN(relu));
  m.impl("relu_", TORCH_FN(relu_));
  m.impl("threshold_backward", TORCH_FN(threshold_backward));
  m.impl("gelu", TORCH_FN(gelu));
  m.impl("gelu_backward", TORCH_FN(gelu_backward));
  m.impl("addcmul", TORCH_FN(addcmul));
  m.impl("addcmul_", TORCH_FN(addcmul_));
  m.impl("addcdiv", TORCH_FN(addcdiv));
  m.impl("addcdiv_", TORCH_FN(addcdiv_));
}

}  // namespace axle::torch_device
