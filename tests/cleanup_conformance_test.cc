//===- cleanup_conformance_test.cc - Cleanup passes over the exec corpus ---===//
//
// Every module of the corpus's exec/ folder that the interpreter runs within
// a small budget is optimized by each cleanup pass alone (by its --passes
// name, through the registry) and by all of them in a pipeline. Each result
// must verify and compute the same values as the unoptimized module on the
// same inputs: bit for bit, or for floats within a tight ErrorSpec (counted
// and printed, so a drift shows). Modules that draw random numbers are only
// checked to verify and run: their values depend on the order the
// interpreter visits rng ops, which inlining may change.
//
//===----------------------------------------------------------------------===//
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "axle/core/literal_comparison.h"
#include "axle/eval/hlo_evaluator.h"
#include "axle/hlo/analysis/hlo_verifier.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/pass/hlo_pass_pipeline.h"
#include "axle/hlo/pass/pass_registry.h"
#include "axle/hlo/text/hlo_parser.h"
#include "gtest/gtest.h"
#include "tests/conformance_util.h"
#include "tools/fake_arguments.h"

namespace axle {
namespace {

constexpr const char* kCleanupPasses[] = {"constant-folding",
                                          "cse",
                                          "call-inliner",
                                          "tuple-simplifier",
                                          "while-loop-simplifier",
                                          "while-loop-invariant-code-motion",
                                          "dce"};

constexpr double kMaxCost = 1e7;

bool DrawsRandomNumbers(const HloModule& module) {
  for (const HloComputation* computation : module.computations()) {
    for (const HloInstruction* instruction : computation->instructions()) {
      HloOpcode opcode = instruction->opcode();
      if (opcode == HloOpcode::kRng || opcode == HloOpcode::kRngGetAndUpdateState) return true;
    }
  }
  return false;
}

absl::StatusOr<Literal> Interpret(const HloModule& module, const std::vector<Literal>& arguments) {
  std::vector<const Literal*> pointers;
  for (const Literal& argument : arguments) pointers.push_back(&argument);
  HloEvaluator evaluator(/*max_loop_iterations=*/100000);
  evaluator.set_seed(7);
  return evaluator.Evaluate(module, pointers);
}

std::unique_ptr<HloPassInterface> MakePipeline() {
  auto pipeline = std::make_unique<HloPassPipeline>("cleanup");
  for (const char* name :
       {"call-inliner", "tuple-simplifier", "constant-folding", "cse", "while-loop-simplifier",
        "while-loop-invariant-code-motion", "tuple-simplifier", "cse", "dce"}) {
    absl::StatusOr<std::unique_ptr<HloPassInterface>> pass = CreatePass(name);
    EXPECT_TRUE(pass.ok()) << pass.status();
    if (pass.ok()) pipeline->AddPass(*std::move(pass));
  }
  return pipeline;
}

TEST(CleanupConformance, EveryPassKeepsTheValuesOfTheExecCorpus) {
  std::vector<testing::CorpusEntry> entries = testing::ReadManifest();
  if (entries.empty()) GTEST_SKIP() << "conformance corpus not found at " << testing::CorpusRoot();
  int checked = 0, random = 0, near_only = 0, changed_runs = 0, skipped = 0;
  std::vector<std::string> failures;
  for (const testing::CorpusEntry& entry : entries) {
    if (!absl::StartsWith(entry.file, "exec/") || entry.expects_error) continue;
    absl::StatusOr<std::unique_ptr<HloModule>> original =
        ParseAndReturnUnverifiedModule(testing::ReadWholeFile(entry.path), entry.file);
    if (!original.ok() || !VerifyHloModule(**original).ok() ||
        testing::EstimateCost(**original) > kMaxCost) {
      ++skipped;
      continue;
    }
    absl::StatusOr<std::vector<Literal>> arguments = MakeFakeArguments(**original, 7);
    if (!arguments.ok()) {
      ++skipped;
      continue;
    }
    absl::StatusOr<Literal> expected = Interpret(**original, *arguments);
    if (!expected.ok()) {  // several devices, unregistered custom calls, ...
      ++skipped;
      continue;
    }
    bool values_comparable = !DrawsRandomNumbers(**original);
    random += values_comparable ? 0 : 1;
    ++checked;
    std::vector<std::string> configurations(std::begin(kCleanupPasses), std::end(kCleanupPasses));
    configurations.push_back("pipeline");
    for (const std::string& configuration : configurations) {
      std::string where = absl::StrCat(entry.file, " after ", configuration);
      std::unique_ptr<HloModule> module = (*original)->Clone("");
      std::unique_ptr<HloPassInterface> pass;
      if (configuration == "pipeline") {
        pass = MakePipeline();
      } else {
        absl::StatusOr<std::unique_ptr<HloPassInterface>> created = CreatePass(configuration);
        ASSERT_TRUE(created.ok()) << created.status();
        pass = *std::move(created);
      }
      absl::StatusOr<bool> changed = pass->Run(module.get());
      if (!changed.ok()) {
        failures.push_back(absl::StrCat(where, ": ", changed.status().message()));
        continue;
      }
      changed_runs += *changed ? 1 : 0;
      absl::Status verified = VerifyHloModule(*module);
      if (!verified.ok()) {
        failures.push_back(absl::StrCat(where, ": verify: ", verified.message()));
        continue;
      }
      absl::StatusOr<Literal> actual = Interpret(*module, *arguments);
      if (!actual.ok()) {
        failures.push_back(absl::StrCat(where, ": run: ", actual.status().message()));
        continue;
      }
      if (!values_comparable || LiteralsEqual(*expected, *actual).ok()) continue;
      absl::Status near = LiteralsNear(*expected, *actual, ErrorSpec(1e-6, 1e-6));
      if (near.ok()) {
        ++near_only;
        std::printf("  within 1e-6 but not bitwise: %s\n", where.c_str());
      } else {
        failures.push_back(absl::StrCat(where, ": values differ: ", near.message()));
      }
    }
  }
  std::printf(
      "cleanup over the exec corpus: %d modules checked (%d only run: rng), %d skipped, "
      "%d pass runs changed something, %d results only near\n",
      checked, random, skipped, changed_runs, near_only);
  for (const std::string& failure : failures) ADD_FAILURE() << failure;
  EXPECT_GT(checked, 50);
}

}  // namespace
}  // namespace axle
