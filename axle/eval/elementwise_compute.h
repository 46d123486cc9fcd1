//===- elementwise_compute.h - Compute types and lane loops ---------------===//
//
// Private to the interpreter's elementwise files (evaluator_elementwise.cc,
// evaluator_convert_compare.cc): the type each element type computes in
// (integers in 64 bits, narrow floats in float), the loops over lanes (n
// elements or one broadcast element), and the float total-order key.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_EVAL_ELEMENTWISE_COMPUTE_H_
#define AXLE_EVAL_ELEMENTWISE_COMPUTE_H_

#include <algorithm>
#include <bit>
#include <cstdint>
#include <type_traits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "axle/eval/evaluator_internal.h"

namespace axle::eval_internal {

// --- Compute types -----------------------------------------------------------

// Integers in 64 bits of their signedness; bool, float, double and complex
// as themselves.
template <typename T>
struct ComputeTypeOf {
  using type = std::conditional_t<is_integer_v<T>,
                                  std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>, T>;
};
template <typename S, int E, int M, int B, FloatEncoding K>
struct ComputeTypeOf<NarrowFloat<S, E, M, B, K>> {
  using type = float;
};
template <int N, bool kSigned>
struct ComputeTypeOf<IntN<N, kSigned>> {
  using type = std::conditional_t<kSigned, int64_t, uint64_t>;
};

template <typename T>
using Compute = typename ComputeTypeOf<T>::type;

template <typename T>
Compute<T> Up(T v) {
  if constexpr (is_intn_v<T>) {
    return static_cast<Compute<T>>(v.value());
  } else if constexpr (is_narrow_float_v<T>) {
    return static_cast<float>(v);
  } else {
    return static_cast<Compute<T>>(v);
  }
}

template <typename T>
T Down(Compute<T> v) {
  if constexpr (is_intn_v<T> || is_narrow_float_v<T>) {
    return T(v);
  } else {
    return static_cast<T>(v);
  }
}

template <typename T>
constexpr int BitsOf() {
  if constexpr (is_intn_v<T>) {
    return T::kBitWidth;
  } else {
    return static_cast<int>(sizeof(T) * 8);
  }
}

template <typename T>
constexpr bool IsSignedInt() {
  if constexpr (is_intn_v<T>) {
    return T::kMin < 0;
  } else {
    return is_integer_v<T> && std::is_signed_v<T>;
  }
}

// The low BitsOf<T>() bits of an integer in compute form.
template <typename T>
uint64_t RawBits(Compute<T> v) {
  constexpr int kBits = BitsOf<T>();
  uint64_t mask = kBits == 64 ? ~uint64_t{0} : (uint64_t{1} << kBits) - 1;
  return static_cast<uint64_t>(v) & mask;
}

// --- Loops -------------------------------------------------------------------

template <typename Out, typename A, typename F>
void Loop1(const Lanes& a, Out* out, int64_t n, F&& f) {
  const A* x = static_cast<const A*>(a.data);
  if (a.broadcast) {
    Out v = f(x[0]);
    std::fill(out, out + n, v);
    return;
  }
  for (int64_t i = 0; i < n; ++i) out[i] = f(x[i]);
}

template <typename Out, typename A, typename B, typename F>
void Loop2(const Lanes& a, const Lanes& b, Out* out, int64_t n, F&& f) {
  const A* x = static_cast<const A*>(a.data);
  const B* y = static_cast<const B*>(b.data);
  int64_t sa = a.broadcast ? 0 : 1, sb = b.broadcast ? 0 : 1;
  for (int64_t i = 0; i < n; ++i) out[i] = f(x[i * sa], y[i * sb]);
}

template <typename Out, typename A, typename B, typename C, typename F>
void Loop3(const Lanes& a, const Lanes& b, const Lanes& c, Out* out, int64_t n, F&& f) {
  const A* x = static_cast<const A*>(a.data);
  const B* y = static_cast<const B*>(b.data);
  const C* z = static_cast<const C*>(c.data);
  int64_t sa = a.broadcast ? 0 : 1, sb = b.broadcast ? 0 : 1, sc = c.broadcast ? 0 : 1;
  for (int64_t i = 0; i < n; ++i) out[i] = f(x[i * sa], y[i * sb], z[i * sc]);
}

inline absl::Status NotDefined(const HloInstruction& instruction, PrimitiveType type) {
  return absl::InvalidArgumentError(absl::StrCat(Describe(instruction),
                                                 ": not defined for element type ",
                                                 primitive_util::LowercasePrimitiveTypeName(type)));
}

// --- Total order ---------------------------------------------------------------

// The key that orders floats totally: -NaN < -inf < ... < -0 < +0 < ... <
// +inf < +NaN, as signed integers.
template <typename T>
int64_t TotalOrderKey(T v) {
  int64_t bits;
  int width;
  if constexpr (is_narrow_float_v<T>) {
    width = T::kIsSigned ? T::kExponent + T::kMantissa + 1 : 8;
    bits = static_cast<int64_t>(v.bits());
    if (!T::kIsSigned) return bits;
  } else if constexpr (std::is_same_v<T, float>) {
    width = 32;
    bits = std::bit_cast<uint32_t>(v);
  } else {
    width = 64;
    bits = std::bit_cast<int64_t>(v);
  }
  if (width < 64) {
    // Sign-extend from `width` bits.
    int shift = 64 - width;
    bits = static_cast<int64_t>(static_cast<uint64_t>(bits) << shift) >> shift;
  }
  if (bits < 0) bits ^= (width == 64 ? INT64_MAX : (int64_t{1} << (width - 1)) - 1);
  return bits;
}

}  // namespace axle::eval_internal

#endif  // AXLE_EVAL_ELEMENTWISE_COMPUTE_H_
