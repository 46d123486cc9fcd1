// The 1-d plans of fft_plan.h against a direct DFT in long double: smooth
// lengths (KISS FFT alone), lengths with a prime factor above 5 (Bluestein),
// strided input, float and double, forward and inverse, real transforms of
// even and odd length (the inverse ignoring the imaginary parts of its 0
// and n/2 frequencies).
#include "axle/cpu/runtime/fft_plan.h"

#include <cmath>
#include <numbers>
#include <random>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace axle::cpu {
namespace {

using Wide = std::complex<long double>;

std::vector<Wide> Dft(const std::vector<Wide>& x, bool inverse) {
  const int64_t n = static_cast<int64_t>(x.size());
  std::vector<Wide> y(n);
  const long double sign = inverse ? 1 : -1;
  std::vector<Wide> twiddle(n);
  for (int64_t t = 0; t < n; ++t) {
    const long double angle = sign * 2 * std::numbers::pi_v<long double> * t / n;
    twiddle[t] = Wide(std::cos(angle), std::sin(angle));
  }
  for (int64_t k = 0; k < n; ++k) {
    Wide sum = 0;
    for (int64_t j = 0, t = 0; j < n; ++j) {
      sum += x[j] * twiddle[t];
      t += k;
      if (t >= n) t -= n;
    }
    y[k] = sum;
  }
  return y;
}

std::vector<Wide> RandomSignal(int64_t n, std::mt19937& rng) {
  std::uniform_real_distribution<double> uniform(-1, 1);
  std::vector<Wide> x(n);
  for (Wide& v : x) v = Wide(uniform(rng), uniform(rng));
  return x;
}

// Largest |expected - actual| over the largest |expected| (at least 1).
template <typename C>
double RelativeError(const std::vector<Wide>& expected, const C* actual, int64_t count) {
  long double error = 0, scale = 1;
  for (int64_t i = 0; i < count; ++i) {
    const Wide a(actual[i].real(), actual[i].imag());
    error = std::max(error, std::abs(expected[i] - a));
    scale = std::max(scale, std::abs(expected[i]));
  }
  return static_cast<double>(error / scale);
}

template <typename T>
double Tolerance() {
  return std::is_same_v<T, float> ? 2e-6 : 1e-14;
}

const std::vector<int64_t>& Lengths() {
  static const std::vector<int64_t> lengths = {1,   2,   3,   4,   5,   6,    7,    8,   9,  11,
                                               12,  13,  16,  25,  27,  49,   60,   64,  97, 100,
                                               121, 128, 210, 243, 256, 1000, 1009, 2003};
  return lengths;
}

template <typename T>
void CheckComplex() {
  using C = std::complex<T>;
  std::mt19937 rng(7);
  for (int64_t n : Lengths()) {
    for (bool inverse : {false, true}) {
      SCOPED_TRACE(absl::StrCat("n=", n, inverse ? " inverse" : " forward"));
      ComplexFftPlan<T> plan(n, inverse);
      EXPECT_EQ(plan.size(), n);
      const int64_t stride = n % 3 + 1;
      std::vector<Wide> x = RandomSignal(n, rng);
      std::vector<C> in(n * stride, C(1e30, 1e30)), out(n), work(plan.work_size());
      for (int64_t j = 0; j < n; ++j) in[j * stride] = C(x[j].real(), x[j].imag());
      for (int64_t j = 0; j < n; ++j) x[j] = Wide(in[j * stride].real(), in[j * stride].imag());
      plan.Run(in.data(), stride, out.data(), work.data());
      EXPECT_LT(RelativeError(Dft(x, inverse), out.data(), n), Tolerance<T>());
    }
  }
}

TEST(ComplexFftPlanTest, Float) { CheckComplex<float>(); }
TEST(ComplexFftPlanTest, Double) { CheckComplex<double>(); }

TEST(ComplexFftPlanTest, IsSmooth) {
  EXPECT_TRUE(ComplexFftPlan<float>::IsSmooth(1));
  EXPECT_TRUE(ComplexFftPlan<float>::IsSmooth(60));
  EXPECT_TRUE(ComplexFftPlan<float>::IsSmooth(1024));
  EXPECT_FALSE(ComplexFftPlan<float>::IsSmooth(7));
  EXPECT_FALSE(ComplexFftPlan<float>::IsSmooth(98));
  EXPECT_FALSE(ComplexFftPlan<float>::IsSmooth(0));
}

template <typename T>
void CheckReal() {
  using C = std::complex<T>;
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> uniform(-1, 1);
  for (int64_t n : Lengths()) {
    SCOPED_TRACE(absl::StrCat("n=", n));
    const int64_t half = n / 2 + 1;
    std::vector<T> x(n);
    std::vector<Wide> wide(n);
    for (int64_t j = 0; j < n; ++j) {
      x[j] = static_cast<T>(uniform(rng));
      wide[j] = Wide(x[j]);
    }
    const std::vector<Wide> spectrum = Dft(wide, /*inverse=*/false);

    RealFftPlan<T> forward(n, /*inverse=*/false);
    std::vector<C> out(half);
    std::vector<C> work(forward.work_size());
    forward.Forward(x.data(), out.data(), work.data());
    EXPECT_LT(RelativeError(spectrum, out.data(), half), Tolerance<T>());

    // Back: n * x, whatever the imaginary parts of the 0 and n/2 bins say.
    RealFftPlan<T> backward(n, /*inverse=*/true);
    std::vector<C> in(half);
    for (int64_t k = 0; k < half; ++k) in[k] = C(spectrum[k].real(), spectrum[k].imag());
    in[0] += C(0, 5);
    if (n % 2 == 0) in[half - 1] += C(0, -3);
    std::vector<T> back(n);
    work.assign(backward.work_size(), C());
    backward.Inverse(in.data(), back.data(), work.data());
    std::vector<Wide> expected(n);
    std::vector<C> actual(n);
    for (int64_t j = 0; j < n; ++j) {
      expected[j] = wide[j] * static_cast<long double>(n);
      actual[j] = C(back[j]);
    }
    EXPECT_LT(RelativeError(expected, actual.data(), n), 4 * Tolerance<T>());
  }
}

TEST(RealFftPlanTest, Float) { CheckReal<float>(); }
TEST(RealFftPlanTest, Double) { CheckReal<double>(); }

}  // namespace
}  // namespace axle::cpu
