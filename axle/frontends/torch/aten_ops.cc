//===- aten_ops.cc - ATen kernels of the xla device, and the CPU fallback --===//
//
// Hand-written registrations (TORCH_LIBRARY_IMPL(aten, XLA, m)) of the
// lowered ops: each records IR on lazy tensors (axle/frontends/lazy) and
// counts axle::<op>. Every other op runs on PyTorch's CPU through the boxed
// fallback, counted as aten::<op>.
//
//===----------------------------------------------------------------------===//
#include <ATen/ATen.h>
#include <ATen/ExpandUtils.h>
#include <ATen/InferSize.h>
#include <ATen/WrapDimUtils.h>
#include <ATen/native/CPUFallback.h>
#include <torch/library.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "axle/core/shape_util.h"
#include "axle/frontends/lazy/lazy_tensor.h"
#include "axle/frontends/lazy/metrics.h"
#include "axle/frontends/torch/tensor_impl.h"

namespace axle::torch_device {
namespace {

using lazy::LazyTensor;
using lazy::MakeValue;
using lazy::Node;
using lazy::Value;
using Ints = std::vector<int64_t>;

const c10::Device kDevice(at::DeviceType::XLA, 0);

bool DebugEnabled() {
  static const bool enabled = [] {
    const char* env = std::getenv("AXLE_DEBUG");
    return env != nullptr && *env != '\0' && std::string(env) != "0";
  }();
  return enabled;
}

void Count(const char* op) { lazy::metrics::IncrementCounter(std::string("axle::") + op); }

void Check(const absl::Status& status) {
  TORCH_CHECK(status.ok(), "axle: ", std::string(status.message()));
}

Ints ToInts(at::IntArrayRef a) { return Ints(a.begin(), a.end()); }
Ints ToInts(c10::SymIntArrayRef a) { return ToInts(c10::asIntArrayRefSlow(a)); }

Ints Dims(const Value& v) {
  const auto& d = v.shape().dimensions();
  return Ints(d.begin(), d.end());
}
PrimitiveType TypeOf(const Value& v) { return v.shape().element_type(); }
Shape MakeShape(PrimitiveType type, const Ints& dims) { return ShapeUtil::MakeShape(type, dims); }

// A scalar the graph takes as a parameter (its value may change from step
// to step without a recompile), except the values 0 and 1, which are
// constants as in torch-xla.
Value ScalarValue(const at::Scalar& s, PrimitiveType type) {
  double d = s.isBoolean() ? static_cast<double>(s.toBool()) : s.toDouble();
  if (!s.isComplex() && (d == 0 || d == 1))
    return Value{Node::MakeConstant(d, MakeShape(type, {})), 0};
  at::Tensor t = at::scalar_tensor(s, at::TensorOptions().dtype(ToScalarType(type)));
  auto data = std::make_shared<lazy::DeviceData>(CpuTensorToLiteral(t));
  return Value{Node::MakeDeviceData(std::move(data)), 0};
}

Value Constant(double value, PrimitiveType type, const Ints& dims) {
  return Value{Node::MakeConstant(value, MakeShape(type, dims)), 0};
}

Value Convert(const Value& v, PrimitiveType type) {
  if (TypeOf(v) == type) return v;
  return MakeValue("convert", {v}, MakeShape(type, Dims(v)));
}

Value Reshape(const Value& v, const Ints& dims) {
  if (Dims(v) == dims) return v;
  return MakeValue("reshape", {v}, MakeShape(TypeOf(v), dims));
}

// NumPy broadcasting of `v` to `out`.
Value BroadcastTo(const Value& v, const Ints& out) {
  Ints dims = Dims(v);
  if (dims == out) return v;
  TORCH_CHECK(dims.size() <= out.size(), "axle: cannot broadcast shape ", at::IntArrayRef(dims),
              " to ", at::IntArrayRef(out));
  size_t offset = out.size() - dims.size();
  Ints kept;
  Ints result_dims;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == out[offset + i]) {
      kept.push_back(dims[i]);
      result_dims.push_back(static_cast<int64_t>(offset + i));
    } else {
      TORCH_CHECK(dims[i] == 1, "axle: cannot broadcast shape ", at::IntArrayRef(dims), " to ",
                  at::IntArrayRef(out));
    }
  }
  return MakeValue("broadcast_in_dim", {Reshape(v, kept)}, MakeShape(TypeOf(v), out),
                   {result_dims});
}

// An operand's IR: an xla tensor's value, or a CPU 0-dim tensor (a wrapped
// Python number) as a scalar.
Value Operand(const at::Tensor& t, const char* what) {
  if (t.defined() && t.device().is_cpu() && t.dim() == 0) {
    return ScalarValue(t.item(), ToPrimitiveType(t.scalar_type()));
  }
  return GetImpl(t, what)->tensor()->GetIrValue();
}

at::Tensor Wrap(const Value& v) {
  return MakeTensor(LazyTensor::FromIr(v), ToScalarType(TypeOf(v)), kDevice);
}

// Views are copies here (view, t, slice, select, ... return new values), so
// an in-place update of one would not reach its base: refused, clearly.
void CheckNotView(const at::Tensor& self) {
  TORCH_CHECK(!self.is_view(),
              "axle: in-place update of a view (the result of view, slice, select, t, expand, "
              "...) is not supported on the xla device yet: its base would not change. Update a "
              "copy (.clone()) or the base tensor instead");
}

// An in-place op's result: `self` takes the value `v` (in self's dtype).
at::Tensor& Assign(at::Tensor& self, const Value& v) {
  AxleTensorImpl* impl = GetImpl(self, "self");
  CheckNotView(self);
  Value converted = Convert(v, ToPrimitiveType(self.scalar_type()));
  TORCH_CHECK(Dims(converted) == ToInts(self.sizes()), "axle: an in-place result of shape ",
              at::IntArrayRef(Dims(converted)), " for a tensor of shape ", self.sizes());
  impl->tensor()->SetIrValue(converted);
  return self;
}

Value Elementwise(const char* op, const Value& a, const Value& b) {
  return MakeValue(op, {a, b}, MakeShape(TypeOf(a), Dims(a)));
}

Value Unary(const char* op, const Value& a) {
  return MakeValue(op, {a}, MakeShape(TypeOf(a), Dims(a)));
}

// `a op b` with PyTorch's type promotion (to `compute`) and broadcasting.
Value BinaryValues(const char* op, const Value& a, const Value& b, PrimitiveType compute) {
  Ints out = ToInts(at::infer_size(Dims(a), Dims(b)));
  Value va = BroadcastTo(Convert(a, compute), out);
  Value vb = BroadcastTo(Convert(b, compute), out);
  return Elementwise(op, va, vb);
}

Value Binary(const char* op, const at::Tensor& a, const at::Tensor& b, at::ScalarType compute) {
  return BinaryValues(op, Operand(a, "self"), Operand(b, "other"), ToPrimitiveType(compute));
}

Value ScaledOther(const at::Tensor& other, const at::Scalar& alpha, PrimitiveType type) {
  Value v = Convert(Operand(other, "other"), type);
  if (alpha.toDouble() == 1.0) return v;
  return BinaryValues("mul", v, ScalarValue(alpha, type), type);
}

Value IrOf(const at::Tensor& t) { return GetImpl(t, "the result")->tensor()->GetIrValue(); }

// --- Arithmetic ---------------------------------------------------------------

Value AddSubValue(const char* op, const at::Tensor& self, const at::Tensor& other,
                  const at::Scalar& alpha) {
  Count(op);
  PrimitiveType t = ToPrimitiveType(at::result_type(self, other));
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
  at::ScalarType type = at::result_type(self, other);
  if (std::string(op) == "div" && at::isIntegralType(type, /*includeBool=*/true)) {
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
  return Binary("mul", self, other, at::result_type(self, other));
}
at::Tensor mul(const at::Tensor& self, const at::Tensor& other) {
  return Wrap(MulValue(self, other));
}
at::Tensor& mul_(at::Tensor& self, const at::Tensor& other) {
  return Assign(self, MulValue(self, other));
}

Value DivValue(const at::Tensor& self, const at::Tensor& other) {
  Count("div");
  at::ScalarType type = at::result_type(self, other);
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
  return Wrap(Binary("max", self, other, at::result_type(self, other)));
}
at::Tensor minimum(const at::Tensor& self, const at::Tensor& other) {
  Count("minimum");
  return Wrap(Binary("min", self, other, at::result_type(self, other)));
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
  return Wrap(Binary(op, self, other, at::result_type(self, other)));
}
at::Tensor Compare(const char* op, const at::Tensor& self, const at::Scalar& other) {
  Count(op);
  PrimitiveType t = ToPrimitiveType(at::result_type(self, other));
  return Wrap(BinaryValues(op, Operand(self, "self"), ScalarValue(other, t), t));
}

at::Tensor where(const at::Tensor& condition, const at::Tensor& self, const at::Tensor& other) {
  Count("where");
  PrimitiveType t = ToPrimitiveType(at::result_type(self, other));
  Value c = Operand(condition, "condition");
  Value a = Convert(Operand(self, "self"), t);
  Value b = Convert(Operand(other, "other"), t);
  Ints out = ToInts(at::infer_size(at::infer_size(Dims(c), Dims(a)), Dims(b)));
  return Wrap(MakeValue(
      "select", {BroadcastTo(Convert(c, PRED), out), BroadcastTo(a, out), BroadcastTo(b, out)},
      MakeShape(t, out)));
}

// --- Unary --------------------------------------------------------------------

template <const char* kAtenName, const char* kOp>
at::Tensor UnaryFloat(const at::Tensor& self) {
  Count(kAtenName);
  Value v = Operand(self, "self");
  if (!primitive_util::IsFloatingPointType(TypeOf(v))) {
    v = Convert(v, ToPrimitiveType(at::typeMetaToScalarType(at::get_default_dtype())));
  }
  return Wrap(Unary(kOp, v));
}
template <const char* kAtenName, const char* kOp>
at::Tensor& UnaryFloat_(at::Tensor& self) {
  return Assign(self, IrOf(UnaryFloat<kAtenName, kOp>(self)));
}

constexpr char kExp[] = "exp", kLog[] = "log", kSqrt[] = "sqrt", kRsqrt[] = "rsqrt",
               kTanh[] = "tanh", kSigmoid[] = "sigmoid", kLogistic[] = "logistic", kErf[] = "erf";

at::Tensor neg(const at::Tensor& self) {
  Count("neg");
  return Wrap(Unary("neg", Operand(self, "self")));
}
at::Tensor abs(const at::Tensor& self) {
  Count("abs");
  return Wrap(Unary("abs", Operand(self, "self")));
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

// --- Reductions ---------------------------------------------------------------

Ints ReduceDims(const at::Tensor& self, at::OptionalIntArrayRef dim) {
  Ints dims;
  if (!dim.has_value() || dim->empty()) {
    for (int64_t i = 0; i < self.dim(); ++i) dims.push_back(i);
    return dims;
  }
  for (int64_t d : *dim) dims.push_back(at::maybe_wrap_dim(d, self.dim()));
  std::sort(dims.begin(), dims.end());
  dims.erase(std::unique(dims.begin(), dims.end()), dims.end());
  return dims;
}

Value SumValue(const Value& v, const Ints& dims, bool keepdim) {
  Ints in = Dims(v);
  Ints out;
  Ints keep_shape;
  for (int64_t i = 0; i < static_cast<int64_t>(in.size()); ++i) {
    bool reduced = std::find(dims.begin(), dims.end(), i) != dims.end();
    if (!reduced) out.push_back(in[i]);
    keep_shape.push_back(reduced ? 1 : in[i]);
  }
  Value r = MakeValue("reduce", {v}, MakeShape(TypeOf(v), out), {dims, std::string("sum")});
  return keepdim ? Reshape(r, keep_shape) : r;
}

at::ScalarType SumType(const at::Tensor& self, c10::optional<at::ScalarType> dtype) {
  if (dtype.has_value()) return *dtype;
  if (at::isIntegralType(self.scalar_type(), /*includeBool=*/true)) return at::kLong;
  return self.scalar_type();
}

at::Tensor sum_dim(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                   c10::optional<at::ScalarType> dtype) {
  Count("sum");
  Value v = Convert(Operand(self, "self"), ToPrimitiveType(SumType(self, dtype)));
  return Wrap(SumValue(v, ReduceDims(self, dim), keepdim));
}
at::Tensor sum(const at::Tensor& self, c10::optional<at::ScalarType> dtype) {
  return sum_dim(self, c10::nullopt, false, dtype);
}

at::Tensor mean_dim(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                    c10::optional<at::ScalarType> dtype) {
  Count("mean");
  at::ScalarType type = dtype.value_or(self.scalar_type());
  TORCH_CHECK(at::isFloatingType(type), "axle: mean of a tensor of dtype ", type,
              " (a floating dtype is needed)");
  Value v = Convert(Operand(self, "self"), ToPrimitiveType(type));
  Ints dims = ReduceDims(self, dim);
  int64_t count = 1;
  for (int64_t d : dims) count *= self.size(d);
  Value s = SumValue(v, dims, keepdim);
  return Wrap(Elementwise("div", s, Constant(static_cast<double>(count), TypeOf(s), Dims(s))));
}
at::Tensor mean(const at::Tensor& self, c10::optional<at::ScalarType> dtype) {
  return mean_dim(self, c10::nullopt, false, dtype);
}

// --- Linear algebra -----------------------------------------------------------

Value DotValue(const Value& a, const Value& b, const Ints& lc, const Ints& rc, const Ints& lb,
               const Ints& rb, const Ints& out) {
  return MakeValue("dot_general", {a, b}, MakeShape(TypeOf(a), out), {lc, rc, lb, rb});
}

Value MmValue(const at::Tensor& self, const at::Tensor& mat2) {
  TORCH_CHECK(self.dim() == 2 && mat2.dim() == 2, "axle: mm expects 2-D tensors, got ",
              self.sizes(), " and ", mat2.sizes());
  TORCH_CHECK(self.size(1) == mat2.size(0), "axle: mm shapes ", self.sizes(), " and ", mat2.sizes(),
              " cannot be multiplied");
  PrimitiveType t = ToPrimitiveType(at::result_type(self, mat2));
  return DotValue(Convert(Operand(self, "self"), t), Convert(Operand(mat2, "mat2"), t), {1}, {0},
                  {}, {}, {self.size(0), mat2.size(1)});
}

at::Tensor mm(const at::Tensor& self, const at::Tensor& mat2) {
  Count("mm");
  return Wrap(MmValue(self, mat2));
}

at::Tensor addmm(const at::Tensor& self, const at::Tensor& mat1, const at::Tensor& mat2,
                 const at::Scalar& beta, const at::Scalar& alpha) {
  Count("addmm");
  Value product = MmValue(mat1, mat2);
  PrimitiveType t = TypeOf(product);
  if (alpha.toDouble() != 1.0) product = BinaryValues("mul", product, ScalarValue(alpha, t), t);
  if (beta.toDouble() == 0.0) return Wrap(product);
  Value bias = Convert(Operand(self, "self"), t);
  if (beta.toDouble() != 1.0) bias = BinaryValues("mul", bias, ScalarValue(beta, t), t);
  return Wrap(BinaryValues("add", product, bias, t));
}

at::Tensor bmm(const at::Tensor& self, const at::Tensor& mat2) {
  Count("bmm");
  TORCH_CHECK(self.dim() == 3 && mat2.dim() == 3 && self.size(0) == mat2.size(0) &&
                  self.size(2) == mat2.size(1),
              "axle: bmm shapes ", self.sizes(), " and ", mat2.sizes(), " cannot be multiplied");
  PrimitiveType t = ToPrimitiveType(at::result_type(self, mat2));
  return Wrap(DotValue(Convert(Operand(self, "self"), t), Convert(Operand(mat2, "mat2"), t), {2},
                       {1}, {0}, {0}, {self.size(0), self.size(1), mat2.size(2)}));
}

// --- Shapes (views are copies: see the README) ---------------------------------

Value PermuteValue(const Value& v, const Ints& perm) {
  Ints in = Dims(v);
  Ints out;
  out.reserve(perm.size());
  for (int64_t p : perm) out.push_back(in[p]);
  bool identity = true;
  for (size_t i = 0; i < perm.size(); ++i) identity &= perm[i] == static_cast<int64_t>(i);
  if (identity) return v;
  return MakeValue("transpose", {v}, MakeShape(TypeOf(v), out), {perm});
}

at::Tensor permute(const at::Tensor& self, at::IntArrayRef dims) {
  Count("permute");
  TORCH_CHECK(static_cast<int64_t>(dims.size()) == self.dim(), "axle: permute of a ", self.dim(),
              "-D tensor by ", dims);
  Ints perm;
  for (int64_t d : dims) perm.push_back(at::maybe_wrap_dim(d, self.dim()));
  return Wrap(PermuteValue(Operand(self, "self"), perm));
}

at::Tensor transpose_int(const at::Tensor& self, int64_t dim0, int64_t dim1) {
  Count("transpose");
  int64_t n = self.dim();
  if (n == 0) return Wrap(Operand(self, "self"));
  Ints perm;
  for (int64_t i = 0; i < n; ++i) perm.push_back(i);
  std::swap(perm[at::maybe_wrap_dim(dim0, n)], perm[at::maybe_wrap_dim(dim1, n)]);
  return Wrap(PermuteValue(Operand(self, "self"), perm));
}

at::Tensor t(const at::Tensor& self) {
  TORCH_CHECK(self.dim() <= 2, "axle: t() expects a tensor of at most 2 dimensions, got ",
              self.dim());
  if (self.dim() < 2) {
    Count("t");
    return Wrap(Operand(self, "self"));
  }
  return transpose_int(self, 0, 1);
}

at::Tensor view(const at::Tensor& self, c10::SymIntArrayRef size) {
  Count("view");
  Ints dims = ToInts(at::infer_size_dv(c10::asIntArrayRefSlow(size), self.numel()));
  return Wrap(Reshape(Operand(self, "self"), dims));
}

at::Tensor unsafe_view(const at::Tensor& self, c10::SymIntArrayRef size) {
  return view(self, size);
}

at::Tensor expand(const at::Tensor& self, c10::SymIntArrayRef size, bool implicit) {
  Count("expand");
  Ints want = ToInts(size);
  Ints have = ToInts(self.sizes());
  TORCH_CHECK(want.size() >= have.size(), "axle: expand of shape ", self.sizes(), " to ",
              at::IntArrayRef(want));
  size_t offset = want.size() - have.size();
  for (size_t i = 0; i < want.size(); ++i) {
    if (want[i] == -1) {
      TORCH_CHECK(i >= offset, "axle: expand: -1 for a new dimension");
      want[i] = have[i - offset];
    }
  }
  return Wrap(BroadcastTo(Operand(self, "self"), want));
}

at::Tensor unsqueeze(const at::Tensor& self, int64_t dim) {
  Count("unsqueeze");
  int64_t d = at::maybe_wrap_dim(dim, self.dim() + 1);
  Ints dims = ToInts(self.sizes());
  dims.insert(dims.begin() + d, 1);
  return Wrap(Reshape(Operand(self, "self"), dims));
}

at::Tensor squeeze(const at::Tensor& self) {
  Count("squeeze");
  Ints dims;
  for (int64_t s : self.sizes()) {
    if (s != 1) dims.push_back(s);
  }
  return Wrap(Reshape(Operand(self, "self"), dims));
}

at::Tensor squeeze_dim(const at::Tensor& self, int64_t dim) {
  Count("squeeze");
  Ints dims = ToInts(self.sizes());
  if (self.dim() > 0) {
    int64_t d = at::maybe_wrap_dim(dim, self.dim());
    if (dims[d] == 1) dims.erase(dims.begin() + d);
  }
  return Wrap(Reshape(Operand(self, "self"), dims));
}

int64_t SymOr(const c10::optional<c10::SymInt>& v, int64_t otherwise) {
  return v.has_value() ? v->expect_int() : otherwise;
}

// PyTorch's clamping of slice bounds; returns {start, end} with end >= start.
std::pair<int64_t, int64_t> SliceBounds(int64_t size, int64_t start, int64_t end) {
  if (start < 0) start += size;
  if (end < 0) end += size;
  start = std::clamp<int64_t>(start, 0, size);
  end = std::clamp<int64_t>(end, start, size);
  return {start, end};
}

Value SliceValue(const Value& v, int64_t axis, int64_t start, int64_t end, int64_t step) {
  Ints d = Dims(v);
  Ints starts(d.size(), 0), limits = d, strides(d.size(), 1);
  starts[axis] = start;
  limits[axis] = end;
  strides[axis] = step;
  Ints out = d;
  out[axis] = (end - start + step - 1) / step;
  return MakeValue("slice", {v}, MakeShape(TypeOf(v), out), {starts, limits, strides});
}

// The dispatcher checks kernels against the schema's C++ types: SymInts by value.
// NOLINTBEGIN(performance-unnecessary-value-param)
at::Tensor slice(const at::Tensor& self, int64_t dim, c10::optional<c10::SymInt> start,
                 c10::optional<c10::SymInt> end, c10::SymInt step) {
  Count("slice");
  int64_t axis = at::maybe_wrap_dim(dim, self.dim());
  int64_t s = step.expect_int();
  TORCH_CHECK(s > 0, "axle: slice step must be positive, got ", s);
  auto [lo, hi] = SliceBounds(self.size(axis), SymOr(start, 0),
                              SymOr(end, std::numeric_limits<int64_t>::max()));
  return Wrap(SliceValue(Operand(self, "self"), axis, lo, hi, s));
}
// NOLINTEND(performance-unnecessary-value-param)

at::Tensor select(const at::Tensor& self, int64_t dim, int64_t index) {
  Count("select");
  int64_t axis = at::maybe_wrap_dim(dim, self.dim());
  int64_t size = self.size(axis);
  TORCH_CHECK(index >= -size && index < size, "axle: select index ", index,
              " is out of range for dimension ", axis, " of size ", size);
  if (index < 0) index += size;
  Ints out = ToInts(self.sizes());
  out.erase(out.begin() + axis);
  return Wrap(Reshape(SliceValue(Operand(self, "self"), axis, index, index + 1, 1), out));
}

// The gradient of a slice: `grad` placed at [start, end) by `step` in zeros.
Value PadInto(const Value& grad, const Ints& input_sizes, int64_t axis, int64_t start,
              int64_t step) {
  Ints g = Dims(grad);
  size_t n = input_sizes.size();
  Ints low(n, 0), high(n, 0), interior(n, 0);
  low[axis] = start;
  interior[axis] = g[axis] > 0 ? step - 1 : 0;
  int64_t covered = g[axis] > 0 ? start + (g[axis] - 1) * step + 1 : start;
  high[axis] = input_sizes[axis] - covered;
  PrimitiveType t = TypeOf(grad);
  return MakeValue("pad", {grad, Constant(0, t, {})}, MakeShape(t, input_sizes),
                   {low, high, interior});
}

// The dispatcher checks kernels against the schema's C++ types: SymInts by value.
// NOLINTBEGIN(performance-unnecessary-value-param)
at::Tensor slice_backward(const at::Tensor& grad_output, c10::SymIntArrayRef input_sizes,
                          int64_t dim, c10::SymInt start, c10::SymInt end, c10::SymInt step) {
  Count("slice_backward");
  Ints sizes = ToInts(input_sizes);
  int64_t axis = at::maybe_wrap_dim(dim, static_cast<int64_t>(sizes.size()));
  auto [lo, hi] = SliceBounds(sizes[axis], start.expect_int(), end.expect_int());
  return Wrap(PadInto(Operand(grad_output, "grad_output"), sizes, axis, lo, step.expect_int()));
}
// NOLINTEND(performance-unnecessary-value-param)

at::Tensor select_backward(const at::Tensor& grad_output, c10::SymIntArrayRef input_sizes,
                           int64_t dim, int64_t index) {
  Count("select_backward");
  Ints sizes = ToInts(input_sizes);
  int64_t axis = at::maybe_wrap_dim(dim, static_cast<int64_t>(sizes.size()));
  if (index < 0) index += sizes[axis];
  Ints g = sizes;
  g[axis] = 1;
  return Wrap(PadInto(Reshape(Operand(grad_output, "grad_output"), g), sizes, axis, index, 1));
}

at::Tensor cat(const at::ITensorListRef& tensors, int64_t dim) {
  Count("cat");
  std::vector<Value> values;
  at::ScalarType type = at::ScalarType::Undefined;
  Ints out;
  int64_t axis = 0;
  for (const at::Tensor& t : tensors) {
    // PyTorch skips 1-D empty tensors in cat.
    if (t.dim() == 1 && t.numel() == 0) continue;
    type = type == at::ScalarType::Undefined ? t.scalar_type()
                                             : at::promote_types(type, t.scalar_type());
    if (out.empty()) {
      axis = at::maybe_wrap_dim(dim, t.dim());
      out = ToInts(t.sizes());
      out[axis] = 0;
    }
    TORCH_CHECK(t.dim() == static_cast<int64_t>(out.size()), "axle: cat of tensors of ", out.size(),
                " and ", t.dim(), " dimensions");
    out[axis] += t.size(axis);
    values.push_back(Operand(t, "tensors"));
  }
  TORCH_CHECK(!values.empty(), "axle: cat of no (non-empty) tensors");
  for (Value& v : values) v = Convert(v, ToPrimitiveType(type));
  if (values.size() == 1) return Wrap(values[0]);
  return Wrap(MakeValue("concatenate", values, MakeShape(ToPrimitiveType(type), out), {axis}));
}

// detach() and alias() share the value: in-place updates are seen by both.
at::Tensor alias(const at::Tensor& self) {
  AxleTensorImpl* impl = GetImpl(self, "self");
  return MakeTensor(impl->tensor(), self.scalar_type(), kDevice);
}

// --- Losses ---------------------------------------------------------------------

Value Reduce(const Value& v, int64_t reduction) {
  if (reduction == at::Reduction::None) return v;
  Ints all;
  for (size_t i = 0; i < Dims(v).size(); ++i) all.push_back(static_cast<int64_t>(i));
  int64_t count = 1;
  for (int64_t d : Dims(v)) count *= d;
  Value s = SumValue(v, all, false);
  if (reduction == at::Reduction::Sum) return s;
  return Elementwise("div", s, Constant(static_cast<double>(count), TypeOf(s), {}));
}

at::Tensor mse_loss(const at::Tensor& self, const at::Tensor& target, int64_t reduction) {
  Count("mse_loss");
  Value diff = Binary("sub", self, target, at::result_type(self, target));
  return Wrap(Reduce(Elementwise("mul", diff, diff), reduction));
}

at::Tensor mse_loss_backward(const at::Tensor& grad_output, const at::Tensor& self,
                             const at::Tensor& target, int64_t reduction) {
  Count("mse_loss_backward");
  PrimitiveType t = ToPrimitiveType(self.scalar_type());
  Value diff = Binary("sub", self, target, self.scalar_type());
  Ints d = Dims(diff);
  double scale = 2.0;
  if (reduction == at::Reduction::Mean)
    scale /= static_cast<double>(std::max<int64_t>(self.numel(), 1));
  Value g = BroadcastTo(Convert(Operand(grad_output, "grad_output"), t), d);
  return Wrap(Elementwise("mul", Elementwise("mul", diff, Constant(scale, t, d)), g));
}

// --- Softmax and the negative log-likelihood ---------------------------------------

Value ReduceKind(const Value& v, int64_t dim, const char* kind, bool keepdim) {
  Ints in = Dims(v);
  Ints out;
  Ints keep = in;
  for (int64_t i = 0; i < static_cast<int64_t>(in.size()); ++i) {
    if (i != dim) out.push_back(in[i]);
  }
  keep[dim] = 1;
  Value r = MakeValue("reduce", {v}, MakeShape(TypeOf(v), out), {Ints{dim}, std::string(kind)});
  return keepdim ? Reshape(r, keep) : r;
}

at::Tensor log_softmax(const at::Tensor& self, int64_t dim, bool half_to_float) {
  Count("_log_softmax");
  Value x = Operand(self, "self");
  if (half_to_float) x = Convert(x, F32);
  Ints d = Dims(x);
  if (d.empty()) return Wrap(Constant(0, TypeOf(x), d));
  int64_t axis = at::maybe_wrap_dim(dim, static_cast<int64_t>(d.size()));
  Value shifted = Elementwise("sub", x, BroadcastTo(ReduceKind(x, axis, "max", true), d));
  Value lse = Unary("log", ReduceKind(Unary("exp", shifted), axis, "sum", true));
  return Wrap(Elementwise("sub", shifted, BroadcastTo(lse, d)));
}

at::Tensor log_softmax_backward(const at::Tensor& grad_output, const at::Tensor& output,
                                int64_t dim, at::ScalarType input_dtype) {
  Count("_log_softmax_backward_data");
  Value g = Operand(grad_output, "grad_output");
  Value out = Convert(Operand(output, "output"), TypeOf(g));
  Ints d = Dims(g);
  if (d.empty()) return Wrap(Convert(Constant(0, TypeOf(g), d), ToPrimitiveType(input_dtype)));
  int64_t axis = at::maybe_wrap_dim(dim, static_cast<int64_t>(d.size()));
  Value sum = BroadcastTo(ReduceKind(g, axis, "sum", true), d);
  Value grad = Elementwise("sub", g, Elementwise("mul", Unary("exp", out), sum));
  return Wrap(Convert(grad, ToPrimitiveType(input_dtype)));
}

// The pieces of nll_loss on [N, C] log-probabilities: the target's one-hot
// mask (false on ignored rows) and each row's weight (0 when ignored).
struct NllParts {
  Value mask;        // PRED [N, C]
  Value row_weight;  // [N]
  Ints dims;         // {N, C}
  PrimitiveType type;
};

NllParts MakeNllParts(const at::Tensor& self, const at::Tensor& target,
                      const c10::optional<at::Tensor>& weight, int64_t ignore_index) {
  TORCH_CHECK(self.dim() == 2 && target.dim() == 1 && target.size(0) == self.size(0),
              "axle: nll_loss expects [N, C] input and [N] target, got ", self.sizes(), " and ",
              target.sizes());
  NllParts parts;
  parts.dims = {self.size(0), self.size(1)};
  parts.type = ToPrimitiveType(self.scalar_type());
  Value t = Convert(Operand(target, "target"), S64);
  Value t2 = BroadcastTo(Reshape(t, {parts.dims[0], 1}), parts.dims);
  Value classes = MakeValue("iota", {}, MakeShape(S64, parts.dims), {int64_t{1}});
  Value valid =
      MakeValue("ne", {t, Constant(static_cast<double>(ignore_index), S64, {parts.dims[0]})},
                MakeShape(PRED, {parts.dims[0]}));
  Value onehot = MakeValue("eq", {t2, classes}, MakeShape(PRED, parts.dims));
  parts.mask =
      MakeValue("and", {onehot, BroadcastTo(Reshape(valid, {parts.dims[0], 1}), parts.dims)},
                MakeShape(PRED, parts.dims));
  Value zero = Constant(0, parts.type, parts.dims);
  Value w = weight.has_value() && weight->defined()
                ? BroadcastTo(Convert(Operand(*weight, "weight"), parts.type), parts.dims)
                : Constant(1, parts.type, parts.dims);
  parts.row_weight = SumValue(
      MakeValue("select", {parts.mask, w, zero}, MakeShape(parts.type, parts.dims)), {1}, false);
  return parts;
}

std::tuple<at::Tensor, at::Tensor> nll_loss_forward(const at::Tensor& self,
                                                    const at::Tensor& target,
                                                    const c10::optional<at::Tensor>& weight,
                                                    int64_t reduction, int64_t ignore_index) {
  Count("nll_loss_forward");
  NllParts p = MakeNllParts(self, target, weight, ignore_index);
  Value x = Convert(Operand(self, "self"), p.type);
  Value picked = SumValue(
      MakeValue("select", {p.mask, x, Constant(0, p.type, p.dims)}, MakeShape(p.type, p.dims)), {1},
      false);  // [N]
  Value losses = Unary("neg", Elementwise("mul", picked, p.row_weight));
  Value total_weight = SumValue(p.row_weight, {0}, false);
  if (reduction == at::Reduction::None) {
    return {Wrap(losses), Wrap(total_weight)};
  }
  Value sum = SumValue(losses, {0}, false);
  if (reduction == at::Reduction::Sum) return {Wrap(sum), Wrap(total_weight)};
  return {Wrap(Elementwise("div", sum, total_weight)), Wrap(total_weight)};
}

at::Tensor nll_loss_backward(const at::Tensor& grad_output, const at::Tensor& self,
                             const at::Tensor& target, const c10::optional<at::Tensor>& weight,
                             int64_t reduction, int64_t ignore_index,
                             const at::Tensor& total_weight) {
  Count("nll_loss_backward");
  NllParts p = MakeNllParts(self, target, weight, ignore_index);
  Value g = Convert(Operand(grad_output, "grad_output"), p.type);
  if (reduction == at::Reduction::Mean) {
    g = Elementwise("div", g, Convert(Operand(total_weight, "total_weight"), p.type));
  }
  Value per_row = reduction == at::Reduction::None
                      ? Elementwise("mul", g, p.row_weight)
                      : Elementwise("mul", BroadcastTo(g, {p.dims[0]}), p.row_weight);
  Value spread = BroadcastTo(Reshape(Unary("neg", per_row), {p.dims[0], 1}), p.dims);
  return Wrap(MakeValue("select", {p.mask, spread, Constant(0, p.type, p.dims)},
                        MakeShape(p.type, p.dims)));
}

// --- Softmax, layer norm, embedding --------------------------------------------------

at::Tensor softmax(const at::Tensor& self, int64_t dim, bool half_to_float) {
  Count("_softmax");
  Value x = Operand(self, "self");
  if (half_to_float) x = Convert(x, F32);
  Ints d = Dims(x);
  if (d.empty()) return Wrap(Constant(1, TypeOf(x), d));
  int64_t axis = at::maybe_wrap_dim(dim, static_cast<int64_t>(d.size()));
  Value e = Unary("exp", Elementwise("sub", x, BroadcastTo(ReduceKind(x, axis, "max", true), d)));
  return Wrap(Elementwise("div", e, BroadcastTo(ReduceKind(e, axis, "sum", true), d)));
}

at::Tensor softmax_backward(const at::Tensor& grad_output, const at::Tensor& output, int64_t dim,
                            at::ScalarType input_dtype) {
  Count("_softmax_backward_data");
  Value g = Operand(grad_output, "grad_output");
  Value y = Convert(Operand(output, "output"), TypeOf(g));
  Ints d = Dims(g);
  if (d.empty()) return Wrap(Convert(Constant(0, TypeOf(g), d), ToPrimitiveType(input_dtype)));
  int64_t axis = at::maybe_wrap_dim(dim, static_cast<int64_t>(d.size()));
  Value dot = BroadcastTo(ReduceKind(Elementwise("mul", g, y), axis, "sum", true), d);
  return Wrap(
      Convert(Elementwise("mul", y, Elementwise("sub", g, dot)), ToPrimitiveType(input_dtype)));
}

// Layer norm over the trailing `normalized` dimensions: the leading ones
// ("rows") and the statistics' shape (rows, then 1s).
struct LayerNormDims {
  Ints all;    // input dims
  Ints inner;  // the normalized dimension numbers
  Ints stats;  // mean/rstd dims
  int64_t count = 1;
};

LayerNormDims MakeLayerNormDims(const at::Tensor& input, c10::SymIntArrayRef normalized_shape) {
  Ints normalized = ToInts(normalized_shape);
  LayerNormDims d;
  d.all = ToInts(input.sizes());
  int64_t axis = static_cast<int64_t>(d.all.size()) - static_cast<int64_t>(normalized.size());
  TORCH_CHECK(axis >= 0 && std::equal(normalized.begin(), normalized.end(), d.all.begin() + axis),
              "axle: layer_norm's normalized_shape ", at::IntArrayRef(normalized),
              " is not the end of the input's shape ", input.sizes());
  for (int64_t i = 0; i < static_cast<int64_t>(d.all.size()); ++i) {
    if (i >= axis) {
      d.inner.push_back(i);
      d.count *= d.all[i];
      d.stats.push_back(1);
    } else {
      d.stats.push_back(d.all[i]);
    }
  }
  return d;
}

Value MeanOver(const Value& v, const LayerNormDims& d) {
  Value s = Reshape(SumValue(v, d.inner, false), d.stats);
  return Elementwise("div", s, Constant(static_cast<double>(d.count), TypeOf(v), d.stats));
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> native_layer_norm(
    const at::Tensor& input, c10::SymIntArrayRef normalized_shape,
    const c10::optional<at::Tensor>& weight, const c10::optional<at::Tensor>& bias, double eps) {
  Count("native_layer_norm");
  LayerNormDims d = MakeLayerNormDims(input, normalized_shape);
  Value x = Operand(input, "input");
  PrimitiveType t = TypeOf(x);
  Value mean = MeanOver(x, d);
  Value centered = Elementwise("sub", x, BroadcastTo(mean, d.all));
  Value var = MeanOver(Elementwise("mul", centered, centered), d);
  Value rstd = Unary("rsqrt", Elementwise("add", var, Constant(eps, t, d.stats)));
  Value out = Elementwise("mul", centered, BroadcastTo(rstd, d.all));
  if (weight.has_value() && weight->defined()) {
    out = Elementwise("mul", out, BroadcastTo(Convert(Operand(*weight, "weight"), t), d.all));
  }
  if (bias.has_value() && bias->defined()) {
    out = Elementwise("add", out, BroadcastTo(Convert(Operand(*bias, "bias"), t), d.all));
  }
  return {Wrap(out), Wrap(mean), Wrap(rstd)};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> native_layer_norm_backward(
    const at::Tensor& grad_out, const at::Tensor& input, c10::SymIntArrayRef normalized_shape,
    const at::Tensor& mean, const at::Tensor& rstd, const c10::optional<at::Tensor>& weight,
    const c10::optional<at::Tensor>& bias, std::array<bool, 3> output_mask) {
  Count("native_layer_norm_backward");
  LayerNormDims d = MakeLayerNormDims(input, normalized_shape);
  Value g = Operand(grad_out, "grad_out");
  Value x = Operand(input, "input");
  PrimitiveType t = TypeOf(x);
  Value r = BroadcastTo(Convert(Operand(rstd, "rstd"), t), d.all);
  Value xhat = Elementwise(
      "mul", Elementwise("sub", x, BroadcastTo(Convert(Operand(mean, "mean"), t), d.all)), r);
  bool has_weight = weight.has_value() && weight->defined();
  Value dxhat =
      has_weight ? Elementwise("mul", g, BroadcastTo(Convert(Operand(*weight, "weight"), t), d.all))
                 : g;
  at::Tensor grad_input, grad_weight, grad_bias;
  if (output_mask[0]) {
    Value m1 = BroadcastTo(MeanOver(dxhat, d), d.all);
    Value m2 = BroadcastTo(MeanOver(Elementwise("mul", dxhat, xhat), d), d.all);
    grad_input = Wrap(Elementwise(
        "mul", r, Elementwise("sub", Elementwise("sub", dxhat, m1), Elementwise("mul", xhat, m2))));
  }
  Ints outer;
  for (int64_t i = 0; i < static_cast<int64_t>(d.all.size()) - static_cast<int64_t>(d.inner.size());
       ++i) {
    outer.push_back(i);
  }
  if (output_mask[1] && has_weight)
    grad_weight = Wrap(SumValue(Elementwise("mul", g, xhat), outer, false));
  if (output_mask[2] && bias.has_value() && bias->defined())
    grad_bias = Wrap(SumValue(g, outer, false));
  return {grad_input, grad_weight, grad_bias};
}

// Batch norm over every dimension but 1 (the channels): the channel
// statistics broadcast back along dimension 1.
struct BatchNormDims {
  Ints all;
  Ints reduced;  // every dimension but 1
  int64_t count = 1;
  int64_t channels = 0;
};

BatchNormDims MakeBatchNormDims(const at::Tensor& input) {
  TORCH_CHECK(input.dim() >= 2, "axle: batch_norm expects at least 2 dimensions, got ",
              input.sizes());
  BatchNormDims d;
  d.all = ToInts(input.sizes());
  d.channels = d.all[1];
  for (int64_t i = 0; i < static_cast<int64_t>(d.all.size()); ++i) {
    if (i == 1) continue;
    d.reduced.push_back(i);
    d.count *= d.all[i];
  }
  return d;
}

Value PerChannel(const Value& v, const BatchNormDims& d) {  // [C] -> input's shape
  return MakeValue("broadcast_in_dim", {v}, MakeShape(TypeOf(v), d.all), {Ints{1}});
}

Value ChannelMean(const Value& v, const BatchNormDims& d) {
  Value s = SumValue(v, d.reduced, false);
  return Elementwise("div", s, Constant(static_cast<double>(d.count), TypeOf(v), {d.channels}));
}

bool Defined(const c10::optional<at::Tensor>& t) { return t.has_value() && t->defined(); }

std::tuple<at::Tensor, at::Tensor, at::Tensor> native_batch_norm(
    const at::Tensor& input, const c10::optional<at::Tensor>& weight,
    const c10::optional<at::Tensor>& bias, const c10::optional<at::Tensor>& running_mean,
    const c10::optional<at::Tensor>& running_var, bool training, double momentum, double eps) {
  Count("native_batch_norm");
  BatchNormDims d = MakeBatchNormDims(input);
  Value x = Operand(input, "input");
  PrimitiveType t = TypeOf(x);
  Ints c = {d.channels};
  Value mean;
  Value var;
  if (training) {
    mean = ChannelMean(x, d);
    Value centered = Elementwise("sub", x, PerChannel(mean, d));
    var = ChannelMean(Elementwise("mul", centered, centered), d);
    // The running statistics move toward the batch's (the variance unbiased).
    if (Defined(running_mean)) {
      at::Tensor rm = *running_mean;
      Value old = Convert(Operand(rm, "running_mean"), t);
      Assign(rm, Elementwise("add", Elementwise("mul", old, Constant(1 - momentum, t, c)),
                             Elementwise("mul", mean, Constant(momentum, t, c))));
    }
    if (Defined(running_var)) {
      at::Tensor rv = *running_var;
      Value old = Convert(Operand(rv, "running_var"), t);
      double unbias = d.count > 1 ? static_cast<double>(d.count) / (d.count - 1) : 1.0;
      Assign(rv, Elementwise("add", Elementwise("mul", old, Constant(1 - momentum, t, c)),
                             Elementwise("mul", var, Constant(momentum * unbias, t, c))));
    }
  } else {
    TORCH_CHECK(Defined(running_mean) && Defined(running_var),
                "axle: batch_norm in eval mode needs running_mean and running_var");
    mean = Convert(Operand(*running_mean, "running_mean"), t);
    var = Convert(Operand(*running_var, "running_var"), t);
  }
  Value invstd = Unary("rsqrt", Elementwise("add", var, Constant(eps, t, c)));
  Value out = Elementwise("mul", Elementwise("sub", x, PerChannel(mean, d)), PerChannel(invstd, d));
  if (Defined(weight))
    out = Elementwise("mul", out, PerChannel(Convert(Operand(*weight, "weight"), t), d));
  if (Defined(bias))
    out = Elementwise("add", out, PerChannel(Convert(Operand(*bias, "bias"), t), d));
  if (!training) {  // PyTorch returns empty saved statistics in eval mode
    return {Wrap(out), Wrap(Constant(0, t, {0})), Wrap(Constant(0, t, {0}))};
  }
  return {Wrap(out), Wrap(mean), Wrap(invstd)};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> native_batch_norm_backward(
    const at::Tensor& grad_out, const at::Tensor& input, const c10::optional<at::Tensor>& weight,
    const c10::optional<at::Tensor>& running_mean, const c10::optional<at::Tensor>& running_var,
    const c10::optional<at::Tensor>& save_mean, const c10::optional<at::Tensor>& save_invstd,
    bool train, double eps, std::array<bool, 3> output_mask) {
  Count("native_batch_norm_backward");
  BatchNormDims d = MakeBatchNormDims(input);
  Value g = Operand(grad_out, "grad_out");
  Value x = Operand(input, "input");
  PrimitiveType t = TypeOf(x);
  Ints c = {d.channels};
  Value mean;
  Value invstd;
  if (train) {
    TORCH_CHECK(Defined(save_mean) && Defined(save_invstd),
                "axle: batch_norm_backward in training needs the saved statistics");
    mean = Convert(Operand(*save_mean, "save_mean"), t);
    invstd = Convert(Operand(*save_invstd, "save_invstd"), t);
  } else {
    mean = Convert(Operand(*running_mean, "running_mean"), t);
    invstd = Unary("rsqrt", Elementwise("add", Convert(Operand(*running_var, "running_var"), t),
                                        Constant(eps, t, c)));
  }
  Value xhat =
      Elementwise("mul", Elementwise("sub", x, PerChannel(mean, d)), PerChannel(invstd, d));
  Value w = Defined(weight) ? Convert(Operand(*weight, "weight"), t) : Constant(1, t, c);
  at::Tensor grad_input, grad_weight, grad_bias;
  if (output_mask[0]) {
    Value scale = PerChannel(Elementwise("mul", w, invstd), d);
    if (train) {
      Value mg = PerChannel(ChannelMean(g, d), d);
      Value mgx = PerChannel(ChannelMean(Elementwise("mul", g, xhat), d), d);
      grad_input = Wrap(Elementwise(
          "mul", scale,
          Elementwise("sub", Elementwise("sub", g, mg), Elementwise("mul", xhat, mgx))));
    } else {
      grad_input = Wrap(Elementwise("mul", g, scale));
    }
  }
  if (output_mask[1]) grad_weight = Wrap(SumValue(Elementwise("mul", g, xhat), d.reduced, false));
  if (output_mask[2]) grad_bias = Wrap(SumValue(g, d.reduced, false));
  return {grad_input, grad_weight, grad_bias};
}

// --- Convolution (the XLA backend's convolution_overrideable hooks) -------------

Ints Spatial(at::IntArrayRef v, size_t n, const char* what) {
  TORCH_CHECK(v.size() == n || v.size() == 1, "axle: convolution ", what, " has ", v.size(),
              " values for ", n, " spatial dimensions");
  return v.size() == n ? ToInts(v) : Ints(n, v[0]);
}

// Flattened dimension numbers (lowering.cc's convolution).
Ints ConvDims(int64_t in_batch, int64_t in_feature, int64_t k_in, int64_t k_out, int64_t out_batch,
              int64_t out_feature, size_t n) {
  Ints d = {in_batch, in_feature};
  for (size_t i = 0; i < n; ++i) d.push_back(static_cast<int64_t>(2 + i));
  d.push_back(k_in);
  d.push_back(k_out);
  for (size_t i = 0; i < n; ++i) d.push_back(static_cast<int64_t>(2 + i));
  d.push_back(out_batch);
  d.push_back(out_feature);
  for (size_t i = 0; i < n; ++i) d.push_back(static_cast<int64_t>(2 + i));
  return d;
}

void CheckConvSupported(bool transposed, int64_t groups) {
  TORCH_CHECK(!transposed, "axle: transposed convolution is not lowered yet");
  TORCH_CHECK(groups == 1, "axle: grouped convolution (groups=", groups, ") is not lowered yet");
}

at::Tensor convolution(const at::Tensor& input, const at::Tensor& weight,
                       const c10::optional<at::Tensor>& bias, at::IntArrayRef stride,
                       at::IntArrayRef padding, at::IntArrayRef dilation, bool transposed,
                       at::IntArrayRef output_padding, int64_t groups) {
  Count("convolution");
  CheckConvSupported(transposed, groups);
  size_t n = static_cast<size_t>(input.dim() - 2);
  Ints s = Spatial(stride, n, "stride"), p = Spatial(padding, n, "padding"),
       dl = Spatial(dilation, n, "dilation");
  PrimitiveType t = ToPrimitiveType(input.scalar_type());
  Ints out = {input.size(0), weight.size(0)};
  for (size_t i = 0; i < n; ++i) {
    int64_t k_eff = (weight.size(2 + i) - 1) * dl[i] + 1;
    out.push_back((input.size(2 + i) + 2 * p[i] - k_eff) / s[i] + 1);
  }
  Value conv = MakeValue(
      "convolution", {Operand(input, "input"), Convert(Operand(weight, "weight"), t)},
      MakeShape(t, out), {s, p, p, Ints(n, 1), dl, ConvDims(0, 1, 1, 0, 0, 1, n), int64_t{1}});
  if (Defined(bias)) {
    conv = Elementwise("add", conv,
                       MakeValue("broadcast_in_dim", {Convert(Operand(*bias, "bias"), t)},
                                 MakeShape(t, out), {Ints{1}}));
  }
  return Wrap(conv);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> convolution_backward(
    const at::Tensor& grad_output, const at::Tensor& input, const at::Tensor& weight,
    at::IntArrayRef stride, at::IntArrayRef padding, at::IntArrayRef dilation, bool transposed,
    at::IntArrayRef output_padding, int64_t groups, std::array<bool, 3> output_mask) {
  Count("convolution_backward");
  CheckConvSupported(transposed, groups);
  size_t n = static_cast<size_t>(input.dim() - 2);
  Ints s = Spatial(stride, n, "stride"), p = Spatial(padding, n, "padding"),
       dl = Spatial(dilation, n, "dilation");
  PrimitiveType t = ToPrimitiveType(input.scalar_type());
  Value g = Convert(Operand(grad_output, "grad_output"), t);
  at::Tensor grad_input, grad_weight, grad_bias;
  if (output_mask[0]) {
    // The input's gradient: grad_output dilated by the strides, convolved
    // with the spatially reversed kernel whose in/out features swap.
    Ints spatial;
    Ints low, high;
    for (size_t i = 0; i < n; ++i) {
      spatial.push_back(static_cast<int64_t>(2 + i));
      int64_t k_eff = (weight.size(2 + i) - 1) * dl[i] + 1;
      low.push_back(k_eff - 1 - p[i]);
      high.push_back(input.size(2 + i) - 1 - (grad_output.size(2 + i) - 1) * s[i] + p[i]);
    }
    Value w = Convert(Operand(weight, "weight"), t);
    Value reversed = MakeValue("rev", {w}, MakeShape(t, ToInts(weight.sizes())), {spatial});
    grad_input =
        Wrap(MakeValue("convolution", {g, reversed}, MakeShape(t, ToInts(input.sizes())),
                       {Ints(n, 1), low, high, s, dl, ConvDims(0, 1, 0, 1, 0, 1, n), int64_t{1}}));
  }
  if (output_mask[1]) {
    // The kernel's gradient: the input (batch and features swapped)
    // convolved with grad_output as the kernel, its strides as dilation.
    Ints low, high;
    for (size_t i = 0; i < n; ++i) {
      low.push_back(p[i]);
      high.push_back((weight.size(2 + i) - 1) * dl[i] + (grad_output.size(2 + i) - 1) * s[i] + 1 -
                     input.size(2 + i) - p[i]);
    }
    grad_weight = Wrap(
        MakeValue("convolution", {Operand(input, "input"), g}, MakeShape(t, ToInts(weight.sizes())),
                  {dl, low, high, Ints(n, 1), s, ConvDims(1, 0, 0, 1, 1, 0, n), int64_t{1}}));
  }
  if (output_mask[2]) {
    Ints reduced = {0};
    for (size_t i = 0; i < n; ++i) reduced.push_back(static_cast<int64_t>(2 + i));
    grad_bias = Wrap(SumValue(g, reduced, false));
  }
  return {grad_input, grad_weight, grad_bias};
}

// One-hot [M, V] (as `type`) of M indices into V rows.
Value OneHot(const Value& indices, int64_t rows, PrimitiveType type) {
  int64_t m = 1;
  for (int64_t s : Dims(indices)) m *= s;
  Value flat = BroadcastTo(Reshape(Convert(indices, S64), {m, 1}), {m, rows});
  Value classes = MakeValue("iota", {}, MakeShape(S64, {m, rows}), {int64_t{1}});
  return Convert(MakeValue("eq", {flat, classes}, MakeShape(PRED, {m, rows})), type);
}

at::Tensor index_select(const at::Tensor& self, int64_t dim, const at::Tensor& index) {
  Count("index_select");
  TORCH_CHECK(index.dim() <= 1, "axle: index_select's index must be 0- or 1-D, got ",
              index.sizes());
  int64_t axis = at::maybe_wrap_dim(dim, std::max<int64_t>(self.dim(), 1));
  Value x = Operand(self, "self");
  PrimitiveType t = TypeOf(x);
  TORCH_CHECK(primitive_util::IsFloatingPointType(t), "axle: index_select of dtype ",
              self.scalar_type(), " (lowered for floating dtypes)");
  Ints d = Dims(x);
  int64_t rows = d[axis];
  // Move `axis` first, flatten the rest, select rows by a one-hot product.
  Ints perm = {axis};
  for (int64_t i = 0; i < static_cast<int64_t>(d.size()); ++i) {
    if (i != axis) perm.push_back(i);
  }
  Value moved = PermuteValue(x, perm);
  int64_t rest = 1;
  for (size_t i = 1; i < perm.size(); ++i) rest *= d[perm[i]];
  Value table = Reshape(moved, {rows, rest});
  Value onehot = OneHot(Operand(index, "index"), rows, t);
  int64_t m = Dims(onehot)[0];
  Value picked = DotValue(onehot, table, {1}, {0}, {}, {}, {m, rest});
  Ints picked_dims = {m};
  for (size_t i = 1; i < perm.size(); ++i) picked_dims.push_back(d[perm[i]]);
  Ints inverse(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inverse[perm[i]] = static_cast<int64_t>(i);
  return Wrap(PermuteValue(Reshape(picked, picked_dims), inverse));
}

// The dispatcher checks kernels against the schema's C++ types: SymInts by value.
// NOLINTBEGIN(performance-unnecessary-value-param)
at::Tensor embedding_dense_backward(const at::Tensor& grad_output, const at::Tensor& indices,
                                    c10::SymInt num_weights, int64_t padding_idx,
                                    bool scale_grad_by_freq) {
  Count("embedding_dense_backward");
  TORCH_CHECK(!scale_grad_by_freq, "axle: embedding's scale_grad_by_freq is not lowered");
  int64_t rows = num_weights.expect_int();
  Value g = Operand(grad_output, "grad_output");
  PrimitiveType t = TypeOf(g);
  Value onehot = OneHot(Operand(indices, "indices"), rows, t);  // [M, V]
  int64_t m = Dims(onehot)[0];
  int64_t width = grad_output.size(-1);
  Value g2 = Reshape(g, {m, width});
  Value grad = DotValue(onehot, g2, {0}, {0}, {}, {}, {rows, width});
  if (padding_idx >= 0 && padding_idx < rows) {
    Value row = MakeValue("iota", {}, MakeShape(S64, {rows, width}), {int64_t{0}});
    Value keep =
        MakeValue("ne", {row, Constant(static_cast<double>(padding_idx), S64, {rows, width})},
                  MakeShape(PRED, {rows, width}));
    grad = MakeValue("select", {keep, grad, Constant(0, t, {rows, width})},
                     MakeShape(t, {rows, width}));
  }
  return Wrap(grad);
}
// NOLINTEND(performance-unnecessary-value-param)

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

// --- Creation, copies, transfers ------------------------------------------------

at::ScalarType DtypeOr(c10::optional<at::ScalarType> dtype) {
  return dtype.value_or(at::typeMetaToScalarType(at::get_default_dtype()));
}

void CheckDevice(c10::optional<at::Device> device) {
  TORCH_CHECK(!device.has_value() || device->type() == at::DeviceType::XLA,
              "axle: a tensor for device ", *device, " created by the xla device's kernel");
  TORCH_CHECK(!device.has_value() || device->index() <= 0,
              "axle: there is one xla device, xla:0; got ", *device);
}

at::Tensor Full(const Ints& dims, double value, at::ScalarType dtype) {
  return Wrap(Constant(value, ToPrimitiveType(dtype), dims));
}

at::Tensor empty(c10::SymIntArrayRef size, c10::optional<at::ScalarType> dtype,
                 c10::optional<at::Layout> layout, c10::optional<at::Device> device,
                 c10::optional<bool> pin_memory, c10::optional<at::MemoryFormat> memory_format) {
  Count("empty");
  CheckDevice(device);
  TORCH_CHECK(!layout.has_value() || *layout == at::kStrided, "axle: layout ", *layout,
              " is not supported on the xla device");
  // Uninitialized memory reads as zeros here.
  return Full(ToInts(size), 0, DtypeOr(dtype));
}

at::Tensor empty_strided(c10::SymIntArrayRef size, c10::SymIntArrayRef stride,
                         c10::optional<at::ScalarType> dtype, c10::optional<at::Layout> layout,
                         c10::optional<at::Device> device, c10::optional<bool> pin_memory) {
  return empty(size, dtype, layout, device, pin_memory, c10::nullopt);
}

at::Tensor& fill_(at::Tensor& self, const at::Scalar& value) {
  Count("fill_");
  PrimitiveType t = ToPrimitiveType(self.scalar_type());
  return Assign(self, BroadcastTo(ScalarValue(value, t), ToInts(self.sizes())));
}

at::Tensor& zero_(at::Tensor& self) {
  Count("zero_");
  return Assign(self, Constant(0, ToPrimitiveType(self.scalar_type()), ToInts(self.sizes())));
}

at::Tensor clone(const at::Tensor& self, c10::optional<at::MemoryFormat> memory_format) {
  Count("clone");
  return Wrap(Operand(self, "self"));
}

// The value of an xla tensor as a CPU tensor (computing it if pending).
at::Tensor ToCpu(const at::Tensor& t) {
  AxleTensorImpl* impl = GetImpl(t, "tensor");
  absl::StatusOr<Literal> literal = impl->tensor()->ToLiteral();
  Check(literal.status());
  return LiteralToCpuTensor(*literal, t.scalar_type());
}

at::Tensor& copy_(at::Tensor& self, const at::Tensor& src, bool non_blocking) {
  Count("copy_");
  bool self_xla = self.device().type() == at::DeviceType::XLA;
  bool src_xla = src.device().type() == at::DeviceType::XLA;
  if (self_xla && !src_xla) {
    TORCH_CHECK(src.device().is_cpu(), "axle: copy to the xla device from ", src.device(),
                " (only cpu tensors can be copied in)");
    CheckNotView(self);
    at::Tensor host = src.to(self.scalar_type()).expand(self.sizes()).contiguous();
    auto data = std::make_shared<lazy::DeviceData>(CpuTensorToLiteral(host));
    GetImpl(self, "self")->tensor()->SetData(std::move(data));
    return self;
  }
  if (!self_xla) {
    self.copy_(ToCpu(src));
    return self;
  }
  Value v = Convert(Operand(src, "src"), ToPrimitiveType(self.scalar_type()));
  return Assign(self, BroadcastTo(v, ToInts(self.sizes())));
}

at::Tensor copy_from(const at::Tensor& self, const at::Tensor& dst, bool non_blocking) {
  at::Tensor d = dst;
  copy_(d, self, non_blocking);
  return d;
}

at::Tensor copy_from_and_resize(const at::Tensor& self, const at::Tensor& dst) {
  if (dst.device().type() == at::DeviceType::XLA && dst.sizes() != self.sizes()) {
    AxleTensorImpl* impl = GetImpl(dst, "dst");
    impl->set_tensor(
        LazyTensor::FromIr(Constant(0, ToPrimitiveType(dst.scalar_type()), ToInts(self.sizes()))));
  }
  return copy_from(self, dst, false);
}

// PyTorch 1.13 declares resize_ with a const self.
const at::Tensor& resize_(const at::Tensor& self, c10::SymIntArrayRef size,
                          c10::optional<at::MemoryFormat> memory_format) {
  Count("resize_");
  Ints dims = ToInts(size);
  if (dims == ToInts(self.sizes())) return self;
  // Fresh storage (PyTorch keeps the old elements where they fit; the
  // fallback's out= copies, its only user here, overwrite them all).
  GetImpl(self, "self")
      ->set_tensor(LazyTensor::FromIr(Constant(0, ToPrimitiveType(self.scalar_type()), dims)));
  return self;
}

std::vector<at::Tensor> to_cpu(at::TensorList tensors) {
  std::vector<std::shared_ptr<LazyTensor>> lazies;
  for (const at::Tensor& t : tensors) {
    if (t.defined() && t.device().type() == at::DeviceType::XLA) {
      lazies.push_back(GetImpl(t, "tensor")->tensor());
    }
  }
  Check(lazy::Sync(lazies));  // one graph for all
  std::vector<at::Tensor> out;
  out.reserve(tensors.size());
  for (const at::Tensor& t : tensors) {
    if (!t.defined() || t.device().type() != at::DeviceType::XLA) {
      out.push_back(t);
    } else {
      out.push_back(ToCpu(t));
    }
  }
  return out;
}

at::Scalar local_scalar_dense(const at::Tensor& self) {
  Count("_local_scalar_dense");
  return ToCpu(self).item();
}

// --- The CPU fallback ---------------------------------------------------------------

void CpuFallback(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const std::string& name = op.schema().operator_name().name;
  lazy::metrics::IncrementCounter(name);  // "aten::<op>"
  if (DebugEnabled()) {
    std::fprintf(stderr, "axle: %s runs on the CPU (no lowering)\n", name.c_str());
  }
  at::native::cpu_fallback(op, stack);
}

}  // namespace

TORCH_LIBRARY_IMPL(_, XLA, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&CpuFallback>());
}

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
  m.impl("neg", TORCH_FN(neg));
  m.impl("abs", TORCH_FN(abs));
  m.impl("exp", TORCH_FN((UnaryFloat<kExp, kExp>)));
  m.impl("log", TORCH_FN((UnaryFloat<kLog, kLog>)));
  m.impl("sqrt", TORCH_FN((UnaryFloat<kSqrt, kSqrt>)));
  m.impl("rsqrt", TORCH_FN((UnaryFloat<kRsqrt, kRsqrt>)));
  m.impl("tanh", TORCH_FN((UnaryFloat<kTanh, kTanh>)));
  m.impl("sigmoid", TORCH_FN((UnaryFloat<kSigmoid, kLogistic>)));
  m.impl("erf", TORCH_FN((UnaryFloat<kErf, kErf>)));
  m.impl("sqrt_", TORCH_FN((UnaryFloat_<kSqrt, kSqrt>)));
  m.impl("relu", TORCH_FN(relu));
  m.impl("relu_", TORCH_FN(relu_));
  m.impl("threshold_backward", TORCH_FN(threshold_backward));
  m.impl("gelu", TORCH_FN(gelu));
  m.impl("gelu_backward", TORCH_FN(gelu_backward));
  m.impl("sum", TORCH_FN(sum));
  m.impl("sum.dim_IntList", TORCH_FN(sum_dim));
  m.impl("mean", TORCH_FN(mean));
  m.impl("mean.dim", TORCH_FN(mean_dim));
  m.impl("mm", TORCH_FN(mm));
  m.impl("addmm", TORCH_FN(addmm));
  m.impl("bmm", TORCH_FN(bmm));
  m.impl("permute", TORCH_FN(permute));
  m.impl("transpose.int", TORCH_FN(transpose_int));
  m.impl("t", TORCH_FN(t));
  m.impl("view", TORCH_FN(view));
  m.impl("_unsafe_view", TORCH_FN(unsafe_view));
  m.impl("expand", TORCH_FN(expand));
  m.impl("unsqueeze", TORCH_FN(unsqueeze));
  m.impl("squeeze", TORCH_FN(squeeze));
  m.impl("squeeze.dim", TORCH_FN(squeeze_dim));
  m.impl("slice.Tensor", TORCH_FN(slice));
  m.impl("select.int", TORCH_FN(select));
  m.impl("slice_backward", TORCH_FN(slice_backward));
  m.impl("select_backward", TORCH_FN(select_backward));
  m.impl("cat", TORCH_FN(cat));
  m.impl("alias", TORCH_FN(alias));
  m.impl("detach", TORCH_FN(alias));
  m.impl("mse_loss", TORCH_FN(mse_loss));
  m.impl("_log_softmax", TORCH_FN(log_softmax));
  m.impl("_log_softmax_backward_data", TORCH_FN(log_softmax_backward));
  m.impl("nll_loss_forward", TORCH_FN(nll_loss_forward));
  m.impl("nll_loss_backward", TORCH_FN(nll_loss_backward));
  m.impl("_softmax", TORCH_FN(softmax));
  m.impl("_softmax_backward_data", TORCH_FN(softmax_backward));
  m.impl("native_layer_norm", TORCH_FN(native_layer_norm));
  m.impl("native_layer_norm_backward", TORCH_FN(native_layer_norm_backward));
  m.impl("native_batch_norm", TORCH_FN(native_batch_norm));
  m.impl("native_batch_norm_backward", TORCH_FN(native_batch_norm_backward));
  m.impl("convolution_overrideable", TORCH_FN(convolution));
  m.impl("convolution_backward_overrideable", TORCH_FN(convolution_backward));
  m.impl("index_select", TORCH_FN(index_select));
  m.impl("embedding_dense_backward", TORCH_FN(embedding_dense_backward));
  m.impl("addcmul", TORCH_FN(addcmul));
  m.impl("addcmul_", TORCH_FN(addcmul_));
  m.impl("addcdiv", TORCH_FN(addcdiv));
  m.impl("addcdiv_", TORCH_FN(addcdiv_));
  m.impl("mse_loss_backward", TORCH_FN(mse_loss_backward));
  m.impl("empty.memory_format", TORCH_FN(empty));
  m.impl("empty_strided", TORCH_FN(empty_strided));
  m.impl("fill_.Scalar", TORCH_FN(fill_));
  m.impl("zero_", TORCH_FN(zero_));
  m.impl("clone", TORCH_FN(clone));
  m.impl("copy_", TORCH_FN(copy_));
  m.impl("_copy_from", TORCH_FN(copy_from));
  m.impl("_copy_from_and_resize", TORCH_FN(copy_from_and_resize));
  m.impl("resize_", TORCH_FN(resize_));
  m.impl("_to_cpu", TORCH_FN(to_cpu));
  m.impl("_local_scalar_dense", TORCH_FN(local_scalar_dense));
}

}  // namespace axle::torch_device
