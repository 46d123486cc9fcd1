//===- aten_random.cc - Random ops of the xla device -----------------------===//
//
// Random values come from the device's stream (lazy/rng.h): an
// rng-bit-generator in the step's graph whose Philox state is a parameter
// that advances with each draw, so a training step with dropout compiles
// once and draws a new mask each step. torch_axle.manual_seed(seed)
// restarts the stream (torch.manual_seed seeds the CPU's only).
//
// bernoulli_ (float p and tensor p), bernoulli, uniform_, normal_, and
// native_dropout with its backward. nn.Dropout in training reaches
// bernoulli_ through PyTorch's composite dropout (empty_like(x).bernoulli_(1
// - p), divided by 1 - p, times x); in eval mode it is the identity.
//
//===----------------------------------------------------------------------===//
#include <ATen/ATen.h>
#include <torch/library.h>

#include <cmath>
#include <tuple>

#include "axle/core/primitive_type.h"
#include "axle/frontends/lazy/rng.h"
#include "axle/frontends/torch/aten_ir.h"

namespace axle::torch_device {
namespace {

void CheckNoGenerator(const c10::optional<at::Generator>& generator, const char* op) {
  TORCH_CHECK(!generator.has_value() || !generator->defined(), "axle: ", op,
              " with a generator: random values on the xla device come from its own stream "
              "(seed it with torch_axle.manual_seed)");
}

// The floating type random values of a tensor of `type` are drawn in.
PrimitiveType DrawType(PrimitiveType type) {
  return primitive_util::IsFloatingPointType(type) ? type : F32;
}

// Uniform values in [0, 1) of `dims`, advancing the device's stream.
Value Uniform(PrimitiveType type, const Ints& dims) {
  absl::StatusOr<Value> u = lazy::RngUniform(MakeShape(type, dims));
  Check(u.status());
  return *u;
}

// 1 where a uniform draw is below `p` (broadcast to `dims`), else 0, in `type`.
Value BernoulliMask(const Value& p, const Ints& dims, PrimitiveType type) {
  PrimitiveType draw = DrawType(type);
  Value u = Uniform(draw, dims);
  Value keep = MakeValue("lt", {u, BroadcastTo(Convert(p, draw), dims)}, MakeShape(PRED, dims));
  return Convert(keep, type);
}

// The dispatcher checks kernels against the schema's C++ types: Generator?
// by value.
// NOLINTBEGIN(performance-unnecessary-value-param)
at::Tensor& bernoulli_float_(at::Tensor& self, double p, c10::optional<at::Generator> generator) {
  Count("bernoulli_");
  CheckNoGenerator(generator, "bernoulli_");
  TORCH_CHECK(p >= 0 && p <= 1, "axle: bernoulli_ expects 0 <= p <= 1, got ", p);
  PrimitiveType t = ToPrimitiveType(self.scalar_type());
  return Assign(self, BernoulliMask(ScalarValue(p, DrawType(t)), ToInts(self.sizes()), t));
}

at::Tensor& bernoulli_tensor_(at::Tensor& self, const at::Tensor& p,
                              c10::optional<at::Generator> generator) {
  Count("bernoulli_");
  CheckNoGenerator(generator, "bernoulli_");
  PrimitiveType t = ToPrimitiveType(self.scalar_type());
  return Assign(self, BernoulliMask(Operand(p, "p"), ToInts(self.sizes()), t));
}

at::Tensor bernoulli(const at::Tensor& self, c10::optional<at::Generator> generator) {
  Count("bernoulli");
  CheckNoGenerator(generator, "bernoulli");
  Value p = Operand(self, "self");
  return Wrap(BernoulliMask(p, Dims(p), TypeOf(p)));
}

at::Tensor& uniform_(at::Tensor& self, double from, double to,
                     c10::optional<at::Generator> generator) {
  Count("uniform_");
  CheckNoGenerator(generator, "uniform_");
  PrimitiveType t = ToPrimitiveType(self.scalar_type());
  TORCH_CHECK(primitive_util::IsFloatingPointType(t), "axle: uniform_ of dtype ",
              self.scalar_type(), " (lowered for floating dtypes)");
  TORCH_CHECK(from <= to, "axle: uniform_ expects from <= to, got from=", from, " to=", to);
  Ints d = ToInts(self.sizes());
  Value u = Uniform(t, d);
  Value scaled = Elementwise("mul", u, BroadcastTo(ScalarValue(to - from, t), d));
  return Assign(self, Elementwise("add", scaled, BroadcastTo(ScalarValue(from, t), d)));
}

// Box-Muller: sqrt(-2 log(1 - u1)) cos(2 pi u2), in f32 at least.
at::Tensor& normal_(at::Tensor& self, double mean, double std,
                    c10::optional<at::Generator> generator) {
  Count("normal_");
  CheckNoGenerator(generator, "normal_");
  PrimitiveType t = ToPrimitiveType(self.scalar_type());
  TORCH_CHECK(primitive_util::IsFloatingPointType(t), "axle: normal_ of dtype ", self.scalar_type(),
              " (lowered for floating dtypes)");
  TORCH_CHECK(std >= 0, "axle: normal_ expects std >= 0, got ", std);
  PrimitiveType c = t == F64 ? F64 : F32;
  Ints d = ToInts(self.sizes());
  Value u1 = Uniform(c, d);
  Value u2 = Uniform(c, d);
  Value radius =
      Unary("sqrt", Elementwise("mul", Constant(-2, c, d),
                                Unary("log", Elementwise("sub", Constant(1, c, d), u1))));
  Value z =
      Elementwise("mul", radius, Unary("cos", Elementwise("mul", Constant(2 * M_PI, c, d), u2)));
  Value scaled = Elementwise("add", Elementwise("mul", z, BroadcastTo(ScalarValue(std, c), d)),
                             BroadcastTo(ScalarValue(mean, c), d));
  return Assign(self, Convert(scaled, t));
}

// NOLINTEND(performance-unnecessary-value-param)

std::tuple<at::Tensor, at::Tensor> native_dropout(const at::Tensor& input, double p,
                                                  c10::optional<bool> train) {
  Count("native_dropout");
  TORCH_CHECK(p >= 0 && p <= 1, "axle: dropout probability has to be between 0 and 1, but got ", p);
  Value x = Operand(input, "input");
  Ints d = Dims(x);
  PrimitiveType t = TypeOf(x);
  if (train.has_value() && !*train) {
    return {Wrap(x), Wrap(Constant(1, PRED, d))};
  }
  if (p == 1) return {Wrap(Constant(0, t, d)), Wrap(Constant(0, PRED, d))};
  Value keep = Convert(BernoulliMask(ScalarValue(1 - p, DrawType(t)), d, t), PRED);
  Value scale = BroadcastTo(ScalarValue(1 / (1 - p), t), d);
  Value out =
      MakeValue("select", {keep, Elementwise("mul", x, scale), Constant(0, t, d)}, ShapeLike(x, t));
  return {Wrap(out), Wrap(keep)};
}

at::Tensor native_dropout_backward(const at::Tensor& grad_output, const at::Tensor& mask,
                                   double scale) {
  Count("native_dropout_backward");
  Value g = Operand(grad_output, "grad_output");
  Ints d = Dims(g);
  PrimitiveType t = TypeOf(g);
  Value m = BroadcastTo(Convert(Operand(mask, "mask"), t), d);
  return Wrap(Elementwise("mul", Elementwise("mul", g, m), BroadcastTo(ScalarValue(scale, t), d)));
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, XLA, m) {
  m.impl("bernoulli_.float", TORCH_FN(bernoulli_float_));
  m.impl("bernoulli_.Tensor", TORCH_FN(bernoulli_tensor_));
  m.impl("bernoulli", TORCH_FN(bernoulli));
  m.impl("uniform_", TORCH_FN(uniform_));
  m.impl("normal_", TORCH_FN(normal_));
  m.impl("native_dropout", TORCH_FN(native_dropout));
  m.impl("native_dropout_backward", TORCH_FN(native_dropout_backward));
}

}  // namespace axle::torch_device
