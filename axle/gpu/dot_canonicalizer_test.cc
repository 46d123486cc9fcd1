//===- dot_canonicalizer_test.cc - Dots into the shapes one GEMM takes ----===//
#include "axle/gpu/dot_canonicalizer.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "axle/core/literal.h"
#include "axle/core/literal_comparison.h"
#include "axle/eval/hlo_evaluator.h"
#include "axle/gpu/gemm_plan.h"
#include "axle/hlo/ir/hlo_module.h"
#include "axle/hlo/text/hlo_parser.h"
#include "gtest/gtest.h"

namespace axle::gpu {
namespace {

std::string DotModule(const std::string& lhs, const std::string& rhs, const std::string& out,
                      const std::string& attributes) {
  return absl::StrCat("HloModule m\nENTRY e {\n  a = ", lhs, " parameter(0)\n  b = ", rhs,
                      " parameter(1)\n  ROOT d = ", out, " dot(a, b), ", attributes, "\n}\n");
}

Literal MakeInput(const Shape& shape, int seed) {
  Literal literal(shape);
  for (int64_t i = 0; i < shape.num_elements(); ++i) {
    literal.data<float>()[i] =
        static_cast<float>((i * 7919 + int64_t{seed} * 104729) % 64) / 16.0f - 2.0f;
  }
  return literal;
}

// Canonicalizes the module of `text`: every dot is then a GEMM, and the
// module computes what it did before.
void ExpectCanonicalizedAndEquivalent(const std::string& text) {
  SCOPED_TRACE(text);
  auto module = ParseAndReturnUnverifiedModule(text);
  ASSERT_TRUE(module.ok()) << module.status();
  const HloComputation& entry = *(*module)->entry_computation();
  const Literal lhs = MakeInput(entry.parameter_instruction(0)->shape(), 0);
  const Literal rhs = MakeInput(entry.parameter_instruction(1)->shape(), 1);
  HloEvaluator before_evaluator;
  auto before = before_evaluator.Evaluate(**module, {&lhs, &rhs});
  ASSERT_TRUE(before.ok()) << before.status();
  EXPECT_FALSE(GemmSupports(*entry.root_instruction()));
  const Shape original_shape = entry.root_instruction()->shape();

  GpuDotCanonicalizer pass;
  auto changed = pass.Run(module->get());
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  int dots = 0;
  for (const HloInstruction* instruction : entry.MakeInstructionPostOrder()) {
    if (instruction->opcode() != HloOpcode::kDot) continue;
    ++dots;
    auto plan = MakeGemmPlan(*instruction, false);
    EXPECT_TRUE(plan.ok()) << plan.status() << "\n" << (*module)->ToString();
  }
  EXPECT_EQ(dots, 1);
  EXPECT_EQ(entry.root_instruction()->shape(), original_shape);
  HloEvaluator after_evaluator;
  auto after = after_evaluator.Evaluate(**module, {&lhs, &rhs});
  ASSERT_TRUE(after.ok()) << after.status();
  absl::Status near = LiteralsNear(*before, *after, ErrorSpec(1e-5, 1e-5));
  EXPECT_TRUE(near.ok()) << near << "\n" << (*module)->ToString();
}

TEST(GpuDotCanonicalizerTest, AttentionScoresBatchDimsNotAdjacent) {
  // [b,q,h,d] x [b,k,h,d] -> [b,h,q,k]: b and h are not one strided dim.
  ExpectCanonicalizedAndEquivalent(
      DotModule("f32[2,5,3,8]{3,2,1,0}", "f32[2,6,3,8]{3,2,1,0}", "f32[2,3,5,6]{3,2,1,0}",
                "lhs_batch_dims={0,2}, lhs_contracting_dims={3}, rhs_batch_dims={0,2}, "
                "rhs_contracting_dims={3}"));
}

TEST(GpuDotCanonicalizerTest, ContractingDimsAroundAFreeDim) {
  ExpectCanonicalizedAndEquivalent(
      DotModule("f32[3,4,5]{2,1,0}", "f32[3,5,6]{2,1,0}", "f32[4,6]{1,0}",
                "lhs_contracting_dims={0,2}, rhs_contracting_dims={0,1}"));
}

TEST(GpuDotCanonicalizerTest, ContractingDimsInOppositeOrders) {
  ExpectCanonicalizedAndEquivalent(
      DotModule("f32[4,3,5]{2,1,0}", "f32[5,3,6]{2,1,0}", "f32[4,6]{1,0}",
                "lhs_contracting_dims={1,2}, rhs_contracting_dims={1,0}"));
}

TEST(GpuDotCanonicalizerTest, ResultWithoutADenseMatrixDim) {
  ExpectCanonicalizedAndEquivalent(
      DotModule("f32[3,5,7]{2,1,0}", "f32[3,7,4]{2,1,0}", "f32[3,5,4]{0,2,1}",
                "lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, "
                "rhs_contracting_dims={1}"));
}

TEST(GpuDotCanonicalizerTest, OperandWithoutADenseMatrixDim) {
  ExpectCanonicalizedAndEquivalent(
      DotModule("f32[3,5,7]{0,2,1}", "f32[3,7,4]{2,1,0}", "f32[3,5,4]{2,1,0}",
                "lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, "
                "rhs_contracting_dims={1}"));
}

TEST(GpuDotCanonicalizerTest, LeavesGemmsAndOtherTypesAlone) {
  for (const std::string& text :
       {DotModule("f32[3,5,7]{2,1,0}", "f32[3,7,4]{1,2,0}", "f32[3,5,4]{2,1,0}",
                  "lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, "
                  "rhs_contracting_dims={1}"),
        DotModule("s32[3,4,5]{2,1,0}", "s32[3,5,6]{2,1,0}", "s32[4,6]{1,0}",
                  "lhs_contracting_dims={0,2}, rhs_contracting_dims={0,1}")}) {
    auto module = ParseAndReturnUnverifiedModule(text);
    ASSERT_TRUE(module.ok()) << module.status();
    GpuDotCanonicalizer pass;
    auto changed = pass.Run(module->get());
    ASSERT_TRUE(changed.ok()) << changed.status();
    EXPECT_FALSE(*changed) << text;
  }
}

}  // namespace
}  // namespace axle::gpu
