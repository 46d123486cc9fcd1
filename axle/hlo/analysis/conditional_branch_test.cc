//===- conditional_branch_test.cc -------------------------------------------===//
//
// Conditionals with a pred and two branches, or an s32, are runnable; a
// pred selects branch 0 when true, an s32 its branch, out of range the
// last.
//
//===----------------------------------------------------------------------===//
#include "axle/hlo/analysis/conditional_branch.h"

#include "axle/hlo/text/hlo_parser.h"
#include "gtest/gtest.h"

namespace axle {
namespace {

TEST(ConditionalBranchTest, PredAndS32ConditionalsAreRunnable) {
  auto module = ParseAndReturnUnverifiedModule(R"(
HloModule m
b0 {
  ROOT p = f32[] parameter(0)
}
b1 {
  p = f32[] parameter(0)
  ROOT n = f32[] negate(p)
}
ENTRY e {
  x = f32[] parameter(0)
  i = s32[] parameter(1)
  f = pred[] parameter(2)
  by_index = f32[] conditional(i, x, x, x), branch_computations={b0, b1, b0}
  by_pred = f32[] conditional(f, x, x), true_computation=b0, false_computation=b1
  ROOT t = (f32[], f32[]) tuple(by_index, by_pred)
})");
  ASSERT_TRUE(module.ok()) << module.status();
  const HloInstruction* root = (*module)->entry_computation()->root_instruction();
  EXPECT_TRUE(IsRunnableConditional(*root->operand(0)));
  EXPECT_TRUE(IsRunnableConditional(*root->operand(1)));
  EXPECT_FALSE(IsRunnableConditional(*root));  // not a conditional
}

TEST(ConditionalBranchTest, SelectedBranch) {
  EXPECT_EQ(SelectedBranch(/*selector_is_pred=*/true, 1, 2), 0);
  EXPECT_EQ(SelectedBranch(true, 0, 2), 1);
  EXPECT_EQ(SelectedBranch(false, 0, 3), 0);
  EXPECT_EQ(SelectedBranch(false, 1, 3), 1);
  EXPECT_EQ(SelectedBranch(false, 3, 3), 2);
  EXPECT_EQ(SelectedBranch(false, -1, 3), 2);
}

}  // namespace
}  // namespace axle
