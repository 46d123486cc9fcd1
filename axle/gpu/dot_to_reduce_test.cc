//===- dot_to_reduce_test.cc - Dots no GEMM takes, as a multiply and a reduce ===//
#include "axle/gpu/dot_to_reduce.h"

#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "axle/core/literal.h"
#include "axle/core/literal_comparison.h"
#include "axle/eval/hlo_evaluator.h"
#include "axle/gpu/gpu_compiler.h"
#include "axle/gpu/gpu_program.h"
#include "axle/gpu/ptxas.h"
#include "axle/hlo/ir/hlo_module.h"
#include "axle/hlo/text/hlo_parser.h"
#include "gtest/gtest.h"

namespace axle::gpu {
namespace {

std::string DotModule(const std::string& lhs, const std::string& rhs, const std::string& out,
                      const std::string& attributes) {
  return absl::StrCat("HloModule m\nENTRY e {\n  a = ", lhs, " parameter(0)\n  b = ", rhs,
                      " parameter(1)\n  ROOT d = ", out, " dot(a, b)",
                      attributes.empty() ? "" : ", ", attributes, "\n}\n");
}

// Deterministic values of every type: small signed integers (wrapping the
// narrow results), fractions for floats, alternating truth for pred.
Literal MakeInput(const Shape& shape, int seed) {
  Literal literal(shape);
  for (int64_t i = 0; i < shape.num_elements(); ++i) {
    const int64_t value = (i * 7919 + int64_t{seed} * 104729) % 23 - 11;
    if (primitive_util::IsFloatingPointType(shape.element_type())) {
      literal.SetFromDouble(i, static_cast<double>(value) / 4.0);
    } else if (shape.element_type() == PRED) {
      literal.SetIntegral(i, value > 0 ? 1 : 0);
    } else {
      literal.SetIntegral(i, value);
    }
  }
  return literal;
}

// The pass leaves no dot, computes what the dot did (exactly for integers
// and pred) on the interpreter, and the whole GPU pipeline compiles the
// module to kernels ptxas accepts.
void ExpectRewritten(const std::string& text) {
  SCOPED_TRACE(text);
  auto module = ParseAndReturnUnverifiedModule(text);
  ASSERT_TRUE(module.ok()) << module.status();
  const HloComputation& entry = *(*module)->entry_computation();
  const Literal lhs = MakeInput(entry.parameter_instruction(0)->shape(), 0);
  const Literal rhs = MakeInput(entry.parameter_instruction(1)->shape(), 1);
  HloEvaluator before_evaluator;
  auto before = before_evaluator.Evaluate(**module, {&lhs, &rhs});
  ASSERT_TRUE(before.ok()) << before.status();
  const std::unique_ptr<HloModule> copy = (*module)->Clone();

  GpuDotToReduce pass;
  auto changed = pass.Run(module->get());
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  for (const HloInstruction* instruction : entry.instructions()) {
    EXPECT_NE(instruction->opcode(), HloOpcode::kDot) << (*module)->ToString();
  }
  EXPECT_EQ(entry.root_instruction()->shape(), before->shape());
  HloEvaluator after_evaluator;
  auto after = after_evaluator.Evaluate(**module, {&lhs, &rhs});
  ASSERT_TRUE(after.ok()) << after.status();
  absl::Status near = LiteralsNear(*before, *after, ErrorSpec(1e-6, 1e-6, false));
  EXPECT_TRUE(near.ok()) << near << "\n" << (*module)->ToString();

  auto program = CompileGpuProgram(copy.get(), PtxOptions());
  ASSERT_TRUE(program.ok()) << program.status();
  if (!PtxasPath().ok()) return;
  for (const auto& kernel : program->kernels) {
    auto cubin = AssemblePtx(kernel->ptx, "sm_90");
    EXPECT_TRUE(cubin.ok()) << cubin.status();
  }
}

TEST(GpuDotToReduceTest, IntegerMatrices) {
  ExpectRewritten(DotModule("s32[4,5]", "s32[5,3]", "s32[4,3]",
                            "lhs_contracting_dims={1}, rhs_contracting_dims={0}"));
  ExpectRewritten(DotModule("u16[4,7]", "u16[7,2]", "u16[4,2]",
                            "lhs_contracting_dims={1}, rhs_contracting_dims={0}"));
  ExpectRewritten(DotModule("s4[3,8]", "s4[8,2]", "s4[3,2]",
                            "lhs_contracting_dims={1}, rhs_contracting_dims={0}"));
  // s8 results wrap.
  ExpectRewritten(DotModule("s8[3,40]", "s8[40,2]", "s8[3,2]",
                            "lhs_contracting_dims={1}, rhs_contracting_dims={0}"));
}

TEST(GpuDotToReduceTest, MixedTypes) {
  ExpectRewritten(DotModule("s8[3,6]", "s16[6,2]", "s32[3,2]",
                            "lhs_contracting_dims={1}, rhs_contracting_dims={0}"));
  ExpectRewritten(DotModule("f16[3,6]", "f32[6,2]", "f16[3,2]",
                            "lhs_contracting_dims={1}, rhs_contracting_dims={0}"));
}

TEST(GpuDotToReduceTest, BatchedWithDimensionsAnywhere) {
  ExpectRewritten(DotModule("s16[5,2,3,4]", "s16[4,2,6,5]", "s16[2,4,3,6]",
                            "lhs_batch_dims={1,3}, lhs_contracting_dims={0}, "
                            "rhs_batch_dims={1,0}, rhs_contracting_dims={3}"));
}

TEST(GpuDotToReduceTest, OuterProductAndLayouts) {
  ExpectRewritten(DotModule("s32[4]", "s32[3]", "s32[4,3]{0,1}", ""));
  ExpectRewritten(DotModule("s32[4,5]{0,1}", "s32[5,3]", "s32[4,3]{0,1}",
                            "lhs_contracting_dims={1}, rhs_contracting_dims={0}"));
}

TEST(GpuDotToReduceTest, PredIsAnOrOfAnds) {
  ExpectRewritten(DotModule("pred[3,5]", "pred[5,4]", "pred[3,4]",
                            "lhs_contracting_dims={1}, rhs_contracting_dims={0}"));
}

TEST(GpuDotToReduceTest, LeavesGemmTypes) {
  auto module = ParseAndReturnUnverifiedModule(DotModule(
      "f32[4,5]", "f32[5,3]", "f32[4,3]", "lhs_contracting_dims={1}, rhs_contracting_dims={0}"));
  ASSERT_TRUE(module.ok()) << module.status();
  GpuDotToReduce pass;
  auto changed = pass.Run(module->get());
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_FALSE(*changed);
}

}  // namespace
}  // namespace axle::gpu
