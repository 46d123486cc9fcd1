// Power-of-two f32 FFTs of 16 lines at once (see fft_lines.h).
#include "axle/cpu/runtime/fft_lines.h"

#include <bit>
#include <cmath>
#include <numbers>

#ifdef __x86_64__
#include <immintrin.h>
#define AXLE_AVX512 __attribute__((target("avx512f")))
#endif

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
}

#ifdef __x86_64__

bool LineBatchFft::Supports(int64_t n) {
  static const bool avx512 = __builtin_cpu_supports("avx512f");
  return avx512 && n >= 2 && n <= (int64_t{1} << 16) &&
         std::has_single_bit(static_cast<uint64_t>(n));
}

AXLE_AVX512 void LineBatchFft::Run(const std::complex<float>* in, int64_t in_line,
                                   int64_t in_element, std::complex<float>* out, int64_t out_line,
                                   int64_t out_element, int lines, float* work) const {
  constexpr int L = kLanes;
  const int64_t n = n_;
  float* re = work;
  float* im = work + n * L;
  const auto* in_floats = reinterpret_cast<const float*>(in);
  auto* out_floats = reinterpret_cast<float*>(out);
  // Lane l of a pair of vectors holding 16 interleaved complex numbers.
  const __m512i even = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
  const __m512i odd = _mm512_set_epi32(31, 29, 27, 25, 23, 21, 19, 17, 15, 13, 11, 9, 7, 5, 3, 1);
  const bool adjacent_in = in_line == 1 && lines == L;
  for (int64_t j = 0; j < n; ++j) {
    float* r = re + static_cast<int64_t>(reverse_[j]) * L;
    float* i = im + static_cast<int64_t>(reverse_[j]) * L;
    if (adjacent_in) {
      const float* p = in_floats + 2 * j * in_element;
      const __m512 low = _mm512_loadu_ps(p);
      const __m512 high = _mm512_loadu_ps(p + 16);
      _mm512_storeu_ps(r, _mm512_permutex2var_ps(low, even, high));
      _mm512_storeu_ps(i, _mm512_permutex2var_ps(low, odd, high));
      continue;
    }
    for (int l = 0; l < L; ++l) {
      if (l < lines) {
        const float* p = in_floats + 2 * (l * in_line + j * in_element);
        r[l] = p[0];
        i[l] = p[1];
      } else {
        r[l] = 0;
        i[l] = 0;
      }
    }
  }
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
  const bool adjacent_out = out_line == 1 && lines == L;
  const __m512i low_pick = _mm512_set_epi32(23, 7, 22, 6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
  const __m512i high_pick =
      _mm512_set_epi32(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8);
  for (int64_t j = 0; j < n; ++j) {
    const float* r = re + j * L;
    const float* i = im + j * L;
    if (adjacent_out) {
      float* p = out_floats + 2 * j * out_element;
      const __m512 vr = _mm512_loadu_ps(r);
      const __m512 vi = _mm512_loadu_ps(i);
      _mm512_storeu_ps(p, _mm512_permutex2var_ps(vr, low_pick, vi));
      _mm512_storeu_ps(p + 16, _mm512_permutex2var_ps(vr, high_pick, vi));
      continue;
    }
    for (int l = 0; l < lines; ++l) {
      float* p = out_floats + 2 * (l * out_line + j * out_element);
      p[0] = r[l];
      p[1] = i[l];
    }
  }
}

#else  // !__x86_64__

bool LineBatchFft::Supports(int64_t) { return false; }

void LineBatchFft::Run(const std::complex<float>*, int64_t, int64_t, std::complex<float>*, int64_t,
                       int64_t, int, float*) const {}

#endif

}  // namespace axle::cpu
