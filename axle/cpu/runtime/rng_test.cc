// rng-bit-generator on the `cpu` platform: XLA's bits (a Random123 known
// answer through the HLO path), the same bits and new state as the
// interpreter for each algorithm, state size and element width; rng and
// rng-get-and-update-state draw what the interpreter draws.
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "axle/cpu/runtime/platform_test_util.h"
#include "gtest/gtest.h"

namespace axle {
namespace {

using testing::CompileOn;
using testing::RunOn;

std::string RngModule(absl::string_view algorithm, int64_t state_size, absl::string_view bits) {
  return absl::StrCat("HloModule rng\nENTRY e {\n  s = u64[", state_size,
                      "] parameter(0)\n  ROOT r = (u64[", state_size, "], ", bits,
                      ") rng-bit-generator(s), algorithm=", algorithm, "\n}\n");
}

Literal CpuEqualsInterpreter(const std::string& text, const Literal& state) {
  std::vector<Literal> arguments;
  arguments.push_back(state.Clone());
  absl::StatusOr<Literal> cpu = RunOn("cpu", text, arguments);
  EXPECT_TRUE(cpu.ok()) << cpu.status() << "\n" << text;
  if (!cpu.ok()) return Literal();
  absl::StatusOr<Literal> reference = RunOn("interpreter", text, arguments);
  EXPECT_TRUE(reference.ok()) << reference.status();
  if (reference.ok()) {
    EXPECT_EQ(*cpu, *reference) << text;
  }
  return std::move(*cpu);
}

TEST(CpuRngBitGenerator, PhiloxKnownAnswer) {
  Literal state = LiteralUtil::CreateR1<uint64_t>(
      {0x299f31d0a4093822u, 0x85a308d3243f6a88u, 0x0370734413198a2eu});
  Literal result = CpuEqualsInterpreter(RngModule("rng_philox", 3, "u32[4]"), state);
  std::vector<Literal> parts = result.DecomposeTuple();
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[1],
            LiteralUtil::CreateR1<uint32_t>({0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}));
  EXPECT_EQ(parts[0], LiteralUtil::CreateR1<uint64_t>(
                          {0x299f31d0a4093822u, 0x85a308d3243f6a89u, 0x0370734413198a2eu}));
}

TEST(CpuRngBitGenerator, ThreefryKnownAnswer) {
  // Key 0x03707344'13198a2e, counter 0x85a308d3'243f6a88: u64[1] takes the
  // whole block (word 0 low).
  Literal state = LiteralUtil::CreateR1<uint64_t>({0x0370734413198a2eu, 0x85a308d3243f6a88u});
  Literal result = CpuEqualsInterpreter(RngModule("rng_three_fry", 2, "u64[1]"), state);
  std::vector<Literal> parts = result.DecomposeTuple();
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[1], LiteralUtil::CreateR1<uint64_t>({0x483df7a0c4923a9cu}));
  EXPECT_EQ(parts[0], LiteralUtil::CreateR1<uint64_t>({0x0370734413198a2eu, 0x85a308d3243f6a89u}));
}

TEST(CpuRngBitGenerator, AgreesWithTheInterpreterOnEveryLayout) {
  Literal two = LiteralUtil::CreateR1<uint64_t>({0x1234, 0xfffffffffffffffeu});
  Literal three = LiteralUtil::CreateR1<uint64_t>({42, 0xffffffffffffffffu, 7});
  for (absl::string_view bits : {"u32[7,3]", "s32[4,5]", "u8[9]", "s16[3,3]", "u64[5]", "s64[2,3]",
                                 "f32[6]", "f64[3]", "f16[5]", "bf16[2,2]", "u32[]", "u32[0,4]"}) {
    CpuEqualsInterpreter(RngModule("rng_three_fry", 2, bits), two);
    CpuEqualsInterpreter(RngModule("rng_philox", 2, bits), two);
    CpuEqualsInterpreter(RngModule("rng_philox", 3, bits), three);
    CpuEqualsInterpreter(RngModule("rng_default", 2, bits), two);
  }
}

TEST(CpuRngBitGenerator, ThreadsTheStateThroughALoop) {
  constexpr absl::string_view kText = R"(
HloModule rng
cond {
  s = (s32[], u64[2], u32[8]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(4)
  ROOT c = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], u64[2], u32[8]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  state = u64[2] get-tuple-element(s), index=1
  acc = u32[8] get-tuple-element(s), index=2
  one = s32[] constant(1)
  j = s32[] add(i, one)
  r = (u64[2], u32[8]) rng-bit-generator(state), algorithm=rng_three_fry
  next = u64[2] get-tuple-element(r), index=0
  bits = u32[8] get-tuple-element(r), index=1
  x = u32[8] xor(acc, bits)
  ROOT t = (s32[], u64[2], u32[8]) tuple(j, next, x)
}
ENTRY e {
  p = u64[2] parameter(0)
  zero = s32[] constant(0)
  z = u32[] constant(0)
  acc = u32[8] broadcast(z), dimensions={}
  init = (s32[], u64[2], u32[8]) tuple(zero, p, acc)
  ROOT w = (s32[], u64[2], u32[8]) while(init), condition=cond, body=body
}
)";
  Literal result =
      CpuEqualsInterpreter(std::string(kText), LiteralUtil::CreateR1<uint64_t>({5, 100}));
  std::vector<Literal> parts = result.DecomposeTuple();
  ASSERT_EQ(parts.size(), 3u);
  // Four draws of 4 blocks each.
  EXPECT_EQ(parts[1], LiteralUtil::CreateR1<uint64_t>({5, 116}));
}

Literal RunBothExactly(absl::string_view text, const std::vector<Literal>& arguments) {
  absl::StatusOr<Literal> cpu = RunOn("cpu", text, arguments);
  EXPECT_TRUE(cpu.ok()) << cpu.status();
  if (!cpu.ok()) return Literal();
  absl::StatusOr<Literal> reference = RunOn("interpreter", text, arguments);
  EXPECT_TRUE(reference.ok()) << reference.status();
  if (reference.ok()) {
    EXPECT_EQ(*cpu, *reference);
  }
  return std::move(*cpu);
}

TEST(CpuRng, DistributionsDrawWhatTheInterpreterDraws) {
  // Three rng ops in a chain: the engine is consumed in the same order.
  constexpr absl::string_view kText = R"(
HloModule rng
ENTRY e {
  lo = f32[] parameter(0)
  hi = f32[] parameter(1)
  u = f32[3,4] rng(lo, hi), distribution=rng_uniform
  m = f64[] constant(1)
  sd = f64[] constant(2)
  n = f64[5] rng(m, sd), distribution=rng_normal
  a = s32[] constant(-3)
  b = s32[] constant(9)
  i = s32[7] rng(a, b), distribution=rng_uniform
  ROOT t = (f32[3,4], f64[5], s32[7]) tuple(u, n, i)
}
)";
  Literal result =
      RunBothExactly(kText, {LiteralUtil::CreateR0<float>(2), LiteralUtil::CreateR0<float>(3)});
  std::vector<Literal> parts = result.DecomposeTuple();
  ASSERT_EQ(parts.size(), 3u);
  for (float v : parts[0].data<float>()) {
    EXPECT_GE(v, 2.0f);
    EXPECT_LT(v, 3.0f);
  }
  for (int32_t v : parts[2].data<int32_t>()) {
    EXPECT_GE(v, -3);
    EXPECT_LT(v, 9);
  }
}

TEST(CpuRng, EmptyIntervalGivesLow) {
  Literal result = RunBothExactly(R"(
HloModule rng
ENTRY e {
  lo = f32[] constant(5)
  hi = f32[] constant(1)
  ROOT u = f32[4] rng(lo, hi), distribution=rng_uniform
}
)",
                                  {});
  EXPECT_EQ(result, LiteralUtil::CreateR1<float>({5, 5, 5, 5}));
}

TEST(CpuRng, RngStateCounterAdvancesByDelta) {
  Literal result = RunBothExactly(R"(
HloModule rng
ENTRY e {
  a = u64[2] rng-get-and-update-state(), delta=5
  b = u64[2] rng-get-and-update-state(), delta=5
  ROOT t = (u64[2], u64[2]) tuple(a, b)
}
)",
                                  {});
  std::vector<Literal> parts = result.DecomposeTuple();
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[1].data<uint64_t>()[0] - parts[0].data<uint64_t>()[0], 5u);
}

TEST(CpuRng, DrawsInsideALoopFollowTheInterpreter) {
  constexpr absl::string_view kText = R"(
HloModule rng
cond {
  s = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(3)
  ROOT c = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[4] get-tuple-element(s), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  lo = f32[] constant(0)
  hi = f32[] constant(1)
  r = f32[4] rng(lo, hi), distribution=rng_uniform
  y = f32[4] add(x, r)
  ROOT t = (s32[], f32[4]) tuple(j, y)
}
ENTRY e {
  zero = s32[] constant(0)
  z = f32[] constant(0)
  x = f32[4] broadcast(z), dimensions={}
  init = (s32[], f32[4]) tuple(zero, x)
  ROOT w = (s32[], f32[4]) while(init), condition=cond, body=body
}
)";
  RunBothExactly(kText, {});
}

TEST(CpuRng, NormalIntegersAreAnErrorNamingTheOp) {
  auto compiled = CompileOn("cpu", R"(
HloModule rng
ENTRY e {
  a = s32[] constant(0)
  b = s32[] constant(1)
  ROOT r = s32[4] rng(a, b), distribution=rng_normal
}
)");
  ASSERT_FALSE(compiled.ok());
  EXPECT_TRUE(absl::StrContains(compiled.status().message(), "%r")) << compiled.status();
}

TEST(CpuRngBitGenerator, BadStateIsAnErrorNamingTheInstruction) {
  auto compiled = CompileOn("cpu", RngModule("rng_three_fry", 3, "u32[4]"));
  ASSERT_FALSE(compiled.ok());
  EXPECT_TRUE(absl::StrContains(compiled.status().message(), "u64[2]")) << compiled.status();
}

}  // namespace
}  // namespace axle
