#include "axle/hlo/transforms/dce.h"

#include "axle/hlo/text/hlo_parser.h"
#include "gtest/gtest.h"

namespace axle {
namespace {

std::unique_ptr<HloModule> Parse(absl::string_view text) {
  auto module = ParseAndReturnUnverifiedModule(text);
  EXPECT_TRUE(module.ok()) << module.status();
  return std::move(module).value();
}

bool HasInstruction(const HloModule& module, absl::string_view name) {
  for (HloComputation* computation : module.computations()) {
    for (HloInstruction* instruction : computation->instructions()) {
      if (instruction->name() == name) return true;
    }
  }
  return false;
}

TEST(HloDCE, RemovesDeadChainsAndKeepsLiveCode) {
  auto module = Parse(R"(
HloModule m

ENTRY e {
  p = f32[4] parameter(0)
  dead1 = f32[4] negate(p)
  dead2 = f32[4] exponential(dead1)
  live = f32[4] add(p, p)
  ROOT r = f32[4] multiply(live, p)
}
)");
  HloDCE dce;
  auto changed = dce.Run(module.get());
  ASSERT_TRUE(changed.ok());
  EXPECT_TRUE(*changed);
  EXPECT_FALSE(HasInstruction(*module, "dead1"));
  EXPECT_FALSE(HasInstruction(*module, "dead2"));
  EXPECT_TRUE(HasInstruction(*module, "live"));
  EXPECT_EQ(module->entry_computation()->instruction_count(), 3);

  // A second run finds nothing.
  changed = dce.Run(module.get());
  ASSERT_TRUE(changed.ok());
  EXPECT_FALSE(*changed);
}

TEST(HloDCE, KeepsSideEffectingCustomCallsAndRemovesPureOnes) {
  auto module = Parse(R"(
HloModule m

ENTRY e {
  p = f32[4] parameter(0)
  effect = f32[4] custom-call(p), custom_call_target="log_it", custom_call_has_side_effect=true
  pure = f32[4] custom-call(p), custom_call_target="compute"
  ROOT r = f32[4] negate(p)
}
)");
  HloDCE dce;
  ASSERT_TRUE(dce.Run(module.get()).ok());
  EXPECT_TRUE(HasInstruction(*module, "effect"));
  EXPECT_FALSE(HasInstruction(*module, "pure"));
}

TEST(HloDCE, RemovesComputationsNoLongerCalled) {
  auto module = Parse(R"(
HloModule m

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY e {
  p = f32[4] parameter(0)
  z = f32[] constant(0)
  unused = f32[] reduce(p, z), dimensions={0}, to_apply=add
  ROOT r = f32[4] negate(p)
}
)");
  EXPECT_EQ(module->computation_count(), 2);
  HloDCE dce;
  auto changed = dce.Run(module.get());
  ASSERT_TRUE(changed.ok());
  EXPECT_TRUE(*changed);
  EXPECT_EQ(module->computation_count(), 1);
  EXPECT_FALSE(HasInstruction(*module, "z"));
}

TEST(HloDCE, KeepsDeadLoopsAndCallsWhoseComputationsHaveSideEffects) {
  auto module = Parse(R"(
HloModule m

cond {
  s = (s32[], f32[2]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(2)
  ROOT lt = pred[] compare(i, n), direction=LT
}

body {
  s = (s32[], f32[2]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[2] get-tuple-element(s), index=1
  one = s32[] constant(1)
  next = s32[] add(i, one)
  tok = token[] after-all()
  out = token[] outfeed(x, tok)
  ROOT t = (s32[], f32[2]) tuple(next, x)
}

pure_body {
  s = (s32[], f32[2]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[2] get-tuple-element(s), index=1
  one = s32[] constant(1)
  next = s32[] add(i, one)
  ROOT t = (s32[], f32[2]) tuple(next, x)
}

ENTRY e {
  p = f32[2] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[2]) tuple(zero, p)
  effect_loop = (s32[], f32[2]) while(init), condition=cond, body=body
  pure_loop = (s32[], f32[2]) while(init), condition=cond, body=pure_body
  ROOT r = f32[2] negate(p)
}
)");
  HloDCE dce;
  auto changed = dce.Run(module.get());
  ASSERT_TRUE(changed.ok());
  EXPECT_TRUE(*changed);
  EXPECT_TRUE(HasInstruction(*module, "effect_loop"));
  EXPECT_TRUE(HasInstruction(*module, "out"));
  EXPECT_FALSE(HasInstruction(*module, "pure_loop"));
  EXPECT_EQ(module->GetComputationWithName("pure_body"), nullptr);
}

}  // namespace
}  // namespace axle
