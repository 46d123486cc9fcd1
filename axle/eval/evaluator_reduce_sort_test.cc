//===- evaluator_reduce_sort_test.cc - reduce, reduce-window, map, sort ----===//
#include <cmath>
#include <limits>

#include "axle/eval/evaluator_test_util.h"
#include "gtest/gtest.h"

namespace axle {
namespace {

using testing_util::EvalOk;

constexpr char kAdd[] = R"(
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
)";

TEST(ReduceTest, SumsRowsAndColumns) {
  Literal a = LiteralUtil::CreateR2<float>({{1, 2, 3}, {4, 5, 6}});
  Literal result = EvalOk(std::string("HloModule m\n") + kAdd + R"(
ENTRY e {
  a = f32[2,3] parameter(0)
  z = f32[] constant(0)
  rows = f32[2] reduce(a, z), dimensions={1}, to_apply=add
  cols = f32[3] reduce(a, z), dimensions={0}, to_apply=add
  all = f32[] reduce(a, z), dimensions={0,1}, to_apply=add
  ROOT t = (f32[2], f32[3], f32[]) tuple(rows, cols, all)
})",
                          {&a});
  EXPECT_EQ(result.tuple_element(0), LiteralUtil::CreateR1<float>({6, 15}));
  EXPECT_EQ(result.tuple_element(1), LiteralUtil::CreateR1<float>({5, 7, 9}));
  EXPECT_EQ(result.tuple_element(2), LiteralUtil::CreateR0<float>(21));
}

TEST(ReduceTest, InitValueIsFoldedIn) {
  Literal a = LiteralUtil::CreateR1<float>({1, 2});
  Literal result = EvalOk(std::string("HloModule m\n") + kAdd + R"(
ENTRY e {
  a = f32[2] parameter(0)
  z = f32[] constant(100)
  ROOT r = f32[] reduce(a, z), dimensions={0}, to_apply=add
})",
                          {&a});
  EXPECT_EQ(result, LiteralUtil::CreateR0<float>(103));
}

TEST(ReduceTest, VariadicArgmax) {
  // (value, index) pairs; ties keep the smaller index.
  Literal values = LiteralUtil::CreateR2<float>({{1, 7, 3, 7}, {9, 2, 9, 0}});
  Literal result = EvalOk(R"(
HloModule m
argmax {
  av = f32[] parameter(0)
  ai = s32[] parameter(1)
  bv = f32[] parameter(2)
  bi = s32[] parameter(3)
  gt = pred[] compare(av, bv), direction=GT
  eq = pred[] compare(av, bv), direction=EQ
  lt = pred[] compare(ai, bi), direction=LT
  tie = pred[] and(eq, lt)
  keep = pred[] or(gt, tie)
  v = f32[] select(keep, av, bv)
  i = s32[] select(keep, ai, bi)
  ROOT t = (f32[], s32[]) tuple(v, i)
}
ENTRY e {
  a = f32[2,4] parameter(0)
  idx = s32[2,4] iota(), iota_dimension=1
  lo = f32[] constant(-inf)
  zero = s32[] constant(0)
  ROOT r = (f32[2], s32[2]) reduce(a, idx, lo, zero), dimensions={1}, to_apply=argmax
})",
                          {&values});
  EXPECT_EQ(result.tuple_element(0), LiteralUtil::CreateR1<float>({7, 9}));
  EXPECT_EQ(result.tuple_element(1), LiteralUtil::CreateR1<int32_t>({1, 0}));
}

TEST(ReduceTest, NonLanewiseComputationFallsBackToPerElementEvaluation) {
  // The reducer calls another computation: evaluated element by element.
  Literal a = LiteralUtil::CreateR1<int32_t>({1, 2, 3, 4});
  Literal result = EvalOk(R"(
HloModule m
inner {
  x = s32[] parameter(0)
  y = s32[] parameter(1)
  ROOT m = s32[] multiply(x, y)
}
mul {
  x = s32[] parameter(0)
  y = s32[] parameter(1)
  ROOT c = s32[] call(x, y), to_apply=inner
}
ENTRY e {
  a = s32[4] parameter(0)
  one = s32[] constant(1)
  ROOT r = s32[] reduce(a, one), dimensions={0}, to_apply=mul
})",
                          {&a});
  EXPECT_EQ(result, LiteralUtil::CreateR0<int32_t>(24));
}

TEST(ReduceTest, Bf16AccumulatesInBf16) {
  // Each step rounds to bf16: 256 + 1 = 256 (the 1 is lost every time).
  Literal a = LiteralUtil::CreateR1<bfloat16>({bfloat16(256.0f), bfloat16(1.0f), bfloat16(1.0f)});
  Literal result = EvalOk(R"(
HloModule m
add {
  x = bf16[] parameter(0)
  y = bf16[] parameter(1)
  ROOT s = bf16[] add(x, y)
}
ENTRY e {
  a = bf16[3] parameter(0)
  z = bf16[] constant(0)
  ROOT r = bf16[] reduce(a, z), dimensions={0}, to_apply=add
})",
                          {&a});
  EXPECT_EQ(static_cast<float>(result.data<bfloat16>()[0]), 256.0f);
}

TEST(ReduceWindowTest, WindowDilationAndPadding) {
  Literal a = LiteralUtil::CreateR1<float>({1, 2, 3, 4, 5});
  Literal result = EvalOk(std::string("HloModule m\n") + kAdd + R"(
ENTRY e {
  a = f32[5] parameter(0)
  z = f32[] constant(0)
  dil = f32[3] reduce-window(a, z), window={size=2 rhs_dilate=2}, to_apply=add
  pad = f32[5] reduce-window(a, z), window={size=3 pad=1_1}, to_apply=add
  str = f32[2] reduce-window(a, z), window={size=2 stride=2}, to_apply=add
  ROOT t = (f32[3], f32[5], f32[2]) tuple(dil, pad, str)
})",
                          {&a});
  // Window dilation 2: {a0,a2}, {a1,a3}, {a2,a4}.
  EXPECT_EQ(result.tuple_element(0), LiteralUtil::CreateR1<float>({4, 6, 8}));
  EXPECT_EQ(result.tuple_element(1), LiteralUtil::CreateR1<float>({3, 6, 9, 12, 9}));
  EXPECT_EQ(result.tuple_element(2), LiteralUtil::CreateR1<float>({3, 7}));
}

TEST(ReduceWindowTest, BaseDilationSkipsHoles) {
  // Base dilation 2 turns {1,2,3} into {1,_,2,_,3}; windows of 2 see one
  // real element each.
  Literal a = LiteralUtil::CreateR1<float>({1, 2, 3});
  Literal result = EvalOk(R"(
HloModule m
mx {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT m = f32[] maximum(x, y)
}
ENTRY e {
  a = f32[3] parameter(0)
  lo = f32[] constant(-100)
  ROOT r = f32[4] reduce-window(a, lo), window={size=2 lhs_dilate=2}, to_apply=mx
})",
                          {&a});
  EXPECT_EQ(result, LiteralUtil::CreateR1<float>({1, 2, 2, 3}));
}

TEST(ReduceWindowTest, TwoDimensionalMaxPool) {
  Literal a =
      LiteralUtil::CreateR2<float>({{1, 2, 3, 4}, {5, 6, 7, 8}, {9, 10, 11, 12}, {13, 14, 15, 16}});
  Literal result = EvalOk(R"(
HloModule m
mx {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT m = f32[] maximum(x, y)
}
ENTRY e {
  a = f32[4,4] parameter(0)
  lo = f32[] constant(-inf)
  ROOT r = f32[2,2] reduce-window(a, lo), window={size=2x2 stride=2x2}, to_apply=mx
})",
                          {&a});
  EXPECT_EQ(result, LiteralUtil::CreateR2<float>({{6, 8}, {14, 16}}));
}

TEST(MapTest, AppliesAComputationPerElement) {
  Literal a = LiteralUtil::CreateR1<float>({1, 2, 3});
  Literal b = LiteralUtil::CreateR1<float>({10, 20, 30});
  Literal result = EvalOk(R"(
HloModule m
f {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  two = f32[] constant(2)
  t = f32[] multiply(x, two)
  ROOT s = f32[] add(t, y)
}
ENTRY e {
  a = f32[3] parameter(0)
  b = f32[3] parameter(1)
  ROOT m = f32[3] map(a, b), dimensions={0}, to_apply=f
})",
                          {&a, &b});
  EXPECT_EQ(result, LiteralUtil::CreateR1<float>({12, 24, 36}));
}

TEST(SortTest, StableMultiOperandSort) {
  Literal keys = LiteralUtil::CreateR1<int32_t>({3, 1, 3, 1, 2});
  Literal values = LiteralUtil::CreateR1<int32_t>({0, 1, 2, 3, 4});
  Literal result = EvalOk(R"(
HloModule m
less {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  c = s32[] parameter(2)
  d = s32[] parameter(3)
  ROOT lt = pred[] compare(a, b), direction=LT
}
ENTRY e {
  k = s32[5] parameter(0)
  v = s32[5] parameter(1)
  ROOT s = (s32[5], s32[5]) sort(k, v), dimensions={0}, is_stable=true, to_apply=less
})",
                          {&keys, &values});
  EXPECT_EQ(result.tuple_element(0), LiteralUtil::CreateR1<int32_t>({1, 1, 2, 3, 3}));
  EXPECT_EQ(result.tuple_element(1), LiteralUtil::CreateR1<int32_t>({1, 3, 4, 0, 2}));
}

TEST(SortTest, SortsAlongTheGivenDimensionDescending) {
  Literal a = LiteralUtil::CreateR2<float>({{3, 1, 2}, {0, 5, 4}});
  Literal result = EvalOk(R"(
HloModule m
greater {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT gt = pred[] compare(a, b), direction=GT
}
ENTRY e {
  a = f32[2,3] parameter(0)
  rows = f32[2,3] sort(a), dimensions={1}, to_apply=greater
  cols = f32[2,3] sort(a), dimensions={0}, to_apply=greater
  ROOT t = (f32[2,3], f32[2,3]) tuple(rows, cols)
})",
                          {&a});
  EXPECT_EQ(result.tuple_element(0), LiteralUtil::CreateR2<float>({{3, 2, 1}, {5, 4, 0}}));
  EXPECT_EQ(result.tuple_element(1), LiteralUtil::CreateR2<float>({{3, 5, 4}, {0, 1, 2}}));
}

TEST(SortTest, TotalOrderPutsNanLast) {
  float nan = std::numeric_limits<float>::quiet_NaN();
  Literal a = LiteralUtil::CreateR1<float>({nan, 1, -0.0f, 0.0f, -1});
  Literal result = EvalOk(R"(
HloModule m
less {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT lt = pred[] compare(a, b), direction=LT, type=TOTALORDER
}
ENTRY e {
  a = f32[5] parameter(0)
  ROOT s = f32[5] sort(a), dimensions={0}, to_apply=less
})",
                          {&a});
  auto v = result.data<float>();
  EXPECT_EQ(v[0], -1.0f);
  EXPECT_TRUE(std::signbit(v[1]) && v[1] == 0.0f);
  EXPECT_TRUE(!std::signbit(v[2]) && v[2] == 0.0f);
  EXPECT_EQ(v[3], 1.0f);
  EXPECT_TRUE(std::isnan(v[4]));
}

TEST(SortTest, SwappedParametersSortDescending) {
  Literal a = LiteralUtil::CreateR1<int32_t>({2, 9, -4, 9, 0});
  Literal result = EvalOk(R"(
HloModule m
cmp {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT lt = pred[] compare(b, a), direction=LT
}
ENTRY e {
  a = s32[5] parameter(0)
  ROOT s = s32[5] sort(a), dimensions={0}, to_apply=cmp
})",
                          {&a});
  EXPECT_EQ(result, LiteralUtil::CreateR1<int32_t>({9, 9, 2, 0, -4}));
}

TEST(SortTest, LexicographicComparatorOverTwoKeys) {
  // Sort by k1, then by k2 descending; the comparator is not a single
  // compare, so it is evaluated as a computation.
  Literal k1 = LiteralUtil::CreateR1<int32_t>({1, 0, 1, 0, 1});
  Literal k2 = LiteralUtil::CreateR1<float>({5, 6, 7, 8, 5});
  Literal v = LiteralUtil::CreateR1<int32_t>({0, 1, 2, 3, 4});
  Literal result = EvalOk(R"(
HloModule m
cmp {
  a1 = s32[] parameter(0)
  b1 = s32[] parameter(1)
  a2 = f32[] parameter(2)
  b2 = f32[] parameter(3)
  av = s32[] parameter(4)
  bv = s32[] parameter(5)
  lt1 = pred[] compare(a1, b1), direction=LT
  eq1 = pred[] compare(a1, b1), direction=EQ
  gt2 = pred[] compare(a2, b2), direction=GT
  second = pred[] and(eq1, gt2)
  ROOT r = pred[] or(lt1, second)
}
ENTRY e {
  k1 = s32[5] parameter(0)
  k2 = f32[5] parameter(1)
  v = s32[5] parameter(2)
  ROOT s = (s32[5], f32[5], s32[5]) sort(k1, k2, v), dimensions={0}, is_stable=true, to_apply=cmp
})",
                          {&k1, &k2, &v});
  EXPECT_EQ(result.tuple_element(0), LiteralUtil::CreateR1<int32_t>({0, 0, 1, 1, 1}));
  EXPECT_EQ(result.tuple_element(1), LiteralUtil::CreateR1<float>({8, 6, 7, 5, 5}));
  EXPECT_EQ(result.tuple_element(2), LiteralUtil::CreateR1<int32_t>({3, 1, 2, 0, 4}));
}

TEST(TopKTest, LargestWithIndices) {
  Literal a = LiteralUtil::CreateR2<float>({{1, 5, 3, 5}, {0, -1, 2, 7}});
  Literal result = EvalOk(R"(
HloModule m
ENTRY e {
  a = f32[2,4] parameter(0)
  ROOT t = (f32[2,2], s32[2,2]) topk(a), k=2, largest=true
})",
                          {&a});
  EXPECT_EQ(result.tuple_element(0), LiteralUtil::CreateR2<float>({{5, 5}, {7, 2}}));
  EXPECT_EQ(result.tuple_element(1), LiteralUtil::CreateR2<int32_t>({{1, 3}, {3, 2}}));
}

}  // namespace
}  // namespace axle
