//===- literal_text_test.cc - Printing and parsing XLA's literal text ----===//
#include "axle/core/literal_text.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

namespace axle {
namespace {

constexpr float kInfF = std::numeric_limits<float>::infinity();

template <typename T>
Literal FromBits(PrimitiveType type, const std::vector<uint64_t>& bits) {
  Literal l(ShapeUtil::MakeShape(type, {static_cast<int64_t>(bits.size())}));
  for (size_t i = 0; i < bits.size(); ++i) {
    std::memcpy(static_cast<char*>(l.untyped_data()) + i * sizeof(T), &bits[i], sizeof(T));
  }
  return l;
}

std::string F32Text(uint32_t bits) { return FloatBitsToString(F32, bits); }
std::string F32Text(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  return FloatBitsToString(F32, bits);
}
std::string F64Text(double d) {
  uint64_t bits;
  std::memcpy(&bits, &d, 8);
  return FloatBitsToString(F64, bits);
}

// --- Printing -------------------------------------------------------------

TEST(LiteralPrintTest, ScalarsAndVectors) {
  EXPECT_EQ(LiteralUtil::CreateR0<float>(1).ToString(), "f32[] 1");
  EXPECT_EQ(LiteralUtil::CreateR0<bool>(true).ToString(), "pred[] true");
  EXPECT_EQ(LiteralUtil::CreateR1<float>({1, 2, 3}).ToString(), "f32[3] {1, 2, 3}");
  EXPECT_EQ(LiteralUtil::CreateR1<bool>({true, false, true}).ToString(), "pred[3] {1, 0, 1}");
  EXPECT_EQ(LiteralUtil::CreateR1<int32_t>({}).ToString(), "s32[0] {}");
  EXPECT_EQ(LiteralUtil::CreateR1<float>({1, 2}).ToStringWithoutShape(), "{1, 2}");
}

TEST(LiteralPrintTest, Matrices) {
  Literal m = LiteralUtil::CreateR2<float>({{1, 2, 3}, {4, 5, 6}});
  EXPECT_EQ(m.ToString(), "f32[2,3] {\n  { 1, 2, 3 },\n  { 4, 5, 6 }\n}");
  EXPECT_EQ(m.ToStringOneline(), "f32[2,3] { { 1, 2, 3 }, { 4, 5, 6 } }");
  EXPECT_EQ(m.ToStringWithoutShapeOneline(), "{ { 1, 2, 3 }, { 4, 5, 6 } }");
  EXPECT_EQ(m.ToStringWithLayout(), "f32[2,3]{1,0} {\n  { 1, 2, 3 },\n  { 4, 5, 6 }\n}");
  Literal column = LiteralUtil::CreateR2<int32_t>({{1}, {2}});
  EXPECT_EQ(column.ToString(), "s32[2,1] {\n  {1},\n  {2}\n}");
  EXPECT_EQ(column.ToStringWithoutShapeOneline(), "{ {1}, {2} }");
  Literal empty_rows(ShapeUtil::MakeShape(F32, {2, 0}));
  EXPECT_EQ(empty_rows.ToStringWithoutShape(), "{\n  {},\n  {}\n}");
  Literal no_rows(ShapeUtil::MakeShape(F32, {0, 2}));
  EXPECT_EQ(no_rows.ToStringWithoutShapeOneline(), "{  }");
}

TEST(LiteralPrintTest, HigherRanks) {
  Literal r3 = LiteralUtil::CreateFromDimensions<int32_t>({2, 1, 2}, {1, 2, 3, 4});
  EXPECT_EQ(r3.ToStringWithoutShape(), "{\n{\n  { 1, 2 }\n},\n{\n  { 3, 4 }\n}\n}");
  EXPECT_EQ(r3.ToStringWithoutShapeOneline(), "{ { { 1, 2 } }, { { 3, 4 } } }");
  Literal r4 = LiteralUtil::CreateFromDimensions<int32_t>({1, 1, 1, 2}, {1, 2});
  EXPECT_EQ(r4.ToStringWithoutShape(), "{\n{ /*i0=0*/\n{ /*i1=0*/\n  { 1, 2 }\n}\n}\n}");
  EXPECT_EQ(r4.ToStringWithoutShapeOneline(), "{ { /*i0=0*/ { /*i1=0*/ { 1, 2 } } } }");
  Literal r4b = LiteralUtil::CreateFromDimensions<int32_t>({2, 1, 1, 1}, {5, 6});
  EXPECT_EQ(r4b.ToStringWithoutShapeOneline(),
            "{ { /*i0=0*/ { /*i1=0*/ {5} } }, { /*i0=1*/ { /*i1=0*/ {6} } } }");
}

TEST(LiteralPrintTest, TuplesAndTokens) {
  Literal t =
      LiteralUtil::MakeTuple({LiteralUtil::CreateR0<float>(1), LiteralUtil::CreateR0<int32_t>(2)});
  EXPECT_EQ(t.ToString(), "(\nf32[] 1,\ns32[] 2\n)");
  EXPECT_EQ(t.ToStringOneline(), "( f32[] 1, s32[] 2 )");
  EXPECT_EQ(t.ToStringWithoutShapeOneline(), "( 1, 2 )");
  Literal nested = LiteralUtil::MakeTuple({t.Clone(), LiteralUtil::CreateToken()});
  EXPECT_EQ(nested.ToStringOneline(), "( ( f32[] 1, s32[] 2 ), token )");
  EXPECT_EQ(Literal().ToString(), "(\n\n)");
  EXPECT_EQ(LiteralUtil::CreateToken().ToString(), "token");
}

TEST(LiteralPrintTest, DynamicShapePrintsSizes) {
  Shape s = ShapeUtil::MakeShape(F32, {3});
  s.set_dynamic_dimension(0, true);
  EXPECT_EQ(Literal(s).ToString(), "f32[<=3](3) {0, 0, 0}");
}

TEST(LiteralPrintTest, FloatFormatting) {
  EXPECT_EQ(F32Text(0.1f), "0.1");
  EXPECT_EQ(F32Text(1e-5f), "1e-05");
  EXPECT_EQ(F32Text(1.0f / 3), "0.333333343");
  EXPECT_EQ(F32Text(3.14159274f), "3.14159274");
  EXPECT_EQ(F32Text(100000000.0f), "1e+08");
  EXPECT_EQ(F32Text(-0.0f), "-0");
  EXPECT_EQ(F32Text(std::numeric_limits<float>::denorm_min()), "1.4013e-45");
  EXPECT_EQ(F32Text(std::numeric_limits<float>::max()), "3.40282347e+38");
  EXPECT_EQ(F32Text(kInfF), "inf");
  EXPECT_EQ(F32Text(-kInfF), "-inf");
  EXPECT_EQ(F32Text(0x7fc00000u), "nan");
  EXPECT_EQ(F32Text(0xffc00000u), "-nan");
  EXPECT_EQ(F32Text(0x7f800001u), "nan(0x1)");
  EXPECT_EQ(F32Text(0x7fc00001u), "nan(0x400001)");
  EXPECT_EQ(F64Text(0.1), "0.1");
  EXPECT_EQ(F64Text(1.0 / 3), "0.33333333333333331");
  EXPECT_EQ(F64Text(1e300), "1e+300");
  EXPECT_EQ(FloatBitsToString(F64, 0x7ff0000000000002ull), "nan(0x2)");
}

TEST(LiteralPrintTest, NarrowFloatFormatting) {
  EXPECT_EQ(FloatBitsToString(BF16, bfloat16(1.0f / 3).bits()), "0.334");
  EXPECT_EQ(FloatBitsToString(BF16, 0x7FC0), "nan");
  EXPECT_EQ(FloatBitsToString(BF16, 0x7F81), "nan(0x1)");
  EXPECT_EQ(FloatBitsToString(F16, half(65504.0f).bits()), "65504");
  EXPECT_EQ(FloatBitsToString(F16, half(0.1f).bits()), "0.099976");
  EXPECT_EQ(FloatBitsToString(F16, 0x0001), "5.9605e-08");
  EXPECT_EQ(FloatBitsToString(F8E4M3FN, 0x7E), "448");
  EXPECT_EQ(FloatBitsToString(F8E4M3FN, 0x7F), "nan");
  EXPECT_EQ(FloatBitsToString(F8E4M3FN, 0xFF), "-nan");
  EXPECT_EQ(FloatBitsToString(F8E4M3FN, 0x01), "0.00195");
  EXPECT_EQ(FloatBitsToString(F8E5M2, 0x7D), "nan(0x1)");
  EXPECT_EQ(FloatBitsToString(F8E5M2, 0x7E), "nan");
  EXPECT_EQ(FloatBitsToString(F8E5M2, 0x7C), "inf");
  EXPECT_EQ(FloatBitsToString(F8E4M3FNUZ, 0x80), "nan");
  EXPECT_EQ(FloatBitsToString(F8E8M0FNU, 0x00), "5.9e-39");
  EXPECT_EQ(FloatBitsToString(F4E2M1FN, 0xB), "-1.5");
}

TEST(LiteralPrintTest, IntegersAndComplex) {
  EXPECT_EQ(LiteralUtil::CreateR0<uint64_t>(std::numeric_limits<uint64_t>::max()).ToString(),
            "u64[] 18446744073709551615");
  EXPECT_EQ(LiteralUtil::CreateR0<int64_t>(std::numeric_limits<int64_t>::min()).ToString(),
            "s64[] -9223372036854775808");
  EXPECT_EQ(LiteralUtil::CreateR1<int4>({int4(-8), int4(7)}).ToString(), "s4[2] {-8, 7}");
  EXPECT_EQ(LiteralUtil::CreateR1<uint8_t>({255}).ToString(), "u8[1] {255}");
  EXPECT_EQ(LiteralUtil::CreateR1<complex64>({complex64(1, 2), complex64(-0.5f, 0)}).ToString(),
            "c64[2] {(1, 2), (-0.5, 0)}");
  EXPECT_EQ(LiteralUtil::CreateR0<complex128>(complex128(0.1, -INFINITY)).ToString(),
            "c128[] (0.1, -inf)");
}

TEST(LiteralPrintTest, HloConstantText) {
  EXPECT_EQ(LiteralValueToHloText(LiteralUtil::CreateR0<int32_t>(42), false), "42");
  EXPECT_EQ(LiteralValueToHloText(LiteralUtil::CreateR0<bool>(false), false), "false");
  EXPECT_EQ(LiteralValueToHloText(LiteralUtil::CreateR1<float>({1, 2, 3}), false), "{1, 2, 3}");
  EXPECT_EQ(LiteralValueToHloText(LiteralUtil::CreateR2<float>({{1, 2}, {3, 4}}), false),
            "{ { 1, 2 }, { 3, 4 } }");
  std::vector<int32_t> ten(10, 1), eleven(11, 2);
  EXPECT_EQ(LiteralValueToHloText(LiteralUtil::CreateR1<int32_t>(ten), false),
            "{1, 1, 1, 1, 1, 1, 1, 1, 1, 1}");
  EXPECT_EQ(LiteralValueToHloText(LiteralUtil::CreateR1<int32_t>(eleven), false), "{...}");
  EXPECT_EQ(LiteralValueToHloText(LiteralUtil::CreateR1<int32_t>(eleven), true),
            "{2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2}");
  Literal t = LiteralUtil::MakeTuple(
      {LiteralUtil::CreateR0<float>(1), LiteralUtil::CreateR1<int32_t>({2, 3})});
  EXPECT_EQ(LiteralValueToHloText(t, false), "{...}");
  EXPECT_EQ(LiteralValueToHloText(t, true), "( 1, {2, 3} )");
}

// --- Parsing --------------------------------------------------------------

absl::StatusOr<Literal> Parse(std::string_view text, PrimitiveType type,
                              std::vector<int64_t> dims) {
  return ParseLiteralValue(text, ShapeUtil::MakeShape(type, dims));
}

// The error message and offset of parsing `text` as `shape`.
std::pair<std::string, size_t> ParseError(std::string_view text, const Shape& shape) {
  size_t offset = 999999;
  absl::StatusOr<Literal> result = ParseLiteralValue(text, shape, &offset);
  EXPECT_FALSE(result.ok()) << "parsed: " << text;
  if (result.ok()) return {"", offset};
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  return {std::string(result.status().message()), offset};
}

std::pair<std::string, size_t> ParseError(std::string_view text, PrimitiveType type,
                                          std::vector<int64_t> dims) {
  return ParseError(text, ShapeUtil::MakeShape(type, dims));
}

TEST(LiteralParseTest, Basics) {
  absl::StatusOr<Literal> l = Parse("{ { 1, 2, 3 }, { 4, 5, 6 } }", F32, {2, 3});
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(*l, LiteralUtil::CreateR2<float>({{1, 2, 3}, {4, 5, 6}}));
  l = Parse("7", S32, {});
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->data<int32_t>()[0], 7);
  l = Parse("{true, 0, 1, false, 5}", PRED, {5});
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(*l, LiteralUtil::CreateR1<bool>({true, false, true, false, true}));
  l = Parse("{(1, -2.5), (inf, nan)}", C64, {2});
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(l->data<complex64>()[0], complex64(1, -2.5f));
  EXPECT_TRUE(std::isinf(l->data<complex64>()[1].real()));
  EXPECT_TRUE(std::isnan(l->data<complex64>()[1].imag()));
  l = Parse("{-1.5e3, 2E-2, -.5, 3., 4, -inf, inf, -nan}", F64, {8});
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(l->data<double>()[0], -1500.0);
  EXPECT_EQ(l->data<double>()[1], 0.02);
  EXPECT_EQ(l->data<double>()[2], -0.5);
  EXPECT_EQ(l->data<double>()[3], 3.0);
  EXPECT_EQ(l->data<double>()[4], 4.0);
  EXPECT_EQ(l->data<double>()[5], -INFINITY);
  EXPECT_TRUE(std::isnan(l->data<double>()[7]) && std::signbit(l->data<double>()[7]));
}

TEST(LiteralParseTest, AcceptsWhatXlaAccepts) {
  // Commas are optional and may repeat; comments are skipped.
  absl::StatusOr<Literal> l = Parse("{1 2,,3,} // trailing\n", S32, {3});
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(*l, LiteralUtil::CreateR1<int32_t>({1, 2, 3}));
  l = Parse("{ /*i0=0*/ { /*i1=0*/ {1, 2} } }", S8, {1, 1, 2});
  ASSERT_TRUE(l.ok()) << l.status();
  // `{...}` leaves the values unspecified: Axle fills zeros.
  l = Parse("{...}", F32, {2, 3});
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(*l, Literal(ShapeUtil::MakeShape(F32, {2, 3})));
  // -0 keeps its sign (XLA's lexer would read an integer 0).
  l = Parse("-0", F32, {});
  ASSERT_TRUE(l.ok());
  EXPECT_TRUE(std::signbit(l->data<float>()[0]));
  // Values that round into range are fine, as in XLA.
  l = Parse("65519", F16, {});
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(l->data<half>()[0].bits(), 0x7BFF);
  l = Parse("{-9223372036854775808, 9223372036854775807}", S64, {2});
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(l->data<int64_t>()[0], std::numeric_limits<int64_t>::min());
  l = Parse("18446744073709551615", U64, {});
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(l->data<uint64_t>()[0], std::numeric_limits<uint64_t>::max());
  // A negative u64 wraps, as XLA reads it (its test ConstantUnsignedUnderflow).
  l = Parse("{-1, -9223372036854775808}", U64, {2});
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(l->data<uint64_t>()[0], std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(l->data<uint64_t>()[1], uint64_t{1} << 63);
  l = Parse("{-8, 7}", S4, {2});
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(l->data<int4>()[0].value(), -8);
}

TEST(LiteralParseTest, NanPayloads) {
  absl::StatusOr<Literal> l = Parse("{nan(0x1), -nan(0x400001), nan}", F32, {3});
  ASSERT_TRUE(l.ok()) << l.status();
  uint32_t bits[3];
  std::memcpy(bits, l->untyped_data(), 12);
  EXPECT_EQ(bits[0], 0x7f800001u);
  EXPECT_EQ(bits[1], 0xffc00001u);
  EXPECT_EQ(bits[2], 0x7fc00000u);
  l = Parse("nan(0x3)", F8E5M2, {});
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(l->data<float8_e5m2>()[0].bits(), 0x7F);
  auto [message, offset] = ParseError("{1, nan(0x1)}", F8E4M3FN, {2});
  EXPECT_NE(message.find("does not support payloads"), std::string::npos) << message;
  EXPECT_EQ(offset, 4u);
  std::tie(message, offset) = ParseError("nan(0x400)", F16, {});
  EXPECT_NE(message.find("NaN payload is out of range"), std::string::npos) << message;
  std::tie(message, offset) = ParseError("nan(0x0)", F32, {});
  EXPECT_NE(message.find("NaN payload out of range"), std::string::npos) << message;
  std::tie(message, offset) = ParseError("nan", F4E2M1FN, {});
  EXPECT_NE(message.find("has no NaN"), std::string::npos) << message;
}

TEST(LiteralParseTest, LayoutIsKeptAndValuesAreLogical) {
  Shape shape = ShapeUtil::MakeShapeWithDenseLayout(S32, {2, 2}, {0, 1});
  absl::StatusOr<Literal> l = ParseLiteralValue("{ { 1, 2 }, { 3, 4 } }", shape);
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(l->shape(), shape);
  EXPECT_EQ(l->Get<int32_t>({0, 1}), 2);
  EXPECT_EQ(l->Get<int32_t>({1, 0}), 3);
}

TEST(LiteralParseTest, TuplesAndTokens) {
  Shape shape = ShapeUtil::MakeTupleShape(
      {ShapeUtil::MakeScalarShape(F32), ShapeUtil::MakeShape(S32, {2}), ShapeUtil::MakeNil()});
  absl::StatusOr<Literal> l = ParseLiteralValue("( 1.5, {2, 3}, ( ) )", shape);
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(l->GetSubliteral({0}).data<float>()[0], 1.5f);
  EXPECT_EQ(l->GetSubliteral({1}).data<int32_t>()[1], 3);
  EXPECT_TRUE(ParseLiteralValue("(1.5 {2, 3} ())", shape).ok());  // XLA tolerates no commas
  auto [message, offset] = ParseError("(1.5, {2, 3}, (), 4)", shape);
  EXPECT_NE(message.find("expects ')' at the end of the tuple with 3 elements"), std::string::npos)
      << message;
  EXPECT_EQ(offset, 16u);
  EXPECT_TRUE(ParseLiteralValue("token", ShapeUtil::MakeTokenShape()).ok());
  EXPECT_FALSE(ParseLiteralValue("1", ShapeUtil::MakeTokenShape()).ok());
}

TEST(LiteralParseTest, Prefix) {
  size_t consumed = 0, error_offset = 0;
  absl::StatusOr<Literal> l = ParseLiteralValuePrefix(
      "  {1, 2}), metadata={}", ShapeUtil::MakeShape(F32, {2}), &consumed, &error_offset);
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(consumed, 8u);
  l = ParseLiteralValuePrefix("-3)", ShapeUtil::MakeScalarShape(S8), &consumed, &error_offset);
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(consumed, 2u);
  EXPECT_EQ(l->data<int8_t>()[0], -3);
}

TEST(LiteralParseTest, CountErrors) {
  auto [message, offset] = ParseError("{1, 2}", F32, {3});
  EXPECT_EQ(message, "expects 3 elements in the []th element, but sees 2");
  EXPECT_EQ(offset, 5u);
  std::tie(message, offset) = ParseError("{1, 2, 3}", F32, {2});
  EXPECT_EQ(message, "expects 2 elements on the minor-most dimension, but sees more");
  EXPECT_EQ(offset, 7u);
  std::tie(message, offset) = ParseError("{1, 2, 3, 4}", F32, {2, 2});
  EXPECT_EQ(message, "expects nested array in rank 2, but sees 1");
  EXPECT_EQ(offset, 1u);
  std::tie(message, offset) = ParseError("{{1, 2}}", F32, {2});
  EXPECT_EQ(message, "expects nested array in rank 1, but sees larger");
  EXPECT_EQ(offset, 1u);
  std::tie(message, offset) = ParseError("{ {1, 2}, {3, 4}, {5, 6} }", F32, {2, 2});
  EXPECT_EQ(message, "expects 2 elements in the []th element, but sees more");
  EXPECT_EQ(offset, 18u);
  std::tie(message, offset) = ParseError("{ {1, 2}, {3} }", F32, {2, 2});
  EXPECT_EQ(message, "expects 2 elements in the [1]th element, but sees 1");
  EXPECT_EQ(offset, 12u);
  std::tie(message, offset) = ParseError("{1}", F32, {});
  EXPECT_EQ(offset, 0u);
  std::tie(message, offset) = ParseError("{1, 2", F32, {2});
  EXPECT_EQ(offset, 5u);
  std::tie(message, offset) = ParseError("1 2", F32, {});
  EXPECT_EQ(message, "unexpected text after the literal");
  EXPECT_EQ(offset, 2u);
  std::tie(message, offset) = ParseError("{{...}}", F32, {1, 2});
  EXPECT_EQ(message, "expects `...` at nest level 1, but sees it at nest level 2");
  std::tie(message, offset) = ParseError("", F32, {});
  EXPECT_EQ(offset, 0u);
}

TEST(LiteralParseTest, ValueErrors) {
  auto [message, offset] = ParseError("{1, 256}", U8, {2});
  EXPECT_EQ(message, "value 256 is out of range for literal's primitive type U8 namely [0, 255].");
  EXPECT_EQ(offset, 4u);
  std::tie(message, offset) = ParseError("-1", U32, {});
  EXPECT_NE(message.find("value -1 is out of range"), std::string::npos) << message;
  std::tie(message, offset) = ParseError("-9223372036854775809", U64, {});
  EXPECT_EQ(message,
            "value -9223372036854775809 is out of range for literal's primitive type U64 namely "
            "[0, 18446744073709551615].");
  std::tie(message, offset) = ParseError("-129", S8, {});
  EXPECT_EQ(message,
            "value -129 is out of range for literal's primitive type S8 namely [-128, 127].");
  std::tie(message, offset) = ParseError("8", S4, {});
  EXPECT_NE(message.find("S4 namely [-8, 7]"), std::string::npos) << message;
  std::tie(message, offset) = ParseError("16", U4, {});
  EXPECT_NE(message.find("U4 namely [0, 15]"), std::string::npos) << message;
  std::tie(message, offset) = ParseError("9223372036854775808", S64, {});
  EXPECT_NE(message.find("out of range"), std::string::npos) << message;
  std::tie(message, offset) = ParseError("18446744073709551616", U64, {});
  EXPECT_NE(message.find("does not fit in 64 bits"), std::string::npos) << message;
  std::tie(message, offset) = ParseError("65520", F16, {});
  EXPECT_NE(message.find("out of range for literal's primitive type F16"), std::string::npos);
  std::tie(message, offset) = ParseError("500", F8E4M3FN, {});
  EXPECT_NE(message.find("F8E4M3FN namely [-448, 448]"), std::string::npos) << message;
  std::tie(message, offset) = ParseError("-1", F8E8M0FNU, {});
  EXPECT_NE(message.find("out of range"), std::string::npos) << message;
  std::tie(message, offset) = ParseError("1e39", F32, {});
  EXPECT_NE(message.find("out of range"), std::string::npos) << message;
  std::tie(message, offset) = ParseError("1e400", F64, {});
  EXPECT_NE(message.find("out of range for double"), std::string::npos) << message;
  std::tie(message, offset) = ParseError("{1.5}", S32, {1});
  EXPECT_EQ(message, "expects integer for primitive type: S32");
  EXPECT_EQ(offset, 1u);
  std::tie(message, offset) = ParseError("true", S32, {});
  EXPECT_EQ(message, "expects integer for primitive type: S32");
  std::tie(message, offset) = ParseError("true", F32, {});
  EXPECT_EQ(message, "expect floating point value for primitive type: F32");
  std::tie(message, offset) = ParseError("1", C64, {});
  EXPECT_NE(message.find("expects '('"), std::string::npos) << message;
  std::tie(message, offset) = ParseError("(1 2)", C64, {});
  EXPECT_EQ(message, "expect comma after real part of complex literal");
  EXPECT_EQ(offset, 3u);
  std::tie(message, offset) = ParseError("(1, 1e39)", C64, {});
  EXPECT_NE(message.find("out of range"), std::string::npos) << message;
  std::tie(message, offset) = ParseError("{1, /* 2}", F32, {2});
  EXPECT_EQ(message, "unterminated /* comment");
  EXPECT_EQ(offset, 4u);
  std::tie(message, offset) = ParseError("{1, #}", F32, {2});
  EXPECT_EQ(message, "unexpected character '#'");
  EXPECT_EQ(offset, 4u);
  std::tie(message, offset) = ParseError("{1, abc}", F32, {2});
  EXPECT_EQ(message, "unexpected token type in a literal");
  EXPECT_EQ(offset, 4u);
  // The two-argument overload puts the offset in the message.
  absl::StatusOr<Literal> l = Parse("{1, 2}", F32, {3});
  EXPECT_EQ(l.status().message(), "offset 5: expects 3 elements in the []th element, but sees 2");
}

TEST(LiteralParseTest, RejectsHugeOrBadShapesWithoutCrashing) {
  auto [message, offset] = ParseError("{...}", F32, {int64_t{1} << 40});
  EXPECT_NE(message.find("too short"), std::string::npos) << message;
  std::tie(message, offset) = ParseError("{1}", F32, {100000000});
  EXPECT_NE(message.find("too short"), std::string::npos) << message;
  std::tie(message, offset) = ParseError("{...}", F32, {int64_t{1} << 40, int64_t{1} << 40});
  EXPECT_NE(message.find("too large"), std::string::npos) << message;
  std::tie(message, offset) = ParseError("{}", Shape(F32, {Shape::kUnboundedSize}));
  EXPECT_NE(message.find("unbounded"), std::string::npos) << message;
  Shape deep = ShapeUtil::MakeScalarShape(F32);
  for (int i = 0; i < 300; ++i) deep = ShapeUtil::MakeTupleShape({deep});
  std::tie(message, offset) = ParseError(std::string(300, '(') + "1" + std::string(300, ')'), deep);
  EXPECT_NE(message.find("deeply nested"), std::string::npos) << message;
}

// --- Round trips ----------------------------------------------------------

// Print -> parse -> print is a fixed point and the values are bit-identical,
// in both the multi-line and the one-line form.
void ExpectRoundTrip(const Literal& literal) {
  for (bool oneline : {false, true}) {
    std::string text =
        oneline ? literal.ToStringWithoutShapeOneline() : literal.ToStringWithoutShape();
    absl::StatusOr<Literal> parsed = ParseLiteralValue(text, literal.shape());
    ASSERT_TRUE(parsed.ok()) << parsed.status() << "\n" << text.substr(0, 300);
    EXPECT_EQ(*parsed, literal) << literal.shape().ToString() << ": " << text.substr(0, 300);
    EXPECT_EQ(oneline ? parsed->ToStringWithoutShapeOneline() : parsed->ToStringWithoutShape(),
              text);
  }
}

TEST(LiteralRoundTripTest, EveryBitPatternOfNarrowFloats) {
  for (PrimitiveType type : {F8E3M4, F8E4M3, F8E4M3FN, F8E4M3B11FNUZ, F8E4M3FNUZ, F8E5M2,
                             F8E5M2FNUZ, F8E8M0FNU, F4E2M1FN}) {
    SCOPED_TRACE(primitive_util::LowercasePrimitiveTypeName(type));
    int count = type == F4E2M1FN ? 16 : 256;
    std::vector<uint64_t> bits(count);
    for (int i = 0; i < count; ++i) bits[i] = i;
    ExpectRoundTrip(FromBits<uint8_t>(type, bits));
  }
  for (PrimitiveType type : {F16, BF16}) {
    SCOPED_TRACE(primitive_util::LowercasePrimitiveTypeName(type));
    std::vector<uint64_t> bits(65536);
    for (int i = 0; i < 65536; ++i) bits[i] = i;
    ExpectRoundTrip(FromBits<uint16_t>(type, bits));
  }
}

TEST(LiteralRoundTripTest, F32AndF64BitPatterns) {
  std::mt19937_64 rng(42);
  std::vector<uint64_t> f32 = {0,          0x80000000, 1,          0x807fffff, 0x7f7fffff,
                               0xff7fffff, 0x7f800000, 0xff800000, 0x7fc00000, 0xffc00000,
                               0x7f800001, 0x7fffffff, 0x3f800000, 0x3dcccccd, 0x00800000};
  std::vector<uint64_t> f64 = {0,
                               0x8000000000000000,
                               1,
                               0x7fefffffffffffff,
                               0x7ff0000000000000,
                               0x7ff8000000000000,
                               0xfff8000000000001,
                               0x7ff0000000000001,
                               0x3fb999999999999a,
                               0x0010000000000000};
  for (int i = 0; i < 20000; ++i) {
    f32.push_back(rng() & 0xffffffff);
    f64.push_back(rng());
  }
  ExpectRoundTrip(FromBits<uint32_t>(F32, f32));
  ExpectRoundTrip(FromBits<uint64_t>(F64, f64));
  std::vector<uint64_t> c64_bits(f32.size() / 2);
  for (size_t i = 0; i < c64_bits.size(); ++i) c64_bits[i] = f32[2 * i] | (f32[2 * i + 1] << 32);
  ExpectRoundTrip(FromBits<uint64_t>(C64, c64_bits));
  Literal c128(ShapeUtil::MakeShape(C128, {static_cast<int64_t>(f64.size() / 2)}));
  std::memcpy(c128.untyped_data(), f64.data(), c128.size_bytes());
  ExpectRoundTrip(c128);
}

TEST(LiteralRoundTripTest, Integers) {
  for (PrimitiveType type : {S1, S2, S4, U1, U2, U4, S8, U8, S16, U16}) {
    SCOPED_TRACE(primitive_util::LowercasePrimitiveTypeName(type));
    int bits = primitive_util::BitWidth(type);
    int64_t count = int64_t{1} << bits;
    Literal l(ShapeUtil::MakeShape(type, {count}));
    for (int64_t i = 0; i < count; ++i) l.SetIntegral(i, i);
    ExpectRoundTrip(l);
  }
  ExpectRoundTrip(LiteralUtil::CreateR1<int32_t>({INT32_MIN, -1, 0, INT32_MAX}));
  ExpectRoundTrip(LiteralUtil::CreateR1<uint32_t>({0, 1, UINT32_MAX}));
  ExpectRoundTrip(LiteralUtil::CreateR1<int64_t>({INT64_MIN, -1, 0, INT64_MAX}));
  ExpectRoundTrip(LiteralUtil::CreateR1<uint64_t>({0, UINT64_MAX}));
  ExpectRoundTrip(LiteralUtil::CreateR2<bool>({{true, false}, {false, true}}));
  ExpectRoundTrip(LiteralUtil::CreateR0<bool>(false));
}

TEST(LiteralRoundTripTest, ShapesAndTuples) {
  ExpectRoundTrip(LiteralUtil::CreateFromDimensions<float>(
      {2, 3, 1, 2}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}));
  ExpectRoundTrip(LiteralUtil::CreateFromDimensions<int8_t>({1, 1, 1, 1, 1}, {-5}));
  ExpectRoundTrip(Literal(ShapeUtil::MakeShape(F32, {0})));
  ExpectRoundTrip(Literal(ShapeUtil::MakeShape(F32, {2, 0, 3})));
  ExpectRoundTrip(Literal(ShapeUtil::MakeShape(F32, {0, 2})));
  ExpectRoundTrip(LiteralUtil::MakeTuple(
      {LiteralUtil::CreateR0<float>(-0.0f),
       LiteralUtil::MakeTuple({LiteralUtil::CreateR1<half>({half(1.5f)}), Literal()}),
       LiteralUtil::CreateR2<complex64>({{complex64(1, -1)}})}));
}

TEST(LiteralParseFuzzTest, RandomTextNeverCrashes) {
  std::mt19937 rng(7);
  const std::string alphabet = "{}(),.-0123456789eEinaftruxok/* \n";
  std::vector<Shape> shapes = {
      ShapeUtil::MakeShape(F32, {2, 2}),
      ShapeUtil::MakeShape(S4, {3}),
      ShapeUtil::MakeScalarShape(C64),
      ShapeUtil::MakeShape(PRED, {1, 2, 1}),
      ShapeUtil::MakeTupleShape({ShapeUtil::MakeScalarShape(F16), ShapeUtil::MakeShape(U8, {2})}),
      ShapeUtil::MakeShape(F8E4M3FN, {4})};
  int parsed = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string text(rng() % 24, ' ');
    for (char& c : text) c = alphabet[rng() % alphabet.size()];
    const Shape& shape = shapes[rng() % shapes.size()];
    size_t offset = 0;
    absl::StatusOr<Literal> l = ParseLiteralValue(text, shape, &offset);
    if (l.ok()) {
      ++parsed;
      EXPECT_TRUE(ParseLiteralValue(l->ToStringWithoutShape(), shape).ok());
    } else {
      EXPECT_LE(offset, text.size());
    }
  }
  // Mutations of valid texts.
  Literal valid =
      LiteralUtil::MakeTuple({LiteralUtil::CreateR2<float>({{1.5f, -2}, {NAN, INFINITY}}),
                              LiteralUtil::CreateR1<complex64>({complex64(1, 2)})});
  std::string base = valid.ToStringWithoutShapeOneline();
  for (int i = 0; i < 20000; ++i) {
    std::string text = base;
    for (int m = 0; m < 3; ++m) {
      size_t at = rng() % (text.size() + 1);
      switch (rng() % 3) {
        case 0:
          text.insert(at, 1, alphabet[rng() % alphabet.size()]);
          break;
        case 1:
          if (at < text.size()) text.erase(at, 1);
          break;
        default:
          if (at < text.size()) text[at] = static_cast<char>(rng() % 256);
          break;
      }
    }
    size_t offset = 0;
    absl::StatusOr<Literal> l = ParseLiteralValue(text, valid.shape(), &offset);
    if (l.ok())
      ++parsed;
    else
      EXPECT_LE(offset, text.size());
  }
  EXPECT_GT(parsed, 0);
}

}  // namespace
}  // namespace axle
