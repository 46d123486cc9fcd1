//===- literal_test.cc - Literal storage, tuples, conversions, limits -----===//
#include "axle/core/literal.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace axle {
namespace {

TEST(LiteralTest, CreateAndAccess) {
  Literal l = LiteralUtil::CreateR2<float>({{1, 2, 3}, {4, 5, 6}});
  EXPECT_EQ(l.shape().ToString(), "f32[2,3]{1,0}");
  EXPECT_EQ(l.element_count(), 6);
  EXPECT_EQ(l.size_bytes(), 24);
  EXPECT_EQ(l.Get<float>({1, 2}), 6.0f);
  EXPECT_EQ(l.LinearIndex({1, 0}), 3);
  l.Set<float>({0, 1}, -7.5f);
  EXPECT_EQ(l.data<float>()[1], -7.5f);
  EXPECT_EQ(l.GetAsDouble(1), -7.5);
  EXPECT_EQ(l.GetFirstElement<float>(), 1.0f);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(l.untyped_data()) % 64, 0u);
}

TEST(LiteralTest, ZeroFilledAndCopies) {
  Literal l(ShapeUtil::MakeShape(S32, {4}));
  for (int32_t v : l.data<int32_t>()) EXPECT_EQ(v, 0);
  l.data<int32_t>()[2] = 9;
  Literal copy = l;
  EXPECT_EQ(copy, l);
  copy.data<int32_t>()[2] = 10;
  EXPECT_NE(copy, l);
  Literal moved = std::move(copy);
  EXPECT_EQ(moved.data<int32_t>()[2], 10);
  EXPECT_EQ(copy.shape().ToString(), "()");  // moved-from is nil
}

TEST(LiteralTest, IntegralAccessors) {
  Literal l = LiteralUtil::CreateR1<int4>({int4(-3), int4(7)});
  EXPECT_EQ(l.GetIntegralAsS64(0), -3);
  EXPECT_EQ(l.GetIntegralAsS64(1), 7);
  Literal u = LiteralUtil::CreateR1<uint64_t>({std::numeric_limits<uint64_t>::max()});
  EXPECT_EQ(u.GetIntegralAsU64(0), std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(LiteralUtil::CreateR0<float>(1).GetIntegralAsS64(0), std::nullopt);
  Literal s(ShapeUtil::MakeShape(S8, {2}));
  s.SetIntegral(0, 300);
  s.SetFromDouble(1, -2.9);
  EXPECT_EQ(s.data<int8_t>()[0], 44);
  EXPECT_EQ(s.data<int8_t>()[1], -2);
}

TEST(LiteralTest, Tuples) {
  Literal t = LiteralUtil::MakeTuple(
      {LiteralUtil::CreateR0<float>(1.5f), LiteralUtil::CreateR1<int32_t>({1, 2})});
  EXPECT_EQ(t.shape().ToString(), "(f32[], s32[2]{0})");
  EXPECT_EQ(t.tuple_size(), 2);
  EXPECT_EQ(t.GetSubliteral({1}).data<int32_t>()[1], 2);
  EXPECT_EQ(t.data<int32_t>({1})[0], 1);
  EXPECT_EQ(t.element_count({1}), 2);
  std::vector<Literal> parts = t.DecomposeTuple();
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[0].GetFirstElement<float>(), 1.5f);
  EXPECT_EQ(t.shape().ToString(), "()");
}

TEST(LiteralTest, CopyFromChecksShapes) {
  Literal dest(
      ShapeUtil::MakeTupleShape({ShapeUtil::MakeShape(F32, {2}), ShapeUtil::MakeScalarShape(S32)}));
  EXPECT_TRUE(dest.CopyFrom(LiteralUtil::CreateR1<float>({3, 4}), {0}).ok());
  EXPECT_EQ(dest.data<float>({0})[1], 4.0f);
  absl::Status bad = dest.CopyFrom(LiteralUtil::CreateR0<float>(1), {1});
  EXPECT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("s32[]"), std::string::npos);
}

TEST(LiteralTest, ConvertAndReshape) {
  Literal f = LiteralUtil::CreateR1<float>({1.5f, -300.0f, std::nanf(""), 1e10f});
  absl::StatusOr<Literal> s8 = f.Convert(S8);
  ASSERT_TRUE(s8.ok());
  EXPECT_EQ(s8->data<int8_t>()[0], 1);
  EXPECT_EQ(s8->data<int8_t>()[1], -128);
  EXPECT_EQ(s8->data<int8_t>()[2], 0);
  EXPECT_EQ(s8->data<int8_t>()[3], 127);
  absl::StatusOr<Literal> bf = f.Convert(BF16);
  ASSERT_TRUE(bf.ok());
  EXPECT_EQ(bf->data<bfloat16>()[0].bits(), 0x3FC0);
  EXPECT_FALSE(f.Convert(TUPLE).ok());
  absl::StatusOr<Literal> r = LiteralUtil::CreateR1<int32_t>({1, 2, 3, 4, 5, 6}).Reshape({2, 3});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->Get<int32_t>({1, 0}), 4);
  EXPECT_FALSE(LiteralUtil::CreateR1<int32_t>({1, 2, 3}).Reshape({2, 2}).ok());
}

TEST(LiteralTest, EqualityIsBitwiseAndIgnoresLayout) {
  Literal a = LiteralUtil::CreateR1<float>({0.0f});
  Literal b = LiteralUtil::CreateR1<float>({-0.0f});
  EXPECT_NE(a, b);
  Literal c = a;
  c.set_layout(Layout({0}));
  EXPECT_EQ(a, c);
  EXPECT_NE(a, LiteralUtil::CreateR1<double>({0.0}));
}

template <typename T>
T ScalarOf(const Literal& l) {
  return l.data<T>()[0];
}

TEST(LiteralUtilTest, MinAndMaxValues) {
  EXPECT_EQ(ScalarOf<float>(LiteralUtil::MinValue(F32)), -std::numeric_limits<float>::infinity());
  EXPECT_EQ(ScalarOf<double>(LiteralUtil::MaxValue(F64)), std::numeric_limits<double>::infinity());
  EXPECT_EQ(ScalarOf<half>(LiteralUtil::MaxValue(F16)).bits(), 0x7C00);
  EXPECT_EQ(ScalarOf<bfloat16>(LiteralUtil::MinValue(BF16)).bits(), 0xFF80);
  EXPECT_EQ(ScalarOf<float8_e5m2>(LiteralUtil::MaxValue(F8E5M2)).bits(), 0x7C);
  // Types without infinities give their finite extremes.
  EXPECT_EQ(static_cast<float>(ScalarOf<float8_e4m3fn>(LiteralUtil::MaxValue(F8E4M3FN))), 448.0f);
  EXPECT_EQ(static_cast<float>(ScalarOf<float8_e4m3fn>(LiteralUtil::MinValue(F8E4M3FN))), -448.0f);
  EXPECT_EQ(static_cast<float>(ScalarOf<float8_e4m3fnuz>(LiteralUtil::MaxValue(F8E4M3FNUZ))),
            240.0f);
  EXPECT_EQ(static_cast<float>(ScalarOf<float8_e5m2fnuz>(LiteralUtil::MinValue(F8E5M2FNUZ))),
            -57344.0f);
  EXPECT_EQ(static_cast<float>(ScalarOf<float4_e2m1fn>(LiteralUtil::MaxValue(F4E2M1FN))), 6.0f);
  EXPECT_EQ(static_cast<float>(ScalarOf<float4_e2m1fn>(LiteralUtil::MinValue(F4E2M1FN))), -6.0f);
  EXPECT_EQ(static_cast<float>(ScalarOf<float8_e8m0fnu>(LiteralUtil::MinValue(F8E8M0FNU))),
            std::ldexp(1.0f, -127));
  EXPECT_EQ(static_cast<float>(ScalarOf<float8_e8m0fnu>(LiteralUtil::MaxValue(F8E8M0FNU))),
            std::ldexp(1.0f, 127));
  EXPECT_EQ(ScalarOf<int4>(LiteralUtil::MinValue(S4)).value(), -8);
  EXPECT_EQ(ScalarOf<uint4>(LiteralUtil::MaxValue(U4)).value(), 15);
  EXPECT_EQ(ScalarOf<int8_t>(LiteralUtil::MinValue(S8)), -128);
  EXPECT_EQ(ScalarOf<uint64_t>(LiteralUtil::MaxValue(U64)), std::numeric_limits<uint64_t>::max());
  EXPECT_FALSE(ScalarOf<bool>(LiteralUtil::MinValue(PRED)));
  EXPECT_TRUE(ScalarOf<bool>(LiteralUtil::MaxValue(PRED)));
}

TEST(LiteralUtilTest, ZeroAndOne) {
  EXPECT_EQ(ScalarOf<int32_t>(LiteralUtil::Zero(S32)), 0);
  EXPECT_EQ(ScalarOf<half>(LiteralUtil::One(F16)).bits(), 0x3C00);
  EXPECT_EQ(ScalarOf<complex64>(LiteralUtil::One(C64)), complex64(1, 0));
  EXPECT_TRUE(ScalarOf<bool>(LiteralUtil::One(PRED)));
}

TEST(LiteralTest, StreamsItsText) {
  std::ostringstream os;
  os << LiteralUtil::CreateR1<int32_t>({1, 2});
  EXPECT_EQ(os.str(), "s32[2] {1, 2}");
  EXPECT_EQ(LiteralUtil::CreateToken().ToString(), "token");
}

}  // namespace
}  // namespace axle
