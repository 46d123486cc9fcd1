//===- evaluator_convert_compare.cc - compare, convert, stochastic-convert -===//
//
// The interpreter's elementwise ops whose result type differs from their
// operands': compare (into pred, with XLA's total order for floats where
// asked), convert between any two element types, and stochastic-convert.
// evaluator_elementwise.cc dispatches to them; semantics as documented there.
//
//===----------------------------------------------------------------------===//
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <type_traits>

#include "axle/core/compare_by_direction.h"
#include "axle/eval/elementwise_compute.h"
#include "axle/eval/evaluator_internal.h"

namespace axle::eval_internal {
namespace {

// --- Compare -----------------------------------------------------------------

template <typename T>
absl::Status Compare(const HloInstruction& instruction, const Lanes& a, const Lanes& b, bool* out,
                     int64_t n) {
  const auto& compare = *cast<HloCompareInstruction>(&instruction);
  ComparisonDirection direction = compare.direction();
  if constexpr (is_complex_v<T>) {
    if (direction != ComparisonDirection::kEq && direction != ComparisonDirection::kNe) {
      return InvalidInstruction(instruction, "complex numbers compare only for EQ and NE");
    }
    bool equal = direction == ComparisonDirection::kEq;
    Loop2<bool, T, T>(a, b, out, n, [&](T x, T y) { return (x == y) == equal; });
  } else if constexpr (is_float_v<T>) {
    if (compare.type() == ComparisonType::kFloatTotalOrder) {
      Loop2<bool, T, T>(a, b, out, n, [&](T x, T y) {
        return CompareByDirection(direction, TotalOrderKey<T>(x), TotalOrderKey<T>(y));
      });
    } else {
      Loop2<bool, T, T>(a, b, out, n, [&](T x, T y) {
        return CompareByDirection(direction, Up<T>(x), Up<T>(y));
      });
    }
  } else if constexpr (is_integer_v<T>) {
    if (compare.type() == ComparisonType::kUnsigned) {
      Loop2<bool, T, T>(a, b, out, n, [&](T x, T y) {
        return CompareByDirection(direction, RawBits<T>(Up<T>(x)), RawBits<T>(Up<T>(y)));
      });
    } else {
      Loop2<bool, T, T>(a, b, out, n, [&](T x, T y) {
        return CompareByDirection(direction, Up<T>(x), Up<T>(y));
      });
    }
  } else {
    Loop2<bool, T, T>(a, b, out, n, [&](T x, T y) { return CompareByDirection(direction, x, y); });
  }
  return absl::OkStatus();
}

// --- Convert -----------------------------------------------------------------

// Converts through one of five exact intermediates (bool, int64, uint64,
// double, complex128) so that only 5 x 30 conversion loops are instantiated;
// each intermediate holds every value of its source type exactly.
template <typename From>
auto ToIntermediate(From v) {
  if constexpr (std::is_same_v<From, bool>) {
    return v;
  } else if constexpr (is_complex_v<From>) {
    return complex128(v.real(), v.imag());
  } else if constexpr (is_float_v<From>) {
    return ConvertValue<double>(v);
  } else if constexpr (IsSignedInt<From>()) {
    return ConvertValue<int64_t>(v);
  } else {
    return ConvertValue<uint64_t>(v);
  }
}

template <typename From>
absl::Status ConvertLanes(const Lanes& a, PrimitiveType out_type, void* out, int64_t n) {
  using I = decltype(ToIntermediate(From{}));
  const From* x = static_cast<const From*>(a.data);
  int64_t count = a.broadcast ? 1 : n;
  std::unique_ptr<I[]> intermediate(new I[count]);
  for (int64_t i = 0; i < count; ++i) intermediate[i] = ToIntermediate(x[i]);
  PrimitiveTypeSwitch(
      [&]<typename To>() {
        To* y = static_cast<To*>(out);
        if (a.broadcast) {
          std::fill(y, y + n, ConvertValue<To>(intermediate[0]));
        } else {
          for (int64_t i = 0; i < n; ++i) y[i] = ConvertValue<To>(intermediate[i]);
        }
      },
      out_type);
  return absl::OkStatus();
}

// --- Stochastic convert ------------------------------------------------------

// Rounds |x| down or up at random: up when the random bits, read as an
// unsigned number, are below the fraction scaled to 2^bits (XLA).
template <typename F>
absl::Status StochasticConvert(const HloInstruction& instruction, const Lanes& a, const Lanes& r,
                               PrimitiveType out_type, void* out, int64_t n) {
  if constexpr (!is_float_v<F>) {
    return NotDefined(instruction, a.type);
  } else {
    if (!primitive_util::IsUnsignedIntegralType(r.type) ||
        primitive_util::BitWidth(r.type) != primitive_util::BitWidth(a.type)) {
      return InvalidInstruction(instruction,
                                "random bits must be unsigned integers as wide as the operand");
    }
    if (!primitive_util::IsSignedIntegralType(out_type)) {
      return InvalidInstruction(instruction, "result must be a signed integer type");
    }
    int random_bits = primitive_util::BitWidth(r.type);
    const F* x = static_cast<const F*>(a.data);
    return PrimitiveTypeSwitch(
        [&]<typename To>() -> absl::Status {
          if constexpr (!is_integer_v<To>) {
            return absl::InternalError("unreachable");
          } else {
            To* y = static_cast<To*>(out);
            int64_t lo, hi;
            if constexpr (is_intn_v<To>) {
              lo = To::kMin;
              hi = To::kMax;
            } else {
              hi = std::numeric_limits<To>::max();
              lo = -hi - 1;  // the result type is signed (checked above)
            }
            for (int64_t i = 0; i < n; ++i) {
              double v = static_cast<double>(Up<F>(x[a.broadcast ? 0 : i]));
              int64_t ri = r.broadcast ? 0 : i;
              uint64_t random = 0;
              std::memcpy(
                  &random,
                  static_cast<const uint8_t*>(r.data) + ri * primitive_util::ByteWidth(r.type),
                  primitive_util::ByteWidth(r.type));
              if (random_bits < 64) random &= (uint64_t{1} << random_bits) - 1;
              int64_t result;
              if (std::isnan(v)) {
                result = 0;
              } else if (v >= static_cast<double>(hi)) {
                result = hi;
              } else if (v <= static_cast<double>(lo)) {
                result = lo;
              } else {
                bool negative = std::signbit(v);
                double magnitude = std::fabs(v);
                int64_t truncated = static_cast<int64_t>(magnitude);
                double fraction = magnitude - static_cast<double>(truncated);
                if (fraction != 0) {
                  uint64_t fixed_fraction =
                      static_cast<uint64_t>(std::ldexp(fraction, random_bits));
                  if (random < fixed_fraction) ++truncated;
                }
                result = negative ? -truncated : truncated;
                result = std::clamp(result, lo, hi);
              }
              y[i] = To(result);
            }
            return absl::OkStatus();
          }
        },
        out_type);
  }
}

}  // namespace

absl::Status EvaluateCompareLanes(const HloInstruction& instruction, const Lanes& a, const Lanes& b,
                                  bool* out, int64_t n) {
  return PrimitiveTypeSwitch([&]<typename T>() { return Compare<T>(instruction, a, b, out, n); },
                             a.type);
}

absl::Status EvaluateConvertLanes(const Lanes& a, PrimitiveType out_type, void* out, int64_t n) {
  return PrimitiveTypeSwitch(
      [&]<typename From>() { return ConvertLanes<From>(a, out_type, out, n); }, a.type);
}

absl::Status EvaluateStochasticConvertLanes(const HloInstruction& instruction, const Lanes& a,
                                            const Lanes& random, PrimitiveType out_type, void* out,
                                            int64_t n) {
  return PrimitiveTypeSwitch(
      [&]<typename F>() { return StochasticConvert<F>(instruction, a, random, out_type, out, n); },
      a.type);
}

}  // namespace axle::eval_internal
