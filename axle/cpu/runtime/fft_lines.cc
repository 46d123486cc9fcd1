// Power-of-two f32 FFTs of 16 lines at once (see fft_lines.h).
#include "axle/cpu/runtime/fft_lines.h"

#include <bit>
#include <cmath>
#include <numbers>

#include "axle/cpu/runtime/avx512_target.h"

namespace axle::cpu {

LineBatchFft::LineBatchFft(int64_t n, bool inverse) : n_(n) {
  const int bits = std::countr_zero(static_cast<uint64_t>(n));
  reverse_.resize(n);
  for (int64_t j = 0; j < n; ++j) {
    uint32_t r = 0;
    for (int b = 0; b < bits; ++b) r |= ((static_cast<uint32_t>(j) >> b) & 1u) << (bits - 1 - b);
    reverse_[j] = r;
  }
  twiddle_re_.resize(std::max<int64_t>(n - 1, 1));
  twiddle_im_.resize(std::max<int64_t>(n - 1, 1));
  const double sign = inverse ? 1.0 : -1.0;
  for (int64_t h = 1; h < n; h *= 2) {
    for (int64_t k = 0; k < h; ++k) {
      const double angle =
          sign * std::numbers::pi * static_cast<double>(k) / static_cast<double>(h);
      twiddle_re_[h - 1 + k] = static_cast<float>(std::cos(angle));
      twiddle_im_[h - 1 + k] = static_cast<float>(std::sin(angle));
    }
  }
  real_twiddle_re_.resize(n + 1);
  real_twiddle_im_.resize(n + 1);
  for (int64_t k = 0; k <= n; ++k) {
    const double angle = sign * std::numbers::pi * static_cast<double>(k) / static_cast<double>(n);
    real_twiddle_re_[k] = static_cast<float>(std::cos(angle));
    real_twiddle_im_[k] = static_cast<float>(std::sin(angle));
  }
}

#ifdef __x86_64__

bool LineBatchFft::Supports(int64_t n) {
  static const bool avx512 = __builtin_cpu_supports("avx512f");
  return avx512 && n >= 2 && n <= (int64_t{1} << 16) &&
         std::has_single_bit(static_cast<uint64_t>(n));
}

AXLE_AVX512 void LineBatchFft::Load(const float* in, int64_t in_line, int64_t in_element, int lines,
                                    int64_t rows, const uint32_t* row_of, float* re, float* im) {
  constexpr int L = kLanes;
  // Lane l of a pair of vectors holding 16 interleaved complex numbers.
  const __m512i even = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
  const __m512i odd = _mm512_set_epi32(31, 29, 27, 25, 23, 21, 19, 17, 15, 13, 11, 9, 7, 5, 3, 1);
  const bool adjacent = in_line == 1 && lines == L;
  for (int64_t j = 0; j < rows; ++j) {
    const int64_t row = row_of != nullptr ? static_cast<int64_t>(row_of[j]) : j;
    float* r = re + row * L;
    float* i = im + row * L;
    if (adjacent) {
      const float* p = in + 2 * j * in_element;
      const __m512 low = _mm512_loadu_ps(p);
      const __m512 high = _mm512_loadu_ps(p + 16);
      _mm512_storeu_ps(r, _mm512_permutex2var_ps(low, even, high));
      _mm512_storeu_ps(i, _mm512_permutex2var_ps(low, odd, high));
      continue;
    }
    for (int l = 0; l < L; ++l) {
      if (l < lines) {
        const float* p = in + 2 * (l * in_line + j * in_element);
        r[l] = p[0];
        i[l] = p[1];
      } else {
        r[l] = 0;
        i[l] = 0;
      }
    }
  }
}

AXLE_AVX512 void LineBatchFft::Store(const float* re, const float* im, int64_t rows, float* out,
                                     int64_t out_line, int64_t out_element, int lines) {
  constexpr int L = kLanes;
  const bool adjacent = out_line == 1 && lines == L;
  const __m512i low_pick = _mm512_set_epi32(23, 7, 22, 6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
  const __m512i high_pick =
      _mm512_set_epi32(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8);
  for (int64_t j = 0; j < rows; ++j) {
    const float* r = re + j * L;
    const float* i = im + j * L;
    if (adjacent) {
      float* p = out + 2 * j * out_element;
      const __m512 vr = _mm512_loadu_ps(r);
      const __m512 vi = _mm512_loadu_ps(i);
      _mm512_storeu_ps(p, _mm512_permutex2var_ps(vr, low_pick, vi));
      _mm512_storeu_ps(p + 16, _mm512_permutex2var_ps(vr, high_pick, vi));
      continue;
    }
    for (int l = 0; l < lines; ++l) {
      float* p = out + 2 * (l * out_line + j * out_element);
      p[0] = r[l];
      p[1] = i[l];
    }
  }
}

AXLE_AVX512 void LineBatchFft::Butterflies(float* re, float* im) const {
  constexpr int L = kLanes;
  const int64_t n = n_;
  // Radix-2 decimation in time: butterflies of span h combine transforms
  // of h points into transforms of 2h.
  for (int64_t h = 1; h < n; h *= 2) {
    const float* w_re = twiddle_re_.data() + h - 1;
    const float* w_im = twiddle_im_.data() + h - 1;
    for (int64_t g = 0; g < n; g += 2 * h) {
      for (int64_t k = 0; k < h; ++k) {
        float* ar = re + (g + k) * L;
        float* ai = im + (g + k) * L;
        float* br = ar + h * L;
        float* bi = ai + h * L;
        const __m512 wr = _mm512_set1_ps(w_re[k]);
        const __m512 wi = _mm512_set1_ps(w_im[k]);
        const __m512 xr = _mm512_loadu_ps(br);
        const __m512 xi = _mm512_loadu_ps(bi);
        const __m512 tr = _mm512_fmsub_ps(xr, wr, _mm512_mul_ps(xi, wi));
        const __m512 ti = _mm512_fmadd_ps(xr, wi, _mm512_mul_ps(xi, wr));
        const __m512 yr = _mm512_loadu_ps(ar);
        const __m512 yi = _mm512_loadu_ps(ai);
        _mm512_storeu_ps(ar, _mm512_add_ps(yr, tr));
        _mm512_storeu_ps(ai, _mm512_add_ps(yi, ti));
        _mm512_storeu_ps(br, _mm512_sub_ps(yr, tr));
        _mm512_storeu_ps(bi, _mm512_sub_ps(yi, ti));
      }
    }
  }
}

void LineBatchFft::Run(const std::complex<float>* in, int64_t in_line, int64_t in_element,
                       std::complex<float>* out, int64_t out_line, int64_t out_element, int lines,
                       float* work) const {
  float* re = work;
  float* im = work + n_ * kLanes;
  Load(reinterpret_cast<const float*>(in), in_line, in_element, lines, n_, reverse_.data(), re, im);
  Butterflies(re, im);
  Store(re, im, n_, reinterpret_cast<float*>(out), out_line, out_element, lines);
}

namespace {

// Where a real transform of half-length n keeps its lines in its work
// memory (real_work_floats()): the n-point complex line (re, im) and the
// n + 1 frequencies (freq_re, freq_im), each element a row of kLanes
// floats.
struct RealWork {
  float* re;
  float* im;
  float* freq_re;
  float* freq_im;
};
RealWork SplitRealWork(float* work, int64_t n) {
  constexpr int64_t L = LineBatchFft::kLanes;
  return {work, work + n * L, work + 2 * n * L, work + (3 * n + 1) * L};
}

}  // namespace

AXLE_AVX512 void LineBatchFft::RunRealForward(const float* in, int64_t in_line,
                                              std::complex<float>* out, int64_t out_line, int lines,
                                              float* work) const {
  constexpr int L = kLanes;
  const int64_t n = n_;
  const auto [re, im, out_re, out_im] = SplitRealWork(work, n);
  // z = the n-point transform of x[2j] + i x[2j+1], one line per lane.
  Load(in, in_line / 2, 1, lines, n, reverse_.data(), re, im);
  Butterflies(re, im);
  // X[k] = E[k] + w^k O[k] with E[k] = (z[k] + conj(z[n-k])) / 2 and
  // O[k] = (z[k] - conj(z[n-k])) / 2i (z[n] = z[0]).
  const __m512 half = _mm512_set1_ps(0.5f);
  for (int64_t k = 0; k <= n; ++k) {
    const int64_t a = k == n ? 0 : k;
    const int64_t b = k == 0 ? 0 : n - k;
    const __m512 ar = _mm512_loadu_ps(re + a * L);
    const __m512 ai = _mm512_loadu_ps(im + a * L);
    const __m512 br = _mm512_loadu_ps(re + b * L);
    const __m512 bi = _mm512_loadu_ps(im + b * L);
    const __m512 er = _mm512_mul_ps(_mm512_add_ps(ar, br), half);
    const __m512 ei = _mm512_mul_ps(_mm512_sub_ps(ai, bi), half);
    const __m512 orr = _mm512_mul_ps(_mm512_add_ps(ai, bi), half);
    const __m512 oi = _mm512_mul_ps(_mm512_sub_ps(br, ar), half);
    const __m512 wr = _mm512_set1_ps(real_twiddle_re_[k]);
    const __m512 wi = _mm512_set1_ps(real_twiddle_im_[k]);
    _mm512_storeu_ps(out_re + k * L,
                     _mm512_add_ps(er, _mm512_fmsub_ps(wr, orr, _mm512_mul_ps(wi, oi))));
    _mm512_storeu_ps(out_im + k * L,
                     _mm512_add_ps(ei, _mm512_fmadd_ps(wr, oi, _mm512_mul_ps(wi, orr))));
  }
  Store(out_re, out_im, n + 1, reinterpret_cast<float*>(out), out_line, 1, lines);
}

AXLE_AVX512 void LineBatchFft::RunRealInverse(const std::complex<float>* in, int64_t in_line,
                                              float* out, int64_t out_line, int lines, float scale,
                                              float* work) const {
  constexpr int L = kLanes;
  const int64_t n = n_;
  const auto [re, im, in_re, in_im] = SplitRealWork(work, n);
  Load(reinterpret_cast<const float*>(in), in_line, 1, lines, n + 1, nullptr, in_re, in_im);
  // The forward step run backwards: with a = X[k], b = conj(X[n-k]) (the
  // imaginary parts of X[0] and X[n] dropped), 2E = a + b, 2O = (a - b) w^k
  // and z[k] = 2E + i 2O, whose unscaled n-point inverse is 2n (x[2j] +
  // i x[2j+1]).
  const __m512 s = _mm512_set1_ps(scale);
  const __m512 zero = _mm512_setzero_ps();
  for (int64_t k = 0; k < n; ++k) {
    const __m512 ar = _mm512_loadu_ps(in_re + k * L);
    const __m512 ai = k == 0 ? zero : _mm512_loadu_ps(in_im + k * L);
    const __m512 br = _mm512_loadu_ps(in_re + (n - k) * L);
    const __m512 bi = k == 0 ? zero : _mm512_sub_ps(zero, _mm512_loadu_ps(in_im + (n - k) * L));
    const __m512 dr = _mm512_sub_ps(ar, br);
    const __m512 di = _mm512_sub_ps(ai, bi);
    const __m512 wr = _mm512_set1_ps(real_twiddle_re_[k]);
    const __m512 wi = _mm512_set1_ps(real_twiddle_im_[k]);
    const __m512 tr = _mm512_fmsub_ps(dr, wr, _mm512_mul_ps(di, wi));
    const __m512 ti = _mm512_fmadd_ps(dr, wi, _mm512_mul_ps(di, wr));
    const int64_t row = static_cast<int64_t>(reverse_[k]) * L;
    _mm512_storeu_ps(re + row, _mm512_mul_ps(_mm512_sub_ps(_mm512_add_ps(ar, br), ti), s));
    _mm512_storeu_ps(im + row, _mm512_mul_ps(_mm512_add_ps(_mm512_add_ps(ai, bi), tr), s));
  }
  Butterflies(re, im);
  Store(re, im, n, out, out_line / 2, 1, lines);
}

#else  // !__x86_64__

bool LineBatchFft::Supports(int64_t) { return false; }

void LineBatchFft::Run(const std::complex<float>*, int64_t, int64_t, std::complex<float>*, int64_t,
                       int64_t, int, float*) const {}
void LineBatchFft::RunRealForward(const float*, int64_t, std::complex<float>*, int64_t, int,
                                  float*) const {}
void LineBatchFft::RunRealInverse(const std::complex<float>*, int64_t, float*, int64_t, int, float,
                                  float*) const {}

#endif

}  // namespace axle::cpu
