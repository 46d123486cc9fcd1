//===- types.h - Host types for XLA's narrow element types -----------------===//
//
// C++ value types for the element types C++ lacks: f16, bf16, the f8/f4
// family, e8m0, and the sub-byte integers (s1/s2/s4, u1/u2/u4). Each narrow
// float converts to and from float exactly as ml_dtypes does (round to
// nearest even; overflow to inf where the type has one, else to NaN, else
// saturating), and arithmetic is done in float (or int64 for the integers)
// and rounded back. Sub-byte values occupy one byte in host storage.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_CORE_TYPES_H_
#define AXLE_CORE_TYPES_H_

#include <complex>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "axle/core/primitive_type.h"

namespace axle {

using complex64 = std::complex<float>;
using complex128 = std::complex<double>;

// How a narrow float spends its encodings.
enum class FloatEncoding {
  kIeee,          // inf and NaN as in IEEE 754 (exponent all ones)
  kFiniteNan,     // "fn": no inf; NaN is exponent and mantissa all ones
  kFiniteUz,      // "fnuz": no inf, no -0; NaN is the bit pattern of -0
  kFiniteOnly,    // f4e2m1fn: no inf, no NaN; overflow saturates
  kExponentOnly,  // e8m0fnu: unsigned, no zero, 0xff is NaN
};

// Generic encode/decode (defined in types.cc).
float DecodeNarrowFloat(uint32_t bits, int exponent_bits, int mantissa_bits, int bias,
                        FloatEncoding encoding);
uint32_t EncodeNarrowFloat(double value, int exponent_bits, int mantissa_bits, int bias,
                           FloatEncoding encoding);
// The bit pattern of the largest finite value of a narrow float format.
uint32_t NarrowFloatMaxFiniteBits(int exponent_bits, int mantissa_bits, FloatEncoding encoding);

template <typename Storage, int kExponentBits, int kMantissaBits, int kBias,
          FloatEncoding kEncoding>
class NarrowFloat {
 public:
  using storage_type = Storage;
  static constexpr int kExponent = kExponentBits;
  static constexpr int kMantissa = kMantissaBits;
  static constexpr FloatEncoding kEncodingKind = kEncoding;
  static constexpr bool kHasInfinity = kEncoding == FloatEncoding::kIeee;
  static constexpr bool kHasNan = kEncoding != FloatEncoding::kFiniteOnly;
  static constexpr bool kIsSigned = kEncoding != FloatEncoding::kExponentOnly;
  static constexpr uint32_t kSignBit = kIsSigned ? 1u << (kExponentBits + kMantissaBits) : 0;

  constexpr NarrowFloat() = default;
  explicit NarrowFloat(float v) : bits_(static_cast<Storage>(Encode(v))) {}
  explicit NarrowFloat(double v) : bits_(static_cast<Storage>(Encode(v))) {}
  template <typename T, typename = std::enable_if_t<std::is_integral_v<T>>>
  explicit NarrowFloat(T v) : NarrowFloat(static_cast<double>(v)) {}

  static NarrowFloat FromBits(Storage bits) {
    NarrowFloat f;
    f.bits_ = bits;
    return f;
  }
  Storage bits() const { return bits_; }

  // The largest finite value, and the most negative finite one (the smallest
  // value, 2^-127, for the unsigned e8m0fnu).
  static NarrowFloat Highest() {
    return FromBits(
        static_cast<Storage>(NarrowFloatMaxFiniteBits(kExponentBits, kMantissaBits, kEncoding)));
  }
  static NarrowFloat Lowest() {
    if constexpr (!kIsSigned) {
      return FromBits(0);
    } else {
      return FromBits(static_cast<Storage>(Highest().bits() | kSignBit));
    }
  }

  explicit operator float() const {
    return DecodeNarrowFloat(bits_, kExponentBits, kMantissaBits, kBias, kEncoding);
  }
  explicit operator double() const { return static_cast<float>(*this); }
  explicit operator bool() const { return static_cast<float>(*this) != 0.0f; }
  template <typename T, typename = std::enable_if_t<std::is_integral_v<T>>>
  explicit operator T() const {
    return static_cast<T>(static_cast<float>(*this));
  }

  friend NarrowFloat operator+(NarrowFloat a, NarrowFloat b) {
    return NarrowFloat(float(a) + float(b));
  }
  friend NarrowFloat operator-(NarrowFloat a, NarrowFloat b) {
    return NarrowFloat(float(a) - float(b));
  }
  friend NarrowFloat operator*(NarrowFloat a, NarrowFloat b) {
    return NarrowFloat(float(a) * float(b));
  }
  friend NarrowFloat operator/(NarrowFloat a, NarrowFloat b) {
    return NarrowFloat(float(a) / float(b));
  }
  NarrowFloat operator-() const { return NarrowFloat(-float(*this)); }
  friend bool operator==(NarrowFloat a, NarrowFloat b) { return float(a) == float(b); }
  friend bool operator!=(NarrowFloat a, NarrowFloat b) { return float(a) != float(b); }
  friend bool operator<(NarrowFloat a, NarrowFloat b) { return float(a) < float(b); }
  friend bool operator<=(NarrowFloat a, NarrowFloat b) { return float(a) <= float(b); }
  friend bool operator>(NarrowFloat a, NarrowFloat b) { return float(a) > float(b); }
  friend bool operator>=(NarrowFloat a, NarrowFloat b) { return float(a) >= float(b); }

 private:
  static uint32_t Encode(double v);
  Storage bits_ = 0;
};

template <typename S, int E, int M, int B, FloatEncoding K>
uint32_t NarrowFloat<S, E, M, B, K>::Encode(double v) {
  return EncodeNarrowFloat(v, E, M, B, K);
}

using half = NarrowFloat<uint16_t, 5, 10, 15, FloatEncoding::kIeee>;
using bfloat16 = NarrowFloat<uint16_t, 8, 7, 127, FloatEncoding::kIeee>;
using float8_e5m2 = NarrowFloat<uint8_t, 5, 2, 15, FloatEncoding::kIeee>;
using float8_e4m3 = NarrowFloat<uint8_t, 4, 3, 7, FloatEncoding::kIeee>;
using float8_e3m4 = NarrowFloat<uint8_t, 3, 4, 3, FloatEncoding::kIeee>;
using float8_e4m3fn = NarrowFloat<uint8_t, 4, 3, 7, FloatEncoding::kFiniteNan>;
using float8_e4m3fnuz = NarrowFloat<uint8_t, 4, 3, 8, FloatEncoding::kFiniteUz>;
using float8_e4m3b11fnuz = NarrowFloat<uint8_t, 4, 3, 11, FloatEncoding::kFiniteUz>;
using float8_e5m2fnuz = NarrowFloat<uint8_t, 5, 2, 16, FloatEncoding::kFiniteUz>;
using float8_e8m0fnu = NarrowFloat<uint8_t, 8, 0, 127, FloatEncoding::kExponentOnly>;
using float4_e2m1fn = NarrowFloat<uint8_t, 2, 1, 1, FloatEncoding::kFiniteOnly>;

// A sub-byte integer held in one byte. Construction wraps to kBits, as
// XLA's integer arithmetic does.
template <int kBits, bool kSigned>
class IntN {
 public:
  using storage_type = std::conditional_t<kSigned, int8_t, uint8_t>;
  static constexpr int kBitWidth = kBits;

  constexpr IntN() = default;
  template <typename T, typename = std::enable_if_t<std::is_arithmetic_v<T>>>
  constexpr explicit IntN(T v) : value_(Wrap(static_cast<int64_t>(v))) {}

  constexpr storage_type value() const { return value_; }
  template <typename T, typename = std::enable_if_t<std::is_arithmetic_v<T>>>
  constexpr explicit operator T() const {
    return static_cast<T>(value_);
  }

  static constexpr int64_t kMin = kSigned ? -(int64_t{1} << (kBits - 1)) : 0;
  static constexpr int64_t kMax =
      kSigned ? (int64_t{1} << (kBits - 1)) - 1 : (int64_t{1} << kBits) - 1;

  friend constexpr bool operator==(IntN a, IntN b) { return a.value_ == b.value_; }
  friend constexpr bool operator!=(IntN a, IntN b) { return a.value_ != b.value_; }
  friend constexpr bool operator<(IntN a, IntN b) { return a.value_ < b.value_; }
  friend constexpr bool operator<=(IntN a, IntN b) { return a.value_ <= b.value_; }
  friend constexpr bool operator>(IntN a, IntN b) { return a.value_ > b.value_; }
  friend constexpr bool operator>=(IntN a, IntN b) { return a.value_ >= b.value_; }

 private:
  static constexpr storage_type Wrap(int64_t v) {
    uint64_t mask = (uint64_t{1} << kBits) - 1;
    uint64_t u = static_cast<uint64_t>(v) & mask;
    if (kSigned && (u >> (kBits - 1)) & 1) u |= ~mask;
    return static_cast<storage_type>(u);
  }
  storage_type value_ = 0;
};

using int1 = IntN<1, true>;
using int2 = IntN<2, true>;
using int4 = IntN<4, true>;
using uint1 = IntN<1, false>;
using uint2 = IntN<2, false>;
using uint4 = IntN<4, false>;

// PrimitiveType <-> native type.
template <PrimitiveType kType>
struct PrimitiveTypeToNative;
// clang-format off
#define AXLE_NATIVE_TYPE_LIST(V)       \
  V(PRED, bool)                        \
  V(S1, int1)                          \
  V(S2, int2)                          \
  V(S4, int4)                          \
  V(S8, int8_t)                        \
  V(S16, int16_t)                      \
  V(S32, int32_t)                      \
  V(S64, int64_t)                      \
  V(U1, uint1)                         \
  V(U2, uint2)                         \
  V(U4, uint4)                         \
  V(U8, uint8_t)                       \
  V(U16, uint16_t)                     \
  V(U32, uint32_t)                     \
  V(U64, uint64_t)                     \
  V(F16, half)                         \
  V(BF16, bfloat16)                    \
  V(F32, float)                        \
  V(F64, double)                       \
  V(F4E2M1FN, float4_e2m1fn)           \
  V(F8E3M4, float8_e3m4)               \
  V(F8E4M3, float8_e4m3)               \
  V(F8E4M3FN, float8_e4m3fn)           \
  V(F8E4M3B11FNUZ, float8_e4m3b11fnuz) \
  V(F8E4M3FNUZ, float8_e4m3fnuz)       \
  V(F8E5M2, float8_e5m2)               \
  V(F8E5M2FNUZ, float8_e5m2fnuz)       \
  V(F8E8M0FNU, float8_e8m0fnu)         \
  V(C64, complex64)                    \
  V(C128, complex128)
// clang-format on

#define AXLE_DEFINE_NATIVE_(e, T)   \
  template <>                       \
  struct PrimitiveTypeToNative<e> { \
    using type = T;                 \
  };
AXLE_NATIVE_TYPE_LIST(AXLE_DEFINE_NATIVE_)
#undef AXLE_DEFINE_NATIVE_

template <typename T>
constexpr PrimitiveType NativeToPrimitiveType() {
#define AXLE_MATCH_NATIVE_(e, U) \
  if constexpr (std::is_same_v<T, U>) return e;
  AXLE_NATIVE_TYPE_LIST(AXLE_MATCH_NATIVE_)
#undef AXLE_MATCH_NATIVE_
  return PRIMITIVE_TYPE_INVALID;
}

// Calls f.template operator()<T>() with T the native type of `type`, for
// every array type; returns f's result. `type` must be an array type.
template <typename F>
decltype(auto) PrimitiveTypeSwitch(F&& f, PrimitiveType type) {
  switch (type) {
#define AXLE_SWITCH_CASE_(e, T) \
  case e:                       \
    return f.template operator()<T>();
    AXLE_NATIVE_TYPE_LIST(AXLE_SWITCH_CASE_)
#undef AXLE_SWITCH_CASE_
    default:
      break;
  }
  std::abort();
}

template <typename T>
inline constexpr bool is_narrow_float_v = false;
template <typename S, int E, int M, int B, FloatEncoding K>
inline constexpr bool is_narrow_float_v<NarrowFloat<S, E, M, B, K>> = true;
template <typename T>
inline constexpr bool is_intn_v = false;
template <int N, bool S>
inline constexpr bool is_intn_v<IntN<N, S>> = true;
template <typename T>
inline constexpr bool is_complex_v = false;
template <typename T>
inline constexpr bool is_complex_v<std::complex<T>> = true;
// Real floating point, native or narrow.
template <typename T>
inline constexpr bool is_float_v = std::is_floating_point_v<T> || is_narrow_float_v<T>;
// Integers, native (not bool) or sub-byte.
template <typename T>
inline constexpr bool is_integer_v =
    (std::is_integral_v<T> && !std::is_same_v<T, bool>) || is_intn_v<T>;

// The largest and the most negative finite values of a real float type.
template <typename T>
T HighestFinite() {
  if constexpr (is_narrow_float_v<T>) {
    return T::Highest();
  } else {
    return std::numeric_limits<T>::max();
  }
}
template <typename T>
T LowestFinite() {
  if constexpr (is_narrow_float_v<T>) {
    return T::Lowest();
  } else {
    return std::numeric_limits<T>::lowest();
  }
}

// Converts one element with XLA's `convert` semantics: integers wrap,
// floats round to nearest even, float -> integer saturates and NaN gives 0,
// anything -> pred is `!= 0`, real -> complex has a zero imaginary part
// (complex -> real takes the real part).
template <typename To, typename From>
To ConvertValue(From v) {
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (is_complex_v<From>) {
    if constexpr (is_complex_v<To>) {
      return To(static_cast<typename To::value_type>(v.real()),
                static_cast<typename To::value_type>(v.imag()));
    } else {
      return ConvertValue<To>(v.real());
    }
  } else if constexpr (is_complex_v<To>) {
    return To(ConvertValue<typename To::value_type>(v), 0);
  } else if constexpr (std::is_same_v<To, bool>) {
    if constexpr (is_intn_v<From>)
      return v.value() != 0;
    else if constexpr (is_narrow_float_v<From>)
      return static_cast<float>(v) != 0.0f;
    else
      return v != From(0);
  } else if constexpr (is_float_v<From> && is_integer_v<To>) {
    double d = static_cast<double>(v);
    if (d != d) return To(0);
    int64_t lo, hi;
    if constexpr (is_intn_v<To>) {
      lo = To::kMin;
      hi = To::kMax;
    } else {
      lo = static_cast<int64_t>(std::numeric_limits<To>::min());
      hi = std::is_same_v<To, uint64_t> ? INT64_MAX
                                        : static_cast<int64_t>(std::numeric_limits<To>::max());
      if constexpr (std::is_same_v<To, uint64_t>) {
        if (d >= 18446744073709551615.0) return std::numeric_limits<uint64_t>::max();
        if (d <= 0) return 0;
        return static_cast<uint64_t>(d);
      }
    }
    if (d <= static_cast<double>(lo)) return To(lo);
    if (d >= static_cast<double>(hi)) return To(hi);
    return To(static_cast<int64_t>(d));
  } else if constexpr (is_integer_v<From> && is_integer_v<To>) {
    if constexpr (is_intn_v<From>)
      return To(static_cast<int64_t>(v.value()));
    else if constexpr (is_intn_v<To>)
      return To(static_cast<int64_t>(v));
    else
      return static_cast<To>(v);
  } else if constexpr (std::is_same_v<From, bool>) {
    return To(v ? 1 : 0);
  } else if constexpr (is_float_v<To>) {
    // integer or float -> float
    if constexpr (is_intn_v<From>)
      return To(static_cast<double>(v.value()));
    else if constexpr (std::is_same_v<To, float> || std::is_same_v<To, double>)
      return static_cast<To>(
          static_cast<std::conditional_t<is_narrow_float_v<From>, float, From>>(v));
    else
      return To(static_cast<double>(v));
  } else {
    return static_cast<To>(v);
  }
}

}  // namespace axle

#endif  // AXLE_CORE_TYPES_H_
