//===- conformance_multi_process_test.cc - exec modules in N processes -----===//
//
// The exec/ modules that need several devices, each run by `axle-run
// --num_processes=N --reference_platform=interpreter`: N processes joined
// by Gloo over loopback, each checking its result against the interpreter's
// threads mode bit for bit (axle-run exits 2 if not), once with every
// process on the interpreter and once on the cpu backend. N is the grid
// multi_device_grid.h picks.
//
//===----------------------------------------------------------------------===//
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "axle/hlo/analysis/hlo_verifier.h"
#include "axle/hlo/text/hlo_parser.h"
#include "gtest/gtest.h"
#include "tests/conformance_util.h"
#include "tools/multi_device_grid.h"

namespace axle {
namespace {

// Runs every multi-device exec/ module in N processes on `platform`; each
// process must match the interpreter's threads mode bit for bit.
void RunExecModules(const std::string& platform) {
#ifndef AXLE_RUN_BINARY
  GTEST_SKIP() << "built without Gloo (AXLE_COLLECTIVES)";
#else
  std::vector<testing::CorpusEntry> entries = testing::ReadManifest();
  if (entries.empty()) GTEST_SKIP() << "conformance corpus not found at " << testing::CorpusRoot();
  int ran = 0;
  for (const testing::CorpusEntry& entry : entries) {
    if (!absl::StartsWith(entry.file, "exec/") || entry.expects_error) continue;
    absl::StatusOr<std::unique_ptr<HloModule> > module =
        ParseAndReturnUnverifiedModule(testing::ReadWholeFile(entry.path), entry.file);
    if (!module.ok() || !VerifyHloModule(**module).ok()) continue;
    if (!testing::UsesSeveralDevices(**module)) continue;
    DeviceGrid grid = testing::GridFor(**module);
    std::string command = absl::StrCat(
        AXLE_RUN_BINARY, " --num_processes=", grid.size(),
        " --num_partitions=", grid.partition_count, " --platform=", platform,
        " --seed=7 --reference_platform=interpreter '", entry.path, "' > /dev/null 2>&1");
    int status = std::system(command.c_str());
    EXPECT_EQ(status, 0) << entry.file << " (" << grid.size() << " processes): " << command;
    ++ran;
  }
  std::printf("multi-process exec modules on %s: %d ran\n", platform.c_str(), ran);
  EXPECT_GT(ran, 20);
#endif
}

TEST(ConformanceMultiProcess, ExecModulesAgreeWithTheThreadsMode) { RunExecModules("interpreter"); }

// The cpu backend's collective thunks (axle/cpu/runtime/collective_thunk.cc).
TEST(ConformanceMultiProcess, CpuExecModulesAgreeWithTheThreadsMode) { RunExecModules("cpu"); }

}  // namespace
}  // namespace axle
