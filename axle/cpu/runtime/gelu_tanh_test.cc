//===- gelu_tanh_test.cc - GeluTanhInPlace against the formula -------------===//
//
// Each value is checked against GELU's tanh approximation computed in double
// (to f32's precision of its input and of 2z, or 1e-27 absolute where GELU
// is nearly 0): values across the curved part, both tails, the -9 cut-over,
// huge and special values, and every count up to 40, so that the 16-wide
// loop's masked tail is covered.
//
//===----------------------------------------------------------------------===//
#include "axle/cpu/runtime/gelu_tanh.h"

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

TEST(GeluTanhTest, EveryCountUpToFortyTouchesOnlyItsValues) {
  for (int64_t count = 0; count <= 40; ++count) {
    SCOPED_TRACE(count);
    std::vector<float> values(48);
    for (size_t i = 0; i < values.size(); ++i) values[i] = 0.37f * static_cast<float>(i) - 8.f;
    std::vector<float> out = values;
    GeluTanhInPlace(out.data(), count);
    for (int64_t i = 0; i < count; ++i) ExpectNearFormula(values[i], out[i]);
    for (size_t i = count; i < values.size(); ++i) EXPECT_EQ(out[i], values[i]);
  }
}

}  // namespace
}  // namespace axle::cpu
