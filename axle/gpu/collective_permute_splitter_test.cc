//===- collective_permute_splitter_test.cc - One NCCL permute per operand --===//
//
// Any machine: a collective-permute of two operands (and its start/done
// form) becomes two permutes of one operand each, which the interpreter's
// multi-participant mode computes as XLA defines the combined permute
// (written out in the test: it runs no combined form itself); the modules
// compile for CUDA on four replicas, one NCCL permute
// thunk per operand.
//
//===----------------------------------------------------------------------===//
#include "axle/gpu/collective_permute_splitter.h"

#include <memory>
#include <string>
#include <vector>

#include "axle/eval/participants.h"
#include "axle/gpu/gpu_compiler.h"
#include "axle/hlo/analysis/hlo_verifier.h"
#include "axle/hlo/ir/hlo_module.h"
#include "axle/hlo/text/hlo_parser.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace axle::gpu {
namespace {

constexpr const char* kCombined = R"(HloModule m, replica_count=4
ENTRY e {
  a = f32[16,8] parameter(0)
  b = s32[5] parameter(1)
  ROOT p = (f32[16,8], s32[5]) collective-permute(a, b), source_target_pairs={{0,1},{1,2},{2,3}}
})";

constexpr const char* kStartDone = R"(HloModule m, replica_count=4
ENTRY e {
  a = f32[16,8] parameter(0)
  b = s32[5] parameter(1)
  s = ((f32[16,8], s32[5]), (f32[16,8], s32[5])) collective-permute-start(a, b), source_target_pairs={{3,0},{1,2}}
  ROOT d = (f32[16,8], s32[5]) collective-permute-done(s)
})";

// Participant `id`'s arguments: values that name the participant.
std::vector<Literal> Arguments(const HloModule& module, int64_t id) {
  std::vector<Literal> arguments;
  const HloComputation& entry = *module.entry_computation();
  for (int64_t i = 0; i < entry.num_parameters(); ++i) {
    Literal literal(entry.parameter_instruction(i)->shape());
    const int64_t count = literal.shape().num_elements();
    for (int64_t k = 0; k < count; ++k) {
      if (literal.shape().element_type() == F32) {
        literal.data<float>()[k] = static_cast<float>(id * 1000 + k);
      } else {
        literal.data<int32_t>()[k] = static_cast<int32_t>(id * 100 + k + 1);
      }
    }
    arguments.push_back(std::move(literal));
  }
  return arguments;
}

std::vector<Literal> RunOnFourReplicas(const HloModule& module) {
  std::vector<std::vector<Literal>> arguments;
  for (int64_t id = 0; id < 4; ++id) arguments.push_back(Arguments(module, id));
  std::vector<std::vector<const Literal*>> pointers(4);
  for (int64_t id = 0; id < 4; ++id) {
    for (const Literal& argument : arguments[id]) pointers[id].push_back(&argument);
  }
  ParticipantsOptions options;
  options.replica_count = 4;
  absl::StatusOr<std::vector<Literal>> results = EvaluateParticipants(module, pointers, options);
  EXPECT_TRUE(results.ok()) << results.status();
  return results.ok() ? *std::move(results) : std::vector<Literal>{};
}

int CountPermutes(const HloModule& module) {
  int count = 0;
  for (const HloInstruction* instruction : module.entry_computation()->instructions()) {
    if (instruction->opcode() != HloOpcode::kCollectivePermute) continue;
    EXPECT_EQ(instruction->operand_count(), 1) << instruction->ToString();
    ++count;
  }
  return count;
}

// XLA's semantics, written out: each target receives its source's
// operands; a participant no pair targets gets zeros.
TEST(GpuCollectivePermuteSplitterTest, OnePermutePerOperandComputesThePermute) {
  auto module = ParseAndReturnUnverifiedModule(kCombined);
  ASSERT_TRUE(module.ok()) << module.status();
  GpuCollectivePermuteSplitter pass;
  absl::StatusOr<bool> changed = pass.Run(module->get());
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  ASSERT_TRUE(VerifyHloModule(**module).ok()) << (*module)->ToString();
  EXPECT_EQ(CountPermutes(**module), 2) << (*module)->ToString();
  const std::vector<Literal> actual = RunOnFourReplicas(**module);
  ASSERT_EQ(actual.size(), 4u);
  for (int64_t id = 0; id < 4; ++id) {
    // Pairs {0,1},{1,2},{2,3}: participant id receives from id - 1.
    std::vector<Literal> parts;
    if (id == 0) {
      for (const Literal& argument : Arguments(**module, 0)) {
        parts.push_back(Literal(argument.shape()));  // zeros
      }
    } else {
      parts = Arguments(**module, id - 1);
    }
    const Literal expected = LiteralUtil::MakeTuple(std::move(parts));
    EXPECT_EQ(expected, actual[id]) << "participant " << id << "\nexpected " << expected.ToString()
                                    << "\nactual   " << actual[id].ToString();
  }
}

TEST(GpuCollectivePermuteSplitterTest, CompilesForCudaAsOneNcclPermutePerOperand) {
  for (const char* text : {kCombined, kStartDone}) {
    auto module = ParseAndReturnUnverifiedModule(text);
    ASSERT_TRUE(module.ok()) << module.status();
    absl::StatusOr<GpuProgram> program = CompileGpuProgram(module->get(), PtxOptions());
    ASSERT_TRUE(program.ok()) << program.status();
    const std::string listing = GpuProgramToString(*program);
    size_t permutes = 0;
    for (size_t at = listing.find("collective-permute"); at != std::string::npos;
         at = listing.find("collective-permute", at + 1)) {
      ++permutes;
    }
    EXPECT_GE(permutes, 2u) << listing;
  }
}

}  // namespace
}  // namespace axle::gpu
