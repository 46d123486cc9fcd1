//===- conformance_multi_device_test.cc - Multi-device exec modules --------===//
//
// The exec/ modules that need several devices (XLA's all_reduce_test,
// collective_ops_test, collective_ops_aot_test, ...) on the interpreter's
// multi-participant mode: every participant a thread, its arguments from
// the seed plus its id. Each module runs twice and both runs must agree bit
// for bit on every participant; what the mode does not support yet must be
// Unimplemented naming the op, and is listed.
//
//===----------------------------------------------------------------------===//
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "axle/eval/participants.h"
#include "axle/hlo/analysis/hlo_verifier.h"
#include "axle/hlo/text/hlo_parser.h"
#include "axle/runtime/host_custom_call.h"
#include "gtest/gtest.h"
#include "tests/conformance_custom_calls.h"
#include "tests/conformance_util.h"
#include "tools/fake_arguments.h"
#include "tools/multi_device_grid.h"

namespace axle {
namespace {

absl::StatusOr<std::vector<Literal>> RunOnGrid(const HloModule& module, const DeviceGrid& grid,
                                               uint64_t seed) {
  std::vector<std::vector<Literal>> arguments;
  for (int64_t id = 0; id < grid.size(); ++id) {
    absl::StatusOr<std::vector<Literal>> made = MakeFakeArguments(module, seed + id);
    if (!made.ok()) return made.status();
    arguments.push_back(std::move(*made));
  }
  std::vector<std::vector<const Literal*>> pointers(grid.size());
  for (int64_t id = 0; id < grid.size(); ++id) {
    for (const Literal& argument : arguments[id]) pointers[id].push_back(&argument);
  }
  ParticipantsOptions options;
  options.replica_count = grid.replica_count;
  options.partition_count = grid.partition_count;
  options.setup = [seed](HloEvaluator& evaluator) {
    InstallHostCustomCalls(&evaluator);
    evaluator.set_seed(seed);
  };
  return EvaluateParticipants(module, pointers, options);
}

TEST(ConformanceMultiDevice, ExecModulesRunOnSeveralParticipants) {
  std::vector<testing::CorpusEntry> entries = testing::ReadManifest();
  if (entries.empty()) GTEST_SKIP() << "conformance corpus not found at " << testing::CorpusRoot();
  int ran = 0;
  std::vector<std::string> unsupported, failures;
  for (const testing::CorpusEntry& entry : entries) {
    if (!absl::StartsWith(entry.file, "exec/") || entry.expects_error) continue;
    absl::StatusOr<std::unique_ptr<HloModule>> module =
        ParseAndReturnUnverifiedModule(testing::ReadWholeFile(entry.path), entry.file);
    if (!module.ok() || !VerifyHloModule(**module).ok()) continue;  // conformance_exec_test's job
    if (!testing::UsesSeveralDevices(**module)) continue;
    DeviceGrid grid = testing::GridFor(**module);
    absl::StatusOr<std::vector<Literal>> first = RunOnGrid(**module, grid, 7);
    if (!first.ok()) {
      if (absl::IsUnimplemented(first.status())) {
        unsupported.push_back(absl::StrCat(entry.file, ": ", first.status().message()));
      } else {
        failures.push_back(absl::StrCat(entry.file, " (", grid.replica_count, "x",
                                        grid.partition_count, "): ", first.status().message()));
      }
      continue;
    }
    absl::StatusOr<std::vector<Literal>> second = RunOnGrid(**module, grid, 7);
    bool same = second.ok() && second->size() == first->size();
    for (size_t i = 0; same && i < first->size(); ++i) same = (*first)[i] == (*second)[i];
    if (!same) {
      failures.push_back(absl::StrCat(entry.file, ": a second run with the same seed differs"));
      continue;
    }
    ++ran;
  }
  std::printf("multi-device exec modules: %d ran, %zu unsupported, %zu failed\n", ran,
              unsupported.size(), failures.size());
  for (const std::string& line : unsupported) std::printf("  unsupported: %s\n", line.c_str());
  for (const std::string& failure : failures) ADD_FAILURE() << failure;
  EXPECT_GT(ran, 20);
}

}  // namespace
}  // namespace axle
