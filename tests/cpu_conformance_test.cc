//===- cpu_conformance_test.cc - XLA's exec/ modules on the cpu platform ---===//
//
// Every exec/ module the cpu platform compiles runs there and on the
// interpreter with the same generated inputs; the results must agree within
// XLA's default tolerance (1e-3 absolute and relative; integers exactly).
// Modules with ops the cpu platform does not support yet must fail to
// compile with Unimplemented naming the op; the test prints how many of
// each there are. XLA's test-only custom-call targets are linked
// (conformance_custom_calls.cc); a module whose call always fails agrees
// when both platforms fail it the same way. The counts are a baseline
// (kAgreeingModules and the bounds below it): a module that stops agreeing,
// a new compile error that is not an unsupported op, or a new module
// without a reference fails the test; each such module is printed by name.
//
//===----------------------------------------------------------------------===//
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "axle/core/literal_comparison.h"
#include "axle/cpu/runtime/platform_test_util.h"
#include "axle/hlo/text/hlo_parser.h"
#include "axle/runtime/local_client.h"
#include "gtest/gtest.h"
#include "tests/conformance_custom_calls.h"
#include "tests/conformance_util.h"
#include "tools/fake_arguments.h"

namespace axle {
namespace {

constexpr double kMaxCost = 2e8;
// exec/ modules that agree with the interpreter, and that fail to compile
// for other reasons than an unsupported op (custom-call targets only XLA's
// tests register), at this baseline.
constexpr int kAgreeingModules = 161;
constexpr int kOtherCompileErrors = 3;
// Modules cpu compiles but the interpreter cannot run: no reference
// (exec/set_dimension_size_test__1.hlo).
constexpr int kInterpreterSkips = 1;

TEST(CpuConformance, ExecModulesAgreeWithTheInterpreter) {
  std::vector<testing::CorpusEntry> entries = testing::ReadManifest();
  if (entries.empty()) GTEST_SKIP() << "conformance corpus not found at " << testing::CorpusRoot();
  LocalClient* cpu = testing::ClientFor("cpu");
  LocalClient* interpreter = testing::ClientFor("interpreter");
  int agreed = 0, other_compile_errors = 0, interpreter_skips = 0;
  std::map<std::string, int> unsupported;  // reason -> modules
  std::vector<std::string> failures;
  for (const testing::CorpusEntry& entry : entries) {
    if (!absl::StartsWith(entry.file, "exec/") || entry.expects_error) continue;
    auto module = ParseAndReturnUnverifiedModule(testing::ReadWholeFile(entry.path), entry.file);
    if (!module.ok() || testing::EstimateCost(**module) > kMaxCost) continue;
    absl::StatusOr<std::vector<Literal>> arguments = MakeFakeArguments(**module, 7);
    if (!arguments.ok()) continue;
    if (std::getenv("AXLE_TRACE")) std::fprintf(stderr, "%s\n", entry.file.c_str());
    auto reference_module = (*module)->Clone();
    absl::StatusOr<std::unique_ptr<LocalExecutable>> compiled =
        cpu->Compile(std::move(*module), ExecutableBuildOptions());
    if (!compiled.ok()) {
      if (absl::IsUnimplemented(compiled.status())) {
        // Group by the message without the instruction it names (nor the
        // pass that found it).
        std::string message(compiled.status().message());
        if (size_t at = message.find("cpu platform:"); at != std::string::npos) {
          message = message.substr(at);
        }
        std::string reason = message.substr(0, message.rfind(" ("));
        size_t op = message.rfind(", ");
        if (absl::StartsWith(message, "cpu platform:") && op != std::string::npos) {
          reason += " [" + message.substr(op + 2, message.size() - op - 3) + "]";
        }
        ++unsupported[reason];
      } else {
        // Custom-call targets XLA's tests register and Axle does not: not
        // the cpu's concern, but named, and counted against the baseline.
        ++other_compile_errors;
        std::printf("  other compile error: %s: %s\n", entry.file.c_str(),
                    std::string(compiled.status().message()).substr(0, 160).c_str());
      }
      continue;
    }
    absl::StatusOr<std::unique_ptr<LocalExecutable>> reference =
        interpreter->Compile(std::move(reference_module), ExecutableBuildOptions());
    if (!reference.ok()) {
      ++interpreter_skips;
      std::printf("  interpreter cannot compile: %s\n", entry.file.c_str());
      continue;
    }
    absl::StatusOr<Literal> expected =
        testing::RunExecutable("interpreter", **reference, *arguments);
    if (!expected.ok()) {
      // `__xla_test$$always_fail` must fail the run on cpu the same way.
      if (!testing::IsExpectedCustomCallFailure(expected.status())) {
        ++interpreter_skips;
        std::printf("  interpreter cannot run: %s\n", entry.file.c_str());
        continue;
      }
      absl::StatusOr<Literal> actual = testing::RunExecutable("cpu", **compiled, *arguments);
      if (testing::IsExpectedCustomCallFailure(actual.status())) {
        ++agreed;
      } else {
        failures.push_back(
            absl::StrCat(entry.file, ": cpu run does not fail like the interpreter"));
      }
      continue;
    }
    absl::StatusOr<Literal> actual = testing::RunExecutable("cpu", **compiled, *arguments);
    if (!actual.ok()) {
      failures.push_back(absl::StrCat(entry.file, ": cpu run: ", actual.status().message()));
      continue;
    }
    absl::Status near = LiteralsNear(*expected, *actual, ErrorSpec(1e-3, 1e-3));
    if (!near.ok()) {
      failures.push_back(absl::StrCat(entry.file, ": differs: ", near.message()));
      continue;
    }
    ++agreed;
  }
  int total_unsupported = 0;
  for (const auto& [reason, count] : unsupported) total_unsupported += count;
  std::printf(
      "cpu platform on exec/: %d agree with the interpreter, %d not supported yet, "
      "%d other compile errors, %zu failed\n",
      agreed, total_unsupported, other_compile_errors, failures.size());
  for (const auto& [reason, count] : unsupported) std::printf("  %3d  %s\n", count, reason.c_str());
  for (const std::string& failure : failures) ADD_FAILURE() << failure;
  // The baseline: every module that agreed when this line was last raised
  // must still agree, and no more may fail to compile for other reasons
  // than an op the cpu platform does not support. Raise the numbers when
  // more modules agree.
  EXPECT_GE(agreed, kAgreeingModules) << "a module that agreed no longer does";
  EXPECT_LE(other_compile_errors, kOtherCompileErrors);
  EXPECT_LE(interpreter_skips, kInterpreterSkips) << "modules with no reference to compare with";
}

}  // namespace
}  // namespace axle
