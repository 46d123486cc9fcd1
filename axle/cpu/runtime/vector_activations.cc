// Epilogue activations over f32 arrays, 16 at a time (see vector_activations.h).
#include "axle/cpu/runtime/vector_activations.h"

#include <limits>

#include "axle/cpu/runtime/avx512_target.h"

namespace axle::cpu {
namespace {

#ifdef __x86_64__

// exp(x) with x clamped to [low, high] (NaN stays NaN: min_ps and max_ps
// return their second operand when either is NaN).
template <int kLow, int kHigh>
AXLE_AVX512 inline __m512 ClampedExp(__m512 x) {
  x = _mm512_max_ps(_mm512_set1_ps(static_cast<float>(kLow)),
                    _mm512_min_ps(_mm512_set1_ps(static_cast<float>(kHigh)), x));
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
  __m512 p = _mm512_set1_ps(1.9875691500e-4f);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.3981999507e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
  p = _mm512_fmadd_ps(p, _mm512_mul_ps(r, r), _mm512_add_ps(r, _mm512_set1_ps(1.f)));
  return _mm512_scalef_ps(p, n);
}

// The full range: exp(89) is inf, exp(-104) rounds to 0; the clamp keeps n
// small enough that n * ln2's high part is exact.
AXLE_AVX512 inline __m512 Exp(__m512 x) { return ClampedExp<-104, 89>(x); }

AXLE_AVX512 inline __m512 Logistic(__m512 x) {
  const __m512 one = _mm512_set1_ps(1.f);
  return _mm512_div_ps(one, _mm512_add_ps(one, Exp(_mm512_sub_ps(_mm512_setzero_ps(), x))));
}

// tanh on |x|, the sign of x put back (tanh(-0) is -0).
AXLE_AVX512 inline __m512 Tanh(__m512 x) {
  const __m512i sign_bit = _mm512_set1_epi32(static_cast<int32_t>(0x80000000u));
  const __m512i bits = _mm512_castps_si512(x);
  const __m512 magnitude = _mm512_castsi512_ps(_mm512_andnot_si512(sign_bit, bits));
  // |x| >= 0.625: 1 - 2 / (exp(2|x|) + 1).
  const __m512 one = _mm512_set1_ps(1.f);
  const __m512 e = Exp(_mm512_add_ps(magnitude, magnitude));
  const __m512 large =
      _mm512_sub_ps(one, _mm512_div_ps(_mm512_set1_ps(2.f), _mm512_add_ps(e, one)));
  // |x| < 0.625: |x| + |x|^3 P(x^2).
  const __m512 s = _mm512_mul_ps(x, x);
  __m512 p = _mm512_set1_ps(-5.70498872745e-3f);
  p = _mm512_fmadd_ps(p, s, _mm512_set1_ps(2.06390887954e-2f));
  p = _mm512_fmadd_ps(p, s, _mm512_set1_ps(-5.37397155531e-2f));
  p = _mm512_fmadd_ps(p, s, _mm512_set1_ps(1.33314422036e-1f));
  p = _mm512_fmadd_ps(p, s, _mm512_set1_ps(-3.33332819422e-1f));
  const __m512 small = _mm512_fmadd_ps(_mm512_mul_ps(p, s), magnitude, magnitude);
  // (NaN compares false: the large form, NaN.)
  const __mmask16 is_small = _mm512_cmp_ps_mask(magnitude, _mm512_set1_ps(0.625f), _CMP_LT_OQ);
  const __m512 result = _mm512_mask_blend_ps(is_small, large, small);
  return _mm512_castsi512_ps(
      _mm512_or_si512(_mm512_castps_si512(result), _mm512_and_si512(sign_bit, bits)));
}

AXLE_AVX512 inline __m512 Gelu(__m512 x) {
  // -2z = x (a + b x^2).
  constexpr float kA = -2.f * 0.7978845608028654f;
  constexpr float kB = kA * 0.044715f;
  const __m512 x2 = _mm512_mul_ps(x, x);
  const __m512 minus_2z =
      _mm512_mul_ps(x, _mm512_fmadd_ps(x2, _mm512_set1_ps(kB), _mm512_set1_ps(kA)));
  const __m512 d = _mm512_add_ps(ClampedExp<-80, 80>(minus_2z), _mm512_set1_ps(1.f));
  // 1 / d: the estimate (relative error < 2^-14) and one Newton step.
  const __m512 estimate = _mm512_rcp14_ps(d);
  const __m512 error = _mm512_fnmadd_ps(d, estimate, _mm512_set1_ps(1.f));
  const __m512 reciprocal = _mm512_fmadd_ps(estimate, error, estimate);
  const __m512 gelu = _mm512_mul_ps(x, reciprocal);
  // Below -9 the formula's tanh(z) is -1 in f32: x * 0.
  const __mmask16 tail = _mm512_cmp_ps_mask(x, _mm512_set1_ps(-9.f), _CMP_LT_OQ);
  return _mm512_mask_mul_ps(gelu, tail, x, _mm512_setzero_ps());
}

template <Activation kActivation>
AXLE_AVX512 inline __m512 Apply(__m512 x) {
  if constexpr (kActivation == Activation::kLogistic) {
    return Logistic(x);
  } else if constexpr (kActivation == Activation::kTanh) {
    return Tanh(x);
  } else if constexpr (kActivation == Activation::kExp) {
    return Exp(x);
  } else {
    return Gelu(x);
  }
}

// The activation over the `count` values, 16 at a time, the last ones
// masked.
template <Activation kActivation>
AXLE_AVX512 void Map(float* values, int64_t count) {
  int64_t i = 0;
  for (; i + 16 <= count; i += 16) {
    _mm512_storeu_ps(values + i, Apply<kActivation>(_mm512_loadu_ps(values + i)));
  }
  if (i < count) {
    const __mmask16 rest = static_cast<__mmask16>((1u << (count - i)) - 1);
    _mm512_mask_storeu_ps(values + i, rest,
                          Apply<kActivation>(_mm512_maskz_loadu_ps(rest, values + i)));
  }
}

// The transcendental activations (false for the others).
bool ActivateAvx512(Activation activation, float* values, int64_t count) {
  switch (activation) {
    case Activation::kLogistic:
      Map<Activation::kLogistic>(values, count);
      return true;
    case Activation::kTanh:
      Map<Activation::kTanh>(values, count);
      return true;
    case Activation::kExp:
      Map<Activation::kExp>(values, count);
      return true;
    case Activation::kGeluTanh:
      Map<Activation::kGeluTanh>(values, count);
      return true;
    default:
      return false;
  }
}

bool HasAvx512() {
  static const bool has = __builtin_cpu_supports("avx512f");
  return has;
}

#endif

}  // namespace

void GeluTanhInPlace(float* values, int64_t count) {
  ActivateF32InPlace(Activation::kGeluTanh, 0.f, 0.f, values, count);
}

void ActivateF32InPlace(Activation activation, float low, float high, float* values,
                        int64_t count) {
  if (activation == Activation::kRelu || activation == Activation::kClamp) {
    // Blocks of 16 the compiler turns into vector selects (a NaN fails both
    // compares and stays): ActivateInPlace's branch per value mispredicted
    // on mixed signs, 3 ns a value (a transposed convolution's relu on
    // f32[4,32,32,16]: 0.2 ms).
    const bool relu = activation == Activation::kRelu;
    const float lo = relu ? 0.f : low;
    const float hi = relu ? std::numeric_limits<float>::infinity() : high;
    auto clamp = [lo, hi](float x) {
      const float t = x < lo ? lo : x;
      return hi < t ? hi : t;
    };
    int64_t i = 0;
    for (; i + 16 <= count; i += 16) {
      float* block = values + i;
      for (int k = 0; k < 16; ++k) block[k] = clamp(block[k]);
    }
    for (; i < count; ++i) values[i] = clamp(values[i]);
    return;
  }
#ifdef __x86_64__
  if (HasAvx512() && ActivateAvx512(activation, values, count)) return;
#endif
  ActivateF32InPlacePortable(activation, low, high, values, count);
}

void ActivateF32InPlacePortable(Activation activation, float low, float high, float* values,
                                int64_t count) {
  ActivateInPlace(activation, low, high, values, count);
}

}  // namespace axle::cpu
