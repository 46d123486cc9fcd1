#include "axle/hlo/transforms/layout_normalization.h"

#include "axle/core/shape_util.h"
#include "axle/hlo/transforms/simplification_test_util.h"
#include "gtest/gtest.h"

namespace axle {
namespace {

using test::RootStructure;
using test::RunPassAndCompare;

// Every instruction that computes (not parameters, bitcasts, tuples) works
// on arrays with descending layouts.
void ExpectOnlyDescendingComputation(const HloModule& module) {
  for (const HloComputation* computation : module.computations()) {
    for (const HloInstruction* instruction : computation->instructions()) {
      HloOpcode opcode = instruction->opcode();
      if (opcode == HloOpcode::kParameter || opcode == HloOpcode::kBitcast ||
          opcode == HloOpcode::kTuple || opcode == HloOpcode::kConstant ||
          opcode == HloOpcode::kGetTupleElement || opcode == HloOpcode::kCall) {
        continue;
      }
      EXPECT_TRUE(ShapeUtil::HasDescendingLayout(instruction->shape())) << instruction->ToString();
      for (const HloInstruction* operand : instruction->operands()) {
        EXPECT_TRUE(ShapeUtil::HasDescendingLayout(operand->shape()))
            << instruction->ToString() << " reads " << operand->ToString();
      }
    }
  }
}

std::unique_ptr<HloModule> Normalize(absl::string_view text) {
  LayoutNormalization pass;
  std::unique_ptr<HloModule> original = test::ParseOrDie(text);
  std::unique_ptr<HloModule> module = RunPassAndCompare(pass, text);
  ExpectOnlyDescendingComputation(*module);
  EXPECT_EQ(module->entry_computation_program_shape().ToString(),
            original->entry_computation_program_shape().ToString());
  return module;
}

TEST(LayoutNormalization, ElementwiseOnColumnMajorArraysComputesOnThePhysicalShape) {
  std::unique_ptr<HloModule> module = Normalize(R"(
HloModule m

ENTRY e {
  a = f32[2,3]{0,1} parameter(0)
  b = f32[2,3]{0,1} parameter(1)
  s = f32[2,3]{0,1} add(a, b)
  ROOT r = f32[2,3]{0,1} exponential(s)
}
)");
  EXPECT_EQ(module->entry_computation()->ToString(),
            R"(%e (a: f32[2,3], b: f32[2,3]) -> f32[2,3] {
  %a = f32[2,3]{0,1} parameter(0)
  %bitcast = f32[3,2]{1,0} bitcast(%a)
  %b = f32[2,3]{0,1} parameter(1)
  %bitcast.1 = f32[3,2]{1,0} bitcast(%b)
  %s = f32[3,2]{1,0} add(%bitcast, %bitcast.1)
  %r = f32[3,2]{1,0} exponential(%s)
  ROOT %bitcast.3 = f32[2,3]{0,1} bitcast(%r)
})");
}

TEST(LayoutNormalization, MixedLayoutsGetExplicitTransposes) {
  std::unique_ptr<HloModule> module = Normalize(R"(
HloModule m

ENTRY e {
  a = f32[2,3]{0,1} parameter(0)
  b = f32[2,3]{1,0} parameter(1)
  ROOT s = f32[2,3]{1,0} multiply(a, b)
}
)");
  EXPECT_EQ(RootStructure(*module), "multiply(transpose(bitcast(parameter)), parameter)");
}

TEST(LayoutNormalization, CopyBetweenLayoutsBecomesATranspose) {
  std::unique_ptr<HloModule> module = Normalize(R"(
HloModule m

ENTRY e {
  a = f32[2,3,4]{2,1,0} parameter(0)
  ROOT c = f32[2,3,4]{0,2,1} copy(a)
}
)");
  EXPECT_EQ(RootStructure(*module), "bitcast(transpose(parameter))");
}

TEST(LayoutNormalization, DataMovementAndReductions) {
  Normalize(R"(
HloModule m

add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}

ENTRY e {
  a = f32[2,3,4]{0,2,1} parameter(0)
  t = f32[4,2,3]{1,0,2} transpose(a), dimensions={2,0,1}
  r = f32[8,3]{0,1} reshape(t)
  v = f32[3]{0} parameter(1)
  b = f32[8,3]{0,1} broadcast(v), dimensions={1}
  m = f32[8,3]{0,1} multiply(r, b)
  z = f32[] constant(0)
  red = f32[3]{0} reduce(m, z), dimensions={0}, to_apply=add
  c = f32[2,3,4]{1,2,0} reduce(a, z), dimensions={}, to_apply=add
  i = s32[4,3]{0,1} iota(), iota_dimension=1
  ci = f32[4,3]{0,1} convert(i)
  b2 = f32[4,2,3]{0,2,1} broadcast(ci), dimensions={0,2}
  red2 = f32[4,3]{0,1} reduce(b2, z), dimensions={1}, to_apply=add
  ROOT out = (f32[3]{0}, f32[4,3]{0,1}, f32[4,2,3]{1,0,2}, f32[2,3,4]{1,2,0}) tuple(red, red2, t, c)
}
)");
}

TEST(LayoutNormalization, SlicingPaddingAndConcatenating) {
  std::unique_ptr<HloModule> module = Normalize(R"(
HloModule m

ENTRY e {
  a = f32[4,6]{0,1} parameter(0)
  s = f32[2,3]{0,1} slice(a), slice={[1:3], [0:6:2]}
  r = f32[2,3]{0,1} reverse(s), dimensions={1}
  z = f32[] constant(-1)
  p = f32[5,4]{0,1} pad(r, z), padding=1_2x0_1_0
  b = f32[3,4]{1,0} parameter(1)
  c = f32[8,4]{0,1} concatenate(p, b), dimensions={0}
  i = s32[] constant(2)
  j = s32[] constant(1)
  d = f32[3,2]{0,1} dynamic-slice(c, i, j), dynamic_slice_sizes={3,2}
  u = f32[8,4]{0,1} dynamic-update-slice(c, d, j, i)
  ROOT t = (f32[3,2]{0,1}, f32[8,4]{0,1}) tuple(d, u)
}
)");
  EXPECT_EQ(test::Structure(module->entry_computation()->root_instruction()->operand(0)),
            "bitcast(dynamic-slice(concatenate(pad(reverse(slice(bitcast(parameter))), "
            "constant), transpose(parameter)), constant, constant))");
}

TEST(LayoutNormalization, CalledComputationsKeepTheirInterfaces) {
  std::unique_ptr<HloModule> module = Normalize(R"(
HloModule m

callee {
  x = f32[2,3]{0,1} parameter(0)
  ROOT n = f32[2,3]{0,1} negate(x)
}

ENTRY e {
  a = f32[2,3]{0,1} parameter(0)
  c = f32[2,3]{0,1} call(a), to_apply=callee
  ROOT s = f32[2,3]{1,0} copy(c)
}
)");
  const HloComputation* callee = module->GetComputationWithName("callee");
  EXPECT_EQ(callee->root_instruction()->shape().ToString(), "f32[2,3]{0,1}");
  EXPECT_EQ(test::Structure(callee->root_instruction()), "bitcast(negate(bitcast(parameter)))");
}

TEST(LayoutNormalization, DefaultLayoutsAndUnsupportedOpsLeaveTheModuleUnchanged) {
  LayoutNormalization pass;
  RunPassAndCompare(pass, R"(
HloModule m

ENTRY e {
  a = f32[2,3] parameter(0)
  ROOT t = f32[3,2] transpose(a), dimensions={1,0}
}
)",
                    /*expect_changed=*/false);
  // dot is not handled: nothing is rewritten, not even the negate.
  std::unique_ptr<HloModule> module = RunPassAndCompare(pass, R"(
HloModule m

ENTRY e {
  a = f32[2,3]{0,1} parameter(0)
  n = f32[2,3]{0,1} negate(a)
  b = f32[3,2] parameter(1)
  ROOT d = f32[2,2]{0,1} dot(n, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)",
                                                        /*expect_changed=*/false);
  EXPECT_EQ(RootStructure(*module), "dot(negate(parameter), parameter)");
}

}  // namespace
}  // namespace axle
