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
  // A custom call's buffers are its interface: nothing is rewritten, not even
  // the negate.
  std::unique_ptr<HloModule> module = test::ParseOrDie(R"(
HloModule m

ENTRY e {
  a = f32[2,3]{0,1} parameter(0)
  n = f32[2,3]{0,1} negate(a)
  ROOT c = f32[2,3]{0,1} custom-call(n), custom_call_target="f"
}
)");
  absl::StatusOr<bool> changed = pass.Run(module.get());
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_FALSE(*changed);
  EXPECT_EQ(RootStructure(*module), "custom-call(negate(parameter))");
}

TEST(LayoutNormalization, ConstrainedCustomCallGetsItsOperandsInTheirLayouts) {
  // jaxlib's potrf as JAX lowers it: the row-major operand is transposed
  // into the column-major layout the call is constrained to; the call keeps
  // its column-major result, which the negate reads through a bitcast.
  LayoutNormalization pass;
  std::unique_ptr<HloModule> module = test::ParseOrDie(R"(
HloModule m

ENTRY e {
  a = f32[3,3] parameter(0)
  c = (f32[3,3]{0,1}, s32[]) custom-call(a), custom_call_target="lapack_spotrf_ffi",
      operand_layout_constraints={f32[3,3]{0,1}}, api_version=API_VERSION_TYPED_FFI,
      backend_config={uplo = 76 : ui8}
  l = f32[3,3]{0,1} get-tuple-element(c), index=0
  ROOT n = f32[3,3] negate(l)
}
)");
  absl::StatusOr<bool> changed = pass.Run(module.get());
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  EXPECT_EQ(RootStructure(*module),
            "negate(transpose(bitcast(get-tuple-element(custom-call(bitcast(transpose("
            "parameter)))))))");
  const HloInstruction* call =
      module->entry_computation()->root_instruction()->operand(0)->operand(0)->operand(0)->operand(
          0);
  EXPECT_EQ(call->operand(0)->shape().ToString(true), "f32[3,3]{0,1}");
  EXPECT_EQ(call->shape().ToString(true), "(f32[3,3]{0,1}, s32[])");
  // Already in its layout: nothing to do.
  std::unique_ptr<HloModule> unchanged = test::ParseOrDie(R"(
HloModule m

ENTRY e {
  a = f32[3,3]{0,1} parameter(0)
  ROOT c = (f32[3,3]{0,1}, s32[]) custom-call(a), custom_call_target="lapack_spotrf_ffi",
      operand_layout_constraints={f32[3,3]{0,1}}, api_version=API_VERSION_TYPED_FFI,
      backend_config={uplo = 76 : ui8}
}
)");
  changed = pass.Run(unchanged.get());
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_FALSE(*changed);
}

TEST(LayoutNormalization, CallOperandsAndResultsFollowTheCalleesLayouts) {
  // As in JAX's cholesky_solve: the caller passes a column-major value to a
  // computation whose parameter is row-major, and takes a row-major root as
  // a column-major result. Both are copied (transposed) at the call.
  std::unique_ptr<HloModule> module = Normalize(R"(
HloModule m

callee {
  p = f32[2,3]{1,0} parameter(0)
  ROOT n = f32[2,3]{1,0} negate(p)
}

ENTRY e {
  a = f32[2,3]{0,1} parameter(0)
  ROOT c = f32[2,3]{0,1} call(a), to_apply=callee
}
)");
  EXPECT_EQ(RootStructure(*module), "bitcast(transpose(call(transpose(bitcast(parameter)))))");
  const HloInstruction* call =
      module->entry_computation()->root_instruction()->operand(0)->operand(0);
  EXPECT_EQ(call->shape().ToString(true), "f32[2,3]{1,0}");
  EXPECT_EQ(call->operand(0)->shape().ToString(true), "f32[2,3]{1,0}");
}

TEST(LayoutNormalization, OtherOpsComputeOnRowMajorOperands) {
  // The column-major operand is transposed to row-major, the column-major
  // result comes out of a row-major dot through a transpose.
  std::unique_ptr<HloModule> module = Normalize(R"(
HloModule m

ENTRY e {
  a = f32[2,3] parameter(0)
  b = f32[3,4]{0,1} parameter(1)
  ROOT d = f32[2,4]{0,1} dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)");
  EXPECT_EQ(RootStructure(*module),
            "bitcast(transpose(dot(parameter, transpose(bitcast(parameter)))))");
  EXPECT_EQ(module->entry_computation()->root_instruction()->shape().ToString(true),
            "f32[2,4]{0,1}");
}

TEST(LayoutNormalization, TupleResultsAndConstants) {
  // A variadic reduce's column-major results, and a column-major constant
  // (whose literal holds its values in logical order).
  std::unique_ptr<HloModule> module = Normalize(R"(
HloModule m

add2 {
  a = f32[] parameter(0)
  b = s32[] parameter(1)
  c = f32[] parameter(2)
  d = s32[] parameter(3)
  s = f32[] add(a, c)
  t = s32[] add(b, d)
  ROOT r = (f32[], s32[]) tuple(s, t)
}

ENTRY e {
  x = f32[2,3,4]{0,1,2} parameter(0)
  k = s32[2,3,4]{0,2,1} constant({{{1,2,3,4},{5,6,7,8},{9,10,11,12}},{{13,14,15,16},{17,18,19,20},{21,22,23,24}}})
  zf = f32[] constant(0)
  zi = s32[] constant(0)
  ROOT r = (f32[2,4]{0,1}, s32[2,4]{0,1}) reduce(x, k, zf, zi), dimensions={1}, to_apply=add2
}
)");
  const HloInstruction* root = module->entry_computation()->root_instruction();
  EXPECT_EQ(root->shape().ToString(true), "(f32[2,4]{0,1}, s32[2,4]{0,1})");
  // The constant becomes row-major, is normalized like any result, and goes
  // back to row-major for the reduce (fusion makes that one loop).
  EXPECT_EQ(test::Structure(root->operand(1)),
            "bitcast(transpose(get-tuple-element(reduce(transpose(bitcast(parameter)), "
            "transpose(transpose(constant)), constant, constant))))");
}

}  // namespace
}  // namespace axle
