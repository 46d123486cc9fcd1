// MatchSortKeyOrder on the comparators JAX writes and on ones it must
// refuse, and sorts that take the native-key path on the `cpu` platform
// against the interpreter bit for bit: JAX's canonicalizing f32 comparator
// with NaNs of both signs, -0 and +0, ties (stable), argsort's two
// operands, descending and swapped-parameter comparators, f64, s32 and u8
// keys, a sort along a strided dimension; float compares under the partial
// order, by keys where a slice has no NaN.
#include "axle/cpu/runtime/sort_key_order.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "axle/cpu/runtime/platform_test_util.h"
#include "axle/hlo/text/hlo_parser.h"
#include "gtest/gtest.h"

namespace axle {
namespace {

using cpu::MatchSortKeyOrder;
using testing::RunOn;

// JAX's comparator: NaNs to one NaN, -0 to +0, then a total-order LT.
constexpr absl::string_view kJaxComparator = R"(
cmp {
  a = f32[] parameter(0)
  ne.a = pred[] compare(a, a), direction=NE
  qnan = f32[] constant(nan)
  zero = f32[] constant(0)
  eq.a = pred[] compare(a, zero), direction=EQ
  s0.a = f32[] select(eq.a, zero, a)
  s1.a = f32[] select(ne.a, qnan, s0.a)
  b = f32[] parameter(1)
  ne.b = pred[] compare(b, b), direction=NE
  eq.b = pred[] compare(b, zero), direction=EQ
  s0.b = f32[] select(eq.b, zero, b)
  s1.b = f32[] select(ne.b, qnan, s0.b)
  ROOT lt = pred[] compare(s1.a, s1.b), direction=LT, type=TOTALORDER
}
)";

// The comparator of `module`'s only sort matches or not.
bool Matches(absl::string_view text) {
  auto module = ParseAndReturnUnverifiedModule(text);
  EXPECT_TRUE(module.ok()) << module.status();
  if (!module.ok()) return false;
  for (const HloComputation* computation : (*module)->computations()) {
    if (computation->name() == "cmp") return MatchSortKeyOrder(*computation).has_value();
  }
  ADD_FAILURE() << "no computation cmp";
  return false;
}

std::string Module(absl::string_view comparator, absl::string_view entry) {
  return absl::StrCat("HloModule m\n", comparator, "\nENTRY e {\n", entry, "\n}\n");
}

// Runs on cpu and the interpreter; they must agree bit for bit.
Literal RunBoth(const std::string& text, const std::vector<Literal>& arguments) {
  absl::StatusOr<Literal> cpu = RunOn("cpu", text, arguments);
  EXPECT_TRUE(cpu.ok()) << cpu.status();
  if (!cpu.ok()) return Literal();
  absl::StatusOr<Literal> reference = RunOn("interpreter", text, arguments);
  EXPECT_TRUE(reference.ok()) << reference.status();
  if (reference.ok()) {
    EXPECT_EQ(*cpu, *reference) << *cpu << "\nvs\n" << *reference;
  }
  return std::move(*cpu);
}

TEST(SortKeyOrder, MatchesJaxComparators) {
  EXPECT_TRUE(Matches(Module(kJaxComparator, R"(
  p = f32[8] parameter(0)
  ROOT s = f32[8] sort(p), dimensions={0}, to_apply=cmp)")));
  EXPECT_TRUE(Matches(Module(R"(
cmp {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  c = f32[] parameter(2)
  d = f32[] parameter(3)
  ROOT gt = pred[] compare(a, b), direction=GT
})",
                             R"(
  p = s32[8] parameter(0)
  q = f32[8] parameter(1)
  ROOT s = (s32[8], f32[8]) sort(p, q), dimensions={0}, to_apply=cmp)")));
}

TEST(SortKeyOrder, RefusesOtherComparators) {
  // Reads the second operand (a lexicographic order).
  EXPECT_FALSE(Matches(Module(R"(
cmp {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  c = s32[] parameter(2)
  d = s32[] parameter(3)
  ab = pred[] compare(a, b), direction=LT
  cd = pred[] compare(c, d), direction=LT
  ROOT o = pred[] or(ab, cd)
})",
                              "p = s32[8] parameter(0)\n  q = s32[8] parameter(1)\n  ROOT s = "
                              "(s32[8], s32[8]) sort(p, q), dimensions={0}, to_apply=cmp")));
  // LE is not strict.
  EXPECT_FALSE(Matches(Module(R"(
cmp {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT le = pred[] compare(a, b), direction=LE
})",
                              "p = s32[8] parameter(0)\n  ROOT s = s32[8] sort(p), "
                              "dimensions={0}, to_apply=cmp")));
  // Different canonicalizations on the two sides.
  EXPECT_FALSE(Matches(Module(R"(
cmp {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  zero = f32[] constant(0)
  one = f32[] constant(1)
  eq = pred[] compare(a, zero), direction=EQ
  s = f32[] select(eq, one, a)
  ROOT lt = pred[] compare(s, b), direction=LT, type=TOTALORDER
})",
                              "p = f32[8] parameter(0)\n  ROOT s = f32[8] sort(p), "
                              "dimensions={0}, to_apply=cmp")));
}

TEST(SortKeyOrder, JaxSortWithNansZerosAndTies) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  Literal keys = LiteralUtil::CreateR2<float>(
      {{3, -0.0f, nan, -inf, 0, 2, -nan, 2, inf, -1}, {1, 1, 1, -2, -0.0f, 0, 5, nan, -3, 1}});
  Literal sorted = RunBoth(Module(kJaxComparator, R"(
  p = f32[2,10] parameter(0)
  ROOT s = f32[2,10] sort(p), dimensions={1}, is_stable=true, to_apply=cmp)"),
                           {keys.Clone()});
  // -0 and +0 are one key (the first stays first); every NaN is last.
  EXPECT_EQ(std::signbit(sorted.Get<float>({0, 2})), true);
  EXPECT_EQ(sorted.Get<float>({0, 1}), -1.0f);
  EXPECT_TRUE(std::isnan(sorted.Get<float>({0, 9})));
  EXPECT_TRUE(std::isnan(sorted.Get<float>({0, 8})));
  Literal argsort = RunBoth(Module(absl::StrCat(R"(
cmp {
  a = f32[] parameter(0)
  ne.a = pred[] compare(a, a), direction=NE
  qnan = f32[] constant(nan)
  zero = f32[] constant(0)
  eq.a = pred[] compare(a, zero), direction=EQ
  s0.a = f32[] select(eq.a, zero, a)
  s1.a = f32[] select(ne.a, qnan, s0.a)
  b = f32[] parameter(1)
  ne.b = pred[] compare(b, b), direction=NE
  eq.b = pred[] compare(b, zero), direction=EQ
  s0.b = f32[] select(eq.b, zero, b)
  s1.b = f32[] select(ne.b, qnan, s0.b)
  i = s32[] parameter(2)
  j = s32[] parameter(3)
  ROOT lt = pred[] compare(s1.a, s1.b), direction=LT, type=TOTALORDER
})"),
                                   R"(
  p = f32[2,10] parameter(0)
  iota = s32[2,10] iota(), iota_dimension=1
  s = (f32[2,10], s32[2,10]) sort(p, iota), dimensions={1}, is_stable=true, to_apply=cmp
  ROOT i = s32[2,10] get-tuple-element(s), index=1)"),
                            {keys.Clone()});
  EXPECT_EQ(argsort, LiteralUtil::CreateR2<int32_t>(
                         {{3, 9, 1, 4, 5, 7, 0, 8, 2, 6}, {8, 3, 4, 5, 0, 1, 2, 9, 6, 7}}));
}

// A float compare without type=TOTALORDER (approx_max_k's CPU fallback):
// a key order for NaN-free slices, -0 and +0 one key; a slice with a NaN
// calls the comparator. Rows with NaNs, -0/+0 ties and plain ties, f32 and
// f64, against the interpreter bit for bit.
TEST(SortKeyOrder, PartialOrderFloatsByKeysWhereNoNan) {
  constexpr absl::string_view kGt = R"(
cmp {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  i = s32[] parameter(2)
  j = s32[] parameter(3)
  ROOT gt = pred[] compare(a, b), direction=GT
})";
  auto module = ParseAndReturnUnverifiedModule(Module(kGt, R"(
  p = f32[8] parameter(0)
  iota = s32[8] iota(), iota_dimension=0
  ROOT s = (f32[8], s32[8]) sort(p, iota), dimensions={0}, to_apply=cmp)"));
  ASSERT_TRUE(module.ok()) << module.status();
  std::optional<cpu::SortKeyOrder> order =
      MatchSortKeyOrder(*(*module)->GetComputationWithName("cmp"));
  ASSERT_TRUE(order.has_value());
  EXPECT_TRUE(order->nan_free_only());
  EXPECT_TRUE(order->descending());

  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  Literal keys = LiteralUtil::CreateR2<float>({{3, -0.0f, 2, -inf, 0, 2, -1, 0, inf, -0.0f},
                                               {1, nan, 1, -2, -0.0f, 0, 5, 2, -3, 1},
                                               {0, -0.0f, 0, 7, 7, -7, 0.5f, -0.0f, 7, 1}});
  Literal argsort = RunBoth(Module(kGt, R"(
  p = f32[3,10] parameter(0)
  iota = s32[3,10] iota(), iota_dimension=1
  s = (f32[3,10], s32[3,10]) sort(p, iota), dimensions={1}, is_stable=true, to_apply=cmp
  ROOT i = s32[3,10] get-tuple-element(s), index=1)"),
                            {keys.Clone()});
  // Rows 0 and 2 by keys: descending, ties (-0 and +0 among them) in their
  // first order.
  for (int64_t row : {0, 2}) {
    std::vector<int32_t> expected(10);
    std::iota(expected.begin(), expected.end(), 0);
    std::stable_sort(expected.begin(), expected.end(), [&](int32_t a, int32_t b) {
      return keys.Get<float>({row, a}) > keys.Get<float>({row, b});
    });
    for (int64_t k = 0; k < 10; ++k) EXPECT_EQ(argsort.Get<int32_t>({row, k}), expected[k]) << row;
  }
  RunBoth(Module(R"(
cmp {
  a = f64[] parameter(0)
  b = f64[] parameter(1)
  ROOT lt = pred[] compare(b, a), direction=GT
})",
                 "p = f64[2,5] parameter(0)\n  ROOT s = f64[2,5] sort(p), dimensions={1}, "
                 "is_stable=true, to_apply=cmp"),
          {LiteralUtil::CreateR2<double>({{1, -0.0, 0, -2, 1}, {nan, 2, -1, 0, 3}})});
}

TEST(SortKeyOrder, DescendingSwappedAndOtherTypes) {
  std::vector<double> doubles;
  std::vector<int32_t> ints;
  std::vector<uint8_t> bytes;
  for (int k = 0; k < 300; ++k) {
    doubles.push_back(std::sin(k * 0.37) * 1e3);
    ints.push_back((k * 7919) % 211 - 105);
    bytes.push_back(static_cast<uint8_t>((k * 37) % 256));
  }
  // f64 descending by GT under the total order.
  RunBoth(Module(R"(
cmp {
  a = f64[] parameter(0)
  b = f64[] parameter(1)
  ROOT gt = pred[] compare(a, b), direction=GT, type=TOTALORDER
})",
                 "p = f64[3,100] parameter(0)\n  ROOT s = f64[3,100] sort(p), dimensions={1}, "
                 "is_stable=true, to_apply=cmp"),
          {LiteralUtil::CreateR1<double>(doubles).Reshape({3, 100}).value()});
  // s32 keys with f32 values, the parameters swapped (descending), along
  // the outer dimension (strided slices).
  std::vector<float> values(ints.size());
  for (size_t k = 0; k < values.size(); ++k) values[k] = static_cast<float>(k);
  RunBoth(Module(R"(
cmp {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  c = f32[] parameter(2)
  d = f32[] parameter(3)
  ROOT lt = pred[] compare(b, a), direction=LT
})",
                 "p = s32[100,3] parameter(0)\n  q = f32[100,3] parameter(1)\n  ROOT s = "
                 "(s32[100,3], f32[100,3]) sort(p, q), dimensions={0}, is_stable=true, "
                 "to_apply=cmp"),
          {LiteralUtil::CreateR1<int32_t>(ints).Reshape({100, 3}).value(),
           LiteralUtil::CreateR1<float>(values).Reshape({100, 3}).value()});
  RunBoth(Module(R"(
cmp {
  a = u8[] parameter(0)
  b = u8[] parameter(1)
  ROOT lt = pred[] compare(a, b), direction=LT
})",
                 "p = u8[300] parameter(0)\n  ROOT s = u8[300] sort(p), dimensions={0}, "
                 "is_stable=true, to_apply=cmp"),
          {LiteralUtil::CreateR1<uint8_t>(bytes)});
}

}  // namespace
}  // namespace axle
