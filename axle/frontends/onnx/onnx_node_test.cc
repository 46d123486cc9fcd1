// ONNX's own backend node tests (libonnx-testdata: data/node/test_*/) on the
// cpu and interpreter platforms. Each case must match ONNX's expected
// outputs (rtol 1e-3) and, on cpu, agree with the interpreter; the cases
// that draw random values are checked by shape, type, support, statistics
// and seeded determinism instead (onnx_test_util.h, RunRandomCase). The cases
// that pass are listed in testdata/node_tests_{cpu,interpreter}.txt; a listed
// case that fails is a regression and fails the test. Failures are printed
// grouped by op. AXLE_ONNX_WRITE_BASELINE=1 rewrites the lists.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "axle/core/literal_comparison.h"
#include "axle/frontends/onnx/onnx_test_util.h"
#include "gtest/gtest.h"

#ifndef AXLE_ONNX_NODE_TEST_DIR
#define AXLE_ONNX_NODE_TEST_DIR "/usr/share/libonnx-testdata/data/node"
#endif
#ifndef AXLE_ONNX_TESTDATA_SOURCE_DIR
#define AXLE_ONNX_TESTDATA_SOURCE_DIR ""
#endif

namespace axle::onnx {
namespace {

std::string Dir() {
  const char* env = std::getenv("AXLE_ONNX_NODE_TEST_DIR");
  return env ? env : AXLE_ONNX_NODE_TEST_DIR;
}

std::string BaselinePath(const std::string& platform) {
  return absl::StrCat(AXLE_ONNX_TESTDATA_SOURCE_DIR, "/node_tests_", platform, ".txt");
}

std::set<std::string> ReadBaseline(const std::string& platform) {
  std::set<std::string> out;
  std::ifstream in(BaselinePath(platform));
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line[0] != '#') out.insert(line);
  }
  return out;
}

void WriteBaseline(const std::string& platform, const std::set<std::string>& passing) {
  std::ofstream out(BaselinePath(platform));
  out << "# ONNX node tests that pass on " << platform
      << " (onnx_node_test.cc; AXLE_ONNX_WRITE_BASELINE=1 rewrites this file)\n";
  for (const std::string& name : passing) out << name << "\n";
}

std::string FirstLine(absl::string_view message) {
  std::string line(message.substr(0, message.find('\n')));
  return line.size() > 160 ? line.substr(0, 160) + "..." : line;
}

TEST(OnnxNodeTest, CpuAndInterpreterMatchOnnxAndEachOther) {
  std::string dir = Dir();
  if (!std::filesystem::exists(dir)) GTEST_SKIP() << "no ONNX node tests at " << dir;
  std::vector<std::string> cases = ListDirs(dir);
  ASSERT_GT(cases.size(), 100u);
  std::set<std::string> passing[2];
  std::map<std::string, std::vector<std::string>> failures[2];  // by op
  const char* platforms[2] = {"interpreter", "cpu"};
  for (const std::string& name : cases) {
    std::string case_dir = absl::StrCat(dir, "/", name);
    // Random cases are checked by their properties (RunRandomCase), and
    // the two platforms draw the same bits.
    const bool random = IsRandomCase(case_dir);
    CaseResult interpreter =
        random ? RunRandomCase(case_dir, "interpreter") : RunCase(case_dir, "interpreter");
    CaseResult cpu = random ? RunRandomCase(case_dir, "cpu") : RunCase(case_dir, "cpu");
    if (cpu.status.ok() && interpreter.status.ok()) {
      for (size_t i = 0; i < cpu.outputs.size() && cpu.status.ok(); ++i) {
        absl::Status agree =
            LiteralsNear(interpreter.outputs[i], cpu.outputs[i], ErrorSpec(1e-5, 1e-3));
        if (!agree.ok()) {
          cpu.status = absl::InternalError(
              absl::StrCat("disagrees with the interpreter: ", agree.message()));
        }
      }
    }
    const CaseResult* results[2] = {&interpreter, &cpu};
    for (int p = 0; p < 2; ++p) {
      if (results[p]->status.ok()) {
        passing[p].insert(name);
      } else {
        failures[p][CaseOps(case_dir)].push_back(
            absl::StrCat(name, ": ", FirstLine(results[p]->status.message())));
      }
    }
  }
  bool write = std::getenv("AXLE_ONNX_WRITE_BASELINE") != nullptr;
  for (int p = 0; p < 2; ++p) {
    std::string platform = platforms[p];
    std::cout << platform << ": " << passing[p].size() << " of " << cases.size()
              << " node tests pass\n";
    std::cout << "failures on " << platform << " by op:\n";
    for (const auto& [op, list] : failures[p]) {
      std::cout << "  " << op << " (" << list.size() << ")\n";
      for (const std::string& f : list) std::cout << "    " << f << "\n";
    }
    if (write) {
      WriteBaseline(platform, passing[p]);
      continue;
    }
    std::set<std::string> baseline = ReadBaseline(platform);
    std::vector<std::string> regressed, improved;
    for (const std::string& name : baseline) {
      if (!passing[p].count(name)) regressed.push_back(name);
    }
    for (const std::string& name : passing[p]) {
      if (!baseline.count(name)) improved.push_back(name);
    }
    if (!improved.empty()) {
      std::cout << platform << ": newly passing (add to " << BaselinePath(platform)
                << "): " << absl::StrJoin(improved, " ") << "\n";
    }
    EXPECT_TRUE(regressed.empty())
        << platform << ": regressed node tests: " << absl::StrJoin(regressed, " ");
    EXPECT_GE(baseline.size(), 100u)
        << "the baseline " << BaselinePath(platform) << " is missing or nearly empty";
  }
}

}  // namespace
}  // namespace axle::onnx
