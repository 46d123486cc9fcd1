//===- constant_folding_test.cc - Tests of constant-folding ----------------===//
#include "axle/hlo/transforms/constant_folding.h"

#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/transforms/cleanup_test_util.h"

namespace axle {
namespace {

using cleanup_test::CountOpcode;
using cleanup_test::RunAndCompare;

TEST(HloConstantFolding, FoldsChainsOfConstants) {
  HloConstantFolding pass;
  auto module = RunAndCompare(pass, R"(
HloModule m
add {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] add(a, b)
}
ENTRY e {
  p = s32[3] parameter(0)
  c = s32[3] constant({1, 2, 3})
  n = s32[3] negate(c)
  m = s32[3] multiply(n, c)
  zero = s32[] constant(0)
  sum = s32[] reduce(m, zero), dimensions={0}, to_apply=add
  b = s32[3] broadcast(sum), dimensions={}
  ROOT r = s32[3] add(p, b)
}
)");
  ASSERT_NE(module, nullptr);
  // The broadcast stays (XLA keeps broadcasts); its operand is folded.
  const HloInstruction* broadcast = module->entry_computation()->root_instruction()->operand(1);
  ASSERT_EQ(broadcast->opcode(), HloOpcode::kBroadcast);
  const auto* folded = dyn_cast<HloConstantInstruction>(broadcast->operand(0));
  ASSERT_NE(folded, nullptr);
  EXPECT_EQ(folded->literal().GetFirstElement<int32_t>(), -14);
  EXPECT_EQ(CountOpcode(*module, HloOpcode::kNegate), 0);
  EXPECT_EQ(CountOpcode(*module, HloOpcode::kReduce), 0);
}

TEST(HloConstantFolding, KeepsLayoutOfTheResult) {
  HloConstantFolding pass;
  auto module = RunAndCompare(pass, R"(
HloModule m
ENTRY e {
  c = f32[2,2]{1,0} constant({{1, 2}, {3, 4}})
  ROOT t = f32[2,2]{0,1} transpose(c), dimensions={1,0}
}
)");
  ASSERT_NE(module, nullptr);
  const HloInstruction* root = module->entry_computation()->root_instruction();
  ASSERT_EQ(root->opcode(), HloOpcode::kConstant);
  EXPECT_EQ(root->shape().ToString(true), "f32[2,2]{0,1}");
  EXPECT_EQ(cast<HloConstantInstruction>(root)->literal().Get<float>({0, 1}), 3.0f);
}

TEST(HloConstantFolding, LeavesRngIotaBroadcastCustomCallsAndParameters) {
  HloConstantFolding pass;
  auto module = cleanup_test::Parse(R"(
HloModule m
ENTRY e {
  p = f32[2] parameter(0)
  lo = f32[] constant(0)
  hi = f32[] constant(1)
  r = f32[2] rng(lo, hi), distribution=rng_uniform
  i = f32[2] iota(), iota_dimension=0
  b = f32[2] broadcast(hi), dimensions={}
  cc = f32[2] custom-call(b), custom_call_target="Pure"
  ROOT t = (f32[2], f32[2], f32[2], f32[2], f32[2]) tuple(p, r, i, b, cc)
}
)");
  ASSERT_NE(module, nullptr);
  EXPECT_FALSE(cleanup_test::RunPass(pass, module.get()));
  EXPECT_EQ(module->entry_computation()->instruction_count(), 8);
}

}  // namespace
}  // namespace axle
