//===- bf16_reductions_test.cc - bf16 sums accumulated in f32 --------------===//
//
// Without a GPU: which reductions the pass widens, that a long bf16 sum
// then keeps its small terms on the interpreter, and that the cuda
// pipeline's kernel for a bf16 row sum adds in f32 and rounds to bf16 once
// (PTX text; ptxas where the toolkit has it).
//
//===----------------------------------------------------------------------===//
#include "axle/gpu/bf16_reductions.h"

#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "axle/core/literal.h"
#include "axle/eval/hlo_evaluator.h"
#include "axle/gpu/gpu_compiler.h"
#include "axle/gpu/ptxas.h"
#include "axle/hlo/ir/hlo_computation.h"
#include "axle/hlo/ir/hlo_module.h"
#include "axle/hlo/text/hlo_parser.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace axle::gpu {
namespace {

using ::testing::HasSubstr;

std::string ReduceModule(const std::string& t, const std::string& op, int64_t n) {
  return absl::StrCat("HloModule m\nr {\n  a = ", t, "[] parameter(0)\n  b = ", t,
                      "[] parameter(1)\n  ROOT c = ", t, "[] ", op,
                      "(a, b)\n}\nENTRY e {\n  x = ", t, "[4,", n, "] parameter(0)\n  z = ", t,
                      "[] constant(0)\n  ROOT s = ", t,
                      "[4] reduce(x, z), dimensions={1}, to_apply=r\n}\n");
}

std::unique_ptr<HloModule> Parse(const std::string& text) {
  auto module = ParseAndReturnUnverifiedModule(text);
  EXPECT_TRUE(module.ok()) << module.status();
  return module.ok() ? *std::move(module) : nullptr;
}

TEST(GpuBf16ReductionsInF32Test, WidensBf16SumsAndProductsOnly) {
  for (const auto& [type, op, widened] :
       std::vector<std::tuple<std::string, std::string, bool>>{{"bf16", "add", true},
                                                               {"bf16", "multiply", true},
                                                               {"bf16", "maximum", false},
                                                               {"f16", "add", false},
                                                               {"f32", "add", false}}) {
    SCOPED_TRACE(absl::StrCat(type, " ", op));
    std::unique_ptr<HloModule> module = Parse(ReduceModule(type, op, 8));
    ASSERT_NE(module, nullptr);
    GpuBf16ReductionsInF32 pass;
    absl::StatusOr<bool> changed = pass.Run(module.get());
    ASSERT_TRUE(changed.ok()) << changed.status();
    EXPECT_EQ(*changed, widened);
    const HloInstruction* root = module->entry_computation()->root_instruction();
    if (!widened) {
      EXPECT_EQ(root->opcode(), HloOpcode::kReduce);
      continue;
    }
    ASSERT_EQ(root->opcode(), HloOpcode::kConvert);
    EXPECT_EQ(root->shape().element_type(), BF16);
    const HloInstruction* reduce = root->operand(0);
    ASSERT_EQ(reduce->opcode(), HloOpcode::kReduce);
    EXPECT_EQ(reduce->shape().element_type(), F32);
    EXPECT_EQ(reduce->operand(0)->opcode(), HloOpcode::kConvert);
    EXPECT_EQ(reduce->operand(1)->opcode(), HloOpcode::kConvert);
    const HloInstruction* combine = reduce->called_computations()[0]->root_instruction();
    EXPECT_EQ(combine->shape().element_type(), F32);
    EXPECT_EQ(combine->opcode(), op == "add" ? HloOpcode::kAdd : HloOpcode::kMultiply);
  }
}

TEST(GpuBf16ReductionsInF32Test, ALongSumKeepsItsSmallTerms) {
  std::unique_ptr<HloModule> module = Parse(ReduceModule("bf16", "add", 1000));
  ASSERT_NE(module, nullptr);
  GpuBf16ReductionsInF32 pass;
  ASSERT_TRUE(pass.Run(module.get()).ok());
  Literal ones(module->entry_computation()->parameter_instruction(0)->shape());
  absl::StatusOr<Literal> one = LiteralUtil::CreateR0<float>(1).Convert(BF16);
  ASSERT_TRUE(one.ok());
  for (auto& value : ones.data<bfloat16>()) value = one->data<bfloat16>()[0];
  HloEvaluator evaluator;
  absl::StatusOr<Literal> sums = evaluator.Evaluate(*module, {&ones});
  ASSERT_TRUE(sums.ok()) << sums.status();
  absl::StatusOr<Literal> wide = sums->Convert(F32);
  ASSERT_TRUE(wide.ok());
  // 1000 is a bf16 value; folded in bf16 the sum stalls at 256.
  for (float sum : wide->data<float>()) EXPECT_EQ(sum, 1000.0f);
}

TEST(GpuBf16ReductionsInF32Test, TheRowSumKernelAddsInF32) {
  std::unique_ptr<HloModule> module = Parse(ReduceModule("bf16", "add", 4096));
  ASSERT_NE(module, nullptr);
  absl::StatusOr<GpuProgram> program = CompileGpuProgram(module.get());
  ASSERT_TRUE(program.ok()) << program.status();
  ASSERT_EQ(program->kernels.size(), 1u) << GpuProgramToString(*program);
  const std::string& ptx = program->kernels[0]->ptx;
  // bf16 loads widened to f32, f32 adds through the shuffles, and one
  // rounding to bf16 (round to nearest even by masking the low half,
  // -65536) before the store. Folded in bf16, every add would be rounded so.
  EXPECT_THAT(ptx, HasSubstr("add.rn.f32"));
  EXPECT_THAT(ptx, HasSubstr("shfl.sync.down.b32"));
  int roundings = 0;
  for (size_t at = ptx.find("-65536"); at != std::string::npos; at = ptx.find("-65536", at + 1)) {
    ++roundings;
  }
  EXPECT_EQ(roundings, 1) << ptx;
  absl::StatusOr<std::string> cubin = AssemblePtx(ptx, "sm_90");
  if (!cubin.ok() && cubin.status().code() == absl::StatusCode::kNotFound) {
    GTEST_SKIP() << "no ptxas: " << cubin.status().message();
  }
  EXPECT_TRUE(cubin.ok()) << cubin.status();
}

}  // namespace
}  // namespace axle::gpu
