// LineBatchFft (fft_lines.h) against a direct DFT in double: every
// power-of-two length up to 512, 1 to 16 lines, lines apart (rows) and
// adjacent (columns), in place; the real transforms against RealFftPlan.
// (fft_test.cc runs the thunk's batched
// passes against the interpreter.)
#include "axle/cpu/runtime/fft_lines.h"

#include <cmath>
#include <complex>
#include <numbers>
#include <random>
#include <vector>

#include "absl/strings/str_cat.h"
#include "axle/cpu/runtime/fft_plan.h"
#include "gtest/gtest.h"

namespace axle::cpu {
namespace {

using Complex = std::complex<float>;

std::vector<Complex> Random(int64_t count, int seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uniform(-1, 1);
  std::vector<Complex> values(count);
  for (Complex& v : values) v = Complex(uniform(rng), uniform(rng));
  return values;
}

// The DFT of element j at line[j * step].
std::vector<std::complex<double>> Dft(const Complex* line, int64_t step, int64_t n, bool inverse) {
  std::vector<std::complex<double>> out(n), unit(n);
  const double sign = inverse ? 1.0 : -1.0;
  for (int64_t m = 0; m < n; ++m) {
    unit[m] = std::polar(
        1.0, sign * 2 * std::numbers::pi * static_cast<double>(m) / static_cast<double>(n));
  }
  for (int64_t k = 0; k < n; ++k) {
    std::complex<double> sum = 0;
    for (int64_t j = 0; j < n; ++j) sum += std::complex<double>(line[j * step]) * unit[j * k % n];
    out[k] = sum;
  }
  return out;
}

void ExpectLinesAgree(int64_t n, int lines, bool adjacent, bool inverse) {
  SCOPED_TRACE(
      absl::StrCat("n ", n, " lines ", lines, " adjacent ", adjacent, " inverse ", inverse));
  LineBatchFft plan(n, inverse);
  // Rows of n elements, or columns of a [n, 16] array (adjacent lines).
  const int64_t line_step = adjacent ? 1 : n;
  const int64_t element_step = adjacent ? LineBatchFft::kLanes : 1;
  const int64_t count = adjacent ? n * LineBatchFft::kLanes : n * lines;
  std::vector<Complex> data = Random(count, static_cast<int>(n) + lines);
  const std::vector<Complex> input = data;
  std::vector<float> work(plan.work_floats());
  plan.Run(data.data(), line_step, element_step, data.data(), line_step, element_step, lines,
           work.data());
  for (int l = 0; l < lines; ++l) {
    std::vector<std::complex<double>> expected =
        Dft(input.data() + l * line_step, element_step, n, inverse);
    for (int64_t k = 0; k < n; ++k) {
      const Complex got = data[l * line_step + k * element_step];
      const double tolerance = 1e-5 * std::sqrt(static_cast<double>(n)) * std::log2(n + 1.0) + 1e-5;
      ASSERT_NEAR(got.real(), expected[k].real(), tolerance * std::sqrt(static_cast<double>(n)))
          << "line " << l << " element " << k;
      ASSERT_NEAR(got.imag(), expected[k].imag(), tolerance * std::sqrt(static_cast<double>(n)))
          << "line " << l << " element " << k;
    }
  }
  // Columns past `lines` are left alone.
  if (adjacent) {
    for (int64_t j = 0; j < n; ++j) {
      for (int l = lines; l < LineBatchFft::kLanes; ++l) {
        ASSERT_EQ(data[l + j * element_step], input[l + j * element_step]);
      }
    }
  }
}

TEST(LineBatchFftTest, AgreesWithTheDft) {
  if (!LineBatchFft::Supports(2)) GTEST_SKIP() << "this CPU lacks AVX-512F";
  EXPECT_FALSE(LineBatchFft::Supports(12));
  EXPECT_FALSE(LineBatchFft::Supports(1));
  for (int64_t n = 2; n <= 512; n *= 2) {
    for (int lines : {1, 5, 16}) {
      for (bool adjacent : {false, true}) {
        for (bool inverse : {false, true}) ExpectLinesAgree(n, lines, adjacent, inverse);
      }
    }
  }
}

// RunRealForward / RunRealInverse on `lines` lines of 2n reals (n + 1
// frequencies), rows a little apart, against RealFftPlan line by line.
void ExpectRealLinesAgree(int64_t n, int lines) {
  SCOPED_TRACE(absl::StrCat("n ", n, " lines ", lines));
  const int64_t reals = 2 * n, real_line = reals + 2, half = n + 1, complex_line = half + 1;
  const double tolerance = 1e-5 * std::sqrt(static_cast<double>(reals)) * std::log2(reals + 1.0);
  // Forward.
  {
    LineBatchFft batched(n, /*inverse=*/false);
    RealFftPlan<float> plan(reals, /*inverse=*/false);
    std::vector<Complex> values = Random(real_line * lines / 2, static_cast<int>(n) + lines);
    const auto* in = reinterpret_cast<const float*>(values.data());
    std::vector<Complex> out(complex_line * lines), expected(half), work(plan.work_size());
    std::vector<float> batch_work(batched.real_work_floats());
    batched.RunRealForward(in, real_line, out.data(), complex_line, lines, batch_work.data());
    for (int l = 0; l < lines; ++l) {
      plan.Forward(in + l * real_line, expected.data(), work.data());
      for (int64_t k = 0; k < half; ++k) {
        const Complex got = out[l * complex_line + k];
        ASSERT_NEAR(got.real(), expected[k].real(), tolerance) << "line " << l << " k " << k;
        ASSERT_NEAR(got.imag(), expected[k].imag(), tolerance) << "line " << l << " k " << k;
      }
    }
  }
  // Inverse, scaled by 1/2n (the imaginary parts of X[0] and X[n] are
  // ignored by both).
  {
    LineBatchFft batched(n, /*inverse=*/true);
    RealFftPlan<float> plan(reals, /*inverse=*/true);
    std::vector<Complex> in = Random(complex_line * lines, static_cast<int>(n) * 3 + lines);
    std::vector<float> out(real_line * lines), expected(reals);
    std::vector<Complex> work(plan.work_size());
    std::vector<float> batch_work(batched.real_work_floats());
    const float scale = 1.0f / static_cast<float>(reals);
    batched.RunRealInverse(in.data(), complex_line, out.data(), real_line, lines, scale,
                           batch_work.data());
    for (int l = 0; l < lines; ++l) {
      plan.Inverse(in.data() + l * complex_line, expected.data(), work.data());
      for (int64_t j = 0; j < reals; ++j) {
        ASSERT_NEAR(out[l * real_line + j], expected[j] * scale, tolerance)
            << "line " << l << " j " << j;
      }
    }
  }
}

TEST(LineBatchFftTest, RealTransformsAgreeWithRealFftPlan) {
  if (!LineBatchFft::Supports(2)) GTEST_SKIP() << "this CPU lacks AVX-512F";
  for (int64_t n = 2; n <= 256; n *= 2) {
    for (int lines : {1, 7, 16}) ExpectRealLinesAgree(n, lines);
  }
}

}  // namespace
}  // namespace axle::cpu
