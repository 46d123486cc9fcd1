#include "axle/core/types.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>

#include "axle/core/narrow_float_format.h"

namespace axle {

uint32_t NarrowFloatFormat::max_finite_bits() const {
  switch (encoding) {
    case FloatEncoding::kIeee:
      return ((max_exponent_field() - 1) << mantissa_bits) | mantissa_mask();
    case FloatEncoding::kFiniteNan:
      return (max_exponent_field() << mantissa_bits) | (mantissa_mask() - 1);
    case FloatEncoding::kFiniteUz:
    case FloatEncoding::kFiniteOnly:
      return (max_exponent_field() << mantissa_bits) | mantissa_mask();
    case FloatEncoding::kExponentOnly:
      return max_exponent_field() - 1;
  }
  return 0;
}

uint32_t NarrowFloatFormat::nan_bits(bool negative) const {
  switch (encoding) {
    case FloatEncoding::kIeee:
      return (negative ? sign_bit() : 0) | (max_exponent_field() << mantissa_bits) |
             (1u << (mantissa_bits - 1));
    case FloatEncoding::kFiniteNan:
      return (negative ? sign_bit() : 0) | (max_exponent_field() << mantissa_bits) |
             mantissa_mask();
    case FloatEncoding::kFiniteUz:
      return sign_bit();
    case FloatEncoding::kExponentOnly:
      return 0xff;
    case FloatEncoding::kFiniteOnly:
      return 0;  // no NaN
  }
  return 0;
}

namespace {

float Decode(uint32_t bits, const NarrowFloatFormat& f) {
  if (f.encoding == FloatEncoding::kExponentOnly) {
    if (bits == 0xff) return std::numeric_limits<float>::quiet_NaN();
    return std::ldexp(1.0f, static_cast<int>(bits) - f.bias);
  }
  bool negative = (bits & f.sign_bit()) != 0;
  uint32_t exponent = (bits >> f.mantissa_bits) & f.max_exponent_field();
  uint32_t mantissa = bits & f.mantissa_mask();
  float sign = negative ? -1.0f : 1.0f;
  switch (f.encoding) {
    case FloatEncoding::kIeee:
      if (exponent == f.max_exponent_field()) {
        return mantissa == 0 ? sign * std::numeric_limits<float>::infinity()
                             : std::copysign(std::numeric_limits<float>::quiet_NaN(), sign);
      }
      break;
    case FloatEncoding::kFiniteNan:
      if (exponent == f.max_exponent_field() && mantissa == f.mantissa_mask()) {
        return std::copysign(std::numeric_limits<float>::quiet_NaN(), sign);
      }
      break;
    case FloatEncoding::kFiniteUz:
      if (bits == f.sign_bit()) return std::numeric_limits<float>::quiet_NaN();
      break;
    default:
      break;
  }
  double magnitude;
  if (exponent == 0) {
    magnitude = std::ldexp(static_cast<double>(mantissa), 1 - f.bias - f.mantissa_bits);
  } else {
    magnitude = std::ldexp(static_cast<double>(mantissa | (1u << f.mantissa_bits)),
                           static_cast<int>(exponent) - f.bias - f.mantissa_bits);
  }
  return static_cast<float>(sign * magnitude);
}

uint32_t Encode(double value, const NarrowFloatFormat& f) {
  bool negative = std::signbit(value);
  if (std::isnan(value)) {
    if (f.encoding == FloatEncoding::kFiniteOnly) return 0;
    return f.nan_bits(negative);
  }
  uint32_t sign = negative ? f.sign_bit() : 0;
  double a = std::fabs(value);
  if (f.encoding == FloatEncoding::kExponentOnly) {
    // Round to the nearest power of two (ties by the mantissa going up, as in
    // ml_dtypes: 1.5 * 2^e rounds to 2^(e+1)).
    if (negative && a != 0) return f.nan_bits(false);
    if (std::isinf(a)) return f.nan_bits(false);
    if (a == 0) return 0;  // no zero: the smallest value, 2^-127
    int e;
    double m = std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1)
    int exponent = (m >= 0.75) ? e : e - 1;
    int field = exponent + f.bias;
    if (field < 0) return 0;
    if (field > 254) return f.nan_bits(false);
    return static_cast<uint32_t>(field);
  }
  auto overflow = [&]() -> uint32_t {
    switch (f.encoding) {
      case FloatEncoding::kIeee:
        return sign | (f.max_exponent_field() << f.mantissa_bits);
      case FloatEncoding::kFiniteOnly:
        return sign | f.max_finite_bits();
      default:
        return f.nan_bits(negative);
    }
  };
  if (std::isinf(a)) return overflow();
  if (a == 0) return f.encoding == FloatEncoding::kFiniteUz ? 0 : sign;

  const int min_normal_exponent = 1 - f.bias;
  int e;
  std::frexp(a, &e);
  int exponent = e - 1;  // a in [2^exponent, 2^(exponent+1))
  int quantum_exponent = std::max(exponent, min_normal_exponent) - f.mantissa_bits;
  double q = std::ldexp(a, -quantum_exponent);  // exact
  double rounded = std::nearbyint(q);           // round half to even
  double result = std::ldexp(rounded, quantum_exponent);
  if (result == 0) return f.encoding == FloatEncoding::kFiniteUz ? 0 : sign;

  uint32_t max_bits = f.max_finite_bits();
  double max_value = Decode(max_bits, f);
  if (result > max_value) return overflow();

  std::frexp(result, &e);
  exponent = e - 1;
  if (exponent < min_normal_exponent) {
    uint32_t mantissa =
        static_cast<uint32_t>(std::ldexp(result, f.mantissa_bits - min_normal_exponent));
    return sign | mantissa;
  }
  uint32_t field = static_cast<uint32_t>(exponent + f.bias);
  uint32_t mantissa = static_cast<uint32_t>(std::ldexp(result, f.mantissa_bits - exponent)) -
                      (1u << f.mantissa_bits);
  return sign | (field << f.mantissa_bits) | mantissa;
}

// Encode's rounding of a value an f32 holds, on the f32's bits: the 24-bit
// significand shifted down to the format's quantum (its exponent's, or the
// subnormals' below the least normal exponent), rounded to nearest with ties
// to even. Only for results that are finite, non-zero values of the format
// (nullopt otherwise, and for NaN, infinities, zeros, f32 subnormals and the
// exponent-only format: Encode decides those); the same bits as Encode, some
// 20x faster (an f32 -> f8e4m3fn convert is a call of this per element).
std::optional<uint32_t> EncodeF32Normal(float single, const NarrowFloatFormat& f) {
  if (f.encoding == FloatEncoding::kExponentOnly || f.mantissa_bits >= 23) return std::nullopt;
  uint32_t bits;
  std::memcpy(&bits, &single, sizeof(bits));
  const uint32_t magnitude = bits & 0x7fffffffu;
  const uint32_t exponent_field = magnitude >> 23;
  if (exponent_field == 0 || exponent_field == 0xffu) return std::nullopt;
  const int exponent = static_cast<int>(exponent_field) - 127;
  const int quantum = std::max(exponent, 1 - f.bias);  // exponent of the result's leading bit
  const int shift = 23 - f.mantissa_bits + (quantum - exponent);
  if (shift >= 25) return std::nullopt;  // below half the least subnormal: zero
  const uint32_t significand = (1u << 23) | (magnitude & 0x7fffffu);
  uint32_t rounded = significand >> shift;
  const uint32_t rest = significand & ((1u << shift) - 1);
  const uint32_t half = 1u << (shift - 1);
  if (rest > half || (rest == half && (rounded & 1u) != 0)) ++rounded;
  if (rounded == 0) return std::nullopt;
  const uint32_t hidden = 1u << f.mantissa_bits;
  uint32_t field = 0, mantissa = rounded;  // a subnormal
  if (rounded >= 2 * hidden) {             // carried into the next binade
    field = static_cast<uint32_t>(quantum + 1 + f.bias);
    mantissa = 0;
  } else if (rounded >= hidden) {
    field = static_cast<uint32_t>(quantum + f.bias);
    mantissa = rounded - hidden;
  }
  if (field > f.max_exponent_field()) return std::nullopt;
  const uint32_t encoded = (field << f.mantissa_bits) | mantissa;
  if (encoded > f.max_finite_bits()) return std::nullopt;  // overflow: Encode's rule
  return ((bits >> 31) != 0 ? f.sign_bit() : 0) | encoded;
}

}  // namespace

float DecodeNarrowFloat(uint32_t bits, int exponent_bits, int mantissa_bits, int bias,
                        FloatEncoding encoding) {
  if (exponent_bits == 8 && mantissa_bits == 7 && encoding == FloatEncoding::kIeee) {
    uint32_t word = bits << 16;  // bf16 is the top half of an f32
    float out;
    std::memcpy(&out, &word, sizeof(out));
    return out;
  }
  return Decode(bits, NarrowFloatFormat{exponent_bits, mantissa_bits, bias, encoding});
}

uint32_t NarrowFloatMaxFiniteBits(int exponent_bits, int mantissa_bits, FloatEncoding encoding) {
  return NarrowFloatFormat{exponent_bits, mantissa_bits, 0, encoding}.max_finite_bits();
}

uint32_t EncodeNarrowFloat(double value, int exponent_bits, int mantissa_bits, int bias,
                           FloatEncoding encoding) {
  if (exponent_bits == 8 && mantissa_bits == 7 && bias == 127 && encoding == FloatEncoding::kIeee) {
    // bf16 from a value an f32 holds exactly (NaN is not equal to itself:
    // the general path): the f32's top half rounded to nearest even on the
    // bottom half; the carry takes the largest finite values to infinity.
    const auto single = static_cast<float>(value);
    if (static_cast<double>(single) == value) {
      uint32_t word;
      std::memcpy(&word, &single, sizeof(word));
      word += 0x7fffu + ((word >> 16) & 1u);
      return word >> 16;
    }
  }
  const NarrowFloatFormat format{exponent_bits, mantissa_bits, bias, encoding};
  const auto single = static_cast<float>(value);
  if (static_cast<double>(single) == value) {
    if (std::optional<uint32_t> encoded = EncodeF32Normal(single, format)) return *encoded;
  }
  return Encode(value, format);
}

}  // namespace axle
