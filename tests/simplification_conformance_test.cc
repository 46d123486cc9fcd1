//===- simplification_conformance_test.cc - Simplifiers over the corpus ----===//
//
// Every module of the corpus (exec/, other/, parser/; not the ones that are
// meant to fail to parse) goes through `algsimp` alone and
// through the whole simplification family (`layout-normalization`,
// `reshape-mover`, `algsimp`). The result must verify and, where the
// interpreter can run the module within a small cost budget, give the
// original's values on the same arguments: integers and pred exactly, floats
// within a tight bound (normalizing a layout may change the order in which
// a reduce folds its inputs). Modules that need devices or custom-call
// targets, and those the interpreter cannot run, are only verified.
//
//===----------------------------------------------------------------------===//
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

// Each module runs up to three times; larger ones are only verified.
constexpr double kMaxCost = 3e7;

absl::StatusOr<Literal> RunOnInterpreter(const HloModule& module) {
  absl::StatusOr<std::vector<Literal>> arguments = MakeFakeArguments(module, 7);
  if (!arguments.ok()) return arguments.status();
  std::vector<const Literal*> pointers;
  for (const Literal& argument : *arguments) pointers.push_back(&argument);
  // The cost estimate counts a loop body once; long loops are not run.
  HloEvaluator evaluator(/*max_loop_iterations=*/1000);
  evaluator.set_seed(7);
  return evaluator.Evaluate(module, pointers);
}

struct Pipeline {
  std::string label;
  std::vector<std::string> passes;
};

TEST(SimplificationConformance, CorpusModulesVerifyAndKeepTheirValues) {
  std::vector<testing::CorpusEntry> entries = testing::ReadManifest();
  if (entries.empty()) GTEST_SKIP() << "conformance corpus not found at " << testing::CorpusRoot();
  const std::vector<Pipeline> pipelines = {
      {"algsimp", {"algsimp"}},
      {"all", {"layout-normalization", "reshape-mover", "algsimp"}},
  };
  int modules = 0, compared = 0, changed = 0;
  std::vector<std::string> failures;
  for (const testing::CorpusEntry& entry : entries) {
    if (entry.expects_error) continue;
    std::string text = testing::ReadWholeFile(entry.path);
    absl::StatusOr<std::unique_ptr<HloModule>> original =
        ParseAndReturnUnverifiedModule(text, entry.file);
    if (!original.ok() || !VerifyHloModule(**original).ok())
      continue;  // the parse and exec tests report it
    ++modules;
    bool can_run =
        !entry.custom_call && !entry.collectives && testing::EstimateCost(**original) <= kMaxCost;
    std::optional<Literal> expected;
    for (const Pipeline& pipeline : pipelines) {
      // Parsed again rather than cloned: HloModule::Clone needs callees
      // before callers, which some corpus modules do not give it.
      std::unique_ptr<HloModule> module = ParseAndReturnUnverifiedModule(text, entry.file).value();
      HloPassPipeline passes(pipeline.label, /*verify_between_passes=*/true);
      for (const std::string& name : pipeline.passes) {
        absl::StatusOr<std::unique_ptr<HloPassInterface>> pass = CreatePass(name);
        ASSERT_TRUE(pass.ok()) << pass.status();
        passes.AddPass(std::move(pass).value());
      }
      absl::StatusOr<bool> did_change = passes.Run(module.get());
      std::string where = absl::StrCat(entry.file, " [", pipeline.label, "]: ");
      if (!did_change.ok()) {
        failures.push_back(absl::StrCat(where, did_change.status().message()));
        continue;
      }
      if (absl::Status verified = VerifyHloModule(*module); !verified.ok()) {
        failures.push_back(absl::StrCat(where, "verify: ", verified.message()));
        continue;
      }
      if (!*did_change) continue;
      ++changed;
      if (!can_run) continue;
      if (!expected.has_value()) {
        absl::StatusOr<Literal> before = RunOnInterpreter(**original);
        if (!before.ok()) {
          can_run = false;  // unsupported by the interpreter (devices, ...)
          continue;
        }
        expected = std::move(before).value();
      }
      absl::StatusOr<Literal> after = RunOnInterpreter(*module);
      if (!after.ok()) {
        failures.push_back(absl::StrCat(where, "run: ", after.status().message()));
        continue;
      }
      absl::Status same = LiteralsNear(*expected, *after, ErrorSpec(1e-5, 1e-5));
      if (!same.ok()) failures.push_back(absl::StrCat(where, same.message()));
      ++compared;
    }
  }
  std::printf(
      "simplification over the corpus: %d modules, %d rewritten, %d compared on the interpreter\n",
      modules, changed, compared);
  for (const std::string& failure : failures) ADD_FAILURE() << failure;
  EXPECT_GT(modules, 100);
  EXPECT_GT(compared, 50);
}

}  // namespace
}  // namespace axle
