//===- gpu_fusion_inliner_test.cc - Fusions no loop kernel computes, unfused ===//
//
// XLA's already-fused modules: output fusions (a dot and its epilogue),
// multi-output fusions whose outputs differ in shape, fusions holding
// another fusion or a sort, and fusions of a tuple operand are inlined
// (the interpreter computes the same before and after), loop fusions the
// kernels compute are kept, and the whole CUDA pipeline then compiles
// each module to kernels ptxas accepts.
//
//===----------------------------------------------------------------------===//
#include "axle/gpu/gpu_fusion_inliner.h"

#include <memory>
#include <string>
#include <vector>

#include "axle/core/literal.h"
#include "axle/eval/hlo_evaluator.h"
#include "axle/gpu/gpu_compiler.h"
#include "axle/gpu/gpu_program.h"
#include "axle/gpu/ptxas.h"
#include "axle/hlo/ir/hlo_module.h"
#include "axle/hlo/text/hlo_parser.h"
#include "gtest/gtest.h"

namespace axle::gpu {
namespace {

// Deterministic small values for `module`'s (array) parameters.
std::vector<Literal> MakeArguments(const HloModule& module) {
  std::vector<Literal> arguments;
  const HloComputation& entry = *module.entry_computation();
  arguments.reserve(entry.num_parameters());
  for (int64_t p = 0; p < entry.num_parameters(); ++p) {
    Literal literal(entry.parameter_instruction(p)->shape());
    for (int64_t i = 0; i < literal.shape().num_elements(); ++i) {
      literal.SetFromDouble(i, static_cast<double>((i * 7 + p * 31) % 11 - 5) / 2.0);
    }
    arguments.push_back(std::move(literal));
  }
  return arguments;
}

int CountFusions(const HloModule& module) {
  int count = 0;
  for (const HloComputation* computation : module.computations()) {
    for (const HloInstruction* instruction : computation->instructions()) {
      count += instruction->opcode() == HloOpcode::kFusion;
    }
  }
  return count;
}

// The pass inlines fusions of `text`, leaving `expected_left` (loop
// fusions the kernels compute), computes what the module did on the interpreter, and
// the CUDA pipeline compiles it to kernels ptxas accepts.
void ExpectInlined(const std::string& text, int expected_left) {
  SCOPED_TRACE(text);
  auto module = ParseAndReturnUnverifiedModule(text);
  ASSERT_TRUE(module.ok()) << module.status();
  std::vector<Literal> arguments = MakeArguments(**module);
  std::vector<const Literal*> pointers;
  pointers.reserve(arguments.size());
  for (const Literal& argument : arguments) pointers.push_back(&argument);
  HloEvaluator evaluator;
  auto before = evaluator.Evaluate(**module, pointers);
  ASSERT_TRUE(before.ok()) << before.status();

  std::unique_ptr<HloModule> copy = (*module)->Clone();
  GpuFusionInliner pass;
  auto changed = pass.Run(module->get());
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  EXPECT_EQ(CountFusions(**module), expected_left) << (*module)->ToString();
  for (const HloComputation* computation : (*module)->computations()) {
    for (const HloInstruction* instruction : computation->instructions()) {
      if (instruction->opcode() == HloOpcode::kFusion) {
        EXPECT_TRUE(IsGpuLoopKernelFusion(*instruction)) << instruction->ToString();
      }
    }
  }
  auto after = evaluator.Evaluate(**module, pointers);
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_TRUE(*before == *after) << before->ToString() << "\n" << after->ToString();

  auto program = CompileGpuProgram(copy.get());
  ASSERT_TRUE(program.ok()) << program.status();
  for (const auto& kernel : program->kernels) {
    absl::StatusOr<std::string> cubin = AssemblePtx(kernel->ptx, "sm_90");
    if (!cubin.ok() && cubin.status().code() == absl::StatusCode::kNotFound) {
      GTEST_SKIP() << "no ptxas: " << cubin.status().message();
    }
    EXPECT_TRUE(cubin.ok()) << cubin.status();
  }
}

TEST(GpuFusionInlinerTest, OutputFusionOfADotAndItsBias) {
  ExpectInlined(R"(
HloModule m
fused_dot {
  a = f32[4,8] parameter(0)
  b = f32[8,3] parameter(1)
  c = f32[4,3] parameter(2)
  d = f32[4,3] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT r = f32[4,3] add(d, c)
}
ENTRY e {
  a = f32[4,8] parameter(0)
  b = f32[8,3] parameter(1)
  c = f32[4,3] parameter(2)
  ROOT f = f32[4,3] fusion(a, b, c), kind=kOutput, calls=fused_dot
})",
                /*expected_left=*/0);
}

TEST(GpuFusionInlinerTest, MultiOutputFusionWhoseOutputsDifferInShape) {
  ExpectInlined(R"(
HloModule m
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
fused {
  p = f32[6,5] parameter(0)
  n = f32[6,5] negate(p)
  z = f32[] constant(0)
  r = f32[6] reduce(n, z), dimensions={1}, to_apply=add
  ROOT t = (f32[6,5], f32[6]) tuple(n, r)
}
ENTRY e {
  p = f32[6,5] parameter(0)
  ROOT f = (f32[6,5], f32[6]) fusion(p), kind=kInput, calls=fused
})",
                /*expected_left=*/0);
}

TEST(GpuFusionInlinerTest, NestedFusionComesOutAndIsKept) {
  ExpectInlined(R"(
HloModule m
inner {
  x = f32[16] parameter(0)
  ROOT e = f32[16] exponential(x)
}
outer {
  p = f32[16] parameter(0)
  f = f32[16] fusion(p), kind=kLoop, calls=inner
  ROOT m = f32[16] multiply(f, p)
}
ENTRY e {
  p = f32[16] parameter(0)
  ROOT f = f32[16] fusion(p), kind=kLoop, calls=outer
})",
                /*expected_left=*/1);
}

TEST(GpuFusionInlinerTest, FusionOfATupleOperandAndASort) {
  ExpectInlined(R"(
HloModule m
less {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT lt = pred[] compare(a, b), direction=LT
}
fused {
  t = (f32[8], f32[8]) parameter(0)
  x = f32[8] get-tuple-element(t), index=0
  y = f32[8] get-tuple-element(t), index=1
  s = f32[8] add(x, y)
  ROOT o = f32[8] sort(s), dimensions={0}, to_apply=less
}
ENTRY e {
  x = f32[8] parameter(0)
  y = f32[8] parameter(1)
  t = (f32[8], f32[8]) tuple(x, y)
  ROOT f = f32[8] fusion(t), kind=kLoop, calls=fused
})",
                /*expected_left=*/0);
}

TEST(GpuFusionInlinerTest, LoopFusionsTheKernelsComputeStay) {
  auto module = ParseAndReturnUnverifiedModule(R"(
HloModule m
fused {
  p = f32[6,5] parameter(0)
  n = f32[6,5] negate(p)
  a = f32[6,5] abs(p)
  ROOT t = (f32[6,5], f32[6,5]) tuple(n, a)
}
ENTRY e {
  p = f32[6,5] parameter(0)
  ROOT f = (f32[6,5], f32[6,5]) fusion(p), kind=kLoop, calls=fused
})");
  ASSERT_TRUE(module.ok()) << module.status();
  GpuFusionInliner pass;
  auto changed = pass.Run(module->get());
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_FALSE(*changed);
  EXPECT_EQ(CountFusions(**module), 1);
}

}  // namespace
}  // namespace axle::gpu
