//===- scan_to_while_test.cc - scan on the cpu platform --------------------===//
//
// Scans run on cpu (through the ScanToWhile pass, tested alone in
// axle/hlo/transforms): forward and reverse, several inputs, carries and
// outputs, scans along an inner dimension, an empty scan dimension, no
// carries, a scan inside a while body. Results equal the interpreter's bit
// for bit and the values worked out by hand.
//
//===----------------------------------------------------------------------===//
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_replace.h"
#include "axle/cpu/runtime/platform_test_util.h"
#include "gtest/gtest.h"

namespace axle {
namespace {

using testing::CompileOn;
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

constexpr const char* kCumulativeSum = R"(
HloModule m
add_both {
  x = f32[] parameter(0)
  c = f32[] parameter(1)
  s = f32[] add(x, c)
  ROOT t = (f32[], f32[]) tuple(s, s)
}
ENTRY e {
  p = f32[5] parameter(0)
  z = f32[] parameter(1)
  ROOT r = (f32[5], f32[]) scan(p, z), dimensions={0}, num_carries=1, to_apply=add_both$REVERSE
})";

std::string CumulativeSum(bool reverse) {
  return absl::StrReplaceAll(kCumulativeSum, {{"$REVERSE", reverse ? ", is_reverse=true" : ""}});
}

TEST(CpuScan, CumulativeSumForwardAndReverse) {
  std::vector<Literal> arguments;
  arguments.push_back(LiteralUtil::CreateR1<float>({1, 2, 3, 4, 5}));
  arguments.push_back(LiteralUtil::CreateR0<float>(10));
  EXPECT_EQ(RunBoth(CumulativeSum(false), arguments),
            LiteralUtil::MakeTuple({LiteralUtil::CreateR1<float>({11, 13, 16, 20, 25}),
                                    LiteralUtil::CreateR0<float>(25)}));
  EXPECT_EQ(RunBoth(CumulativeSum(true), arguments),
            LiteralUtil::MakeTuple({LiteralUtil::CreateR1<float>({25, 24, 22, 19, 15}),
                                    LiteralUtil::CreateR0<float>(25)}));
}

// Along dimension 1 of [2,3] inputs: two inputs, two carries (a running
// sum of x*y and a step count), outputs of two element types.
TEST(CpuScan, InnerDimensionSeveralInputsCarriesAndOutputTypes) {
  const std::string text = R"(
HloModule m
step {
  x = f32[2] parameter(0)
  y = f32[2] parameter(1)
  sum = f32[2] parameter(2)
  n = s32[] parameter(3)
  next = f32[2] add(sum, multiply(x, y))
  m = s32[] add(n, s32[] constant(1))
  b = s32[2] broadcast(m), dimensions={}
  ROOT t = (f32[2], s32[2], f32[2], s32[]) tuple(next, b, next, m)
}
ENTRY e {
  x = f32[2,3] parameter(0)
  y = f32[2,3] parameter(1)
  s0 = f32[2] parameter(2)
  n0 = s32[] constant(0)
  ROOT r = (f32[2,3], s32[2,3], f32[2], s32[]) scan(x, y, s0, n0), dimensions={1},
      num_carries=2, is_reverse=true, to_apply=step
})";
  std::vector<Literal> arguments;
  arguments.push_back(LiteralUtil::CreateR2<float>({{1, 2, 3}, {4, 5, 6}}));
  arguments.push_back(LiteralUtil::CreateR2<float>({{1, 10, 100}, {-1, 0.5f, 2}}));
  arguments.push_back(LiteralUtil::CreateR1<float>({0.25f, 1}));
  // Reverse: column 2 first. Row 0: 300.25, 320.25, 321.25; row 1: 13,
  // 15.5, 11.5.
  EXPECT_EQ(
      RunBoth(text, arguments),
      LiteralUtil::MakeTuple(
          {LiteralUtil::CreateR2<float>({{321.25f, 320.25f, 300.25f}, {11.5f, 15.5f, 13}}),
           LiteralUtil::CreateR2<int32_t>({{3, 2, 1}, {3, 2, 1}}),
           LiteralUtil::CreateR1<float>({321.25f, 11.5f}), LiteralUtil::CreateR0<int32_t>(3)}));
}

TEST(CpuScan, EmptyScanDimensionGivesTheInitsAndEmptyOutputs) {
  const std::string text =
      absl::StrReplaceAll(kCumulativeSum, {{"f32[5]", "f32[0]"}, {"$REVERSE", ""}});
  std::vector<Literal> arguments;
  arguments.push_back(Literal(ShapeUtil::MakeShape(F32, {0})));
  arguments.push_back(LiteralUtil::CreateR0<float>(-3));
  EXPECT_EQ(RunBoth(text, arguments),
            LiteralUtil::MakeTuple(
                {Literal(ShapeUtil::MakeShape(F32, {0})), LiteralUtil::CreateR0<float>(-3)}));
}

TEST(CpuScan, NoCarries) {
  const std::string text = R"(
HloModule m
square {
  x = s32[2] parameter(0)
  ROOT s = s32[2] multiply(x, x)
}
ENTRY e {
  p = s32[3,2] parameter(0)
  ROOT r = (s32[3,2]) scan(p), dimensions={0}, num_carries=0, to_apply=square
})";
  std::vector<Literal> arguments;
  arguments.push_back(LiteralUtil::CreateR2<int32_t>({{1, -2}, {3, 4}, {0, 7}}));
  EXPECT_EQ(RunBoth(text, arguments),
            LiteralUtil::MakeTuple({LiteralUtil::CreateR2<int32_t>({{1, 4}, {9, 16}, {0, 49}})}));
}

TEST(CpuScan, InsideAWhileBody) {
  const std::string text = R"(
HloModule m
add_both {
  x = f32[] parameter(0)
  c = f32[] parameter(1)
  s = f32[] add(x, c)
  ROOT t = (f32[], f32[]) tuple(s, s)
}
cond {
  s = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  two = s32[] constant(2)
  ROOT c = pred[] compare(i, two), direction=LT
}
body {
  s = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  v = f32[4] get-tuple-element(s), index=1
  zero = f32[] constant(0)
  r = (f32[4], f32[]) scan(v, zero), dimensions={0}, num_carries=1, to_apply=add_both
  o = f32[4] get-tuple-element(r), index=0
  one = s32[] constant(1)
  ROOT t = (s32[], f32[4]) tuple(add(i, one), o)
}
ENTRY e {
  p = f32[4] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[4]) tuple(zero, p)
  w = (s32[], f32[4]) while(init), condition=cond, body=body
  ROOT r = f32[4] get-tuple-element(w), index=1
})";
  std::vector<Literal> arguments;
  arguments.push_back(LiteralUtil::CreateR1<float>({1, 1, 1, 1}));
  // Prefix sums twice: 1 2 3 4, then 1 3 6 10.
  EXPECT_EQ(RunBoth(text, arguments), LiteralUtil::CreateR1<float>({1, 3, 6, 10}));
}

TEST(CpuScan, TupleCarriesAreUnimplementedNamingTheScan) {
  auto compiled = CompileOn("cpu", R"(
HloModule m
f {
  x = f32[] parameter(0)
  c = (f32[], f32[]) parameter(1)
  ROOT t = (f32[], (f32[], f32[])) tuple(x, c)
}
ENTRY e {
  p = f32[3] parameter(0)
  z = (f32[], f32[]) parameter(1)
  ROOT r = (f32[3], (f32[], f32[])) scan(p, z), dimensions={0}, num_carries=1, to_apply=f
})");
  ASSERT_FALSE(compiled.ok());
  EXPECT_TRUE(absl::IsUnimplemented(compiled.status())) << compiled.status();
  EXPECT_TRUE(absl::StrContains(compiled.status().message(), "scan")) << compiled.status();
}

}  // namespace
}  // namespace axle
