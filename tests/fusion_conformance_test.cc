//===- fusion_conformance_test.cc - The fusion passes over XLA's exec/ corpus ===//
//
// Every exec/ module (no custom calls, no collectives) goes through
// dot-epilogue-fusion then fusion; the result must verify, print and reparse
// to the same text, and give bit for bit the interpreter's results of the
// unfused module on the same arguments. Modules with rng are only verified
// (fusion may change the order in which their random numbers are drawn).
// Modules beyond a small interpreter budget are left out to keep this fast.
//
//===----------------------------------------------------------------------===//
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "axle/cpu/runtime/epilogue_fusion.h"
#include "axle/eval/hlo_evaluator.h"
#include "axle/hlo/analysis/hlo_verifier.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/text/hlo_parser.h"
#include "axle/hlo/transforms/instruction_fusion.h"
#include "gtest/gtest.h"
#include "tests/conformance_util.h"
#include "tools/fake_arguments.h"

namespace axle {
namespace {

constexpr double kMaxCost = 2e7;

bool HasRng(const HloModule& module) {
  for (const HloComputation* computation : module.computations()) {
    for (const HloInstruction* instruction : computation->instructions()) {
      if (instruction->opcode() == HloOpcode::kRng ||
          instruction->opcode() == HloOpcode::kRngBitGenerator ||
          instruction->opcode() == HloOpcode::kRngGetAndUpdateState) {
        return true;
      }
    }
  }
  return false;
}

absl::StatusOr<Literal> RunOnInterpreter(const HloModule& module) {
  absl::StatusOr<std::vector<Literal>> arguments = MakeFakeArguments(module, 7);
  if (!arguments.ok()) return arguments.status();
  std::vector<const Literal*> pointers;
  for (const Literal& argument : *arguments) pointers.push_back(&argument);
  HloEvaluator evaluator(/*max_loop_iterations=*/100000);
  evaluator.set_seed(7);
  return evaluator.Evaluate(module, pointers);
}

TEST(FusionConformance, FusedExecModulesVerifyAndMatchTheInterpreter) {
  std::vector<testing::CorpusEntry> entries = testing::ReadManifest();
  if (entries.empty()) GTEST_SKIP() << "conformance corpus not found at " << testing::CorpusRoot();
  int compared = 0, verified_only = 0, fusions = 0;
  for (const testing::CorpusEntry& entry : entries) {
    if (!absl::StartsWith(entry.file, "exec/") || entry.expects_error || entry.custom_call ||
        entry.collectives) {
      continue;
    }
    auto module = ParseAndReturnUnverifiedModule(testing::ReadWholeFile(entry.path), entry.file);
    if (!module.ok() || !VerifyHloModule(**module).ok()) continue;
    std::unique_ptr<HloModule> fused = (*module)->Clone("fused");
    cpu::DotEpilogueFusion epilogue;
    InstructionFusion fusion;
    absl::Status status = epilogue.Run(fused.get()).status();
    if (status.ok()) status = fusion.Run(fused.get()).status();
    if (status.ok()) status = VerifyHloModule(*fused);
    if (!status.ok()) {
      ADD_FAILURE() << entry.file << ": " << status << "\n" << fused->ToString();
      continue;
    }
    auto reparsed = ParseAndReturnUnverifiedModule(fused->ToString(), entry.file);
    if (!reparsed.ok() || (*reparsed)->ToString() != fused->ToString()) {
      ADD_FAILURE() << entry.file
                    << ": the fused module does not reparse to itself: " << reparsed.status();
      continue;
    }
    for (const HloComputation* computation : fused->computations()) {
      if (computation->IsFusionComputation()) ++fusions;
    }
    if (HasRng(**module) || testing::EstimateCost(**module) > kMaxCost) {
      ++verified_only;
      continue;
    }
    absl::StatusOr<Literal> expected = RunOnInterpreter(**module);
    if (!expected.ok()) {
      ++verified_only;
      continue;
    }
    absl::StatusOr<Literal> actual = RunOnInterpreter(*fused);
    if (!actual.ok()) {
      ADD_FAILURE() << entry.file << ": the fused module fails: " << actual.status();
      continue;
    }
    EXPECT_TRUE(*expected == *actual) << entry.file << ": results differ after fusion\n"
                                      << fused->ToString();
    ++compared;
  }
  std::printf("fusion over exec corpus: %d compared, %d verified only, %d fusions formed\n",
              compared, verified_only, fusions);
  EXPECT_GT(compared, 100);
  EXPECT_GT(fusions, 100);
}

}  // namespace
}  // namespace axle
