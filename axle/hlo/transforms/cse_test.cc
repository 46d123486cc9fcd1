//===- cse_test.cc - Tests of cse ------------------------------------------===//
#include "axle/hlo/transforms/cse.h"

#include "axle/hlo/transforms/cleanup_test_util.h"
#include "axle/hlo/transforms/dce.h"

namespace axle {
namespace {

using cleanup_test::CountOpcode;
using cleanup_test::RunAndCompare;

TEST(HloCSE, MergesEqualInstructionsAndTheirUsers) {
  HloCSE pass;
  auto module = RunAndCompare(pass, R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  c1 = f32[] constant(2)
  c2 = f32[] constant(2)
  b1 = f32[4] broadcast(c1), dimensions={}
  b2 = f32[4] broadcast(c2), dimensions={}
  m1 = f32[4] multiply(p, b1)
  m2 = f32[4] multiply(p, b2)
  e1 = f32[4] exponential(m1)
  e2 = f32[4] exponential(m2)
  ROOT r = f32[4] add(e1, e2)
}
)");
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(CountOpcode(*module, HloOpcode::kConstant), 1);
  EXPECT_EQ(CountOpcode(*module, HloOpcode::kMultiply), 1);
  const HloInstruction* root = module->entry_computation()->root_instruction();
  EXPECT_EQ(root->operand(0), root->operand(1));
  EXPECT_EQ(module->entry_computation()->instruction_count(), 6);
}

TEST(HloCSE, KeepsDifferentAttributesLayoutsAndConstants) {
  HloCSE pass;
  auto module = RunAndCompare(pass, R"(
HloModule m
ENTRY e {
  p = f32[2,3]{1,0} parameter(0)
  t1 = f32[3,2]{1,0} transpose(p), dimensions={1,0}
  t2 = f32[3,2]{0,1} transpose(p), dimensions={1,0}
  s1 = f32[2,1]{1,0} slice(p), slice={[0:2], [0:1]}
  s2 = f32[2,1]{1,0} slice(p), slice={[0:2], [1:2]}
  z = f32[] constant(0)
  nz = f32[] constant(-0)
  ROOT r = (f32[3,2]{1,0}, f32[3,2]{0,1}, f32[2,1]{1,0}, f32[2,1]{1,0}, f32[], f32[]) tuple(t1, t2, s1, s2, z, nz)
}
)",
                              /*expect_change=*/false);
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(module->entry_computation()->instruction_count(), 8);
}

TEST(HloCSE, MergesReducesWithStructurallyEqualReducers) {
  HloCSE pass;
  auto module = RunAndCompare(pass, R"(
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
add.1 {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT z = f32[] add(x, y)
}
ENTRY e {
  p = f32[8] parameter(0)
  zero = f32[] constant(0)
  r1 = f32[] reduce(p, zero), dimensions={0}, to_apply=add
  r2 = f32[] reduce(p, zero), dimensions={0}, to_apply=add.1
  ROOT r = f32[] multiply(r1, r2)
}
)");
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(module->computation_count(), 2);
  EXPECT_EQ(CountOpcode(*module, HloOpcode::kReduce), 1);
}

// Equal reducers used from different execution threads stay apart.
TEST(HloCSE, KeepsEqualComputationsOfDifferentThreadsApart) {
  HloCSE pass;
  auto module = cleanup_test::Parse(R"(
HloModule m
region_A {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT add = s32[] add(a, b)
}
region_B {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT add = s32[] add(a, b)
}
called {
  x = s32[15] parameter(0)
  zero = s32[] constant(0)
  ROOT r = s32[] reduce(x, zero), dimensions={0}, to_apply=region_B
}, execution_thread="parallel_thread"
ENTRY e {
  p = s32[10] parameter(0)
  q = s32[15] parameter(1)
  zero = s32[] constant(0)
  r = s32[] reduce(p, zero), dimensions={0}, to_apply=region_A
  start = ((s32[15]), s32[], s32[]) call-start(q), async_execution_thread="parallel_thread", to_apply=called
  done = s32[] call-done(start)
  ROOT m = s32[] multiply(r, done)
}
)");
  ASSERT_NE(module, nullptr);
  cleanup_test::RunPass(pass, module.get());
  EXPECT_NE(module->GetComputationWithName("region_A"), nullptr);
  EXPECT_NE(module->GetComputationWithName("region_B"), nullptr);
}

// Two identical side-effecting custom calls: neither CSE nor DCE may merge
// or drop them, and their order (control dependency) stays.
TEST(HloCSE, SideEffectingCustomCallsSurviveCseAndDce) {
  auto module = cleanup_test::Parse(R"(
HloModule m
ENTRY e {
  p = f32[2] parameter(0)
  log1 = f32[2] custom-call(p), custom_call_target="Log", custom_call_has_side_effect=true
  log2 = f32[2] custom-call(p), custom_call_target="Log", custom_call_has_side_effect=true, control-predecessors={log1}
  lo = f32[] constant(0)
  hi = f32[] constant(1)
  rng1 = f32[2] rng(lo, hi), distribution=rng_uniform
  rng2 = f32[2] rng(lo, hi), distribution=rng_uniform
  pure1 = f32[2] custom-call(p), custom_call_target="Pure"
  pure2 = f32[2] custom-call(p), custom_call_target="Pure"
  ROOT r = f32[2] add(pure1, pure2)
}
)");
  ASSERT_NE(module, nullptr);
  HloCSE cse;
  HloDCE dce;
  EXPECT_TRUE(cleanup_test::RunPass(cse, module.get()));  // pure1 and pure2 merge
  cleanup_test::RunPass(dce, module.get());
  EXPECT_EQ(CountOpcode(*module, HloOpcode::kCustomCall), 3);
  EXPECT_EQ(CountOpcode(*module, HloOpcode::kRng), 2);
  const HloInstruction* log2 = nullptr;
  int64_t position = 0, log1_position = -1, log2_position = -1;
  for (const HloInstruction* instruction : module->entry_computation()->instructions()) {
    if (instruction->name() == "log1") log1_position = position;
    if (instruction->name() == "log2") {
      log2 = instruction;
      log2_position = position;
    }
    ++position;
  }
  EXPECT_LT(log1_position, log2_position);
  ASSERT_NE(log2, nullptr);
  ASSERT_EQ(log2->control_predecessors().size(), 1u);
  EXPECT_EQ(log2->control_predecessors()[0]->name(), "log1");
}

}  // namespace
}  // namespace axle
