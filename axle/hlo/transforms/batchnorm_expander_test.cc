//===- batchnorm_expander_test.cc - batch-norm ops as reduces --------------===//
//
// Each test expands a batch-norm op, checks that only reduces and
// elementwise ops remain, and (RunPassAndCompare) that the interpreter gives
// the same values before and after.
//
//===----------------------------------------------------------------------===//
#include "axle/hlo/transforms/batchnorm_expander.h"

#include "axle/hlo/transforms/simplification_test_util.h"
#include "gtest/gtest.h"

namespace axle {
namespace {

using test::RootStructure;
using test::RunPassAndCompare;

int64_t CountOpcode(const HloModule& module, HloOpcode opcode) {
  int64_t count = 0;
  for (const HloComputation* computation : module.computations()) {
    for (const HloInstruction* instruction : computation->instructions()) {
      count += instruction->opcode() == opcode;
    }
  }
  return count;
}

TEST(BatchNormExpander, TrainingBecomesTwoReducesPerFeature) {
  BatchNormExpander pass;
  std::unique_ptr<HloModule> module = RunPassAndCompare(pass, R"(
HloModule m

ENTRY e {
  x = f32[2,3,4] parameter(0)
  scale = f32[3] parameter(1)
  offset = f32[3] parameter(2)
  ROOT bn = (f32[2,3,4], f32[3], f32[3]) batch-norm-training(x, scale, offset), epsilon=0.001, feature_index=1
}
)");
  EXPECT_EQ(CountOpcode(*module, HloOpcode::kBatchNormTraining), 0);
  EXPECT_EQ(CountOpcode(*module, HloOpcode::kReduce), 2);  // sum(x), sum(xc * xc)
  const HloInstruction* root = module->entry_computation()->root_instruction();
  ASSERT_EQ(root->opcode(), HloOpcode::kTuple);
  EXPECT_EQ(test::Structure(root->operand(1)),
            "divide(reduce(parameter, constant), broadcast(constant))");
}

TEST(BatchNormExpander, InferenceIsElementwise) {
  BatchNormExpander pass;
  std::unique_ptr<HloModule> module = RunPassAndCompare(pass, R"(
HloModule m

ENTRY e {
  x = f32[4,2] parameter(0)
  scale = f32[2] parameter(1)
  offset = f32[2] parameter(2)
  mean = f32[2] parameter(3)
  var = f32[2] constant({0.5, 2})
  ROOT bn = f32[4,2] batch-norm-inference(x, scale, offset, mean, var), epsilon=0.01, feature_index=1
}
)");
  EXPECT_EQ(CountOpcode(*module, HloOpcode::kReduce), 0);
  EXPECT_EQ(RootStructure(*module),
            "add(multiply(subtract(parameter, broadcast(parameter)), broadcast(multiply(rsqrt(add("
            "constant, broadcast(constant))), parameter))), broadcast(parameter))");
}

TEST(BatchNormExpander, GradAndNarrowTypesComputeInF32) {
  BatchNormExpander pass;
  std::unique_ptr<HloModule> module = RunPassAndCompare(pass, R"(
HloModule m

ENTRY e {
  x = f32[3,2,2] parameter(0)
  scale = f32[3] parameter(1)
  mean = f32[3] parameter(2)
  var = f32[3] constant({1, 0.25, 4})
  dy = f32[3,2,2] parameter(3)
  ROOT g = (f32[3,2,2], f32[3], f32[3]) batch-norm-grad(x, scale, mean, var, dy), epsilon=0.001, feature_index=0
}
)");
  EXPECT_EQ(CountOpcode(*module, HloOpcode::kBatchNormGrad), 0);
  EXPECT_EQ(CountOpcode(*module, HloOpcode::kReduce), 2);  // sum(dy), sum(dy * xc)

  module = RunPassAndCompare(pass, R"(
HloModule m

ENTRY e {
  x = bf16[2,4] parameter(0)
  scale = bf16[4] parameter(1)
  offset = bf16[4] parameter(2)
  ROOT bn = (bf16[2,4], bf16[4], bf16[4]) batch-norm-training(x, scale, offset), epsilon=0.001, feature_index=1
}
)");
  const HloInstruction* root = module->entry_computation()->root_instruction();
  EXPECT_EQ(root->operand(1)->opcode(), HloOpcode::kConvert);
  EXPECT_EQ(root->operand(1)->operand(0)->shape().element_type(), F32);
}

TEST(BatchNormExpander, OtherModulesAreUnchanged) {
  BatchNormExpander pass;
  RunPassAndCompare(pass, R"(
HloModule m

ENTRY e {
  x = f32[2] parameter(0)
  ROOT n = f32[2] negate(x)
}
)",
                    /*expect_changed=*/false);
}

}  // namespace
}  // namespace axle
