//===- hlo_evaluator_test.cc - The interpreter on hand-computed cases ------===//
//
// Elementwise corner cases, data movement, control flow, errors. Reductions
// and sorting are in evaluator_reduce_sort_test.cc.
//
//===----------------------------------------------------------------------===//
#include "axle/eval/hlo_evaluator.h"

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "absl/strings/match.h"
#include "axle/eval/evaluator_test_util.h"
#include "gtest/gtest.h"

namespace axle {
namespace {

using testing_util::Eval;
using testing_util::EvalOk;

constexpr int32_t kMin32 = std::numeric_limits<int32_t>::min();
constexpr int32_t kMax32 = std::numeric_limits<int32_t>::max();

TEST(HloEvaluatorTest, AddsTwoParameters) {
  Literal a = LiteralUtil::CreateR1<float>({1, 2, 3});
  Literal b = LiteralUtil::CreateR1<float>({10, 20, 30});
  Literal result = EvalOk(R"(
HloModule m
ENTRY e {
  a = f32[3] parameter(0)
  b = f32[3] parameter(1)
  ROOT c = f32[3] add(a, b)
})",
                          {&a, &b});
  EXPECT_EQ(result, LiteralUtil::CreateR1<float>({11, 22, 33}));
}

TEST(HloEvaluatorTest, SignedIntegerDivisionCornerCases) {
  Literal a = LiteralUtil::CreateR1<int32_t>({7, -7, 5, kMin32, 3, -5});
  Literal b = LiteralUtil::CreateR1<int32_t>({2, 2, 0, -1, -1, 0});
  const char* hlo = R"(
HloModule m
ENTRY e {
  a = s32[6] parameter(0)
  b = s32[6] parameter(1)
  d = s32[6] divide(a, b)
  r = s32[6] remainder(a, b)
  ROOT t = (s32[6], s32[6]) tuple(d, r)
})";
  Literal result = EvalOk(hlo, {&a, &b});
  // Truncating division; x/0 = -1; INT_MIN/-1 = INT_MIN.
  EXPECT_EQ(result.tuple_element(0), LiteralUtil::CreateR1<int32_t>({3, -3, -1, kMin32, -3, -1}));
  // Remainder has the dividend's sign; x%0 = x; INT_MIN % -1 = 0.
  EXPECT_EQ(result.tuple_element(1), LiteralUtil::CreateR1<int32_t>({1, -1, 5, 0, 0, -5}));
}

TEST(HloEvaluatorTest, UnsignedDivisionByZeroGivesAllOnes) {
  Literal a = LiteralUtil::CreateR1<uint32_t>({7, 5});
  Literal b = LiteralUtil::CreateR1<uint32_t>({2, 0});
  Literal result = EvalOk(R"(
HloModule m
ENTRY e {
  a = u32[2] parameter(0)
  b = u32[2] parameter(1)
  d = u32[2] divide(a, b)
  r = u32[2] remainder(a, b)
  ROOT t = (u32[2], u32[2]) tuple(d, r)
})",
                          {&a, &b});
  EXPECT_EQ(result.tuple_element(0), LiteralUtil::CreateR1<uint32_t>({3, 0xFFFFFFFFu}));
  EXPECT_EQ(result.tuple_element(1), LiteralUtil::CreateR1<uint32_t>({1, 5}));
}

TEST(HloEvaluatorTest, S8DivisionOfMinimumByMinusOneWraps) {
  Literal a = LiteralUtil::CreateR1<int8_t>({-128, -128});
  Literal b = LiteralUtil::CreateR1<int8_t>({-1, 0});
  Literal result = EvalOk(R"(
HloModule m
ENTRY e {
  a = s8[2] parameter(0)
  b = s8[2] parameter(1)
  ROOT d = s8[2] divide(a, b)
})",
                          {&a, &b});
  EXPECT_EQ(result, LiteralUtil::CreateR1<int8_t>({-128, -1}));
}

TEST(HloEvaluatorTest, IntegerOverflowWraps) {
  Literal a = LiteralUtil::CreateR1<int32_t>({kMax32, kMin32, 65536});
  Literal b = LiteralUtil::CreateR1<int32_t>({1, 1, 65536});
  Literal result = EvalOk(R"(
HloModule m
ENTRY e {
  a = s32[3] parameter(0)
  b = s32[3] parameter(1)
  s = s32[3] add(a, b)
  d = s32[3] subtract(a, b)
  p = s32[3] multiply(a, b)
  n = s32[3] negate(a)
  ROOT t = (s32[3], s32[3], s32[3], s32[3]) tuple(s, d, p, n)
})",
                          {&a, &b});
  EXPECT_EQ(result.tuple_element(0), LiteralUtil::CreateR1<int32_t>({kMin32, kMin32 + 1, 131072}));
  EXPECT_EQ(result.tuple_element(1), LiteralUtil::CreateR1<int32_t>({kMax32 - 1, kMax32, 0}));
  EXPECT_EQ(result.tuple_element(2), LiteralUtil::CreateR1<int32_t>({kMax32, kMin32, 0}));
  EXPECT_EQ(result.tuple_element(3), LiteralUtil::CreateR1<int32_t>({-kMax32, kMin32, -65536}));
}

TEST(HloEvaluatorTest, S4ArithmeticWrapsToFourBits) {
  Literal a = LiteralUtil::CreateR1<int4>({int4(7), int4(-8), int4(3)});
  Literal b = LiteralUtil::CreateR1<int4>({int4(1), int4(-1), int4(3)});
  Literal result = EvalOk(R"(
HloModule m
ENTRY e {
  a = s4[3] parameter(0)
  b = s4[3] parameter(1)
  s = s4[3] add(a, b)
  p = s4[3] multiply(a, b)
  ROOT t = (s4[3], s4[3]) tuple(s, p)
})",
                          {&a, &b});
  // 7+1 = -8, -8-1 = 7, 3+3 = 6; 7*1 = 7, -8*-1 = -8, 3*3 = 9 = -7.
  EXPECT_EQ(result.tuple_element(0), LiteralUtil::CreateR1<int4>({int4(-8), int4(7), int4(6)}));
  EXPECT_EQ(result.tuple_element(1), LiteralUtil::CreateR1<int4>({int4(7), int4(-8), int4(-7)}));
}

TEST(HloEvaluatorTest, ShiftsPastTheBitWidth) {
  Literal a = LiteralUtil::CreateR1<int32_t>({1, -8, -1, 1, -16});
  Literal b = LiteralUtil::CreateR1<int32_t>({32, 40, 28, -1, 2});
  Literal result = EvalOk(R"(
HloModule m
ENTRY e {
  a = s32[5] parameter(0)
  b = s32[5] parameter(1)
  l = s32[5] shift-left(a, b)
  ra = s32[5] shift-right-arithmetic(a, b)
  rl = s32[5] shift-right-logical(a, b)
  ROOT t = (s32[5], s32[5], s32[5]) tuple(l, ra, rl)
})",
                          {&a, &b});
  // Amounts >= 32 (a negative amount is huge as unsigned): logical shifts give
  // 0, arithmetic right shifts give the sign.
  EXPECT_EQ(result.tuple_element(0), LiteralUtil::CreateR1<int32_t>({0, 0, -268435456, 0, -64}));
  EXPECT_EQ(result.tuple_element(1), LiteralUtil::CreateR1<int32_t>({0, -1, -1, 0, -4}));
  EXPECT_EQ(result.tuple_element(2), LiteralUtil::CreateR1<int32_t>({0, 0, 15, 0, 1073741820}));
}

TEST(HloEvaluatorTest, ClzAndPopcnt) {
  Literal a = LiteralUtil::CreateR1<int32_t>({0, 1, -1, 0x00010000});
  Literal result = EvalOk(R"(
HloModule m
ENTRY e {
  a = s32[4] parameter(0)
  c = s32[4] count-leading-zeros(a)
  p = s32[4] popcnt(a)
  ROOT t = (s32[4], s32[4]) tuple(c, p)
})",
                          {&a});
  EXPECT_EQ(result.tuple_element(0), LiteralUtil::CreateR1<int32_t>({32, 31, 0, 15}));
  EXPECT_EQ(result.tuple_element(1), LiteralUtil::CreateR1<int32_t>({0, 1, 32, 1}));

  Literal u = LiteralUtil::CreateR1<uint8_t>({1, 0, 0x80});
  Literal r8 = EvalOk(R"(
HloModule m
ENTRY e {
  a = u8[3] parameter(0)
  ROOT c = u8[3] count-leading-zeros(a)
})",
                      {&u});
  EXPECT_EQ(r8, LiteralUtil::CreateR1<uint8_t>({7, 8, 0}));
}

TEST(HloEvaluatorTest, IntegerPower) {
  Literal a = LiteralUtil::CreateR1<int32_t>({2, 1, -1, 2, 0, -2, 3});
  Literal b = LiteralUtil::CreateR1<int32_t>({10, -5, -1, -1, 0, 3, 0});
  Literal result = EvalOk(R"(
HloModule m
ENTRY e {
  a = s32[7] parameter(0)
  b = s32[7] parameter(1)
  ROOT p = s32[7] power(a, b)
})",
                          {&a, &b});
  // A negative exponent gives 0 except for a base of 1 (XLA); x^0 = 1.
  EXPECT_EQ(result, LiteralUtil::CreateR1<int32_t>({1024, 1, 0, 0, 1, -8, 1}));
}

TEST(HloEvaluatorTest, MaximumAndMinimumPropagateNan) {
  float nan = std::numeric_limits<float>::quiet_NaN();
  Literal a = LiteralUtil::CreateR1<float>({nan, 1, 2, -0.0f});
  Literal b = LiteralUtil::CreateR1<float>({1, nan, 3, 5});
  Literal result = EvalOk(R"(
HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  mx = f32[4] maximum(a, b)
  mn = f32[4] minimum(a, b)
  ROOT t = (f32[4], f32[4]) tuple(mx, mn)
})",
                          {&a, &b});
  auto mx = result.tuple_element(0).data<float>();
  auto mn = result.tuple_element(1).data<float>();
  EXPECT_TRUE(std::isnan(mx[0]));
  EXPECT_TRUE(std::isnan(mx[1]));
  EXPECT_EQ(mx[2], 3.0f);
  EXPECT_EQ(mx[3], 5.0f);
  EXPECT_TRUE(std::isnan(mn[0]));
  EXPECT_TRUE(std::isnan(mn[1]));
  EXPECT_EQ(mn[2], 2.0f);
  EXPECT_EQ(mn[3], -0.0f);
}

TEST(HloEvaluatorTest, ClampPropagatesNanAndBroadcastsScalarBounds) {
  float nan = std::numeric_limits<float>::quiet_NaN();
  Literal x = LiteralUtil::CreateR1<float>({-5, 0.5f, 7, nan});
  Literal result = EvalOk(R"(
HloModule m
ENTRY e {
  lo = f32[] constant(0)
  hi = f32[] constant(1)
  x = f32[4] parameter(0)
  ROOT c = f32[4] clamp(lo, x, hi)
})",
                          {&x});
  auto v = result.data<float>();
  EXPECT_EQ(v[0], 0.0f);
  EXPECT_EQ(v[1], 0.5f);
  EXPECT_EQ(v[2], 1.0f);
  EXPECT_TRUE(std::isnan(v[3]));
}

TEST(HloEvaluatorTest, Bf16AddRoundsToNearestEven) {
  // 1 + 3*2^-8 lies halfway between the bf16 neighbours 1+2^-7 and
  // 1+2^-6; the tie goes to the even mantissa (1+2^-6). 1 + 2^-8 ties
  // back down to 1.
  Literal a = LiteralUtil::CreateR1<bfloat16>({bfloat16(1.0f), bfloat16(1.0f)});
  Literal b = LiteralUtil::CreateR1<bfloat16>({bfloat16(0.01171875f), bfloat16(0.00390625f)});
  Literal result = EvalOk(R"(
HloModule m
ENTRY e {
  a = bf16[2] parameter(0)
  b = bf16[2] parameter(1)
  ROOT s = bf16[2] add(a, b)
})",
                          {&a, &b});
  EXPECT_EQ(static_cast<float>(result.data<bfloat16>()[0]), 1.015625f);
  EXPECT_EQ(static_cast<float>(result.data<bfloat16>()[1]), 1.0f);
}

TEST(HloEvaluatorTest, F16ExpIsComputedInFloatAndRounded) {
  Literal a = LiteralUtil::CreateR1<half>({half(1.0f), half(0.0f)});
  Literal result = EvalOk(R"(
HloModule m
ENTRY e {
  a = f16[2] parameter(0)
  ROOT e = f16[2] exponential(a)
})",
                          {&a});
  // e rounded to f16 (10 mantissa bits): 2.71875.
  EXPECT_EQ(static_cast<float>(result.data<half>()[0]), 2.71875f);
  EXPECT_EQ(static_cast<float>(result.data<half>()[1]), 1.0f);
}

TEST(HloEvaluatorTest, RoundingModes) {
  Literal a = LiteralUtil::CreateR1<float>({2.5f, 3.5f, -2.5f, 0.4f, -0.5f});
  Literal result = EvalOk(R"(
HloModule m
ENTRY e {
  a = f32[5] parameter(0)
  afz = f32[5] round-nearest-afz(a)
  even = f32[5] round-nearest-even(a)
  c = f32[5] ceil(a)
  f = f32[5] floor(a)
  ROOT t = (f32[5], f32[5], f32[5], f32[5]) tuple(afz, even, c, f)
})",
                          {&a});
  EXPECT_EQ(result.tuple_element(0), LiteralUtil::CreateR1<float>({3, 4, -3, 0, -1}));
  EXPECT_EQ(result.tuple_element(1), LiteralUtil::CreateR1<float>({2, 4, -2, 0, -0.0f}));
  EXPECT_EQ(result.tuple_element(2), LiteralUtil::CreateR1<float>({3, 4, -2, 1, -0.0f}));
  EXPECT_EQ(result.tuple_element(3), LiteralUtil::CreateR1<float>({2, 3, -3, 0, -1}));
}

TEST(HloEvaluatorTest, SignOfZeroNegativeZeroAndNan) {
  float nan = std::numeric_limits<float>::quiet_NaN();
  Literal a = LiteralUtil::CreateR1<float>({-0.0f, 0.0f, nan, -3, 2});
  Literal result = EvalOk(R"(
HloModule m
ENTRY e {
  a = f32[5] parameter(0)
  ROOT s = f32[5] sign(a)
})",
                          {&a});
  auto v = result.data<float>();
  EXPECT_EQ(std::bit_cast<uint32_t>(v[0]), 0x80000000u);  // -0
  EXPECT_EQ(std::bit_cast<uint32_t>(v[1]), 0u);
  EXPECT_TRUE(std::isnan(v[2]));
  EXPECT_EQ(v[3], -1.0f);
  EXPECT_EQ(v[4], 1.0f);

  Literal i = LiteralUtil::CreateR1<int32_t>({-7, 0, 9});
  EXPECT_EQ(EvalOk(R"(
HloModule m
ENTRY e {
  a = s32[3] parameter(0)
  ROOT s = s32[3] sign(a)
})",
                   {&i}),
            LiteralUtil::CreateR1<int32_t>({-1, 0, 1}));
}

TEST(HloEvaluatorTest, ConvertSaturatesFloatToIntAndMapsNanToZero) {
  float nan = std::numeric_limits<float>::quiet_NaN();
  Literal a = LiteralUtil::CreateR1<float>({nan, 1e10f, -1e10f, -1.7f, 2.9f});
  Literal result = EvalOk(R"(
HloModule m
ENTRY e {
  a = f32[5] parameter(0)
  s = s32[5] convert(a)
  u = u8[5] convert(a)
  p = pred[5] convert(a)
  ROOT t = (s32[5], u8[5], pred[5]) tuple(s, u, p)
})",
                          {&a});
  EXPECT_EQ(result.tuple_element(0), LiteralUtil::CreateR1<int32_t>({0, kMax32, kMin32, -1, 2}));
  EXPECT_EQ(result.tuple_element(1), LiteralUtil::CreateR1<uint8_t>({0, 255, 0, 0, 2}));
  EXPECT_EQ(result.tuple_element(2), LiteralUtil::CreateR1<bool>({true, true, true, true, true}));
}

TEST(HloEvaluatorTest, ConvertIntegersWrap) {
  Literal a = LiteralUtil::CreateR1<int32_t>({300, -1, 8});
  Literal result = EvalOk(R"(
HloModule m
ENTRY e {
  a = s32[3] parameter(0)
  b = u8[3] convert(a)
  c = s4[3] convert(a)
  ROOT t = (u8[3], s4[3]) tuple(b, c)
})",
                          {&a});
  EXPECT_EQ(result.tuple_element(0), LiteralUtil::CreateR1<uint8_t>({44, 255, 8}));
  EXPECT_EQ(result.tuple_element(1), LiteralUtil::CreateR1<int4>({int4(-4), int4(-1), int4(-8)}));
}

TEST(HloEvaluatorTest, CompareDefaultAndTotalOrder) {
  float nan = std::numeric_limits<float>::quiet_NaN();
  Literal a = LiteralUtil::CreateR1<float>({-0.0f, nan, 1, -nan});
  Literal b = LiteralUtil::CreateR1<float>({0.0f, nan, nan, 1});
  Literal result = EvalOk(R"(
HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  lt = pred[4] compare(a, b), direction=LT
  eq = pred[4] compare(a, b), direction=EQ
  tlt = pred[4] compare(a, b), direction=LT, type=TOTALORDER
  teq = pred[4] compare(a, b), direction=EQ, type=TOTALORDER
  olt = pred[4] compare(a, b), direction=LT, order=TOTAL
  ROOT t = (pred[4], pred[4], pred[4], pred[4], pred[4]) tuple(lt, eq, tlt, teq, olt)
})",
                          {&a, &b});
  EXPECT_EQ(result.tuple_element(0), LiteralUtil::CreateR1<bool>({false, false, false, false}));
  EXPECT_EQ(result.tuple_element(1), LiteralUtil::CreateR1<bool>({true, false, false, false}));
  // Total order: -0 < +0, NaN == NaN, 1 < +NaN, -NaN < 1.
  EXPECT_EQ(result.tuple_element(2), LiteralUtil::CreateR1<bool>({true, false, true, true}));
  EXPECT_EQ(result.tuple_element(3), LiteralUtil::CreateR1<bool>({false, true, false, false}));
  // order=TOTAL (as JAX 0.11.2 writes it) is the same comparison.
  EXPECT_EQ(result.tuple_element(4), LiteralUtil::CreateR1<bool>({true, false, true, true}));
}

TEST(HloEvaluatorTest, CompareUnsignedIntegers) {
  Literal a = LiteralUtil::CreateR1<uint32_t>({0xFFFFFFFFu, 1});
  Literal b = LiteralUtil::CreateR1<uint32_t>({1, 2});
  Literal result = EvalOk(R"(
HloModule m
ENTRY e {
  a = u32[2] parameter(0)
  b = u32[2] parameter(1)
  ROOT gt = pred[2] compare(a, b), direction=GT
})",
                          {&a, &b});
  EXPECT_EQ(result, LiteralUtil::CreateR1<bool>({true, false}));
}

TEST(HloEvaluatorTest, BitcastConvertSameAndDifferentWidths) {
  Literal a = LiteralUtil::CreateR1<float>({1.0f, -2.0f});
  Literal result = EvalOk(R"(
HloModule m
ENTRY e {
  a = f32[2] parameter(0)
  u = u32[2] bitcast-convert(a)
  b = u8[2,4] bitcast-convert(a)
  ROOT t = (u32[2], u8[2,4]) tuple(u, b)
})",
                          {&a});
  EXPECT_EQ(result.tuple_element(0), LiteralUtil::CreateR1<uint32_t>({0x3f800000u, 0xc0000000u}));
  EXPECT_EQ(result.tuple_element(1),
            LiteralUtil::CreateR2<uint8_t>({{0x00, 0x00, 0x80, 0x3f}, {0x00, 0x00, 0x00, 0xc0}}));

  // And back: u8[4] -> f32[] (the last dimension goes away).
  Literal bytes = LiteralUtil::CreateR1<uint8_t>({0x00, 0x00, 0x80, 0x3f});
  EXPECT_EQ(EvalOk(R"(
HloModule m
ENTRY e {
  a = u8[4] parameter(0)
  ROOT f = f32[] bitcast-convert(a)
})",
                   {&bytes}),
            LiteralUtil::CreateR0<float>(1.0f));
}

// A pred holds 0 or 1: bitcast-convert into pred makes any nonzero byte true
// (UBSan caught the raw byte 8 of XLA's bitcast_convert_test in a bool).
TEST(HloEvaluatorTest, BitcastConvertToPredIsNonzero) {
  Literal a = LiteralUtil::CreateR1<int8_t>({0, 1, 8, -1});
  Literal b = LiteralUtil::CreateR1<int16_t>({0x0200, 0});
  Literal result = EvalOk(R"(
HloModule m
ENTRY e {
  a = s8[4] parameter(0)
  b = s16[2] parameter(1)
  p = pred[4] bitcast-convert(a)
  q = pred[2,2] bitcast-convert(b)
  ROOT t = (pred[4], pred[2,2]) tuple(p, q)
})",
                          {&a, &b});
  const auto* p = static_cast<const uint8_t*>(result.tuple_element(0).untyped_data());
  EXPECT_EQ(std::vector<uint8_t>(p, p + 4), (std::vector<uint8_t>{0, 1, 1, 1}));
  const auto* q = static_cast<const uint8_t*>(result.tuple_element(1).untyped_data());
  EXPECT_EQ(std::vector<uint8_t>(q, q + 4), (std::vector<uint8_t>{0, 1, 0, 0}));
}

TEST(HloEvaluatorTest, ComplexOps) {
  Literal a = LiteralUtil::CreateR1<complex64>({complex64(3, 4), complex64(0, 0)});
  Literal result = EvalOk(R"(
HloModule m
ENTRY e {
  a = c64[2] parameter(0)
  ab = f32[2] abs(a)
  re = f32[2] real(a)
  im = f32[2] imag(a)
  sg = c64[2] sign(a)
  m = c64[2] multiply(a, a)
  ROOT t = (f32[2], f32[2], f32[2], c64[2], c64[2]) tuple(ab, re, im, sg, m)
})",
                          {&a});
  EXPECT_EQ(result.tuple_element(0), LiteralUtil::CreateR1<float>({5, 0}));
  EXPECT_EQ(result.tuple_element(1), LiteralUtil::CreateR1<float>({3, 0}));
  EXPECT_EQ(result.tuple_element(2), LiteralUtil::CreateR1<float>({4, 0}));
  EXPECT_EQ(result.tuple_element(3),
            LiteralUtil::CreateR1<complex64>({complex64(0.6f, 0.8f), complex64(0, 0)}));
  EXPECT_EQ(result.tuple_element(4),
            LiteralUtil::CreateR1<complex64>({complex64(-7, 24), complex64(0, 0)}));
}

TEST(HloEvaluatorTest, ReducePrecisionToBf16Bits) {
  // 1 + 2^-8 + 2^-20 rounds up to 1 + 2^-7 with 7 mantissa bits; 1e30
  // overflows 5 exponent bits to infinity.
  Literal a = LiteralUtil::CreateR1<float>({1.0f + 0x1p-8f + 0x1p-20f, 1e30f});
  Literal result = EvalOk(R"(
HloModule m
ENTRY e {
  a = f32[2] parameter(0)
  b = f32[2] reduce-precision(a), exponent_bits=8, mantissa_bits=7
  h = f32[2] reduce-precision(a), exponent_bits=5, mantissa_bits=10
  ROOT t = (f32[2], f32[2]) tuple(b, h)
})",
                          {&a});
  EXPECT_EQ(result.tuple_element(0).data<float>()[0], 1.0f + 0x1p-7f);
  EXPECT_EQ(result.tuple_element(1).data<float>()[1], std::numeric_limits<float>::infinity());
}

TEST(HloEvaluatorTest, SelectAndIsFinite) {
  float inf = std::numeric_limits<float>::infinity();
  Literal x = LiteralUtil::CreateR1<float>({1, inf, std::nanf(""), -2});
  Literal result = EvalOk(R"(
HloModule m
ENTRY e {
  x = f32[4] parameter(0)
  f = pred[4] is-finite(x)
  zero = f32[] constant(0)
  z = f32[4] broadcast(zero), dimensions={}
  ROOT s = f32[4] select(f, x, z)
})",
                          {&x});
  EXPECT_EQ(result, LiteralUtil::CreateR1<float>({1, 0, 0, -2}));
}

// --- Data movement -------------------------------------------------------------

TEST(HloEvaluatorTest, IotaBroadcastTransposeReverse) {
  Literal result = EvalOk(R"(
HloModule m
ENTRY e {
  i = s32[2,3] iota(), iota_dimension=1
  t = s32[3,2] transpose(i), dimensions={1,0}
  r = s32[3,2] reverse(t), dimensions={0}
  v = s32[2] constant({5, 6})
  b = s32[2,3] broadcast(v), dimensions={0}
  ROOT u = (s32[2,3], s32[3,2], s32[3,2], s32[2,3]) tuple(i, t, r, b)
})");
  EXPECT_EQ(result.tuple_element(0), LiteralUtil::CreateR2<int32_t>({{0, 1, 2}, {0, 1, 2}}));
  EXPECT_EQ(result.tuple_element(1), LiteralUtil::CreateR2<int32_t>({{0, 0}, {1, 1}, {2, 2}}));
  EXPECT_EQ(result.tuple_element(2), LiteralUtil::CreateR2<int32_t>({{2, 2}, {1, 1}, {0, 0}}));
  EXPECT_EQ(result.tuple_element(3), LiteralUtil::CreateR2<int32_t>({{5, 5, 5}, {6, 6, 6}}));
}

TEST(HloEvaluatorTest, SliceConcatenateReshape) {
  Literal result = EvalOk(R"(
HloModule m
ENTRY e {
  i = s32[10] iota(), iota_dimension=0
  s = s32[3] slice(i), slice={[1:8:3]}
  c = s32[6] concatenate(s, s), dimensions={0}
  ROOT r = s32[2,3] reshape(c)
})");
  EXPECT_EQ(result, LiteralUtil::CreateR2<int32_t>({{1, 4, 7}, {1, 4, 7}}));
}

TEST(HloEvaluatorTest, PadWithInteriorAndNegativeEdges) {
  Literal result = EvalOk(R"(
HloModule m
ENTRY e {
  a = s32[3] constant({1, 2, 3})
  z = s32[] constant(0)
  p = s32[8] pad(a, z), padding=1_2_1
  n = s32[4] pad(a, z), padding=-1_0_1
  ROOT t = (s32[8], s32[4]) tuple(p, n)
})");
  EXPECT_EQ(result.tuple_element(0), LiteralUtil::CreateR1<int32_t>({0, 1, 0, 2, 0, 3, 0, 0}));
  EXPECT_EQ(result.tuple_element(1), LiteralUtil::CreateR1<int32_t>({0, 2, 0, 3}));
}

TEST(HloEvaluatorTest, Pad2D) {
  Literal result = EvalOk(R"(
HloModule m
ENTRY e {
  a = f32[2,2] constant({{1, 2}, {3, 4}})
  z = f32[] constant(-1)
  ROOT p = f32[3,5] pad(a, z), padding=0_1x1_1_1
})");
  EXPECT_EQ(result, LiteralUtil::CreateR2<float>(
                        {{-1, 1, -1, 2, -1}, {-1, 3, -1, 4, -1}, {-1, -1, -1, -1, -1}}));
}

TEST(HloEvaluatorTest, DynamicSliceClampsStartIndices) {
  Literal start = LiteralUtil::CreateR0<int32_t>(4);
  Literal negative = LiteralUtil::CreateR0<int32_t>(-3);
  const char* hlo = R"(
HloModule m
ENTRY e {
  a = s32[5] iota(), iota_dimension=0
  i = s32[] parameter(0)
  ROOT s = s32[2] dynamic-slice(a, i), dynamic_slice_sizes={2}
})";
  EXPECT_EQ(EvalOk(hlo, {&start}), LiteralUtil::CreateR1<int32_t>({3, 4}));
  EXPECT_EQ(EvalOk(hlo, {&negative}), LiteralUtil::CreateR1<int32_t>({0, 1}));
}

TEST(HloEvaluatorTest, DynamicUpdateSliceClampsStartIndices) {
  Literal row = LiteralUtil::CreateR0<int32_t>(5);
  Literal col = LiteralUtil::CreateR0<int32_t>(-1);
  Literal result = EvalOk(R"(
HloModule m
ENTRY e {
  zero = s32[] constant(0)
  a = s32[3,3] broadcast(zero), dimensions={}
  u = s32[2,2] constant({{1, 2}, {3, 4}})
  i = s32[] parameter(0)
  j = s32[] parameter(1)
  ROOT d = s32[3,3] dynamic-update-slice(a, u, i, j)
})",
                          {&row, &col});
  EXPECT_EQ(result, LiteralUtil::CreateR2<int32_t>({{0, 0, 0}, {1, 2, 0}, {3, 4, 0}}));
}

// --- Control flow ----------------------------------------------------------------

TEST(HloEvaluatorTest, WhileLoopCountsToTen) {
  const char* hlo = R"(
HloModule m
cond {
  p = (s32[], s32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  ten = s32[] constant(10)
  ROOT lt = pred[] compare(i, ten), direction=LT
}
body {
  p = (s32[], s32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  s = s32[] get-tuple-element(p), index=1
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  sum1 = s32[] add(s, i)
  ROOT t = (s32[], s32[]) tuple(i1, sum1)
}
ENTRY e {
  zero = s32[] constant(0)
  init = (s32[], s32[]) tuple(zero, zero)
  ROOT w = (s32[], s32[]) while(init), condition=cond, body=body
})";
  Literal result = EvalOk(hlo);
  EXPECT_EQ(result.tuple_element(0), LiteralUtil::CreateR0<int32_t>(10));
  EXPECT_EQ(result.tuple_element(1), LiteralUtil::CreateR0<int32_t>(45));  // 0+1+...+9

  HloEvaluator limited(/*max_loop_iterations=*/5);
  auto status = testing_util::EvalWith(limited, hlo, {});
  ASSERT_FALSE(status.ok());
  EXPECT_TRUE(absl::IsResourceExhausted(status.status())) << status.status();
}

TEST(HloEvaluatorTest, ConditionalIndexOutOfRangeRunsTheLastBranch) {
  const char* hlo = R"(
HloModule m
b0 {
  p = s32[] parameter(0)
  ROOT n = s32[] negate(p)
}
b1 {
  p = s32[] parameter(0)
  ROOT m = s32[] multiply(p, p)
}
ENTRY e {
  i = s32[] parameter(0)
  x = s32[] constant(7)
  ROOT c = s32[] conditional(i, x, x), branch_computations={b0, b1}
})";
  Literal zero = LiteralUtil::CreateR0<int32_t>(0);
  Literal five = LiteralUtil::CreateR0<int32_t>(5);
  Literal minus = LiteralUtil::CreateR0<int32_t>(-1);
  EXPECT_EQ(EvalOk(hlo, {&zero}), LiteralUtil::CreateR0<int32_t>(-7));
  EXPECT_EQ(EvalOk(hlo, {&five}), LiteralUtil::CreateR0<int32_t>(49));
  EXPECT_EQ(EvalOk(hlo, {&minus}), LiteralUtil::CreateR0<int32_t>(49));
}

TEST(HloEvaluatorTest, ConditionalOnPred) {
  const char* hlo = R"(
HloModule m
t {
  p = f32[] parameter(0)
  ROOT n = f32[] negate(p)
}
f {
  p = f32[] parameter(0)
  ROOT c = f32[] copy(p)
}
ENTRY e {
  b = pred[] parameter(0)
  x = f32[] constant(2)
  ROOT c = f32[] conditional(b, x, x), true_computation=t, false_computation=f
})";
  Literal yes = LiteralUtil::CreateR0<bool>(true);
  Literal no = LiteralUtil::CreateR0<bool>(false);
  EXPECT_EQ(EvalOk(hlo, {&yes}), LiteralUtil::CreateR0<float>(-2));
  EXPECT_EQ(EvalOk(hlo, {&no}), LiteralUtil::CreateR0<float>(2));
}

TEST(HloEvaluatorTest, CallAndFusion) {
  Literal result = EvalOk(R"(
HloModule m
sq {
  p = f32[2] parameter(0)
  ROOT m = f32[2] multiply(p, p)
}
fused {
  a = f32[2] parameter(0)
  b = f32[2] parameter(1)
  ROOT s = f32[2] subtract(a, b)
}
ENTRY e {
  x = f32[2] constant({3, 4})
  c = f32[2] call(x), to_apply=sq
  ROOT f = f32[2] fusion(c, x), kind=kLoop, calls=fused
})");
  EXPECT_EQ(result, LiteralUtil::CreateR1<float>({6, 12}));
}

// --- Errors and side channels ------------------------------------------------------

TEST(HloEvaluatorTest, WrongArgumentsAreInvalidArgumentNamingTheParameter) {
  const char* hlo = R"(
HloModule m
ENTRY e {
  a = f32[3] parameter(0)
  ROOT n = f32[3] negate(a)
})";
  auto none = Eval(hlo, {});
  ASSERT_FALSE(none.ok());
  EXPECT_TRUE(absl::IsInvalidArgument(none.status()));

  Literal wrong = LiteralUtil::CreateR1<float>({1, 2});
  auto bad = Eval(hlo, {&wrong});
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(absl::IsInvalidArgument(bad.status()));
  EXPECT_TRUE(absl::StrContains(bad.status().message(), "parameter 0")) << bad.status();
  EXPECT_TRUE(absl::StrContains(bad.status().message(), "f32[3]")) << bad.status();
  EXPECT_TRUE(absl::StrContains(bad.status().message(), "f32[2]")) << bad.status();
}

TEST(HloEvaluatorTest, CustomCallWithoutHandlerIsNotFound) {
  const char* hlo = R"(
HloModule m
ENTRY e {
  a = f32[2] parameter(0)
  ROOT c = f32[2] custom-call(a), custom_call_target="my_target"
})";
  Literal a = LiteralUtil::CreateR1<float>({1, 2});
  auto result = Eval(hlo, {&a});
  ASSERT_FALSE(result.ok());
  EXPECT_TRUE(absl::IsNotFound(result.status())) << result.status();
  EXPECT_TRUE(absl::StrContains(result.status().message(), "my_target"));
  EXPECT_TRUE(absl::StrContains(result.status().message(), "Host"));

  HloEvaluator evaluator;
  evaluator.set_custom_call_handler(
      [](const HloCustomCallInstruction& call,
         absl::Span<const Literal* const> operands) -> absl::StatusOr<Literal> {
        Literal out = operands[0]->Clone();
        for (float& v : out.data<float>()) v *= 10;
        return out;
      });
  auto handled = testing_util::EvalWith(evaluator, hlo, {&a});
  ASSERT_TRUE(handled.ok()) << handled.status();
  EXPECT_EQ(*handled, LiteralUtil::CreateR1<float>({10, 20}));
}

TEST(HloEvaluatorTest, SingleReplicaAllReduceIsTheOperand) {
  Literal a = LiteralUtil::CreateR1<float>({1, 2});
  Literal result = EvalOk(R"(
HloModule m
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY e {
  a = f32[2] parameter(0)
  ROOT r = f32[2] all-reduce(a), replica_groups={}, to_apply=add
})",
                          {&a});
  EXPECT_EQ(result, a);
}

TEST(HloEvaluatorTest, MultiReplicaCollectiveIsUnimplemented) {
  Literal a = LiteralUtil::CreateR1<float>({1, 2});
  auto result = Eval(R"(
HloModule m, replica_count=2
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY e {
  a = f32[2] parameter(0)
  ROOT r = f32[2] all-reduce(a), replica_groups={{0,1}}, to_apply=add
})",
                     {&a});
  ASSERT_FALSE(result.ok());
  EXPECT_TRUE(absl::IsUnimplemented(result.status())) << result.status();
  EXPECT_TRUE(absl::StrContains(result.status().message(), "all-reduce"));
}

TEST(HloEvaluatorTest, TokensAndBarriersPassThrough) {
  Literal a = LiteralUtil::CreateR1<float>({1, 2});
  Literal result = EvalOk(R"(
HloModule m
ENTRY e {
  a = f32[2] parameter(0)
  t = token[] after-all()
  d = f32[2] add-dependency(a, t)
  ROOT o = f32[2] opt-barrier(d)
})",
                          {&a});
  EXPECT_EQ(result, a);
}

TEST(HloEvaluatorTest, RngIsDeterministicForASeed) {
  const char* hlo = R"(
HloModule m
ENTRY e {
  lo = f32[] constant(0)
  hi = f32[] constant(1)
  ROOT r = f32[100] rng(lo, hi), distribution=rng_uniform
})";
  HloEvaluator first, second, other;
  first.set_seed(42);
  second.set_seed(42);
  other.set_seed(43);
  auto a = testing_util::EvalWith(first, hlo, {});
  auto b = testing_util::EvalWith(second, hlo, {});
  auto c = testing_util::EvalWith(other, hlo, {});
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_EQ(*a, *b);
  EXPECT_NE(*a, *c);
  for (float v : a->data<float>()) {
    EXPECT_GE(v, 0.0f);
    EXPECT_LT(v, 1.0f);
  }
}

}  // namespace
}  // namespace axle
