//===- bf16_reductions_test_util.h - Shared pieces of the bf16 sum tests ---===//
//
// The pass test (bf16_reductions_in_f32_test.cc) and the platform test
// (cpu/runtime/bf16_reductions_test.cc) check the same kinds of program: a
// bf16 reduction by an `add` reducer, an argmax that keeps its first-index
// ties, a prefix sum rounded once. These build their text, their inputs and
// what they are expected to give.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_HLO_TRANSFORMS_BF16_REDUCTIONS_TEST_UTIL_H_
#define AXLE_HLO_TRANSFORMS_BF16_REDUCTIONS_TEST_UTIL_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "axle/core/literal.h"
#include "gtest/gtest.h"

namespace axle::bf16_reductions_test {

// A module whose entry computation is `entry` (its body, without the
// braces), with a bf16 reducer `add` to call.
inline std::string WithBf16Add(absl::string_view entry) {
  return absl::StrCat(R"(
HloModule m
add {
  a = bf16[] parameter(0)
  b = bf16[] parameter(1)
  ROOT c = bf16[] add(a, b)
}
ENTRY e {)",
                      entry, "}\n");
}

// The argmax of each row of a bf16[rows,columns] parameter: a variadic
// reduce of (value, index) pairs that keeps the first index of ties.
inline std::string Bf16ArgmaxModule(int64_t rows, int64_t columns) {
  const std::string dims = absl::StrCat(rows, ",", columns);
  return absl::StrCat(R"(
HloModule m
argmax {
  a = bf16[] parameter(0)
  i = s32[] parameter(1)
  b = bf16[] parameter(2)
  j = s32[] parameter(3)
  gt = pred[] compare(a, b), direction=GT
  eq = pred[] compare(a, b), direction=EQ
  lt = pred[] compare(i, j), direction=LT
  tie = pred[] and(eq, lt)
  pick = pred[] or(gt, tie)
  v = bf16[] select(pick, a, b)
  k = s32[] select(pick, i, j)
  ROOT t = (bf16[], s32[]) tuple(v, k)
}
ENTRY e {
  x = bf16[)",
                      dims, "] parameter(0)\n  n = s32[", dims, R"(] iota(), iota_dimension=1
  lowest = bf16[] constant(-inf)
  zero = s32[] constant(0)
  ROOT r = (bf16[)",
                      rows, "], s32[", rows,
                      "]) reduce(x, n, lowest, zero), dimensions={1}, to_apply=argmax\n}\n");
}

// A bf16 literal whose element i is values[i % values.size()].
inline Literal Bf16Values(absl::Span<const int64_t> dimensions, const std::vector<float>& values) {
  Literal wide(Shape(F32, dimensions));
  auto data = wide.data<float>();
  for (size_t i = 0; i < data.size(); ++i) data[i] = values[i % values.size()];
  absl::StatusOr<Literal> narrow = wide.Convert(BF16);
  EXPECT_TRUE(narrow.ok()) << narrow.status();
  return narrow.ok() ? *std::move(narrow) : Literal();
}

// `result`'s elements in f32: each tuple element's in turn where it is a
// tuple.
inline std::vector<float> AsF32(Literal result) {
  std::vector<Literal> leaves;
  if (result.shape().IsTuple()) {
    leaves = result.DecomposeTuple();
  } else {
    leaves.push_back(std::move(result));
  }
  std::vector<float> values;
  for (const Literal& leaf : leaves) {
    absl::StatusOr<Literal> wide = leaf.Convert(F32);
    EXPECT_TRUE(wide.ok()) << wide.status();
    if (!wide.ok()) return {};
    for (float value : wide->data<float>()) values.push_back(value);
  }
  return values;
}

// The prefix sums 1, 2, ..., n of a sum of ones, each rounded once to bf16
// (exact up to 256, then in even steps).
inline std::vector<float> RoundedPrefixSums(int64_t n) {
  Literal sums(Shape(F32, {n}));
  auto data = sums.data<float>();
  for (int64_t k = 0; k < n; ++k) data[k] = static_cast<float>(k + 1);
  absl::StatusOr<Literal> rounded = sums.Convert(BF16);
  EXPECT_TRUE(rounded.ok()) << rounded.status();
  return rounded.ok() ? AsF32(*std::move(rounded)) : std::vector<float>{};
}

}  // namespace axle::bf16_reductions_test

#endif  // AXLE_HLO_TRANSFORMS_BF16_REDUCTIONS_TEST_UTIL_H_
