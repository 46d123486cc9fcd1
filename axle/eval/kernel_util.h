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
struct AccumulatorFor {
  using type = T;
};
template <typename S, int E, int M, int B, FloatEncoding K>
struct AccumulatorFor<NarrowFloat<S, E, M, B, K>> {
  using type = float;
};
template <int N, bool kSigned>
struct AccumulatorFor<IntN<N, kSigned>> {
  using type = uint64_t;
};
#define AXLE_INTEGER_ACCUMULATOR_(T) \
  template <>                        \
  struct AccumulatorFor<T> {         \
    using type = uint64_t;           \
  };
AXLE_INTEGER_ACCUMULATOR_(int8_t)
AXLE_INTEGER_ACCUMULATOR_(int16_t)
AXLE_INTEGER_ACCUMULATOR_(int32_t)
AXLE_INTEGER_ACCUMULATOR_(int64_t)
AXLE_INTEGER_ACCUMULATOR_(uint8_t)
AXLE_INTEGER_ACCUMULATOR_(uint16_t)
AXLE_INTEGER_ACCUMULATOR_(uint32_t)
AXLE_INTEGER_ACCUMULATOR_(uint64_t)
#undef AXLE_INTEGER_ACCUMULATOR_

template <typename T>
using Accumulator = typename AccumulatorFor<T>::type;

template <typename T>
Accumulator<T> ToAccumulator(T v) {
  if constexpr (is_intn_v<T>) {
    return static_cast<uint64_t>(static_cast<int64_t>(v.value()));
  } else if constexpr (is_integer_v<T>) {
    // Sign-extends signed values first, so that products wrap correctly.
    return static_cast<uint64_t>(static_cast<std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>>(v));
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
