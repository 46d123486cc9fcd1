#include "axle/hlo/analysis/elementwise_access.h"

#include <memory>
#include <utility>
#include <vector>

#include "axle/hlo/text/hlo_parser.h"
#include "gtest/gtest.h"

namespace axle {
namespace {

std::unique_ptr<HloModule> Parse(absl::string_view text) {
  auto module = ParseAndReturnUnverifiedModule(text);
  CHECK(module.ok()) << module.status();
  return std::move(*module);
}

using Pairs = std::vector<std::pair<int64_t, int64_t>>;

TEST(ElementwiseAccess, OutputsTakeOverParametersReadAtTheirIndex) {
  auto module = Parse(R"(
HloModule m
ENTRY e {
  p0 = f32[4,8] parameter(0)
  p1 = f32[4,8] parameter(1)
  p2 = f32[8] parameter(2)
  b = f32[4,8] broadcast(p2), dimensions={1}
  a = f32[4,8] add(p0, b)
  r = f32[4,8] reverse(p1), dimensions={0}
  m = f32[4,8] multiply(r, a)
  ROOT t = (f32[4,8], f32[4,8]) tuple(m, a)
})");
  const HloComputation& entry = *module->entry_computation();
  EXPECT_TRUE(IsPlainLoopComputation(entry));
  EXPECT_TRUE(ReadOnlyAtOutputIndex(*entry.parameter_instruction(0)));
  EXPECT_FALSE(ReadOnlyAtOutputIndex(*entry.parameter_instruction(1)));  // reversed
  EXPECT_FALSE(ReadOnlyAtOutputIndex(*entry.parameter_instruction(2)));  // broadcast
  // p0 feeds both outputs, a (one op away) before m (two). p1 is read
  // elsewhere than at the index, p2 has another shape.
  EXPECT_EQ(InPlaceOutputCandidates(entry), (Pairs{{0, 1}, {0, 0}}));
}

TEST(ElementwiseAccess, AnOutputTakesOneParameterAndNeedsItsShape) {
  auto module = Parse(R"(
HloModule m
ENTRY e {
  p0 = f32[16] parameter(0)
  p1 = f32[16] parameter(1)
  p2 = s32[16] parameter(2)
  a = f32[16] add(p0, p1)
  c = s32[16] convert(a)
  d = s32[16] add(c, p2)
  ROOT t = (f32[16], s32[16]) tuple(a, d)
})");
  // p0 and p1 -> output 0 (output 1 has another type); p2 -> output 1.
  EXPECT_EQ(InPlaceOutputCandidates(*module->entry_computation()), (Pairs{{0, 0}, {1, 0}, {2, 1}}));
}

TEST(ElementwiseAccess, AnUpdateMeetsItsOwnBufferFirst) {
  // SGD with momentum in one kernel: v' = v * m + g, w' = w + v' * lr.
  auto module = Parse(R"(
HloModule m
ENTRY e {
  w = f32[16] parameter(0)
  v = f32[16] parameter(1)
  g = f32[16] parameter(2)
  m = f32[] parameter(3)
  lr = f32[] parameter(4)
  mb = f32[16] broadcast(m), dimensions={}
  lrb = f32[16] broadcast(lr), dimensions={}
  vm = f32[16] multiply(v, mb)
  v1 = f32[16] add(vm, g)
  step = f32[16] multiply(v1, lrb)
  w1 = f32[16] add(w, step)
  ROOT t = (f32[16], f32[16]) tuple(w1, v1)
})");
  // Nearest first: w -> w' and g -> v' (one op), v -> v' (two), then
  // g -> w' (three) and v -> w' (four), so w' meets w before v.
  EXPECT_EQ(InPlaceOutputCandidates(*module->entry_computation()),
            (Pairs{{0, 0}, {2, 1}, {1, 1}, {2, 0}, {1, 0}}));
}

TEST(ElementwiseAccess, KernelsWithSchedulesOfTheirOwnHaveNoCandidates) {
  auto module = Parse(R"(
HloModule m
ENTRY e {
  p0 = f32[8,8] parameter(0)
  t = f32[8,8] transpose(p0), dimensions={1,0}
  ROOT a = f32[8,8] add(t, p0)
})");
  EXPECT_FALSE(IsPlainLoopComputation(*module->entry_computation()));
  EXPECT_TRUE(InPlaceOutputCandidates(*module->entry_computation()).empty());
}

TEST(ElementwiseAccess, AnOutputThatIsTheParameterItselfIsNoCandidate) {
  auto module = Parse(R"(
HloModule m
ENTRY e {
  p0 = f32[8] parameter(0)
  n = f32[8] negate(p0)
  ROOT t = (f32[8], f32[8]) tuple(p0, n)
})");
  EXPECT_EQ(InPlaceOutputCandidates(*module->entry_computation()), (Pairs{{0, 1}}));
}

}  // namespace
}  // namespace axle
