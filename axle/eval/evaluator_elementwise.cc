//===- evaluator_elementwise.cc - Elementwise ops of the interpreter -------===//
//
// Every op with the kElementwise property, for every element type, computed
// the way XLA's evaluator computes it: integers in 64 bits with two's
// complement wrap-around and then truncated to their width, narrow floats
// (f16, bf16, f8, f4) in float and rounded back after each op, f32/f64/
// complex in themselves. The corner cases (division by zero, shifts past the
// width, NaN in max/min, pow of integers, ...) follow hlo_semantics.md.
//
// The kernels work on "lanes" (n elements, or one broadcast element) so that
// the same code serves whole arrays and the lane-wise evaluation of reduce /
// map / sort computations. Compare, convert and stochastic-convert live in
// evaluator_convert_compare.cc; the compute types and lane loops both files
// use, in elementwise_compute.h.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <bit>
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <memory>
#include <type_traits>

#include "axle/base/status_macros.h"
#include "axle/eval/elementwise_compute.h"
#include "axle/eval/evaluator_internal.h"

namespace axle::eval_internal {
namespace {

// --- Scalar helpers ----------------------------------------------------------

template <typename C>
bool IsNan(C v) {
  if constexpr (std::is_floating_point_v<C>) {
    return std::isnan(v);
  } else {
    return false;
  }
}

// Integer power by squaring with wrap-around; a negative exponent gives
// 1 for a base of 1 and 0 otherwise (XLA).
template <typename C>
C IntegerPower(C base, C exponent) {
  if constexpr (std::is_signed_v<C>) {
    if (exponent < 0) return base == 1 ? 1 : 0;
  }
  uint64_t b = static_cast<uint64_t>(base), e = static_cast<uint64_t>(exponent), r = 1;
  while (e != 0) {
    if (e & 1) r *= b;
    b *= b;
    e >>= 1;
  }
  return static_cast<C>(r);
}

// Reduce-precision on the bits of a float or double (XLA's algorithm: round
// the mantissa to nearest even, then flush exponents out of range to zero or
// infinity; NaN stays NaN, or becomes infinity when no mantissa bits remain).
template <typename F>
F ReducePrecision(F value, int exponent_bits, int mantissa_bits) {
  using U = std::conditional_t<sizeof(F) == 4, uint32_t, uint64_t>;
  constexpr int kSrcMantissa = std::numeric_limits<F>::digits - 1;
  constexpr int kSrcExponent = static_cast<int>(sizeof(F) * 8) - kSrcMantissa - 1;
  U bits = std::bit_cast<U>(value);
  if (mantissa_bits < kSrcMantissa) {
    U last_mantissa_bit_mask = U{1} << (kSrcMantissa - mantissa_bits);
    U base_rounding_bias = (last_mantissa_bit_mask >> 1) - 1;
    U x_last_mantissa_bit = (bits & last_mantissa_bit_mask) >> (kSrcMantissa - mantissa_bits);
    U x_rounding_bias = x_last_mantissa_bit + base_rounding_bias;
    U truncation_mask = ~(last_mantissa_bit_mask - 1);
    bits = (bits + x_rounding_bias) & truncation_mask;
  }
  if (exponent_bits < kSrcExponent) {
    U sign_bit_mask = U{1} << (sizeof(F) * 8 - 1);
    U exp_bits_mask = ((U{1} << kSrcExponent) - 1) << kSrcMantissa;
    U exponent_bias = (U{1} << (kSrcExponent - 1)) - 1;
    U reduced_exponent_bias = (U{1} << (exponent_bits - 1)) - 1;
    U reduced_max_exponent = exponent_bias + reduced_exponent_bias;
    U reduced_min_exponent = exponent_bias - reduced_exponent_bias;
    U x_exponent = bits & exp_bits_mask;
    bool overflows = x_exponent > (reduced_max_exponent << kSrcMantissa);
    bool underflows = x_exponent <= (reduced_min_exponent << kSrcMantissa);
    U signed_zero = bits & sign_bit_mask;
    U signed_inf = signed_zero | exp_bits_mask;
    if (overflows) bits = signed_inf;
    if (underflows) bits = signed_zero;
  }
  F result = std::bit_cast<F>(bits);
  if (std::isnan(value)) {
    result = mantissa_bits > 0 ? value : std::numeric_limits<F>::infinity();
  }
  return result;
}

// --- Unary ops that keep the element type ------------------------------------
//
// UnarySameType and BinarySameType switch over one family's opcodes
// (hlo_opcode_families.h) for one element type, and keep a `default:`: the
// evaluator's switch over every opcode has none and takes the families as
// whole lists, but which element types an op is defined on is not something
// a switch over opcodes can check at compile time. evaluator_families_test
// runs every op of the lists instead (and elemental_ir_emitter_test's
// FamiliesTest holds the loop kernels to what this evaluates).

// The unary ops that are one function of <cmath> / <complex> applied to the
// element: V(opcode, function), on floats and complex numbers, or on
// floats only. UnarySameType gives each a case through AXLE_EVAL_STD_CASE_.
// clang-format off
#define AXLE_EVAL_STD_FLOAT_OR_COMPLEX_OPS(V)                                     \
  V(kExp, exp) V(kLog, log) V(kSqrt, sqrt) V(kSin, sin) V(kCos, cos) V(kTan, tan) \
  V(kAcos, acos) V(kAcosh, acosh) V(kAsin, asin) V(kAsinh, asinh) V(kAtan, atan)  \
  V(kAtanh, atanh) V(kCosh, cosh) V(kSinh, sinh) V(kTanh, tanh)
#define AXLE_EVAL_STD_FLOAT_OPS(V) \
  V(kCbrt, cbrt) V(kErf, erf) V(kCeil, ceil) V(kFloor, floor) V(kRoundNearestAfz, round)
// clang-format on
#define AXLE_EVAL_STD_CASE_(opcode, fn, types)                       \
  case HloOpcode::opcode:                                            \
    if constexpr (types) return run([](C v) { return std::fn(v); }); \
    break;
#define AXLE_EVAL_STD_FLOAT_OR_COMPLEX_CASE_(opcode, fn) \
  AXLE_EVAL_STD_CASE_(opcode, fn, K::kFloat || K::kComplex)
#define AXLE_EVAL_STD_FLOAT_CASE_(opcode, fn) AXLE_EVAL_STD_CASE_(opcode, fn, K::kFloat)

// Which kind of element T is, for the `if constexpr` branches below.
template <typename T>
struct ElementKind {
  static constexpr bool kPred = std::is_same_v<T, bool>;
  static constexpr bool kInt = is_integer_v<T>;
  static constexpr bool kFloat = is_float_v<T>;
  static constexpr bool kComplex = is_complex_v<T>;
};

// Each instantiation keeps only the `if constexpr` branches its type has, so
// unrelated opcodes can reduce to the same `break` (clang-tidy's branch-clone).
// NOLINTBEGIN(bugprone-branch-clone)
template <typename T>
absl::Status UnarySameType(const HloInstruction& instruction, const Lanes& a, T* out, int64_t n) {
  using C = Compute<T>;
  using K = ElementKind<T>;
  auto run = [&](auto f) {
    Loop1<T, T>(a, out, n, [&](T v) { return Down<T>(f(Up<T>(v))); });
    return absl::OkStatus();
  };
  PrimitiveType type = a.type;
  switch (instruction.opcode()) {
    case HloOpcode::kCopy:
      return run([](C v) { return v; });
    case HloOpcode::kNegate:
      if constexpr (K::kInt)
        return run([](C v) { return static_cast<C>(uint64_t{0} - static_cast<uint64_t>(v)); });
      if constexpr (K::kFloat || K::kComplex) return run([](C v) { return -v; });
      break;
    case HloOpcode::kAbs:
      if constexpr (K::kInt) {
        return run([](C v) {
          if constexpr (std::is_signed_v<C>) {
            return v < 0 ? static_cast<C>(uint64_t{0} - static_cast<uint64_t>(v)) : v;
          } else {
            return v;
          }
        });
      }
      if constexpr (K::kFloat) return run([](C v) { return std::abs(v); });
      break;
    case HloOpcode::kSign:
      if constexpr (K::kInt)
        return run([](C v) { return static_cast<C>((C(0) < v) - (v < C(0))); });
      if constexpr (K::kFloat) {
        return run([](C v) { return std::isnan(v) ? v : std::copysign(C(v != C(0) ? 1 : 0), v); });
      }
      if constexpr (K::kComplex) {
        return run([](C v) {
          auto magnitude = std::abs(v);
          return magnitude == 0 ? C(0) : v / magnitude;
        });
      }
      break;
    case HloOpcode::kNot:
      if constexpr (K::kPred) return run([](C v) { return !v; });
      if constexpr (K::kInt) return run([](C v) { return static_cast<C>(~v); });
      break;
    case HloOpcode::kClz:
      if constexpr (K::kInt) {
        return run([](C v) {
          uint64_t bits = RawBits<T>(v);
          return static_cast<C>(BitsOf<T>() - std::bit_width(bits));
        });
      }
      break;
    case HloOpcode::kPopulationCount:
      if constexpr (K::kInt)
        return run([](C v) { return static_cast<C>(std::popcount(RawBits<T>(v))); });
      break;
    case HloOpcode::kExpm1:
      if constexpr (K::kFloat) return run([](C v) { return std::expm1(v); });
      if constexpr (K::kComplex) return run([](C v) { return std::exp(v) - C(1); });
      break;
    case HloOpcode::kLog1p:
      if constexpr (K::kFloat) return run([](C v) { return std::log1p(v); });
      if constexpr (K::kComplex) return run([](C v) { return std::log(C(1) + v); });
      break;
    case HloOpcode::kLogistic:
      if constexpr (K::kFloat || K::kComplex)
        return run([](C v) { return C(1) / (C(1) + std::exp(-v)); });
      break;
    case HloOpcode::kRsqrt:
      if constexpr (K::kFloat || K::kComplex) return run([](C v) { return C(1) / std::sqrt(v); });
      break;
      // clang-format off
    AXLE_EVAL_STD_FLOAT_OR_COMPLEX_OPS(AXLE_EVAL_STD_FLOAT_OR_COMPLEX_CASE_)
    AXLE_EVAL_STD_FLOAT_OPS(AXLE_EVAL_STD_FLOAT_CASE_)
      // clang-format on
    case HloOpcode::kRoundNearestEven:
      if constexpr (K::kFloat) {
        return run([](C v) {
          C r = std::round(v);
          // Ties go to the even neighbour.
          if (std::abs(v - std::trunc(v)) == C(0.5)) r = C(2) * std::round(v / C(2));
          return r;
        });
      }
      break;
    case HloOpcode::kReducePrecision:
      if constexpr (K::kFloat) {
        const auto& rp = *cast<HloReducePrecisionInstruction>(&instruction);
        int e = rp.exponent_bits(), m = rp.mantissa_bits();
        if (e < 1 || m < 0)
          return InvalidInstruction(instruction, "needs exponent_bits >= 1 and mantissa_bits >= 0");
        return run([e, m](C v) { return ReducePrecision<C>(v, e, m); });
      }
      break;
    default:
      return absl::InternalError(absl::StrCat(Describe(instruction), ": not a unary op"));
  }
  return NotDefined(instruction, type);
}
#undef AXLE_EVAL_STD_FLOAT_CASE_
#undef AXLE_EVAL_STD_FLOAT_OR_COMPLEX_CASE_
#undef AXLE_EVAL_STD_CASE_
#undef AXLE_EVAL_STD_FLOAT_OPS
#undef AXLE_EVAL_STD_FLOAT_OR_COMPLEX_OPS

// --- Binary ops that keep the element type -----------------------------------

template <typename T>
absl::Status BinarySameType(const HloInstruction& instruction, const Lanes& a, const Lanes& b,
                            T* out, int64_t n) {
  using C = Compute<T>;
  using K = ElementKind<T>;
  auto run = [&](auto f) {
    Loop2<T, T, T>(a, b, out, n, [&](T x, T y) { return Down<T>(f(Up<T>(x), Up<T>(y))); });
    return absl::OkStatus();
  };
  auto wrap = [](uint64_t v) { return static_cast<C>(v); };
  switch (instruction.opcode()) {
    case HloOpcode::kAdd:
      if constexpr (K::kPred) return run([](C x, C y) { return x || y; });
      if constexpr (K::kInt) {
        return run(
            [&](C x, C y) { return wrap(static_cast<uint64_t>(x) + static_cast<uint64_t>(y)); });
      }
      if constexpr (K::kFloat || K::kComplex) return run([](C x, C y) { return x + y; });
      break;
    case HloOpcode::kSubtract:
      if constexpr (K::kInt) {
        return run(
            [&](C x, C y) { return wrap(static_cast<uint64_t>(x) - static_cast<uint64_t>(y)); });
      }
      if constexpr (K::kFloat || K::kComplex) return run([](C x, C y) { return x - y; });
      break;
    case HloOpcode::kMultiply:
      if constexpr (K::kPred) return run([](C x, C y) { return x && y; });
      if constexpr (K::kInt) {
        return run(
            [&](C x, C y) { return wrap(static_cast<uint64_t>(x) * static_cast<uint64_t>(y)); });
      }
      if constexpr (K::kFloat || K::kComplex) return run([](C x, C y) { return x * y; });
      break;
    case HloOpcode::kDivide:
      if constexpr (K::kInt) {
        return run([](C x, C y) -> C {
          if (y == 0) return static_cast<C>(-1);  // all bits set
          if constexpr (std::is_signed_v<C>) {
            // INT_MIN / -1 of the element type wraps to INT_MIN; in 64 bits
            // only the 64-bit minimum needs care.
            if (y == -1) return static_cast<C>(uint64_t{0} - static_cast<uint64_t>(x));
          }
          return x / y;
        });
      }
      if constexpr (K::kFloat || K::kComplex) return run([](C x, C y) { return x / y; });
      break;
    case HloOpcode::kRemainder:
      if constexpr (K::kInt) {
        return run([](C x, C y) -> C {
          if (y == 0) return x;
          if constexpr (std::is_signed_v<C>) {
            if (y == -1) return 0;
          }
          return x % y;
        });
      }
      if constexpr (K::kFloat) return run([](C x, C y) { return std::fmod(x, y); });
      break;
    case HloOpcode::kMaximum:
    case HloOpcode::kMinimum: {
      // NaN wins either way.
      bool is_max = instruction.opcode() == HloOpcode::kMaximum;
      if constexpr (K::kPred) return run([is_max](C x, C y) { return is_max ? x || y : x && y; });
      if constexpr (K::kInt || K::kFloat) {
        return run([is_max](C x, C y) {
          if (IsNan(x)) return x;
          if (IsNan(y)) return y;
          return is_max ? std::max(x, y) : std::min(x, y);
        });
      }
      break;
    }
    case HloOpcode::kPower:
      if constexpr (K::kPred) return run([](C x, C y) { return x || !y; });
      if constexpr (K::kInt) {
        return run([](C x, C y) -> C {
          if (x == 1 || y == 0) return 1;
          return IntegerPower<C>(x, y);
        });
      }
      if constexpr (K::kFloat) {
        return run([](C x, C y) -> C {
          if (x == C(1) || y == C(0)) return C(1);
          return std::pow(x, y);
        });
      }
      if constexpr (K::kComplex) {
        return run([](C x, C y) -> C {
          if (x == C(1) || y == C(0)) return C(1);
          bool x_is_positive_infinity = x.imag() == 0 && x.real() > 0 && std::isinf(x.real());
          if (x_is_positive_infinity && y.imag() == 0 && y.real() > 0) return x;
          if (x_is_positive_infinity && y.imag() == 0 && y.real() < 0) return C(0);
          return std::pow(x, y);
        });
      }
      break;
    case HloOpcode::kAtan2:
      if constexpr (K::kFloat) return run([](C y, C x) { return std::atan2(y, x); });
      if constexpr (K::kComplex) {
        return run([](C y, C x) {
          C i(0, 1);
          return -i * std::log((x + i * y) / std::sqrt(x * x + y * y));
        });
      }
      break;
    case HloOpcode::kAnd:
      if constexpr (K::kPred) return run([](C x, C y) { return x && y; });
      if constexpr (K::kInt) return run([](C x, C y) { return static_cast<C>(x & y); });
      break;
    case HloOpcode::kOr:
      if constexpr (K::kPred) return run([](C x, C y) { return x || y; });
      if constexpr (K::kInt) return run([](C x, C y) { return static_cast<C>(x | y); });
      break;
    case HloOpcode::kXor:
      if constexpr (K::kPred) return run([](C x, C y) { return x != y; });
      if constexpr (K::kInt) return run([](C x, C y) { return static_cast<C>(x ^ y); });
      break;
    case HloOpcode::kShiftLeft:
      if constexpr (K::kInt) {
        return run([](C x, C y) -> C {
          uint64_t amount = RawBits<T>(y);
          if (amount >= static_cast<uint64_t>(BitsOf<T>())) return 0;
          return static_cast<C>(static_cast<uint64_t>(x) << amount);
        });
      }
      break;
    case HloOpcode::kShiftRightLogical:
      if constexpr (K::kInt) {
        return run([](C x, C y) -> C {
          uint64_t amount = RawBits<T>(y);
          if (amount >= static_cast<uint64_t>(BitsOf<T>())) return 0;
          return static_cast<C>(RawBits<T>(x) >> amount);
        });
      }
      break;
    case HloOpcode::kShiftRightArithmetic:
      if constexpr (K::kInt) {
        return run([](C x, C y) -> C {
          // The value as a signed number of the element's width.
          constexpr int kShift = 64 - BitsOf<T>();
          int64_t value = static_cast<int64_t>(RawBits<T>(x) << kShift) >> kShift;
          uint64_t amount = RawBits<T>(y);
          if (amount >= static_cast<uint64_t>(BitsOf<T>()))
            return static_cast<C>(value < 0 ? -1 : 0);
          return static_cast<C>(value >> amount);
        });
      }
      break;
    default:
      return absl::InternalError(absl::StrCat(Describe(instruction), ": not a binary op"));
  }
  return NotDefined(instruction, a.type);
}
// NOLINTEND(bugprone-branch-clone)

// --- Dispatch ----------------------------------------------------------------

// The one-operand elementwise ops whose result keeps the operand's element
// type (complex abs changes it; it is handled before).
bool SameTypeUnary(HloOpcode op) {
  if (op == HloOpcode::kIsFinite || op == HloOpcode::kReal || op == HloOpcode::kImag ||
      op == HloOpcode::kConvert) {
    return false;
  }
  return HloOpcodeIsElementwise(op) && HloOpcodeArity(op) == 1;
}

// The two-operand elementwise ops whose operands and result share one element
// type.
bool SameTypeBinary(HloOpcode op) {
  if (op == HloOpcode::kComplex || op == HloOpcode::kStochasticConvert ||
      op == HloOpcode::kCompare) {
    return false;
  }
  return HloOpcodeIsElementwise(op) && HloOpcodeArity(op) == 2;
}

absl::Status CheckTypes(const HloInstruction& instruction, absl::Span<const Lanes> operands,
                        PrimitiveType out_type, absl::Span<const int> same_as_out) {
  for (int i : same_as_out) {
    if (operands[i].type != out_type) {
      return InvalidInstruction(
          instruction, absl::StrCat("operand ", i, " has element type ",
                                    primitive_util::LowercasePrimitiveTypeName(operands[i].type),
                                    " but the result has ",
                                    primitive_util::LowercasePrimitiveTypeName(out_type)));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status EvaluateElementwiseLanes(const HloInstruction& instruction,
                                      absl::Span<const Lanes> operands, PrimitiveType out_type,
                                      void* out, int64_t n) {
  HloOpcode op = instruction.opcode();
  int arity = HloOpcodeArity(op);
  if (op != HloOpcode::kBitcastConvert && static_cast<int>(operands.size()) != arity) {
    return InvalidInstruction(instruction,
                              absl::StrCat("expects ", arity, " operands, has ", operands.size()));
  }
  for (const Lanes& lanes : operands) {
    if (!primitive_util::IsArrayType(lanes.type)) {
      return InvalidInstruction(instruction, "operands must be arrays");
    }
  }
  if (!primitive_util::IsArrayType(out_type)) {
    return InvalidInstruction(instruction, "result must be an array");
  }
  if (n == 0) return absl::OkStatus();
  const Lanes& a = operands[0];

  switch (op) {
    case HloOpcode::kConvert:
      return EvaluateConvertLanes(a, out_type, out, n);
    case HloOpcode::kBitcastConvert: {
      if (operands.size() != 1 ||
          primitive_util::BitWidth(a.type) != primitive_util::BitWidth(out_type)) {
        return InvalidInstruction(instruction, "lane-wise bitcast-convert needs equal bit widths");
      }
      int width = primitive_util::ByteWidth(out_type);
      int bits = primitive_util::BitWidth(out_type);
      bool sign_extend = primitive_util::IsSignedIntegralType(out_type) && bits < 8;
      auto* y = static_cast<uint8_t*>(out);
      const auto* x = static_cast<const uint8_t*>(a.data);
      for (int64_t i = 0; i < n; ++i) {
        std::memcpy(y + i * width, x + (a.broadcast ? 0 : i) * width, width);
        // A pred holds 0 or 1: any nonzero byte is true.
        if (out_type == PRED) y[i] = y[i] != 0;
        if (bits < 8) {
          uint8_t v = y[i] & ((1u << bits) - 1);
          if (sign_extend && (v >> (bits - 1)) & 1) v |= static_cast<uint8_t>(0xff << bits);
          y[i] = v;
        }
      }
      return absl::OkStatus();
    }
    case HloOpcode::kAbs:
    case HloOpcode::kReal:
    case HloOpcode::kImag:
      if (primitive_util::IsComplexType(a.type)) {
        if (out_type != primitive_util::ComplexComponentType(a.type)) {
          return InvalidInstruction(instruction, "result must be the complex component type");
        }
        auto component = [&]<typename T>(auto f) {
          using R = typename T::value_type;
          Loop1<R, T>(a, static_cast<R*>(out), n, f);
        };
        if (a.type == C64) {
          if (op == HloOpcode::kAbs)
            component.operator()<complex64>([](complex64 v) { return std::abs(v); });
          if (op == HloOpcode::kReal)
            component.operator()<complex64>([](complex64 v) { return v.real(); });
          if (op == HloOpcode::kImag)
            component.operator()<complex64>([](complex64 v) { return v.imag(); });
        } else {
          if (op == HloOpcode::kAbs)
            component.operator()<complex128>([](complex128 v) { return std::abs(v); });
          if (op == HloOpcode::kReal)
            component.operator()<complex128>([](complex128 v) { return v.real(); });
          if (op == HloOpcode::kImag)
            component.operator()<complex128>([](complex128 v) { return v.imag(); });
        }
        return absl::OkStatus();
      }
      if (op == HloOpcode::kReal || op == HloOpcode::kImag) {
        if (!primitive_util::IsFloatingPointType(a.type) || out_type != a.type) {
          return NotDefined(instruction, a.type);
        }
        if (op == HloOpcode::kImag) {
          std::memset(out, 0, n * primitive_util::ByteWidth(out_type));
          return absl::OkStatus();
        }
        int width = primitive_util::ByteWidth(out_type);
        for (int64_t i = 0; i < n; ++i) {
          std::memcpy(static_cast<uint8_t*>(out) + i * width,
                      static_cast<const uint8_t*>(a.data) + (a.broadcast ? 0 : i) * width, width);
        }
        return absl::OkStatus();
      }
      break;
    case HloOpcode::kIsFinite:
      if (!primitive_util::IsFloatingPointType(a.type) || out_type != PRED) {
        return NotDefined(instruction, a.type);
      }
      return PrimitiveTypeSwitch(
          [&]<typename T>() {
            if constexpr (is_float_v<T>) {
              Loop1<bool, T>(a, static_cast<bool*>(out), n,
                             [](T v) { return std::isfinite(Up<T>(v)); });
            }
            return absl::OkStatus();
          },
          a.type);
    case HloOpcode::kCompare:
      if (out_type != PRED || operands[1].type != a.type) {
        return InvalidInstruction(instruction, "compares two operands of one type into pred");
      }
      return EvaluateCompareLanes(instruction, a, operands[1], static_cast<bool*>(out), n);
    case HloOpcode::kComplex: {
      const Lanes& b = operands[1];
      if (b.type != a.type || (a.type != F32 && a.type != F64) ||
          out_type != (a.type == F32 ? C64 : C128)) {
        return InvalidInstruction(instruction,
                                  "complex takes two f32 (c64) or two f64 (c128) operands");
      }
      if (a.type == F32) {
        Loop2<complex64, float, float>(a, b, static_cast<complex64*>(out), n,
                                       [](float x, float y) { return complex64(x, y); });
      } else {
        Loop2<complex128, double, double>(a, b, static_cast<complex128*>(out), n,
                                          [](double x, double y) { return complex128(x, y); });
      }
      return absl::OkStatus();
    }
    case HloOpcode::kSelect: {
      if (a.type != PRED) return InvalidInstruction(instruction, "the predicate must be pred");
      AXLE_RETURN_IF_ERROR(CheckTypes(instruction, operands, out_type, {1, 2}));
      int width = primitive_util::ByteWidth(out_type);
      const bool* p = static_cast<const bool*>(a.data);
      const auto* t = static_cast<const uint8_t*>(operands[1].data);
      const auto* f = static_cast<const uint8_t*>(operands[2].data);
      auto* y = static_cast<uint8_t*>(out);
      for (int64_t i = 0; i < n; ++i) {
        bool choose_true = p[a.broadcast ? 0 : i];
        const uint8_t* src = choose_true ? t + (operands[1].broadcast ? 0 : i) * width
                                         : f + (operands[2].broadcast ? 0 : i) * width;
        std::memcpy(y + i * width, src, width);
      }
      return absl::OkStatus();
    }
    case HloOpcode::kClamp: {
      AXLE_RETURN_IF_ERROR(CheckTypes(instruction, operands, out_type, {0, 1, 2}));
      return PrimitiveTypeSwitch(
          [&]<typename T>() -> absl::Status {
            if constexpr (is_complex_v<T>) {
              return NotDefined(instruction, a.type);
            } else {
              using C = Compute<T>;
              Loop3<T, T, T, T>(a, operands[1], operands[2], static_cast<T*>(out), n,
                                [](T lo_t, T x_t, T hi_t) {
                                  C lo = Up<T>(lo_t), x = Up<T>(x_t), hi = Up<T>(hi_t);
                                  if (IsNan(lo)) return lo_t;
                                  if (IsNan(x)) return x_t;
                                  if (IsNan(hi)) return hi_t;
                                  return Down<T>(std::min(hi, std::max(x, lo)));
                                });
              return absl::OkStatus();
            }
          },
          out_type);
    }
    case HloOpcode::kStochasticConvert:
      return EvaluateStochasticConvertLanes(instruction, a, operands[1], out_type, out, n);
    default:
      break;
  }

  if (SameTypeUnary(op)) {
    AXLE_RETURN_IF_ERROR(CheckTypes(instruction, operands, out_type, {0}));
    return PrimitiveTypeSwitch(
        [&]<typename T>() { return UnarySameType<T>(instruction, a, static_cast<T*>(out), n); },
        out_type);
  }
  if (SameTypeBinary(op)) {
    AXLE_RETURN_IF_ERROR(CheckTypes(instruction, operands, out_type, {0, 1}));
    return PrimitiveTypeSwitch(
        [&]<typename T>() {
          return BinarySameType<T>(instruction, a, operands[1], static_cast<T*>(out), n);
        },
        out_type);
  }
  return absl::UnimplementedError(
      absl::StrCat("interpreter: ", Describe(instruction), " is not an elementwise op it knows"));
}

absl::StatusOr<Literal> EvaluateElementwise(const HloInstruction& instruction,
                                            absl::Span<const Literal* const> operands) {
  if (!instruction.shape().IsArray()) {
    return InvalidInstruction(instruction, "an elementwise op must produce an array");
  }
  Literal result(instruction.shape());
  int64_t n = result.element_count();
  std::vector<Lanes> lanes;
  lanes.reserve(operands.size());
  for (size_t i = 0; i < operands.size(); ++i) {
    const Literal& operand = *operands[i];
    AXLE_RETURN_IF_ERROR(ExpectArray(instruction, operand, absl::StrCat("operand ", i)));
    Lanes l = LanesOf(operand);
    if (ShapeUtil::SameDimensions(operand.shape(), instruction.shape())) {
      l.broadcast = false;
    } else if (operand.shape().rank() == 0) {
      l.broadcast = true;
    } else {
      return InvalidInstruction(
          instruction, absl::StrCat("operand ", i, " has shape ", operand.shape().ToString(false),
                                    " but the result has ", instruction.shape().ToString(false)));
    }
    lanes.push_back(l);
  }
  AXLE_RETURN_IF_ERROR(EvaluateElementwiseLanes(
      instruction, lanes, instruction.shape().element_type(), result.untyped_data(), n));
  return result;
}

}  // namespace axle::eval_internal
