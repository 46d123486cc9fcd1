//===- collective_major_dimension_test.cc - NCCL's pieces made contiguous --===//
//
// Any machine: an all-gather, a reduce-scatter and an all-to-all along an
// inner dimension (and one along a dimension a column-major layout puts
// inside) become the same collective along dimension 0 between transposes;
// the interpreter's multi-participant mode computes the same on every
// participant before and after, bit for bit; the modules compile for CUDA
// on two replicas (NCCL thunks, the transposes' PTX accepted by ptxas),
// where the NCCL plan refused the strided pieces before (also where the
// shared passes change a collective's layout).
//
//===----------------------------------------------------------------------===//
#include "axle/gpu/collective_major_dimension.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "axle/eval/hlo_evaluator.h"
#include "axle/eval/participants.h"
#include "axle/gpu/gpu_compiler.h"
#include "axle/gpu/ptxas.h"
#include "axle/hlo/analysis/hlo_verifier.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/ir/hlo_module.h"
#include "axle/hlo/text/hlo_parser.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace axle::gpu {
namespace {

using ::testing::HasSubstr;

constexpr const char* kModule = R"(HloModule m, replica_count=2
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY e {
  p = f32[3,2,4] parameter(0)
  q = f32[2,8] parameter(1)
  r = f32[4,6] parameter(2)
  c = f32[6,4]{0,1} parameter(3)
  gathered = f32[3,4,4] all-gather(p), dimensions={1}, replica_groups={{0,1}}
  scattered = f32[2,4] reduce-scatter(q), dimensions={1}, replica_groups={{0,1}}, to_apply=add
  exchanged = f32[4,6] all-to-all(r), dimensions={1}, replica_groups={{0,1}}
  columns = f32[12,4]{0,1} all-gather(c), dimensions={0}, replica_groups={{0,1}}
  ROOT t = (f32[3,4,4], f32[2,4], f32[4,6], f32[12,4]{0,1}) tuple(gathered, scattered, exchanged, columns)
})";

std::unique_ptr<HloModule> Parse() {
  auto module = ParseAndReturnUnverifiedModule(kModule);
  EXPECT_TRUE(module.ok()) << module.status();
  return module.ok() ? *std::move(module) : nullptr;
}

// Participant `id`'s arguments: distinct values per participant and element.
std::vector<Literal> Arguments(const HloModule& module, int64_t id) {
  std::vector<Literal> arguments;
  const HloComputation& entry = *module.entry_computation();
  for (int64_t i = 0; i < entry.num_parameters(); ++i) {
    Literal literal(entry.parameter_instruction(i)->shape());
    absl::Span<float> data = literal.data<float>();
    for (int64_t k = 0; k < literal.shape().num_elements(); ++k) {
      data[k] = static_cast<float>(id * 1000 + i * 100 + k);
    }
    arguments.push_back(std::move(literal));
  }
  return arguments;
}

std::vector<Literal> RunOnTwoReplicas(const HloModule& module) {
  std::vector<std::vector<Literal>> arguments = {Arguments(module, 0), Arguments(module, 1)};
  std::vector<std::vector<const Literal*>> pointers(2);
  for (int64_t id = 0; id < 2; ++id) {
    for (const Literal& argument : arguments[id]) pointers[id].push_back(&argument);
  }
  ParticipantsOptions options;
  options.replica_count = 2;
  absl::StatusOr<std::vector<Literal>> results = EvaluateParticipants(module, pointers, options);
  EXPECT_TRUE(results.ok()) << results.status();
  return results.ok() ? *std::move(results) : std::vector<Literal>{};
}

TEST(GpuCollectiveMajorDimensionTest, CollectivesRunAlongDimensionZeroAndComputeTheSame) {
  std::unique_ptr<HloModule> before = Parse();
  std::unique_ptr<HloModule> after = Parse();
  ASSERT_NE(before, nullptr);
  ASSERT_NE(after, nullptr);
  GpuCollectiveMajorDimension pass;
  absl::StatusOr<bool> changed = pass.Run(after.get());
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  ASSERT_TRUE(VerifyHloModule(*after).ok()) << VerifyHloModule(*after) << after->ToString();
  int collectives = 0;
  for (const HloInstruction* instruction : after->entry_computation()->instructions()) {
    const auto* collective = dyn_cast<HloCollectiveInstruction>(instruction);
    if (collective == nullptr) continue;
    ++collectives;
    EXPECT_EQ(collective->attrs().dimensions, std::vector<int64_t>{0}) << instruction->ToString();
    EXPECT_EQ(instruction->operand(0)->opcode(), HloOpcode::kTranspose);
  }
  EXPECT_EQ(collectives, 4);
  const std::vector<Literal> expected = RunOnTwoReplicas(*before);
  const std::vector<Literal> actual = RunOnTwoReplicas(*after);
  ASSERT_EQ(expected.size(), 2u);
  ASSERT_EQ(actual.size(), 2u);
  for (size_t id = 0; id < 2; ++id) {
    EXPECT_EQ(expected[id], actual[id])
        << "participant " << id << "\nexpected " << expected[id].ToString() << "\nactual   "
        << actual[id].ToString();
  }
}

TEST(GpuCollectiveMajorDimensionTest, ContiguousCollectivesAreLeftAlone) {
  auto module = ParseAndReturnUnverifiedModule(R"(HloModule m, replica_count=2
ENTRY e {
  p = f32[1,2,4] parameter(0)
  ROOT g = f32[1,4,4] all-gather(p), dimensions={1}, replica_groups={{0,1}}
})");
  ASSERT_TRUE(module.ok()) << module.status();
  GpuCollectiveMajorDimension pass;
  absl::StatusOr<bool> changed = pass.Run(module->get());
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_FALSE(*changed);
}

TEST(GpuCollectiveMajorDimensionTest, CompilesForCudaOnNcclWithTransposeKernels) {
  std::unique_ptr<HloModule> module = Parse();
  ASSERT_NE(module, nullptr);
  absl::StatusOr<GpuProgram> program = CompileGpuProgram(module.get(), PtxOptions());
  ASSERT_TRUE(program.ok()) << program.status();
  const std::string listing = GpuProgramToString(*program);
  for (const char* kind : {"all-gather", "reduce-scatter", "all-to-all"}) {
    EXPECT_THAT(listing, HasSubstr(kind));
  }
  ASSERT_FALSE(program->kernels.empty()) << listing;
  for (const auto& kernel : program->kernels) {
    absl::StatusOr<std::string> cubin = AssemblePtx(kernel->ptx, "sm_90");
    if (!cubin.ok() && cubin.status().code() == absl::StatusCode::kNotFound) {
      GTEST_SKIP() << "no ptxas: " << cubin.status().message();
    }
    EXPECT_TRUE(cubin.ok()) << kernel->name << ": " << cubin.status();
  }
}

// A gather along a dimension its layout makes major, which the shared
// passes' layout normalization makes minor: the pass runs again after them.
TEST(GpuCollectiveMajorDimensionTest, LayoutsTheSharedPassesChangeAreCaughtToo) {
  auto module = ParseAndReturnUnverifiedModule(R"(HloModule m, replica_count=4
ENTRY e {
  p = f32[128,32]{0,1} parameter(0)
  ROOT g = f32[128,64]{0,1} all-gather(p), replica_groups={{0,1},{2,3}}, dimensions={1}
})");
  ASSERT_TRUE(module.ok()) << module.status();
  absl::StatusOr<GpuProgram> program = CompileGpuProgram(module->get(), PtxOptions());
  ASSERT_TRUE(program.ok()) << program.status();
  EXPECT_THAT(GpuProgramToString(*program), HasSubstr("all-gather"));
}

}  // namespace
}  // namespace axle::gpu
