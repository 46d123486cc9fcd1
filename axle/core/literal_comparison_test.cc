//===- literal_comparison_test.cc - LiteralsEqual / LiteralsNear ----------===//
#include "axle/core/literal_comparison.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace axle {
namespace {

using ::testing::HasSubstr;

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNan = std::numeric_limits<float>::quiet_NaN();

std::string Message(const absl::Status& s) { return std::string(s.message()); }

TEST(LiteralsEqualTest, EqualLiterals) {
  EXPECT_TRUE(LiteralsEqual(LiteralUtil::CreateR2<int32_t>({{1, 2}, {3, 4}}),
                            LiteralUtil::CreateR2<int32_t>({{1, 2}, {3, 4}}))
                  .ok());
  EXPECT_TRUE(
      LiteralsEqual(LiteralUtil::CreateR1<float>({kNan}), LiteralUtil::CreateR1<float>({kNan}))
          .ok());
  EXPECT_TRUE(LiteralsEqual(LiteralUtil::CreateToken(), LiteralUtil::CreateToken()).ok());
}

TEST(LiteralsEqualTest, ReportsMismatches) {
  absl::Status s = LiteralsEqual(LiteralUtil::CreateR2<int32_t>({{1, 2, 3}, {4, 5, 6}}),
                                 LiteralUtil::CreateR2<int32_t>({{1, 2, 3}, {4, 7, 6}}));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Message(s), HasSubstr("1 of 6 elements of s32[2,3] mismatch"));
  EXPECT_THAT(Message(s), HasSubstr("at {1,1}: expected 5, actual 7"));
}

TEST(LiteralsEqualTest, FloatsCompareBitwise) {
  absl::Status s = LiteralsEqual(LiteralUtil::CreateR1<float>({0.0f, 1.0f}),
                                 LiteralUtil::CreateR1<float>({-0.0f, 1.0f}));
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(Message(s), HasSubstr("at {0}: expected 0, actual -0"));
  EXPECT_FALSE(LiteralsEqual(LiteralUtil::CreateR1<float>({1.0f}),
                             LiteralUtil::CreateR1<float>({std::nextafter(1.0f, 2.0f)}))
                   .ok());
}

TEST(LiteralsEqualTest, ShapeMismatch) {
  absl::Status s =
      LiteralsEqual(LiteralUtil::CreateR1<float>({1, 2}), LiteralUtil::CreateR1<float>({1, 2, 3}));
  EXPECT_EQ(Message(s), "shape mismatch: expected f32[2], actual f32[3]");
  s = LiteralsEqual(LiteralUtil::CreateR1<float>({1}), LiteralUtil::CreateR1<double>({1}));
  EXPECT_EQ(Message(s), "shape mismatch: expected f32[1], actual f64[1]");
  s = LiteralsEqual(LiteralUtil::MakeTuple({LiteralUtil::CreateR0<float>(1)}),
                    LiteralUtil::CreateR0<float>(1));
  EXPECT_THAT(Message(s), HasSubstr("shape mismatch"));
}

TEST(LiteralsEqualTest, IgnoresLayouts) {
  Literal a = LiteralUtil::CreateR2<float>({{1, 2}, {3, 4}});
  Literal b = a;
  b.set_layout(Layout({0, 1}));
  EXPECT_TRUE(LiteralsEqual(a, b).ok());
}

TEST(LiteralsEqualTest, TuplesNameTheShapeIndex) {
  Literal e = LiteralUtil::MakeTuple(
      {LiteralUtil::CreateR0<int32_t>(1),
       LiteralUtil::MakeTuple({LiteralUtil::CreateR1<bool>({true, false})})});
  Literal a =
      LiteralUtil::MakeTuple({LiteralUtil::CreateR0<int32_t>(1),
                              LiteralUtil::MakeTuple({LiteralUtil::CreateR1<bool>({true, true})})});
  absl::Status s = LiteralsEqual(e, a);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(Message(s), HasSubstr("at shape index {1,0}"));
  EXPECT_THAT(Message(s), HasSubstr("at {1}: expected false, actual true"));
}

TEST(LiteralsEqualTest, ManyMismatchesAreSummarized) {
  std::vector<int32_t> e(100, 0), a(100, 1);
  absl::Status s =
      LiteralsEqual(LiteralUtil::CreateR1<int32_t>(e), LiteralUtil::CreateR1<int32_t>(a));
  EXPECT_THAT(Message(s), HasSubstr("100 of 100 elements"));
  EXPECT_THAT(Message(s), HasSubstr("... and 95 more"));
}

TEST(LiteralsNearTest, AbsoluteOrRelativeBound) {
  Literal e = LiteralUtil::CreateR1<float>({1.0f, 100.0f, 0.0f});
  // |diff| = 0.05 <= abs for the first; rel 0.0005 for the second; 0 exactly.
  Literal a = LiteralUtil::CreateR1<float>({1.05f, 100.05f, 0.0f});
  EXPECT_TRUE(LiteralsNear(e, a, ErrorSpec(0.1, 0)).ok());
  EXPECT_TRUE(LiteralsNear(e, a, ErrorSpec(0.01, 0.06)).ok());
  absl::Status s = LiteralsNear(e, a, ErrorSpec(0.01, 0.001));
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(Message(s), HasSubstr("1 of 3 elements of f32[3] mismatch"));
  EXPECT_THAT(Message(s), HasSubstr("abs bound 0.01, rel bound 0.001"));
  EXPECT_THAT(Message(s), HasSubstr("at {0}: expected 1, actual 1.05 (abs error"));
  EXPECT_THAT(Message(s), HasSubstr("max abs error 0.05"));
  EXPECT_THAT(Message(s), HasSubstr("max rel error 0.05"));
}

TEST(LiteralsNearTest, ZeroExpectedNeedsTheAbsoluteBound) {
  Literal e = LiteralUtil::CreateR1<double>({0.0});
  Literal a = LiteralUtil::CreateR1<double>({1e-7});
  EXPECT_TRUE(LiteralsNear(e, a, ErrorSpec(1e-6)).ok());
  EXPECT_FALSE(LiteralsNear(e, a, ErrorSpec(1e-8, 0.5)).ok());
  EXPECT_TRUE(LiteralsNear(LiteralUtil::CreateR1<float>({0.0f}),
                           LiteralUtil::CreateR1<float>({-0.0f}), ErrorSpec(0))
                  .ok());
}

TEST(LiteralsNearTest, NansAndInfinities) {
  ErrorSpec spec(1e-3, 1e-3);
  EXPECT_TRUE(LiteralsNear(LiteralUtil::CreateR1<float>({kNan, kInf, -kInf}),
                           LiteralUtil::CreateR1<float>({-kNan, kInf, -kInf}), spec)
                  .ok());
  absl::Status s = LiteralsNear(LiteralUtil::CreateR1<float>({kNan}),
                                LiteralUtil::CreateR1<float>({1.0f}), spec);
  EXPECT_THAT(Message(s), HasSubstr("expected nan, actual 1"));
  EXPECT_FALSE(
      LiteralsNear(LiteralUtil::CreateR1<float>({1.0f}), LiteralUtil::CreateR1<float>({kNan}), spec)
          .ok());
  EXPECT_FALSE(LiteralsNear(LiteralUtil::CreateR1<float>({kInf}),
                            LiteralUtil::CreateR1<float>({-kInf}), spec)
                   .ok());
  EXPECT_FALSE(LiteralsNear(LiteralUtil::CreateR1<float>({1e30f}),
                            LiteralUtil::CreateR1<float>({kInf}), spec)
                   .ok());
  ErrorSpec relaxed(1e-3, 1e-3, /*relaxed=*/true);
  EXPECT_TRUE(LiteralsNear(LiteralUtil::CreateR1<float>({kNan}),
                           LiteralUtil::CreateR1<float>({5.0f}), relaxed)
                  .ok());
}

TEST(LiteralsNearTest, FewerInfsOk) {
  Literal e = LiteralUtil::CreateR1<float>({kInf});
  Literal a = LiteralUtil::CreateR1<float>({std::numeric_limits<float>::max()});
  ErrorSpec spec(0, 1e-6);
  EXPECT_FALSE(LiteralsNear(e, a, spec).ok());
  spec.fewer_infs_ok = true;
  EXPECT_TRUE(LiteralsNear(e, a, spec).ok());
  EXPECT_FALSE(LiteralsNear(e, LiteralUtil::CreateR1<float>({1.0f}), spec).ok());
  // bf16's largest finite value.
  Literal eb = LiteralUtil::CreateR1<bfloat16>({bfloat16(-kInf)});
  Literal ab = LiteralUtil::CreateR1<bfloat16>({bfloat16::Lowest()});
  EXPECT_TRUE(LiteralsNear(eb, ab, spec).ok());
}

TEST(LiteralsNearTest, ComplexComparesEachPart) {
  Literal e = LiteralUtil::CreateR1<complex64>({complex64(1, 10)});
  EXPECT_TRUE(LiteralsNear(e, LiteralUtil::CreateR1<complex64>({complex64(1.001f, 10.01f)}),
                           ErrorSpec(0, 0.002))
                  .ok());
  absl::Status s =
      LiteralsNear(e, LiteralUtil::CreateR1<complex64>({complex64(1, 11)}), ErrorSpec(0.5, 0.01));
  EXPECT_THAT(Message(s), HasSubstr("expected (1, 10), actual (1, 11)"));
}

TEST(LiteralsNearTest, IntegersAndPredsAreExact) {
  EXPECT_FALSE(LiteralsNear(LiteralUtil::CreateR1<int32_t>({100}),
                            LiteralUtil::CreateR1<int32_t>({101}), ErrorSpec(10, 10))
                   .ok());
  EXPECT_TRUE(LiteralsNear(LiteralUtil::CreateR1<int4>({int4(-2)}),
                           LiteralUtil::CreateR1<int4>({int4(-2)}), ErrorSpec(0))
                  .ok());
}

TEST(LiteralsNearTest, NarrowFloatsAndTuples) {
  Literal e =
      LiteralUtil::MakeTuple({LiteralUtil::CreateR1<half>({half(1.0f), half(2.0f)}),
                              LiteralUtil::CreateR1<float8_e4m3fn>({float8_e4m3fn(448.0f)})});
  Literal a =
      LiteralUtil::MakeTuple({LiteralUtil::CreateR1<half>({half(1.001f), half(2.5f)}),
                              LiteralUtil::CreateR1<float8_e4m3fn>({float8_e4m3fn(416.0f)})});
  absl::Status s = LiteralsNear(e, a, ErrorSpec(0.01, 0.01));
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(Message(s), HasSubstr("at shape index {0}: 1 of 2 elements of f16[2] mismatch"));
  EXPECT_THAT(Message(s), HasSubstr("at {1}: expected 2, actual 2.5"));
  EXPECT_THAT(Message(s), HasSubstr("at shape index {1}: 1 of 1 elements of f8e4m3fn[1]"));
  EXPECT_TRUE(LiteralsNear(e, a, ErrorSpec(0.5, 0.1)).ok());
}

}  // namespace
}  // namespace axle

namespace axle {
namespace {

// min_ulps widens the relative bound of low-precision leaves only.
TEST(LiteralsNearTest, MinUlpsScalesWithEachLeafsPrecision) {
  ErrorSpec spec(1e-6, 1e-3);
  Literal bf16_expected = LiteralUtil::CreateR1<bfloat16>({bfloat16(1.0f)});
  Literal bf16_actual = LiteralUtil::CreateR1<bfloat16>({bfloat16(1.0078125f)});  // one unit
  EXPECT_FALSE(LiteralsNear(bf16_expected, bf16_actual, spec).ok());
  spec.min_ulps = 2;
  EXPECT_TRUE(LiteralsNear(bf16_expected, bf16_actual, spec).ok());
  // Three units of bf16 are more than two.
  Literal bf16_far = LiteralUtil::CreateR1<bfloat16>({bfloat16(1.0234375f)});
  EXPECT_FALSE(LiteralsNear(bf16_expected, bf16_far, spec).ok());
  // An f32 leaf keeps the 1e-3 bound: two f32 units are far below it.
  EXPECT_FALSE(LiteralsNear(LiteralUtil::CreateR1<float>({1.0f}),
                            LiteralUtil::CreateR1<float>({1.002f}), spec)
                   .ok());
  EXPECT_TRUE(LiteralsNear(LiteralUtil::CreateR1<float>({1.0f}),
                           LiteralUtil::CreateR1<float>({1.0005f}), spec)
                  .ok());
}

}  // namespace
}  // namespace axle
