//===- types_test.cc - Narrow floats, sub-byte ints, conversions ----------===//
//
// Bit patterns checked against ml_dtypes' encodings (round to nearest even,
// overflow to inf / NaN / saturation as each format has it).
//
//===----------------------------------------------------------------------===//
#include "axle/core/types.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

namespace axle {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

TEST(BFloat16Test, EncodesKnownBitPatterns) {
  EXPECT_EQ(bfloat16(1.0f).bits(), 0x3F80);
  EXPECT_EQ(bfloat16(-2.0f).bits(), 0xC000);
  EXPECT_EQ(bfloat16(0.0f).bits(), 0x0000);
  EXPECT_EQ(bfloat16(-0.0f).bits(), 0x8000);
  EXPECT_EQ(bfloat16(kInf).bits(), 0x7F80);
  EXPECT_EQ(bfloat16(-kInf).bits(), 0xFF80);
  EXPECT_EQ(bfloat16(kNan).bits(), 0x7FC0);
  EXPECT_EQ(bfloat16(3.0e38).bits(), 0x7F62);
}

TEST(BFloat16Test, RoundsToNearestEven) {
  // 1 + 2^-8 lies halfway between 1 (even) and 1 + 2^-7 (odd).
  EXPECT_EQ(bfloat16(1.0 + std::ldexp(1.0, -8)).bits(), 0x3F80);
  // 1 + 3 * 2^-8 lies halfway between 1 + 2^-7 (odd) and 1 + 2^-6 (even).
  EXPECT_EQ(bfloat16(1.0 + 3 * std::ldexp(1.0, -8)).bits(), 0x3F82);
  // Just above the halfway point rounds up.
  EXPECT_EQ(bfloat16(1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -20)).bits(), 0x3F81);
}

// The bit-level path from f32 values rounds as the general encoder does:
// finite values against the same format without infinities (kFiniteNan
// rounds finite values identically), the edges by their bit patterns.
TEST(BFloat16Test, FastEncodeAgreesWithTheGeneralEncoder) {
  uint32_t state = 12345;
  for (int i = 0; i < 200000; ++i) {
    state = state * 1664525u + 1013904223u;
    uint32_t word = state;
    if (((word >> 23) & 0xff) == 0xff) continue;        // inf / NaN
    if ((word & 0x7fffffffu) >= 0x7f7f8000u) continue;  // rounds past the largest finite
    float value;
    std::memcpy(&value, &word, sizeof(value));
    ASSERT_EQ(EncodeNarrowFloat(value, 8, 7, 127, FloatEncoding::kIeee),
              EncodeNarrowFloat(value, 8, 7, 127, FloatEncoding::kFiniteNan))
        << std::hex << word;
  }
  EXPECT_EQ(bfloat16(std::numeric_limits<float>::max()).bits(), 0x7f80);  // to infinity
  EXPECT_EQ(bfloat16(-std::numeric_limits<float>::infinity()).bits(), 0xff80);
  EXPECT_EQ(bfloat16(std::numeric_limits<float>::denorm_min()).bits(), 0x0000);
  EXPECT_EQ(bfloat16(-0.0f).bits(), 0x8000);
  EXPECT_TRUE(std::isnan(static_cast<float>(bfloat16(std::nanf("")))));
  // A double between two bf16 values that an f32 would round onto the tie.
  EXPECT_EQ(bfloat16(1.0 + 1.0 / 256 + 1e-12).bits(), 0x3f81);
}

TEST(BFloat16Test, Decodes) {
  EXPECT_EQ(static_cast<float>(bfloat16::FromBits(0x3F80)), 1.0f);
  EXPECT_EQ(static_cast<float>(bfloat16::FromBits(0x4049)), 3.140625f);
  EXPECT_TRUE(std::isnan(static_cast<float>(bfloat16::FromBits(0xFFC1))));
  EXPECT_EQ(static_cast<float>(bfloat16::FromBits(0x0001)), std::ldexp(1.0f, -133));
}

TEST(HalfTest, EncodesKnownBitPatterns) {
  EXPECT_EQ(half(1.0f).bits(), 0x3C00);
  EXPECT_EQ(half(-2.0f).bits(), 0xC000);
  EXPECT_EQ(half(65504.0f).bits(), 0x7BFF);
  EXPECT_EQ(half(65519.0f).bits(), 0x7BFF);  // rounds down to the max
  EXPECT_EQ(half(65520.0f).bits(), 0x7C00);  // halfway to 2^16: rounds to inf
  EXPECT_EQ(half(-1e6).bits(), 0xFC00);
  EXPECT_EQ(half(kNan).bits(), 0x7E00);
  EXPECT_EQ(half(-0.0).bits(), 0x8000);
  EXPECT_EQ(half(0.333333333).bits(), 0x3555);
}

TEST(HalfTest, Subnormals) {
  EXPECT_EQ(half(std::ldexp(1.0, -24)).bits(), 0x0001);      // smallest subnormal
  EXPECT_EQ(half(std::ldexp(1.0, -25)).bits(), 0x0000);      // tie with 0: even
  EXPECT_EQ(half(3 * std::ldexp(1.0, -25)).bits(), 0x0002);  // tie between 1 and 2 ulps
  EXPECT_EQ(half(std::ldexp(1.0, -14)).bits(), 0x0400);      // smallest normal
  EXPECT_EQ(half(std::ldexp(1023.0, -24)).bits(), 0x03FF);   // largest subnormal
  EXPECT_EQ(static_cast<float>(half::FromBits(0x0001)), std::ldexp(1.0f, -24));
  EXPECT_EQ(static_cast<float>(half::FromBits(0x83FF)), -std::ldexp(1023.0f, -24));
}

TEST(Float8Test, E4M3FN) {
  EXPECT_EQ(float8_e4m3fn(448.0f).bits(), 0x7E);
  EXPECT_EQ(float8_e4m3fn(464.0f).bits(), 0x7E);  // tie: 448 has the even mantissa
  EXPECT_EQ(float8_e4m3fn(480.0f).bits(), 0x7F);  // overflows to NaN
  EXPECT_EQ(float8_e4m3fn(kNan).bits(), 0x7F);
  EXPECT_EQ(float8_e4m3fn(-kNan).bits(), 0xFF);
  EXPECT_EQ(float8_e4m3fn(kInf).bits(), 0x7F);  // no inf
  EXPECT_EQ(float8_e4m3fn(1.0f).bits(), 0x38);
  EXPECT_EQ(float8_e4m3fn(-1.75f).bits(), 0xBE);
  EXPECT_EQ(float8_e4m3fn(std::ldexp(1.0, -9)).bits(), 0x01);   // smallest subnormal
  EXPECT_EQ(float8_e4m3fn(std::ldexp(1.0, -10)).bits(), 0x00);  // tie with 0
  EXPECT_EQ(static_cast<float>(float8_e4m3fn::FromBits(0x7E)), 448.0f);
  EXPECT_TRUE(std::isnan(static_cast<float>(float8_e4m3fn::FromBits(0x7F))));
  EXPECT_EQ(static_cast<float>(float8_e4m3fn::FromBits(0x01)), std::ldexp(1.0f, -9));
}

TEST(Float8Test, Fnuz) {
  EXPECT_EQ(float8_e4m3fnuz(kNan).bits(), 0x80);
  EXPECT_EQ(float8_e4m3fnuz(-kNan).bits(), 0x80);
  EXPECT_EQ(float8_e4m3fnuz(-0.0).bits(), 0x00);  // no negative zero
  EXPECT_EQ(float8_e4m3fnuz(240.0f).bits(), 0x7F);
  EXPECT_EQ(float8_e4m3fnuz(1.0f).bits(), 0x40);
  EXPECT_EQ(float8_e4m3fnuz(1000.0f).bits(), 0x80);  // overflow is NaN
  EXPECT_TRUE(std::isnan(static_cast<float>(float8_e4m3fnuz::FromBits(0x80))));
  EXPECT_EQ(float8_e5m2fnuz(57344.0f).bits(), 0x7F);
  EXPECT_EQ(float8_e5m2fnuz(kNan).bits(), 0x80);
  EXPECT_EQ(float8_e4m3b11fnuz(30.0f).bits(), 0x7F);
  EXPECT_EQ(float8_e4m3b11fnuz(1.0f).bits(), 0x58);
}

TEST(Float8Test, E5M2) {
  EXPECT_EQ(float8_e5m2(kInf).bits(), 0x7C);
  EXPECT_EQ(float8_e5m2(-kInf).bits(), 0xFC);
  EXPECT_EQ(float8_e5m2(kNan).bits(), 0x7E);
  EXPECT_EQ(float8_e5m2(57344.0f).bits(), 0x7B);
  EXPECT_EQ(float8_e5m2(61439.0f).bits(), 0x7B);
  EXPECT_EQ(float8_e5m2(61440.0f).bits(), 0x7C);  // tie: rounds to even, which overflows
  EXPECT_EQ(float8_e5m2(1.0f).bits(), 0x3C);
  EXPECT_EQ(float8_e5m2(1.25f).bits(), 0x3D);
  EXPECT_EQ(float8_e5m2(1.125f).bits(), 0x3C);  // tie to even
  EXPECT_EQ(float8_e5m2(1.375f).bits(), 0x3E);  // tie to even
  EXPECT_EQ(float8_e5m2(std::ldexp(1.0, -16)).bits(), 0x01);
}

TEST(Float8Test, E4M3AndE3M4) {
  EXPECT_EQ(float8_e4m3(240.0f).bits(), 0x77);
  EXPECT_EQ(float8_e4m3(kInf).bits(), 0x78);
  EXPECT_EQ(float8_e4m3(kNan).bits(), 0x7C);
  EXPECT_EQ(float8_e4m3(1.0f).bits(), 0x38);
  EXPECT_EQ(float8_e3m4(15.5f).bits(), 0x6F);
  EXPECT_EQ(float8_e3m4(kInf).bits(), 0x70);
  EXPECT_EQ(float8_e3m4(1.0f).bits(), 0x30);
}

TEST(Float8Test, E8M0FNU) {
  EXPECT_EQ(float8_e8m0fnu(1.0f).bits(), 0x7F);
  EXPECT_EQ(float8_e8m0fnu(0.25f).bits(), 0x7D);
  EXPECT_EQ(float8_e8m0fnu(std::ldexp(1.0, -127)).bits(), 0x00);
  EXPECT_EQ(float8_e8m0fnu(std::ldexp(1.0, 127)).bits(), 0xFE);
  EXPECT_EQ(float8_e8m0fnu(kNan).bits(), 0xFF);
  EXPECT_EQ(float8_e8m0fnu(-1.0f).bits(), 0xFF);  // no negative values
  EXPECT_EQ(static_cast<float>(float8_e8m0fnu::FromBits(0x80)), 2.0f);
  EXPECT_EQ(float8_e8m0fnu(1.2f).bits(), 0x7F);
  EXPECT_EQ(float8_e8m0fnu(1.7f).bits(), 0x80);
}

TEST(Float4Test, E2M1FN) {
  EXPECT_EQ(float4_e2m1fn(6.0f).bits(), 0x7);
  EXPECT_EQ(float4_e2m1fn(100.0f).bits(), 0x7);  // saturates
  EXPECT_EQ(float4_e2m1fn(-6.0f).bits(), 0xF);
  EXPECT_EQ(float4_e2m1fn(-kInf).bits(), 0xF);
  EXPECT_EQ(float4_e2m1fn(0.5f).bits(), 0x1);  // the only subnormal
  EXPECT_EQ(float4_e2m1fn(1.0f).bits(), 0x2);
  EXPECT_EQ(float4_e2m1fn(0.25f).bits(), 0x0);  // tie with 0: even
  EXPECT_EQ(float4_e2m1fn(0.75f).bits(), 0x2);  // tie between 0.5 and 1: even
  EXPECT_EQ(float4_e2m1fn(5.0f).bits(), 0x6);   // tie between 4 and 6: even (4)
  EXPECT_EQ(static_cast<float>(float4_e2m1fn::FromBits(0x5)), 3.0f);
  EXPECT_EQ(static_cast<float>(float4_e2m1fn::FromBits(0xB)), -1.5f);
}

// Each f32 in the format's range against the nearest of the format's 8-bit
// codes found by search (ties to the even code, zero's sign from the input;
// fnuz has one zero): the f32 bit-rounding path and the general one agree.
template <typename T>
void ExpectNearestCodes(uint32_t seed) {
  const double highest = static_cast<double>(static_cast<float>(T::Highest()));
  uint32_t state = seed;
  auto next = [&] {
    state = state * 1664525u + 1013904223u;
    return state;
  };
  for (int n = 0; n < 20000; ++n) {
    // Magnitudes log-uniform from far below the least subnormal to the
    // largest finite value, both signs; every 7th an exact midpoint.
    const double unit = (next() >> 8) * (1.0 / (1 << 24));
    double value = highest * std::exp2(-30.0 * unit);
    if ((next() & 1u) != 0) value = -value;
    auto code_value = [](uint32_t code) {
      return static_cast<double>(static_cast<float>(T::FromBits(static_cast<uint8_t>(code))));
    };
    if (n % 7 == 0) {
      const auto low = static_cast<uint32_t>(next() % 255);
      const double a = code_value(low), b = code_value(low + 1);
      if (std::isfinite(a) && std::isfinite(b) && std::signbit(a) == std::signbit(b)) {
        value = (a + b) / 2;
      }
    }
    const auto single = static_cast<float>(value);
    int best = -1;
    double best_error = 0;
    for (uint32_t code = 0; code < 256; ++code) {
      const double candidate = code_value(code);
      if (std::isnan(candidate) || std::isinf(candidate)) continue;
      if (candidate == 0 && T::kEncodingKind != FloatEncoding::kFiniteUz &&
          std::signbit(candidate) != std::signbit(single)) {
        continue;
      }
      const double error = std::fabs(candidate - static_cast<double>(single));
      if (best < 0 || error < best_error ||
          (error == best_error && candidate != 0 && (code & 1u) == 0)) {
        best = static_cast<int>(code);
        best_error = error;
      }
    }
    ASSERT_EQ(static_cast<int>(T(single).bits()), best) << single;
  }
}

TEST(NarrowFloatTest, F32RoundingMatchesTheNearestCode) {
  ExpectNearestCodes<float8_e4m3fn>(1);
  ExpectNearestCodes<float8_e5m2>(2);
  ExpectNearestCodes<float8_e4m3>(3);
  ExpectNearestCodes<float8_e3m4>(4);
  ExpectNearestCodes<float8_e4m3fnuz>(5);
  ExpectNearestCodes<float8_e5m2fnuz>(6);
  ExpectNearestCodes<float8_e4m3b11fnuz>(7);
}

TEST(NarrowFloatTest, FiniteRange) {
  EXPECT_EQ(static_cast<float>(float8_e4m3fn::Highest()), 448.0f);
  EXPECT_EQ(static_cast<float>(float8_e4m3fn::Lowest()), -448.0f);
  EXPECT_EQ(static_cast<float>(float4_e2m1fn::Highest()), 6.0f);
  EXPECT_EQ(static_cast<float>(float4_e2m1fn::Lowest()), -6.0f);
  EXPECT_EQ(static_cast<float>(float8_e8m0fnu::Lowest()), std::ldexp(1.0f, -127));
  EXPECT_EQ(static_cast<float>(float8_e8m0fnu::Highest()), std::ldexp(1.0f, 127));
  EXPECT_EQ(static_cast<float>(float8_e4m3fnuz::Highest()), 240.0f);
  EXPECT_EQ(static_cast<float>(float8_e5m2::Highest()), 57344.0f);
  EXPECT_EQ(static_cast<float>(half::Highest()), 65504.0f);
  EXPECT_EQ(static_cast<float>(HighestFinite<bfloat16>()), 3.38953139e38f);
  EXPECT_EQ(LowestFinite<float>(), -std::numeric_limits<float>::max());
}

TEST(NarrowFloatTest, Arithmetic) {
  EXPECT_EQ((half(1.5f) + half(2.25f)).bits(), half(3.75f).bits());
  EXPECT_EQ((bfloat16(3.0f) * bfloat16(-2.0f)).bits(), 0xC0C0);
  EXPECT_TRUE(float8_e4m3fn(1.0f) < float8_e4m3fn(2.0f));
  EXPECT_TRUE(half(kNan) != half(kNan));
}

TEST(IntNTest, WrapsOnConstruction) {
  EXPECT_EQ(int4(7).value(), 7);
  EXPECT_EQ(int4(8).value(), -8);
  EXPECT_EQ(int4(-9).value(), 7);
  EXPECT_EQ(int4(-1).value(), -1);
  EXPECT_EQ(uint4(16).value(), 0);
  EXPECT_EQ(uint4(-1).value(), 15);
  EXPECT_EQ(int2(2).value(), -2);
  EXPECT_EQ(uint2(5).value(), 1);
  EXPECT_EQ(int1(1).value(), -1);
  EXPECT_EQ(uint1(3).value(), 1);
  EXPECT_EQ(int4::kMin, -8);
  EXPECT_EQ(int4::kMax, 7);
  EXPECT_EQ(uint4::kMax, 15);
}

TEST(ConvertValueTest, FloatToIntegerSaturatesAndNanIsZero) {
  EXPECT_EQ(ConvertValue<int8_t>(300.0f), 127);
  EXPECT_EQ(ConvertValue<int8_t>(-300.0f), -128);
  EXPECT_EQ(ConvertValue<int32_t>(static_cast<float>(kNan)), 0);
  EXPECT_EQ(ConvertValue<uint8_t>(-5.0), 0);
  EXPECT_EQ(ConvertValue<uint64_t>(1e30), std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(ConvertValue<int64_t>(-1e30), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(ConvertValue<int4>(100.0).value(), 7);
  EXPECT_EQ(ConvertValue<int4>(-2.7).value(), -2);  // truncates toward zero
  EXPECT_EQ(ConvertValue<uint4>(half(3.5f)).value(), 3);
}

TEST(ConvertValueTest, IntegersWrap) {
  EXPECT_EQ(ConvertValue<int8_t>(int32_t{300}), 44);
  EXPECT_EQ(ConvertValue<uint8_t>(int32_t{-1}), 255);
  EXPECT_EQ(ConvertValue<int4>(int32_t{9}).value(), -7);
  EXPECT_EQ(ConvertValue<int32_t>(int4(-3)), -3);
  EXPECT_EQ(ConvertValue<uint32_t>(uint4(12)), 12u);
}

TEST(ConvertValueTest, PredComplexAndFloats) {
  EXPECT_TRUE(ConvertValue<bool>(0.5f));
  EXPECT_FALSE(ConvertValue<bool>(-0.0));
  EXPECT_TRUE(ConvertValue<bool>(int4(-1)));
  EXPECT_EQ(ConvertValue<float>(true), 1.0f);
  EXPECT_EQ(ConvertValue<complex64>(2.0), complex64(2, 0));
  EXPECT_EQ(ConvertValue<float>(complex64(3, 4)), 3.0f);
  EXPECT_EQ(ConvertValue<complex128>(complex64(1.5f, -2.5f)), complex128(1.5, -2.5));
  EXPECT_EQ(ConvertValue<bfloat16>(half(1.0f)).bits(), 0x3F80);
  EXPECT_EQ(ConvertValue<float8_e5m2>(int32_t{-3}).bits(), 0xC2);
  EXPECT_EQ(ConvertValue<double>(float8_e4m3fn::FromBits(0x7E)), 448.0);
}

TEST(PrimitiveTypeTest, NamesAndWidths) {
  EXPECT_EQ(std::string(primitive_util::LowercasePrimitiveTypeName(F8E4M3FN)), "f8e4m3fn");
  EXPECT_EQ(primitive_util::StringToPrimitiveType("bf16"), BF16);
  EXPECT_EQ(primitive_util::StringToPrimitiveType("f33"), std::nullopt);
  EXPECT_EQ(primitive_util::BitWidth(S4), 4);
  EXPECT_EQ(primitive_util::ByteWidth(S4), 1);
  EXPECT_EQ(primitive_util::ByteWidth(C128), 16);
  EXPECT_TRUE(primitive_util::IsF8Type(F4E2M1FN));
  EXPECT_TRUE(primitive_util::IsSubByteType(U2));
  EXPECT_FALSE(primitive_util::IsIntegralType(PRED));
  EXPECT_EQ(primitive_util::ComplexComponentType(C64), F32);
  EXPECT_EQ(NativeToPrimitiveType<float8_e4m3b11fnuz>(), F8E4M3B11FNUZ);
}

}  // namespace
}  // namespace axle
