//===- fft_plan.h - One-dimensional FFTs of one length, planned once -------===//
//
// The line transforms the fft thunk (fft_thunk.cc) composes into batched
// 1-3 dimensional FFTs. Each plan is made once, at compile time, and is
// read-only afterwards: Run may be called from several threads at once,
// each with its own work memory (work_size() elements, which the caller
// owns: the thunk's scratch in the executable's arena). Nothing allocates
// while a plan runs.
//
// The library is KISS FFT (libkissfft-dev, BSD-3-Clause): Debian's single
// precision C library for float, its header-only C++ template (kissfft.hh)
// for double, Debian ships no double precision build. Only its radix 2, 3,
// 4 and 5 butterflies are used: a length with a larger prime factor runs
// as Bluestein's chirp-z convolution through a 5-smooth transform of at
// least 2n - 1 points, which keeps every length O(n log n) (KISS FFT's
// generic butterfly costs O(n p) for a factor p, O(n^2) for a prime n,
// allocates per call in the C library, and writes a shared buffer in the
// template). FFTW is 3.6-7x faster but GPL-2+; see docs/PERFORMANCE.md,
// "FFT".
//
// All transforms are unscaled (the inverse one too): the thunk applies
// IFFT's and IRFFT's 1/N once per transform.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_CPU_RUNTIME_FFT_PLAN_H_
#define AXLE_CPU_RUNTIME_FFT_PLAN_H_

#include <complex>
#include <cstdint>
#include <memory>
#include <vector>

namespace axle::cpu {

// out[k] = sum_j in[j * in_stride] * exp(s * 2 pi i j k / n), k in [0, n),
// with s = -1 (forward) or +1 (inverse).
template <typename T>
class ComplexFftPlan {
 public:
  using Complex = std::complex<T>;

  // n >= 1.
  ComplexFftPlan(int64_t n, bool inverse);
  ~ComplexFftPlan();
  ComplexFftPlan(ComplexFftPlan&&) noexcept;
  ComplexFftPlan& operator=(ComplexFftPlan&&) noexcept;

  int64_t size() const { return n_; }
  // Elements of work memory Run needs (0 for a 5-smooth length).
  int64_t work_size() const { return bluestein_ ? 2 * bluestein_->m : 0; }
  // `out` (n elements, contiguous) must not overlap `in` or `work`.
  void Run(const Complex* in, int64_t in_stride, Complex* out, Complex* work) const;

  // Whether n's prime factors are all 2, 3 or 5.
  static bool IsSmooth(int64_t n);

 private:
  // A KISS FFT plan of a 5-smooth length (fft_plan.cc).
  class Smooth;
  // Bluestein: out[k] = c[k] * sum_j (in[j] c[j]) conj(c[k - j]), with the
  // chirp c[j] = exp(s pi i j^2 / n), as a cyclic convolution of m >= 2n-1
  // points done with the forward transform of m points.
  struct Bluestein {
    int64_t m = 0;
    std::unique_ptr<Smooth> forward;  // m points, forward
    std::vector<Complex> chirp;       // c[j], j in [0, n)
    std::vector<Complex> filter;      // the m-point transform of conj(c), / m
  };

  int64_t n_ = 0;
  bool inverse_ = false;
  std::unique_ptr<Smooth> smooth_;  // when n is 5-smooth
  std::unique_ptr<Bluestein> bluestein_;
};

// The transform of n real points (forward: n reals -> the n/2 + 1
// non-negative frequencies), or its inverse (n/2 + 1 frequencies -> n
// reals, the others implied by conjugate symmetry, the imaginary parts of
// the 0 and (even n) n/2 frequencies ignored, as numpy's irfft does).
// Even n runs as a complex transform of n/2 points plus one twiddle pass;
// odd n as a complex transform of n points.
template <typename T>
class RealFftPlan {
 public:
  using Complex = std::complex<T>;

  RealFftPlan(int64_t n, bool inverse);

  int64_t size() const { return n_; }
  int64_t work_size() const;
  // n contiguous reals -> n/2 + 1 contiguous frequencies.
  void Forward(const T* in, Complex* out, Complex* work) const;
  // n/2 + 1 contiguous frequencies -> n contiguous reals (unscaled: n times
  // the inverse DFT).
  void Inverse(const Complex* in, T* out, Complex* work) const;
  // Even n: Forward's last step, from z = the n/2-point transform of
  // x[2j] + i x[2j+1]; and Inverse's first, the z whose unscaled n/2-point
  // inverse is n (x[2j] + i x[2j+1]). (LineBatchFft's RunRealForward /
  // RunRealInverse do the same for 16 lines at once.)
  void ForwardFromHalf(const Complex* z, Complex* out) const;
  void InverseToHalf(const Complex* in, Complex* z) const;

 private:
  int64_t n_ = 0;
  ComplexFftPlan<T> complex_;     // n/2 points (even n) or n
  std::vector<Complex> twiddle_;  // exp(-2 pi i k / n), k in [0, n/2] (even n)
};

extern template class ComplexFftPlan<float>;
extern template class ComplexFftPlan<double>;
extern template class RealFftPlan<float>;
extern template class RealFftPlan<double>;

}  // namespace axle::cpu

#endif  // AXLE_CPU_RUNTIME_FFT_PLAN_H_
