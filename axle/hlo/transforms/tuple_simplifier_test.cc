//===- tuple_simplifier_test.cc - Tests of tuple-simplifier ----------------===//
#include "axle/hlo/transforms/tuple_simplifier.h"

#include "axle/hlo/transforms/cleanup_test_util.h"

namespace axle {
namespace {

using cleanup_test::CountOpcode;
using cleanup_test::RunAndCompare;

TEST(TupleSimplifier, GteOfTupleIsTheOperand) {
  TupleSimplifier pass;
  auto module = RunAndCompare(pass, R"(
HloModule m
ENTRY e {
  p0 = f32[4] parameter(0)
  p1 = s32[2] parameter(1)
  n = f32[4] negate(p0)
  t = (f32[4], s32[2]) tuple(n, p1)
  g0 = f32[4] get-tuple-element(t), index=0
  g1 = s32[2] get-tuple-element(t), index=1
  c = f32[2] convert(g1)
  ROOT r = (f32[4], f32[2]) tuple(g0, c)
}
)");
  ASSERT_NE(module, nullptr);
  const HloInstruction* root = module->entry_computation()->root_instruction();
  EXPECT_EQ(root->operand(0)->name(), "n");
  EXPECT_EQ(root->operand(1)->operand(0)->name(), "p1");
  EXPECT_EQ(CountOpcode(*module, HloOpcode::kGetTupleElement), 0);
  EXPECT_EQ(CountOpcode(*module, HloOpcode::kTuple), 1);
}

TEST(TupleSimplifier, TupleOfAllGtesInOrderIsTheSource) {
  TupleSimplifier pass;
  auto module = RunAndCompare(pass, R"(
HloModule m
ENTRY e {
  p = (f32[3], s32[]) parameter(0)
  g0 = f32[3] get-tuple-element(p), index=0
  g1 = s32[] get-tuple-element(p), index=1
  ROOT t = (f32[3], s32[]) tuple(g0, g1)
}
)");
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(module->entry_computation()->root_instruction()->name(), "p");
  EXPECT_EQ(module->entry_computation()->instruction_count(), 1);
}

TEST(TupleSimplifier, KeepsReorderedAndPartialTuples) {
  TupleSimplifier pass;
  auto module = RunAndCompare(pass, R"(
HloModule m
ENTRY e {
  p = (f32[3], f32[3]) parameter(0)
  g0 = f32[3] get-tuple-element(p), index=0
  g1 = f32[3] get-tuple-element(p), index=1
  swapped = (f32[3], f32[3]) tuple(g1, g0)
  partial = (f32[3]) tuple(g0)
  ROOT t = ((f32[3], f32[3]), (f32[3])) tuple(swapped, partial)
}
)",
                              /*expect_change=*/false);
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(CountOpcode(*module, HloOpcode::kTuple), 3);
}

}  // namespace
}  // namespace axle
