//===- hlo_conformance_parse_test.cc - The corpus through the parser ------===//
//
// Every module of ../shared/conformance/hlo (MANIFEST.tsv):
//   * a module XLA accepts parses, and its canonical text is a fixed point:
//     print(parse(print(parse(x)))) == print(parse(x));
//   * a module XLA rejects (test_expects_error=1) is rejected with a message
//     naming FILE:LINE:COL, or accepted where XLA rejects it only in its
//     verifier (kVerifierRejected below), never with a crash.
// Every program of ../shared/jax (*.hlo as JAX lowers it, *.opt.hlo as
// XLA:CPU leaves it) parses, and its canonical text is a fixed point too.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "axle/hlo/text/hlo_parser.h"
#include "gtest/gtest.h"

namespace axle {
namespace {

// Modules XLA's tests expect to fail, where the failure comes from XLA's
// verifier or a pass (shapes, operand counts, replica groups, async chains),
// not from its parser: the parser accepts them and the verifier rejects them.
const std::set<std::string> kVerifierRejected = {
    "other/annotation_test__2.hlo",                 // replica_groups vs replica_count
    "other/all_reduce_blueconnect_test__5.hlo",     // a pass rejects the groups
    "other/all_reduce_combiner_test__9.hlo",        // a pass rejects the combination
    "other/all_reduce_splitter_test__11.hlo",       // a pass precondition
    "other/dot_normalizer_test__2.hlo",             // a pass precondition
    "other/gemm_fusion_swap_operands_test__4.hlo",  // a pass precondition
    "other/gemm_fusion_swap_operands_test__7.hlo",  // a pass precondition
    "other/ragged_all_to_all_decomposer_test__4.hlo",
    "other/softmax_rewriter_triton_test__15.hlo",
    "other/triton_fusion_numerics_verifier_test__1.hlo",
    "other/hlo_dataflow_analysis_test__76.hlo",  // while body/condition shapes
    "other/bfloat16_propagation_test__12.hlo",
    "other/permutation_sort_expander_test__5.hlo",
    "other/call_outliner_test__18.hlo",
    "other/cudnn_support_utils_test__6.hlo",
    "other/gpu_latency_hiding_scheduler_test__6.hlo",
    "other/ir_emission_utils_test__34.hlo",
    "other/matmul_utils_test__6.hlo",
    "other/triton_emitter_constraints_test__8.hlo",
    "other/hlo_verifier_test__8.hlo",    // composite call without attributes
    "other/hlo_verifier_test__61.hlo",   // async chain without done
    "other/hlo_verifier_test__70.hlo",   // async-update with two operands
    "other/hlo_verifier_test__88.hlo",   // two dones for one start
    "other/hlo_verifier_test__103.hlo",  // permutation out of range
    "other/hlo_verifier_test__142.hlo",  // to_apply on another execution thread
    "parser/hlo_parser_test__286.hlo",   // reshape element count
    "parser/hlo_parser_test__287.hlo",   // dynamic-reshape operand count
    "parser/hlo_parser_test__288.hlo",   // dynamic-reshape shape
    "parser/hlo_parser_test__305.hlo",   // branch index must be scalar
    "parser/hlo_parser_test__306.hlo",   // branch index type
    "parser/hlo_parser_test__307.hlo",   // pred index with branch_computations
    "parser/hlo_parser_test__348.hlo",   // origin of an inferred-shape op
    "parser/hlo_parser_test__328.hlo",   // async-update shape differs from its start
    "parser/hlo_parser_test__330.hlo",   // async-update shape differs from its start
    "parser/hlo_parser_test__349.hlo",   // origin tree does not match the shape
    "other/hlo_verifier_test__143.hlo",  // while condition on another thread
    "other/hlo_verifier_test__148.hlo",  // negative device in a sharding
    "other/hlo_verifier_test__150.hlo",  // sharding of a branch root
    "other/hlo_verifier_test__179.hlo",  // ragged-all-to-all offset shapes
    "other/hlo_verifier_test__188.hlo",  // one buffer aliased by two outputs
    "other/legalize_scheduling_annotations_test__17.hlo",
    "other/legalize_scheduling_annotations_test__23.hlo",
    "other/profile_guided_latency_estimator_test__4.hlo",
    "other/transpose_folding_test__9.hlo",
};

// Modules the manifest marks valid that XLA's own parser rejects as well
// (its tests expect the failure): Axle rejects them with a located error.
// None at present: u64[] constant(-1) and an operand written as a shape
// alone were listed here, but XLA accepts both (hlo_text_compatibility_test);
// the modules its parser does reject are marked test_expects_error=1.
const std::set<std::string> kXlaRejectsToo = {};

// Valid modules Axle's parser does not take yet (none at present; a module
// listed here must fail with a located error).
const std::set<std::string> kNotSupported = {};

// Whether `message` holds "...:LINE:COL: error: ..." (no <regex>: GCC 12
// warns inside libstdc++'s regex under the sanitizers).
bool HasLocatedError(absl::string_view message) {
  for (size_t at = message.find(": error: "); at != absl::string_view::npos;
       at = message.find(": error: ", at + 1)) {
    size_t i = at;
    int colons = 0;
    while (i > 0 && colons < 2) {
      size_t digits_end = i;
      while (i > 0 && absl::ascii_isdigit(static_cast<unsigned char>(message[i - 1]))) --i;
      if (i == digits_end || i == 0 || message[i - 1] != ':') break;
      --i;
      ++colons;
    }
    if (colons == 2) return true;
  }
  return false;
}

struct Entry {
  std::string file;
  bool expects_error = false;
};

std::string CorpusRoot() {
  const char* dir = std::getenv("AXLE_CONFORMANCE_DIR");
  return dir != nullptr ? dir : AXLE_DEFAULT_CONFORMANCE_DIR;
}

std::string JaxRoot() {
  const char* dir = std::getenv("AXLE_JAX_DIR");
  return dir != nullptr ? dir : AXLE_DEFAULT_JAX_DIR;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

std::vector<Entry> ReadManifest() {
  std::vector<Entry> entries;
  std::istringstream lines(ReadFile(CorpusRoot() + "/MANIFEST.tsv"));
  std::string line;
  std::getline(lines, line);  // header
  while (std::getline(lines, line)) {
    std::vector<std::string> columns = absl::StrSplit(line, '\t');
    if (columns.size() < 4) continue;
    entries.push_back({columns[0], columns[3] == "1"});
  }
  return entries;
}

TEST(HloConformanceParseTest, EveryModule) {
  std::vector<Entry> entries = ReadManifest();
  if (entries.empty()) GTEST_SKIP() << "no corpus at " << CorpusRoot();
  int parsed = 0, round_tripped = 0, rejected = 0, accepted_expected_errors = 0;
  int xla_rejects_too = 0, not_supported = 0;
  for (const Entry& entry : entries) {
    SCOPED_TRACE(entry.file);
    std::string text = ReadFile(CorpusRoot() + "/" + entry.file);
    absl::StatusOr<std::unique_ptr<HloModule>> module =
        ParseAndReturnUnverifiedModule(text, entry.file);
    if (entry.expects_error) {
      if (module.ok()) {
        ++accepted_expected_errors;
        EXPECT_TRUE(kVerifierRejected.count(entry.file))
            << "XLA's parser rejects this module, Axle's accepts it";
      } else {
        ++rejected;
        EXPECT_TRUE(HasLocatedError(module.status().message())) << module.status().message();
        EXPECT_EQ(module.status().code(), absl::StatusCode::kInvalidArgument);
      }
      continue;
    }
    if (kXlaRejectsToo.count(entry.file) || kNotSupported.count(entry.file)) {
      EXPECT_FALSE(module.ok()) << "now accepted: update the lists above";
      if (!module.ok()) {
        EXPECT_TRUE(HasLocatedError(module.status().message())) << module.status().message();
      }
      ++(kXlaRejectsToo.count(entry.file) ? xla_rejects_too : not_supported);
      continue;
    }
    EXPECT_TRUE(module.ok()) << module.status().message();
    if (!module.ok()) continue;
    ++parsed;
    // Elided constants (`{...}`) print back as `{...}`, so these round-trip too.
    std::string printed = (*module)->ToString();
    absl::StatusOr<std::unique_ptr<HloModule>> reparsed =
        ParseAndReturnUnverifiedModule(printed, entry.file + " (printed)");
    EXPECT_TRUE(reparsed.ok()) << reparsed.status().message() << "\n" << printed;
    if (!reparsed.ok()) continue;
    std::string reprinted = (*reparsed)->ToString();
    EXPECT_EQ(printed, reprinted);
    if (printed == reprinted) ++round_tripped;
  }
  std::cout << "corpus: " << entries.size() << " modules; parsed " << parsed << ", round-tripped "
            << round_tripped << "; expected errors rejected " << rejected << ", accepted (verifier "
            << "errors) " << accepted_expected_errors << "; marked valid but rejected as by XLA "
            << xla_rejects_too << ", not supported " << not_supported << "\n";
}

// The module's canonical text parses again and prints the same; the reason
// when it does not.
std::string RoundTripFailure(const HloModule& module, const std::string& file) {
  std::string printed = module.ToString();
  absl::StatusOr<std::unique_ptr<HloModule>> reparsed =
      ParseAndReturnUnverifiedModule(printed, file + " (printed)");
  if (!reparsed.ok()) return std::string(reparsed.status().message()) + "\n" + printed;
  std::string reprinted = (*reparsed)->ToString();
  if (reprinted != printed) return "printed text is not a fixed point:\n" + printed;
  return "";
}

TEST(HloConformanceParseTest, EveryJaxProgram) {
  std::vector<std::string> files;
  std::error_code error;
  for (const auto& item : std::filesystem::directory_iterator(JaxRoot(), error)) {
    std::string name = item.path().filename().string();
    if (absl::EndsWith(name, ".hlo")) files.push_back(name);
  }
  if (files.empty()) GTEST_SKIP() << "no programs at " << JaxRoot();
  std::sort(files.begin(), files.end());
  int round_tripped = 0;
  for (const std::string& file : files) {
    SCOPED_TRACE(file);
    absl::StatusOr<std::unique_ptr<HloModule>> module =
        ParseAndReturnUnverifiedModule(ReadFile(JaxRoot() + "/" + file), file);
    EXPECT_TRUE(module.ok()) << module.status().message();
    if (!module.ok()) continue;
    EXPECT_GT((*module)->entry_computation()->instruction_count(), 0);
    std::string failure = RoundTripFailure(**module, file);
    EXPECT_EQ(failure, "");
    if (failure.empty()) ++round_tripped;
  }
  std::cout << "jax: " << files.size() << " programs; parsed and round-tripped " << round_tripped
            << "\n";
}

}  // namespace
}  // namespace axle
