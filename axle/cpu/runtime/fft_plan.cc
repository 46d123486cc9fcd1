//===- fft_plan.cc - One-dimensional FFTs on KISS FFT ----------------------===//
#include "axle/cpu/runtime/fft_plan.h"

#include <kissfft/kiss_fft.h>

#include <cmath>
#include <kissfft/kissfft.hh>
#include <numbers>
#include <type_traits>

#include "axle/base/logging.h"

namespace axle::cpu {
namespace {

// a * b without the C99 Annex G recovery of infinities (GCC's operator*
// checks for NaN results and calls __mulsc3); NaNs propagate as they do
// in any FFT library.
template <typename T>
inline std::complex<T> Mul(std::complex<T> a, std::complex<T> b) {
  return {a.real() * b.real() - a.imag() * b.imag(), a.real() * b.imag() + a.imag() * b.real()};
}

// Whether n's prime factors are all 2, 3 or 5.
bool IsFiveSmooth(int64_t n) {
  if (n < 1) return false;
  for (int64_t p : {2, 3, 5}) {
    while (n % p == 0) n /= p;
  }
  return n == 1;
}

// The smallest n' >= n whose prime factors are all 2, 3 or 5.
int64_t NextSmooth(int64_t n) {
  while (!IsFiveSmooth(n)) ++n;
  return n;
}

// exp(i angle), computed in double.
std::complex<double> Unit(double angle) { return {std::cos(angle), std::sin(angle)}; }

}  // namespace

namespace {

// float: Debian's C library. kiss_fft_stride reads its input with a
// stride and never writes its cfg (it allocates only for an in-place call
// or a butterfly above 5, which the plan never makes).
class FloatSmooth {
 public:
  using Complex = std::complex<float>;
  FloatSmooth(int64_t n, bool inverse)
      : cfg_(kiss_fft_alloc(static_cast<int>(n), inverse ? 1 : 0, nullptr, nullptr)) {
    CHECK(cfg_ != nullptr) << "kiss_fft_alloc(" << n << ") failed";
  }
  ~FloatSmooth() { kiss_fft_free(cfg_); }
  FloatSmooth(const FloatSmooth&) = delete;
  FloatSmooth& operator=(const FloatSmooth&) = delete;

  void Run(const Complex* in, int64_t stride, Complex* out) const {
    static_assert(sizeof(kiss_fft_cpx) == sizeof(Complex));
    kiss_fft_stride(cfg_, reinterpret_cast<const kiss_fft_cpx*>(in),
                    reinterpret_cast<kiss_fft_cpx*>(out), static_cast<int>(stride));
  }

 private:
  kiss_fft_cfg cfg_;
};

// double: the header-only template (no double precision C library in
// Debian). transform() is const and, for radices 2-5, touches only its
// arguments.
class DoubleSmooth {
 public:
  using Complex = std::complex<double>;
  DoubleSmooth(int64_t n, bool inverse) : fft_(static_cast<std::size_t>(n), inverse) {}

  void Run(const Complex* in, int64_t stride, Complex* out) const {
    fft_.transform(in, out, 0, 1, static_cast<std::size_t>(stride));
  }

 private:
  kissfft<double> fft_;
};

}  // namespace

template <typename T>
class ComplexFftPlan<T>::Smooth
    : public std::conditional_t<std::is_same_v<T, float>, FloatSmooth, DoubleSmooth> {
 public:
  using std::conditional_t<std::is_same_v<T, float>, FloatSmooth, DoubleSmooth>::conditional_t;
};

template <typename T>
bool ComplexFftPlan<T>::IsSmooth(int64_t n) {
  return IsFiveSmooth(n);
}

template <typename T>
ComplexFftPlan<T>::ComplexFftPlan(int64_t n, bool inverse) : n_(n), inverse_(inverse) {
  CHECK_GE(n, 1);
  if (n == 1) return;
  if (IsSmooth(n)) {
    smooth_ = std::make_unique<Smooth>(n, inverse);
    return;
  }
  auto b = std::make_unique<Bluestein>();
  b->m = NextSmooth(2 * n - 1);
  b->forward = std::make_unique<Smooth>(b->m, /*inverse=*/false);
  // The chirp in double, its angle reduced mod 2 pi exactly (j^2 mod 2n).
  const double sign = inverse ? 1.0 : -1.0;
  std::vector<std::complex<double>> kernel(b->m);
  b->chirp.resize(n);
  for (int64_t j = 0; j < n; ++j) {
    const int64_t j2 = static_cast<int64_t>((static_cast<unsigned __int128>(j) * j) %
                                            (static_cast<unsigned __int128>(n) * 2));
    const std::complex<double> c = Unit(sign * std::numbers::pi * j2 / n);
    b->chirp[j] = Complex(c);
    kernel[j] = std::conj(c);
    if (j > 0) kernel[b->m - j] = std::conj(c);
  }
  // The filter's transform, in double whatever T is.
  std::vector<std::complex<double>> filter(b->m);
  kissfft<double>(b->m, false).transform(kernel.data(), filter.data());
  b->filter.resize(b->m);
  for (int64_t k = 0; k < b->m; ++k) b->filter[k] = Complex(filter[k] / static_cast<double>(b->m));
  bluestein_ = std::move(b);
}

template <typename T>
ComplexFftPlan<T>::~ComplexFftPlan() = default;
template <typename T>
ComplexFftPlan<T>::ComplexFftPlan(ComplexFftPlan&&) noexcept = default;
template <typename T>
ComplexFftPlan<T>& ComplexFftPlan<T>::operator=(ComplexFftPlan&&) noexcept = default;

template <typename T>
void ComplexFftPlan<T>::Run(const Complex* in, int64_t in_stride, Complex* out,
                            Complex* work) const {
  if (smooth_) {
    smooth_->Run(in, in_stride, out);
    return;
  }
  if (!bluestein_) {  // n == 1
    out[0] = in[0];
    return;
  }
  // a = in * chirp (zero-padded to m); A = FFT(a); the inverse transform of
  // A * filter as conj(FFT(conj(.))); out = chirp * that.
  const Bluestein& b = *bluestein_;
  Complex* a = work;
  Complex* spectrum = work + b.m;
  for (int64_t j = 0; j < n_; ++j) a[j] = Mul(in[j * in_stride], b.chirp[j]);
  std::fill(a + n_, a + b.m, Complex(0));
  b.forward->Run(a, 1, spectrum);
  for (int64_t k = 0; k < b.m; ++k) a[k] = std::conj(Mul(spectrum[k], b.filter[k]));
  b.forward->Run(a, 1, spectrum);
  for (int64_t k = 0; k < n_; ++k) out[k] = Mul(b.chirp[k], std::conj(spectrum[k]));
}

template <typename T>
RealFftPlan<T>::RealFftPlan(int64_t n, bool inverse)
    : n_(n), complex_(n % 2 == 0 ? n / 2 : n, inverse) {
  if (n % 2 != 0) return;
  twiddle_.resize(n / 2 + 1);
  for (int64_t k = 0; k <= n / 2; ++k) {
    twiddle_[k] = Complex(Unit(-2.0 * std::numbers::pi * static_cast<double>(k) / n));
  }
}

template <typename T>
int64_t RealFftPlan<T>::work_size() const {
  return (n_ % 2 == 0 ? n_ / 2 : 2 * n_) + complex_.work_size();
}

template <typename T>
void RealFftPlan<T>::Forward(const T* in, Complex* out, Complex* work) const {
  if (n_ % 2 != 0) {
    Complex* line = work;
    Complex* spectrum = work + n_;
    for (int64_t j = 0; j < n_; ++j) line[j] = Complex(in[j]);
    complex_.Run(line, 1, spectrum, work + 2 * n_);
    std::copy(spectrum, spectrum + n_ / 2 + 1, out);
    return;
  }
  // z = FFT(x[2j] + i x[2j+1]) holds the transforms of the even and odd
  // samples: E[k] = (z[k] + conj(z[m-k])) / 2, O[k] = (z[k] - conj(z[m-k])) / 2i,
  // X[k] = E[k] + exp(-2 pi i k/n) O[k] for k in [0, m] (z[m] = z[0]).
  const int64_t m = n_ / 2;
  Complex* z = work;
  complex_.Run(reinterpret_cast<const Complex*>(in), 1, z, work + m);
  ForwardFromHalf(z, out);
}

template <typename T>
void RealFftPlan<T>::ForwardFromHalf(const Complex* z, Complex* out) const {
  const int64_t m = n_ / 2;
  for (int64_t k = 0; k <= m; ++k) {
    const Complex zk = z[k == m ? 0 : k];
    const Complex zc = std::conj(z[k == 0 ? 0 : m - k]);
    const Complex even = (zk + zc) * T(0.5);
    const Complex odd = Mul(zk - zc, Complex(0, -0.5));
    out[k] = even + Mul(twiddle_[k], odd);
  }
}

template <typename T>
void RealFftPlan<T>::Inverse(const Complex* in, T* out, Complex* work) const {
  if (n_ % 2 != 0) {
    const int64_t half = n_ / 2 + 1;
    Complex* line = work;
    Complex* signal = work + n_;
    line[0] = Complex(in[0].real());
    for (int64_t k = 1; k < half; ++k) {
      line[k] = in[k];
      line[n_ - k] = std::conj(in[k]);
    }
    complex_.Run(line, 1, signal, work + 2 * n_);
    for (int64_t j = 0; j < n_; ++j) out[j] = signal[j].real();
    return;
  }
  // The forward pass run backwards: with X[m+k] = conj(X[m-k]),
  // 2E[k] = X[k] + conj(X[m-k]), 2O[k] = (X[k] - conj(X[m-k])) exp(2 pi i k/n),
  // and the unscaled m-point inverse of 2(E + iO) is n (x[2j] + i x[2j+1]).
  const int64_t m = n_ / 2;
  Complex* z = work;
  InverseToHalf(in, z);
  complex_.Run(z, 1, reinterpret_cast<Complex*>(out), work + m);
}

template <typename T>
void RealFftPlan<T>::InverseToHalf(const Complex* in, Complex* z) const {
  const int64_t m = n_ / 2;
  for (int64_t k = 0; k < m; ++k) {
    const Complex xk = k == 0 ? Complex(in[0].real()) : in[k];
    const Complex xc = k == 0 ? Complex(in[m].real()) : std::conj(in[m - k]);
    z[k] = (xk + xc) + Mul(Mul(xk - xc, std::conj(twiddle_[k])), Complex(0, 1));
  }
}

template class ComplexFftPlan<float>;
template class ComplexFftPlan<double>;
template class RealFftPlan<float>;
template class RealFftPlan<double>;

}  // namespace axle::cpu
