//===- kernel_util.h - Shared helpers of the heavy kernels -----------------===//
//
// Private to the kernels of kernels.h (dot.cc, convolution.cc, ...): a
// row-major multi-index odometer, the accumulator each element type sums
// products in (XLA's evaluator: narrow floats in float, integers in 64 bits
// with wrap-around, pred as or-of-ands), and argument checks that turn
// malformed attributes into InvalidArgument instead of crashes.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_EVAL_KERNEL_UTIL_H_
#define AXLE_EVAL_KERNEL_UTIL_H_

#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "axle/core/literal.h"
#include "axle/core/types.h"
#include "axle/hlo/ir/hlo_computation.h"
#include "axle/hlo/ir/hlo_instructions.h"

namespace axle::kernel_util {

// Advances `index` to the next multi-index of `dims` in row-major order (last
// dimension fastest). Returns false, leaving `index` all zeros, after the last
// one. Callers visit the first index (all zeros) themselves, and only when
// the product of `dims` is non-zero.
inline bool NextIndex(absl::Span<const int64_t> dims, absl::Span<int64_t> index) {
  for (int64_t i = static_cast<int64_t>(dims.size()) - 1; i >= 0; --i) {
    if (++index[i] < dims[i]) return true;
    index[i] = 0;
  }
  return false;
}

inline int64_t Product(absl::Span<const int64_t> dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

// --- Accumulation ------------------------------------------------------------
//
// Sums of products are formed in Accumulator<T>: float for f16/bf16/f8/f4,
// the type itself for f32/f64/complex, uint64_t for every integer type (two's
// complement wrap-around, no undefined overflow), bool for pred.

template <typename T>
using Accumulator = std::conditional_t<is_integer_v<T>, uint64_t,
                                       std::conditional_t<is_narrow_float_v<T>, float, T>>;

template <typename T>
Accumulator<T> ToAccumulator(T v) {
  if constexpr (is_intn_v<T>) {
    return static_cast<uint64_t>(static_cast<int64_t>(v.value()));
  } else if constexpr (is_integer_v<T>) {
    // Sign-extends signed values first, so that products wrap correctly.
    return static_cast<uint64_t>(
        static_cast<std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>>(v));
  } else if constexpr (is_narrow_float_v<T>) {
    return static_cast<float>(v);
  } else {
    return v;
  }
}

// acc + a * b (pred: acc || (a && b)).
template <typename A>
A MultiplyAdd(A acc, A a, A b) {
  if constexpr (std::is_same_v<A, bool>) {
    return acc || (a && b);
  } else {
    return acc + a * b;
  }
}

// Rounds (floats) or wraps (integers) an accumulator back to T.
template <typename T>
T FromAccumulator(Accumulator<T> acc) {
  if constexpr (is_intn_v<T>) {
    return T(static_cast<int64_t>(acc));
  } else if constexpr (is_integer_v<T>) {
    return static_cast<T>(acc);
  } else if constexpr (is_narrow_float_v<T>) {
    return T(acc);
  } else {
    return acc;
  }
}

// --- Windows and scalars ---------------------------------------------------------

// The number of window positions along one dimension, as XLA's shape
// inference counts them for convolution, reduce-window and
// select-and-scatter: the input dilated by base_dilation and padded, the
// window dilated by window_dilation, stepped by stride; 0 when it does not
// fit.
inline int64_t WindowedOutputSize(int64_t input, const WindowDimension& w) {
  auto dilated = [](int64_t bound, int64_t dilation) {
    return bound == 0 ? 0 : (bound - 1) * dilation + 1;
  };
  int64_t padded = dilated(input, w.base_dilation()) + w.padding_low() + w.padding_high();
  int64_t window = dilated(w.size(), w.window_dilation());
  if (padded <= 0 || window > padded) return 0;
  return (padded - window) / w.stride() + 1;
}

// A scalar literal holding element `i` (row-major) of `array`.
inline Literal ScalarAt(const Literal& array, int64_t i) {
  PrimitiveType type = array.shape().element_type();
  Literal scalar(ShapeUtil::MakeScalarShape(type));
  int64_t width = primitive_util::ByteWidth(type);
  std::memcpy(scalar.untyped_data(), static_cast<const uint8_t*>(array.untyped_data()) + i * width,
              width);
  return scalar;
}

// Stores scalar `value` as element `i` of `array` (same element type).
inline void StoreScalar(const Literal& value, Literal* array, int64_t i) {
  int64_t width = primitive_util::ByteWidth(array->shape().element_type());
  std::memcpy(static_cast<uint8_t*>(array->untyped_data()) + i * width, value.untyped_data(),
              width);
}

// --- Scalar combiners -----------------------------------------------------------
//
// Scatter-like ops call a computation on (current, update) scalars; the
// common ones run natively. Combine follows the elementwise ops' semantics:
// integers wrap, narrow floats compute in float and round, pred add/or is
// "or" and multiply/and is "and".

enum class Combiner { kGeneric, kAdd, kMultiply, kAnd, kOr, kMax, kMin, kTakeUpdate };

// Recognizes computations that combine two scalars of `type` with one
// elementwise op whose meaning is unambiguous for that type (float max/min
// are left to the evaluator, which owns their NaN and signed-zero rules).
inline Combiner ClassifyCombiner(const HloComputation& computation, PrimitiveType type) {
  if (computation.num_parameters() != 2) return Combiner::kGeneric;
  const HloInstruction* p0 = computation.parameter_instruction(0);
  const HloInstruction* p1 = computation.parameter_instruction(1);
  const HloInstruction* root = computation.root_instruction();
  if (p0 == nullptr || p1 == nullptr || root == nullptr) return Combiner::kGeneric;
  Shape scalar = ShapeUtil::MakeScalarShape(type);
  for (const HloInstruction* i : {p0, p1, root}) {
    if (!ShapeUtil::Compatible(i->shape(), scalar)) return Combiner::kGeneric;
  }
  if (root == p1) return Combiner::kTakeUpdate;
  if (root->operand_count() != 2) return Combiner::kGeneric;
  const HloInstruction* a = root->operand(0);
  const HloInstruction* b = root->operand(1);
  if (!((a == p0 && b == p1) || (a == p1 && b == p0))) return Combiner::kGeneric;
  const bool integer = primitive_util::IsIntegralType(type);
  const bool logical = integer || type == PRED;
  switch (root->opcode()) {
    case HloOpcode::kAdd:
      return Combiner::kAdd;
    case HloOpcode::kMultiply:
      return Combiner::kMultiply;
    case HloOpcode::kAnd:
      return logical ? Combiner::kAnd : Combiner::kGeneric;
    case HloOpcode::kOr:
      return logical ? Combiner::kOr : Combiner::kGeneric;
    case HloOpcode::kMaximum:
      return integer ? Combiner::kMax : Combiner::kGeneric;
    case HloOpcode::kMinimum:
      return integer ? Combiner::kMin : Combiner::kGeneric;
    default:
      return Combiner::kGeneric;
  }
}

template <typename T>
T Combine(Combiner c, T a, T b) {
  if constexpr (std::is_same_v<T, bool>) {
    switch (c) {
      case Combiner::kAdd:
      case Combiner::kOr:
        return a || b;
      case Combiner::kMultiply:
      case Combiner::kAnd:
        return a && b;
      default:
        return b;
    }
  } else if constexpr (is_integer_v<T>) {
    uint64_t x = ToAccumulator(a), y = ToAccumulator(b);
    switch (c) {
      case Combiner::kAdd:
        return FromAccumulator<T>(x + y);
      case Combiner::kMultiply:
        return FromAccumulator<T>(x * y);
      case Combiner::kAnd:
        return FromAccumulator<T>(x & y);
      case Combiner::kOr:
        return FromAccumulator<T>(x | y);
      case Combiner::kMax:
        return std::max(a, b);
      case Combiner::kMin:
        return std::min(a, b);
      default:
        return b;
    }
  } else {
    // Floats (narrow ones compute in float and round) and complex.
    switch (c) {
      case Combiner::kAdd:
        return a + b;
      case Combiner::kMultiply:
        return a * b;
      default:
        return b;
    }
  }
}

// --- Checks --------------------------------------------------------------------

template <typename... Args>
absl::Status InvalidArgument(const Args&... args) {
  return absl::InvalidArgumentError(absl::StrCat(args...));
}

inline std::string DimsToString(absl::Span<const int64_t> dims) {
  return absl::StrCat("{", absl::StrJoin(dims, ","), "}");
}

// `literal` is a (dense) array.
inline absl::Status CheckArray(const Literal& literal, absl::string_view op,
                               absl::string_view what) {
  if (!literal.shape().IsArray()) {
    return InvalidArgument(op, ": ", what, " must be an array, got ", literal.shape().ToString());
  }
  return absl::OkStatus();
}

// Every entry of `dims` is in [0, rank) and no entry repeats.
inline absl::Status CheckDimensionList(absl::Span<const int64_t> dims, int64_t rank,
                                       absl::string_view op, absl::string_view what) {
  std::vector<bool> seen(rank, false);
  for (int64_t d : dims) {
    if (d < 0 || d >= rank) {
      return InvalidArgument(op, ": ", what, "=", DimsToString(dims),
                             " has a dimension out of range for rank ", rank);
    }
    if (seen[d]) {
      return InvalidArgument(op, ": ", what, "=", DimsToString(dims), " repeats dimension ", d);
    }
    seen[d] = true;
  }
  return absl::OkStatus();
}

// The instruction's shape is an array with exactly `dims`.
inline absl::Status CheckResultDims(const Shape& shape, absl::Span<const int64_t> dims,
                                    absl::string_view op) {
  if (!shape.IsArray() || absl::Span<const int64_t>(shape.dimensions()) != dims) {
    return InvalidArgument(op, ": result shape ", shape.ToString(), " does not match the ",
                           "computed dimensions ", DimsToString(dims));
  }
  return absl::OkStatus();
}

}  // namespace axle::kernel_util

#endif  // AXLE_EVAL_KERNEL_UTIL_H_
