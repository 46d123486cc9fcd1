//===- math_ir_test.cc - Accuracy of the inline transcendental functions ---===//
//
// Sweeps each f32 function over its interesting range (for log, every
// binade from the smallest denormal up) and measures the largest error in
// ulp against the double-precision libm result rounded to f32. The bounds
// asserted are the measured maxima rounded up; the sweep prints the
// measured values.
//
//===----------------------------------------------------------------------===//
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "axle/cpu/loop_kernel_emitter.h"
#include "axle/hlo/ir/hlo_module.h"
#include "axle/hlo/text/hlo_parser.h"
#include "gtest/gtest.h"

namespace axle::cpu {
namespace {

constexpr int64_t kPoints = 1 << 16;

// Distance in ulp between two finite floats of the same sign class.
int64_t UlpDistance(float a, float b) {
  if (std::isnan(a) && std::isnan(b)) return 0;
  if (std::isnan(a) || std::isnan(b)) return int64_t{1} << 40;
  if (a == b) return 0;
  auto ordered = [](float f) {
    int32_t i;
    std::memcpy(&i, &f, sizeof(i));
    return i < 0 ? int64_t{INT32_MIN} - i : int64_t{i};
  };
  return std::llabs(ordered(a) - ordered(b));
}

struct Sweep {
  const char* op;
  double (*reference)(double);
  std::vector<float> inputs;
  int64_t max_ulp_bound;
};

std::vector<float> Linear(double low, double high) {
  std::vector<float> v(kPoints);
  for (int64_t i = 0; i < kPoints; ++i)
    v[i] = static_cast<float>(low + (high - low) * i / (kPoints - 1));
  return v;
}

std::vector<float> PositiveBinades() {
  // Bit patterns from the smallest denormal to the largest finite float.
  std::vector<float> v(kPoints);
  const uint32_t last = 0x7f7fffff;
  for (int64_t i = 0; i < kPoints; ++i) {
    uint32_t bits = 1 + static_cast<uint32_t>((static_cast<uint64_t>(last) * i) / (kPoints - 1));
    std::memcpy(&v[i], &bits, sizeof(bits));
  }
  return v;
}

TEST(MathIrTest, MaxUlpErrorOverSweeps) {
  std::vector<Sweep> sweeps = {
      {"exponential", [](double x) { return std::exp(x); }, Linear(-104, 89), 1},
      {"log", [](double x) { return std::log(x); }, PositiveBinades(), 1},
      {"log-plus-one", [](double x) { return std::log1p(x); }, Linear(-0.999, 10), 2},
      {"log-plus-one", [](double x) { return std::log1p(x); }, Linear(-1e-3, 1e-3), 2},
      {"log-plus-one", [](double x) { return std::log1p(x); }, PositiveBinades(), 2},
      {"tanh", [](double x) { return std::tanh(x); }, Linear(-10, 10), 4},
      {"erf", [](double x) { return std::erf(x); }, Linear(-5, 5), 2},
      {"logistic", [](double x) { return 1.0 / (1.0 + std::exp(-x)); }, Linear(-30, 30), 2},
  };
  std::string text =
      absl::StrCat("HloModule m\nENTRY e {\n  x = f32[", kPoints, "] parameter(0)\n");
  std::string tuple_types, tuple_names;
  for (size_t i = 0; i < sweeps.size(); ++i) {
    absl::StrAppend(&text, "  p", i, " = f32[", kPoints, "] parameter(", i + 1, ")\n");
  }
  for (size_t i = 0; i < sweeps.size(); ++i) {
    absl::StrAppend(&text, "  r", i, " = f32[", kPoints, "] ", sweeps[i].op, "(p", i, ")\n");
    absl::StrAppend(&tuple_types, i ? ", " : "", "f32[", kPoints, "]");
    absl::StrAppend(&tuple_names, i ? ", " : "", "r", i);
  }
  absl::StrAppend(&text, "  ROOT t = (", tuple_types, ") tuple(", tuple_names, ")\n}\n");
  auto module = ParseAndReturnUnverifiedModule(text);
  ASSERT_TRUE(module.ok()) << module.status();
  auto kernel = CompileLoopKernel(*(*module)->entry_computation());
  ASSERT_TRUE(kernel.ok()) << kernel.status();

  std::vector<float> unused(kPoints, 0.0f);
  std::vector<std::vector<float>> outputs(sweeps.size(), std::vector<float>(kPoints));
  std::vector<void*> buffers = {unused.data()};
  for (Sweep& sweep : sweeps) buffers.push_back(sweep.inputs.data());
  for (auto& output : outputs) buffers.push_back(output.data());
  (*kernel)->Run(buffers.data());

  for (size_t s = 0; s < sweeps.size(); ++s) {
    int64_t max_ulp = 0;
    float worst = 0;
    for (int64_t i = 0; i < kPoints; ++i) {
      float x = sweeps[s].inputs[i];
      float expected = static_cast<float>(sweeps[s].reference(x));
      int64_t ulp = UlpDistance(expected, outputs[s][i]);
      if (ulp > max_ulp) {
        max_ulp = ulp;
        worst = x;
      }
    }
    std::cout << sweeps[s].op << ": max error " << max_ulp << " ulp (at x = " << worst << ")\n";
    EXPECT_LE(max_ulp, sweeps[s].max_ulp_bound) << sweeps[s].op << " at x = " << worst;
  }
}

TEST(MathIrTest, SpecialValues) {
  const char* text = R"(
HloModule m
ENTRY e {
  x = f32[8] parameter(0)
  e = f32[8] exponential(x)
  l = f32[8] log(x)
  t = f32[8] tanh(x)
  r = f32[8] erf(x)
  s = f32[8] logistic(x)
  p = f32[8] log-plus-one(x)
  ROOT out = (f32[8], f32[8], f32[8], f32[8], f32[8], f32[8]) tuple(e, l, t, r, s, p)
})";
  auto module = ParseAndReturnUnverifiedModule(text);
  ASSERT_TRUE(module.ok()) << module.status();
  auto kernel = CompileLoopKernel(*(*module)->entry_computation());
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  const float inf = INFINITY;
  std::vector<float> x = {NAN, inf, -inf, 0.0f, -0.0f, -1.0f, 1e-45f, 200.0f};
  std::vector<std::vector<float>> out(6, std::vector<float>(8));
  std::vector<void*> buffers = {x.data()};
  for (auto& o : out) buffers.push_back(o.data());
  (*kernel)->Run(buffers.data());
  for (int f = 0; f < 6; ++f) EXPECT_TRUE(std::isnan(out[f][0])) << f;
  // log1p: +inf, -inf -> NaN, +-0 kept with their signs, -1 -> -inf, the
  // smallest denormal itself, log1p(200).
  EXPECT_EQ(out[5][1], inf);
  EXPECT_TRUE(std::isnan(out[5][2]));
  EXPECT_EQ(out[5][3], 0.0f);
  EXPECT_FALSE(std::signbit(out[5][3]));
  EXPECT_TRUE(std::signbit(out[5][4]));
  EXPECT_EQ(out[5][5], -inf);
  EXPECT_EQ(out[5][6], 1e-45f);
  EXPECT_NEAR(out[5][7], std::log1p(200.0), 1e-5);
  EXPECT_EQ(out[0][1], inf);
  EXPECT_EQ(out[0][2], 0.0f);
  EXPECT_EQ(out[0][3], 1.0f);
  EXPECT_EQ(out[0][7], inf);
  EXPECT_EQ(out[1][1], inf);
  EXPECT_TRUE(std::isnan(out[1][2]));
  EXPECT_EQ(out[1][3], -inf);
  EXPECT_TRUE(std::isnan(out[1][5]));
  EXPECT_NEAR(out[1][6], std::log(static_cast<double>(1e-45f)), 1e-5);
  EXPECT_EQ(out[2][1], 1.0f);
  EXPECT_EQ(out[2][2], -1.0f);
  EXPECT_TRUE(std::signbit(out[2][4]));
  EXPECT_EQ(out[3][1], 1.0f);
  EXPECT_EQ(out[3][2], -1.0f);
  EXPECT_TRUE(std::signbit(out[3][4]));
  EXPECT_EQ(out[4][1], 1.0f);
  EXPECT_EQ(out[4][2], 0.0f);
  EXPECT_EQ(out[4][3], 0.5f);
}

// exp's clamp bounds and scaling: the largest finite results, the first
// infinite ones, the denormal range down to where results round to 0, and
// the inputs whose scale factors sit at the ends of their range, and the
// inputs below ln(2^-150) (exactly 0 through a select, without computing
// an underflow), -FLT_MAX included.
TEST(MathIrTest, ExpOverflowAndUnderflowBoundaries) {
  const char* text = R"(
HloModule m
ENTRY e {
  x = f32[20] parameter(0)
  ROOT e = f32[20] exponential(x)
})";
  auto module = ParseAndReturnUnverifiedModule(text);
  ASSERT_TRUE(module.ok()) << module.status();
  auto kernel = CompileLoopKernel(*(*module)->entry_computation());
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  std::vector<float> x = {88.72283f, 88.7228394f, 88.72284f,  88.8f,          89.0f,
                          89.1f,     1e30f,       -87.33654f, -87.4f,         -100.0f,
                          -103.0f,   -103.9f,     -104.0f,    -104.1f,        -1e30f,
                          88.376f,   -103.97f,    -103.9722f, -3.4028235e38f, -103.9720f};
  std::vector<float> out(x.size());
  std::vector<void*> buffers = {x.data(), out.data()};
  (*kernel)->Run(buffers.data());
  for (size_t i = 0; i < x.size(); ++i) {
    float expected = static_cast<float>(std::exp(static_cast<double>(x[i])));
    EXPECT_LE(UlpDistance(expected, out[i]), 1)
        << "exp(" << x[i] << ") = " << out[i] << ", expected " << expected;
  }
  EXPECT_EQ(out[4], INFINITY);
  EXPECT_EQ(out[6], INFINITY);
  EXPECT_EQ(out[13], 0.0f);
  EXPECT_GT(out[16], 0.0f);  // e^-103.97: the smallest denormal, 2^-149
  EXPECT_EQ(out[17], 0.0f);
  EXPECT_EQ(out[18], 0.0f);
  EXPECT_FALSE(std::signbit(out[18]));
  EXPECT_EQ(out[14], 0.0f);
  EXPECT_GT(out[10], 0.0f);  // a denormal
}

}  // namespace
}  // namespace axle::cpu
