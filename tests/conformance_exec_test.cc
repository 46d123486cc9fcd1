//===- conformance_exec_test.cc - Run XLA's exec/ modules on the interpreter ===//
//
// Every module in the corpus's exec/ folder (XLA's execution tests) is
// parsed, verified and run on the interpreter with inputs from a fixed seed,
// twice: both runs must succeed and agree bit for bit. Modules that need
// several devices (multi-replica collectives) or custom-call targets that
// only XLA's own tests register are expected to fail with Unimplemented /
// NotFound naming the op; the test checks that, too. The several-device
// modules run in conformance_multi_device_test (threads) and
// conformance_multi_process_test (processes over Gloo).
//
//===----------------------------------------------------------------------===//
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "axle/eval/hlo_evaluator.h"
#include "axle/hlo/analysis/hlo_verifier.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/text/hlo_parser.h"
#include "axle/runtime/host_custom_call.h"
#include "gtest/gtest.h"
#include "tests/conformance_custom_calls.h"
#include "tests/conformance_util.h"
#include "tools/fake_arguments.h"

namespace axle {
namespace {

constexpr double kMaxCost = 2e8;

absl::StatusOr<Literal> RunOnce(const HloModule& module, uint64_t seed) {
  absl::StatusOr<std::vector<Literal>> arguments = MakeFakeArguments(module, seed);
  if (!arguments.ok()) return arguments.status();
  std::vector<const Literal*> pointers;
  for (const Literal& argument : *arguments) pointers.push_back(&argument);
  HloEvaluator evaluator;
  InstallHostCustomCalls(&evaluator);
  evaluator.set_seed(seed);
  return evaluator.Evaluate(module, pointers);
}

TEST(ConformanceExec, EveryExecModuleRunsOnTheInterpreter) {
  std::vector<testing::CorpusEntry> entries = testing::ReadManifest();
  if (entries.empty()) GTEST_SKIP() << "conformance corpus not found at " << testing::CorpusRoot();
  int ran = 0, needs_devices = 0, needs_targets = 0;
  std::vector<std::string> too_big;
  std::vector<std::string> failures;
  for (const testing::CorpusEntry& entry : entries) {
    if (!absl::StartsWith(entry.file, "exec/") || entry.expects_error) continue;
    absl::StatusOr<std::unique_ptr<HloModule>> module =
        ParseAndReturnUnverifiedModule(testing::ReadWholeFile(entry.path), entry.file);
    if (!module.ok()) {
      failures.push_back(absl::StrCat(entry.file, ": parse: ", module.status().message()));
      continue;
    }
    absl::Status verified = VerifyHloModule(**module);
    if (!verified.ok()) {
      failures.push_back(absl::StrCat(entry.file, ": verify: ", verified.message()));
      continue;
    }
    if (testing::EstimateCost(**module) > kMaxCost) {
      too_big.push_back(entry.file);
      continue;
    }
    absl::StatusOr<Literal> first = RunOnce(**module, 7);
    if (!first.ok()) {
      // Allowed: ops that need several devices, and test-only custom-call
      // targets that nothing here registers.
      if (absl::IsUnimplemented(first.status()) &&
          absl::StrContains(first.status().message(), "several devices")) {
        ++needs_devices;
        continue;
      }
      // XLA:GPU's __cudnn$conv* calls: only the cuda platform computes them.
      const bool cuda_only = absl::IsUnimplemented(first.status()) &&
                             absl::StrContains(first.status().message(), "only the cuda platform");
      if (entry.custom_call && (absl::IsNotFound(first.status()) || cuda_only ||
                                testing::IsExpectedCustomCallFailure(first.status()))) {
        ++needs_targets;
        continue;
      }
      failures.push_back(absl::StrCat(entry.file, ": run: ", first.status().message()));
      continue;
    }
    absl::StatusOr<Literal> second = RunOnce(**module, 7);
    if (!second.ok() || !(*first == *second)) {
      failures.push_back(absl::StrCat(entry.file, ": a second run with the same seed differs"));
      continue;
    }
    ++ran;
  }
  std::printf(
      "exec corpus: %d ran, %d need several devices, %d need unregistered custom calls, "
      "%zu beyond the interpreter's budget, %zu failed\n",
      ran, needs_devices, needs_targets, too_big.size(), failures.size());
  for (const std::string& file : too_big) std::printf("  beyond budget: %s\n", file.c_str());
  for (const std::string& failure : failures) ADD_FAILURE() << failure;
  EXPECT_GT(ran, 100);
}

}  // namespace
}  // namespace axle
