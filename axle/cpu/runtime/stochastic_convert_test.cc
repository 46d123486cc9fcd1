//===- stochastic_convert_test.cc - stochastic-convert on cpu --------------===//
//
// stochastic-convert(x, random) on the cpu platform, against the
// interpreter bit for bit and against values worked out by hand: NaN,
// infinities, saturation at and beyond the result type's range, -0, exact
// integers, and random bits on both sides of the rounding threshold
// (fraction * 2^bits), for f32, f16, bf16 and f64 operands and 8- to 64-bit
// results.
//
//===----------------------------------------------------------------------===//
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "axle/cpu/runtime/platform_test_util.h"
#include "gtest/gtest.h"

namespace axle {
namespace {

using testing::RunOn;

Literal RunBoth(absl::string_view text, const std::vector<Literal>& arguments) {
  absl::StatusOr<Literal> cpu = RunOn("cpu", text, arguments);
  EXPECT_TRUE(cpu.ok()) << cpu.status();
  if (!cpu.ok()) return Literal();
  absl::StatusOr<Literal> reference = RunOn("interpreter", text, arguments);
  EXPECT_TRUE(reference.ok()) << reference.status();
  if (reference.ok()) EXPECT_EQ(*cpu, *reference) << *cpu << "\nvs\n" << *reference;
  return std::move(*cpu);
}

// stochastic-convert of an f32[n] parameter converted to `in` (with random
// bits of `bits`) to `out`.
std::string Module(absl::string_view in, absl::string_view bits, absl::string_view out, int64_t n) {
  return absl::StrCat("HloModule m\nENTRY e {\n  p = f32[", n, "] parameter(0)\n  x = ", in, "[", n,
                      "] convert(p)\n  r = ", bits, "[", n, "] parameter(1)\n  ROOT s = ", out, "[",
                      n, "] stochastic-convert(x, r)\n}\n");
}

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

TEST(CpuStochasticConvert, F32ToS8CornerCases) {
  const uint32_t half = 1u << 31;
  // 2.5: fraction 0.5 -> threshold 2^31; random below rounds up. A
  // denormal's fraction scaled to 2^32 is below 1: it never rounds up.
  std::vector<float> x = {kNaN,    -kNaN,   kInf,    -kInf, 127.0f, 127.5f, 128.0f, 1e10f,
                          -128.0f, -128.5f, -129.0f, -0.0f, 0.0f,   2.5f,   2.5f,   -2.5f,
                          -2.5f,   3.0f,    0.25f,   0.25f, 1e-40f, -1e-40f};
  std::vector<uint32_t> r = {0,
                             0,
                             0,
                             0,
                             0,
                             0,
                             0,
                             0,
                             0,
                             0xffffffffu,
                             0,
                             0,
                             0,
                             half - 1,
                             half,
                             half - 1,
                             half,
                             0,
                             (1u << 30) - 1,
                             1u << 30,
                             0,
                             0};
  Literal result = RunBoth(Module("f32", "u32", "s8", x.size()),
                           {LiteralUtil::CreateR1<float>(x), LiteralUtil::CreateR1<uint32_t>(r)});
  EXPECT_EQ(result,
            LiteralUtil::CreateR1<int8_t>({0, 0, 127, -128, 127, 127, 127, 127, -128, -128, -128,
                                           0, 0, 3,   2,    -3,  -2,  3,   1,   0,    0,    0}));
}

TEST(CpuStochasticConvert, F32ToS32NearTheLimits) {
  // 2147483520 is the largest f32 below 2^31; 2^31 saturates.
  std::vector<float> x = {2147483520.0f, 2147483648.0f, -2147483648.0f, -2147483904.0f,
                          8388607.5f,    -0.75f,        -0.75f,         1.0f / 3};
  std::vector<uint32_t> r = {0, 0, 0, 0, 0xffffffffu, 0xbfffffffu, 0xc0000000u, 0x55555554u};
  Literal result = RunBoth(Module("f32", "u32", "s32", x.size()),
                           {LiteralUtil::CreateR1<float>(x), LiteralUtil::CreateR1<uint32_t>(r)});
  const int32_t lo = std::numeric_limits<int32_t>::min();
  const int32_t hi = std::numeric_limits<int32_t>::max();
  EXPECT_EQ(result, LiteralUtil::CreateR1<int32_t>({2147483520, hi, lo, lo, 8388607, -1, 0, 1}));
}

TEST(CpuStochasticConvert, HalfAndBf16WithSixteenRandomBits) {
  std::vector<float> x = {kNaN, 65504.0f, -kInf, 1.5f, 1.5f, -1.25f, -1.25f, 300.0f, -0.0f};
  std::vector<uint16_t> r = {0, 0, 0, 0x7fff, 0x8000, 0x3fff, 0x4000, 0xffff, 0xffff};
  for (absl::string_view type : {"f16", "bf16"}) {
    SCOPED_TRACE(type);
    Literal result = RunBoth(Module(type, "u16", "s8", x.size()),
                             {LiteralUtil::CreateR1<float>(x), LiteralUtil::CreateR1<uint16_t>(r)});
    EXPECT_EQ(result, LiteralUtil::CreateR1<int8_t>({0, 127, -128, 2, 1, -2, -1, 127, 0}));
  }
  Literal wide = RunBoth(Module("f16", "u16", "s32", x.size()),
                         {LiteralUtil::CreateR1<float>(x), LiteralUtil::CreateR1<uint16_t>(r)});
  EXPECT_EQ(wide, LiteralUtil::CreateR1<int32_t>(
                      {0, 65504, std::numeric_limits<int32_t>::min(), 2, 1, -2, -1, 300, 0}));
}

TEST(CpuStochasticConvert, F64ToS64WithSixtyFourRandomBits) {
  const std::string text = R"(
HloModule m
ENTRY e {
  x = f64[8] parameter(0)
  r = u64[8] parameter(1)
  ROOT s = s64[8] stochastic-convert(x, r)
})";
  // The fraction 1 - 2^-53 scales to 2^64 - 2^11 exactly: 2^64 - 2049 is
  // below it and rounds up.
  const uint64_t half = uint64_t{1} << 63;
  std::vector<double> x = {0.5,
                           0.5,
                           9.2e18,
                           9223372036854775808.0,
                           -9223372036854775808.0,
                           -1e19,
                           1.0 - std::ldexp(1.0, -53),
                           std::nan("")};
  std::vector<uint64_t> r = {half - 1, half, 0, 0, 0, 0, ~uint64_t{0} - 2048, 0};
  Literal result =
      RunBoth(text, {LiteralUtil::CreateR1<double>(x), LiteralUtil::CreateR1<uint64_t>(r)});
  const int64_t lo = std::numeric_limits<int64_t>::min();
  const int64_t hi = std::numeric_limits<int64_t>::max();
  EXPECT_EQ(result, LiteralUtil::CreateR1<int64_t>({1, 0, 9200000000000000000, hi, lo, lo, 1, 0}));
}

TEST(CpuStochasticConvert, BroadcastOperandsInAFusion) {
  const std::string text = R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  q = u32[] parameter(1)
  r = u32[4] broadcast(q), dimensions={}
  h = f32[4] multiply(p, p)
  ROOT s = s16[4] stochastic-convert(h, r)
})";
  Literal result = RunBoth(text, {LiteralUtil::CreateR1<float>({1.5f, -2.5f, 300.0f, 0.5f}),
                                  LiteralUtil::CreateR0<uint32_t>(1u << 30)});
  // 2.25 (fraction 1/4: threshold 2^30, not below), 6.25, 90000 (saturates), 0.25.
  EXPECT_EQ(result, LiteralUtil::CreateR1<int16_t>({2, 6, 32767, 0}));
}

}  // namespace
}  // namespace axle
