//===- vector_activations_test.cc - The f32 activation loops vs double -----===//
//
// GELU against its tanh approximation computed in double (to f32's precision
// of its input and of 2z, or 1e-27 absolute where GELU is nearly 0): values
// across the curved part, both tails, the -9 cut-over, huge and special
// values. Logistic, tanh and exp against double, in units in the last place
// of the f32 result (a subnormal's ulp is 2^-149): dense sweeps over the
// range where they vary, tiny arguments, the overflow and underflow edges,
// and special values. Every count up to 40, so that the 16-wide loop's
// masked tail is covered. Both the dispatching and the portable loops.
//
//===----------------------------------------------------------------------===//
#include "axle/cpu/runtime/vector_activations.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "gtest/gtest.h"

namespace axle::cpu {
namespace {

double Z(double x) { return 0.7978845608028654 * (x + 0.044715 * x * x * x); }
// x * 0.5 * (1 + tanh(z)), written as x / (1 + exp(-2z)): 1 + tanh(z)
// cancels in double too where z is below about -9.
double Formula(double x) { return x / (1.0 + std::exp(-2 * Z(x))); }

// Relative 2e-6, more in the negative tail, where GELU is x exp(-2|z|) and
// an ulp of 2z in f32 moves it by |2z| ulps.
void ExpectNearFormula(float in, float out) {
  const double expected = Formula(in);
  const double condition = std::max(1.0, std::fabs(2 * Z(in)) / 4);
  EXPECT_NEAR(out, expected, 2e-6 * condition * std::fabs(expected) + 1e-27) << "x = " << in;
}

TEST(GeluTanhTest, AgreesWithTheFormulaOverARange) {
  std::vector<float> values;
  for (float x = -12.f; x <= 12.f; x += 1.f / 64) values.push_back(x);
  std::vector<float> out = values;
  GeluTanhInPlace(out.data(), static_cast<int64_t>(out.size()));
  for (size_t i = 0; i < values.size(); ++i) ExpectNearFormula(values[i], out[i]);
}

TEST(GeluTanhTest, TailsHugeAndSpecialValues) {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> values = {-9.0001f, -9.f,  -8.9999f, -5.3f,  -1e30f,
                               -3e38f,   1e30f, 3e38f,    1e-30f, -1e-30f,
                               0.f,      -0.f,  inf,      -inf,   std::nanf("")};
  std::vector<float> out = values;
  GeluTanhInPlace(out.data(), static_cast<int64_t>(out.size()));
  for (size_t i = 0; i < 10; ++i) ExpectNearFormula(values[i], out[i]);
  // Below -9: x * 0, a negative zero.
  EXPECT_EQ(out[4], 0.f);
  EXPECT_TRUE(std::signbit(out[4]));
  EXPECT_EQ(out[5], 0.f);
  EXPECT_EQ(out[10], 0.f);
  EXPECT_EQ(out[11], 0.f);
  EXPECT_EQ(out[12], inf);
  EXPECT_TRUE(std::isnan(out[13]));  // -inf * 0.5 * (1 + -1)
  EXPECT_TRUE(std::isnan(out[14]));
}

using Loop = void (*)(Activation, float, float, float*, int64_t);

double Reference(Activation activation, double x) {
  switch (activation) {
    case Activation::kLogistic:
      // Where exp(-x) overflows f32 the formula in f32 gives 1 / inf = 0.
      return -x > std::log(std::numeric_limits<float>::max()) ? 0.0 : 1.0 / (1.0 + std::exp(-x));
    case Activation::kTanh:
      return std::tanh(x);
    default:
      return std::exp(x);
  }
}

// |out - expected| in units of the f32 ulp at `expected` (infinities and
// NaN must match exactly: 0 or infinity).
double UlpError(float out, double expected) {
  const float rounded = static_cast<float>(expected);
  if (std::isnan(expected)) return std::isnan(out) ? 0 : HUGE_VAL;
  if (std::isinf(rounded) || std::isinf(out)) return out == rounded ? 0 : HUGE_VAL;
  const float magnitude = std::fabs(rounded);
  const double ulp = std::max<double>(std::nextafter(magnitude, HUGE_VALF) - magnitude,
                                      std::numeric_limits<float>::denorm_min());
  return std::fabs(static_cast<double>(out) - expected) / ulp;
}

// Sweeps, tiny and edge arguments.
std::vector<float> Arguments() {
  std::vector<float> values;
  for (float x = -110.f; x <= 100.f; x += 1.f / 64) values.push_back(x);
  for (float x = -1.f; x <= 1.f; x += 1.f / 4096) values.push_back(x);
  for (float x = 1e-12f; x < 1.f; x *= 1.07f) {
    values.push_back(x);
    values.push_back(-x);
  }
  for (float x : {0.625f, std::nextafter(0.625f, 0.f), -0.625f, 88.72f, 88.73f, -87.33f, -87.34f,
                  -103.9f, -104.f, -150.f, 150.f, 1e30f, -1e30f, 1e-38f, 1e-44f}) {
    values.push_back(x);
  }
  return values;
}

TEST(VectorActivationsTest, LogisticTanhExpWithinUlpsOfDouble) {
  struct Case {
    Activation activation;
    double max_ulps;
  };
  for (Loop loop : {&ActivateF32InPlace, &ActivateF32InPlacePortable}) {
    for (Case c :
         {Case{Activation::kLogistic, 3}, Case{Activation::kTanh, 3}, Case{Activation::kExp, 2}}) {
      SCOPED_TRACE(static_cast<int>(c.activation));
      const std::vector<float> values = Arguments();
      std::vector<float> out = values;
      loop(c.activation, 0.f, 0.f, out.data(), static_cast<int64_t>(out.size()));
      double worst = 0;
      for (size_t i = 0; i < values.size(); ++i) {
        const double error = UlpError(out[i], Reference(c.activation, values[i]));
        ASSERT_LE(error, c.max_ulps) << "x = " << values[i] << " gives " << out[i];
        worst = std::max(worst, error);
      }
      RecordProperty("worst_ulps", std::to_string(worst));
    }
  }
}

TEST(VectorActivationsTest, SpecialValues) {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> values = {0.f, -0.f, inf, -inf, std::nanf("")};
  for (Loop loop : {&ActivateF32InPlace, &ActivateF32InPlacePortable}) {
    std::vector<float> logistic = values, tanh = values, exp = values;
    loop(Activation::kLogistic, 0.f, 0.f, logistic.data(), 5);
    loop(Activation::kTanh, 0.f, 0.f, tanh.data(), 5);
    loop(Activation::kExp, 0.f, 0.f, exp.data(), 5);
    EXPECT_EQ(logistic[0], 0.5f);
    EXPECT_EQ(logistic[2], 1.f);
    EXPECT_EQ(logistic[3], 0.f);
    EXPECT_TRUE(std::isnan(logistic[4]));
    EXPECT_EQ(tanh[0], 0.f);
    EXPECT_FALSE(std::signbit(tanh[0]));
    EXPECT_EQ(tanh[1], 0.f);
    EXPECT_TRUE(std::signbit(tanh[1]));
    EXPECT_EQ(tanh[2], 1.f);
    EXPECT_EQ(tanh[3], -1.f);
    EXPECT_TRUE(std::isnan(tanh[4]));
    EXPECT_EQ(exp[0], 1.f);
    EXPECT_EQ(exp[1], 1.f);
    EXPECT_EQ(exp[2], inf);
    EXPECT_EQ(exp[3], 0.f);
    EXPECT_TRUE(std::isnan(exp[4]));
  }
}

TEST(VectorActivationsTest, ReluAndClampKeepNaN) {
  std::vector<float> relu = {-1.f, 2.f, std::nanf("")}, clamp = relu;
  ActivateF32InPlace(Activation::kRelu, 0.f, 0.f, relu.data(), 3);
  ActivateF32InPlace(Activation::kClamp, -0.5f, 0.5f, clamp.data(), 3);
  EXPECT_EQ(relu[0], 0.f);
  EXPECT_EQ(relu[1], 2.f);
  EXPECT_TRUE(std::isnan(relu[2]));
  EXPECT_EQ(clamp[0], -0.5f);
  EXPECT_EQ(clamp[1], 0.5f);
  EXPECT_TRUE(std::isnan(clamp[2]));
}

TEST(VectorActivationsTest, EveryCountUpToFortyTouchesOnlyItsValues) {
  for (Activation activation :
       {Activation::kGeluTanh, Activation::kLogistic, Activation::kTanh, Activation::kExp}) {
    for (int64_t count = 0; count <= 40; ++count) {
      SCOPED_TRACE(count);
      std::vector<float> values(48);
      for (size_t i = 0; i < values.size(); ++i) values[i] = 0.37f * static_cast<float>(i) - 8.f;
      std::vector<float> out = values;
      ActivateF32InPlace(activation, 0.f, 0.f, out.data(), count);
      for (int64_t i = 0; i < count; ++i) {
        if (activation == Activation::kGeluTanh) {
          ExpectNearFormula(values[i], out[i]);
        } else {
          EXPECT_LE(UlpError(out[i], Reference(activation, values[i])), 3) << values[i];
        }
      }
      for (size_t i = count; i < values.size(); ++i) EXPECT_EQ(out[i], values[i]);
    }
  }
}

}  // namespace
}  // namespace axle::cpu
