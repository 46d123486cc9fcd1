//===- bf16_reductions_test.cc - bf16 sums accumulated in f32 --------------===//
//
// Without a GPU: the cuda pipeline's kernel for a bf16 row sum adds in f32
// and rounds to bf16 once (PTX text; ptxas where the toolkit has it), as
// the shared pipeline's bf16-reductions-in-f32 pass makes it
// (axle/hlo/transforms/bf16_reductions_in_f32.h, tested there).
//
//===----------------------------------------------------------------------===//
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "axle/gpu/gpu_compiler.h"
#include "axle/gpu/ptxas.h"
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
