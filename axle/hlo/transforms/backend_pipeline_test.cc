//===- backend_pipeline_test.cc - Tests of the backends' shared pass list --===//
//
// The list's order, the short list of `run_backend_only`, a backend's edit
// adding passes in front of one or replacing it, and the tuple root a
// variadic-reduce fusion gets (with the interpreter's values unchanged).
//
//===----------------------------------------------------------------------===//
#include "axle/hlo/transforms/backend_pipeline.h"

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "axle/hlo/transforms/cleanup_test_util.h"
#include "gtest/gtest.h"

namespace axle {
namespace {

std::vector<std::string> EditedNames(bool run_backend_only) {
  std::vector<std::string> names;
  HloPassPipeline pipeline("test");
  absl::Status status = AddBackendPreparationPasses(
      pipeline, run_backend_only,
      [&](absl::string_view name, HloPassPipeline&) -> absl::StatusOr<bool> {
        names.emplace_back(name);
        return true;
      });
  EXPECT_TRUE(status.ok()) << status;
  return names;
}

TEST(BackendPipeline, NamesThePassesInXlaCpusOrder) {
  const std::vector<std::string> expected = {"layout-normalization",
                                             "batchnorm-expander",
                                             "bf16-reductions-in-f32",
                                             "call-inliner",
                                             "algsimp",
                                             "tuple-simplifier",
                                             "while-loop-simplifier",
                                             "reshape-mover",
                                             "constant-folding",
                                             "cse",
                                             "while-loop-constant-sinking",
                                             "constant-folding",
                                             "while-loop-simplifier",
                                             "algsimp",
                                             "dce",
                                             "fusion",
                                             "multi-output-fusion",
                                             "cse"};
  EXPECT_EQ(EditedNames(/*run_backend_only=*/false), expected);
  EXPECT_EQ(EditedNames(/*run_backend_only=*/true),
            (std::vector<std::string>{"layout-normalization", "batchnorm-expander",
                                      "bf16-reductions-in-f32"}));
}

TEST(BackendPipeline, AnEditThatFailsStopsTheList) {
  HloPassPipeline pipeline("test");
  absl::Status status = AddBackendPreparationPasses(
      pipeline, /*run_backend_only=*/false,
      [](absl::string_view name, HloPassPipeline&) -> absl::StatusOr<bool> {
        if (name == "fusion") return absl::InternalError("no fusion here");
        return true;
      });
  EXPECT_EQ(status.code(), absl::StatusCode::kInternal);
  EXPECT_TRUE(absl::StrContains(status.message(), "no fusion here")) << status;
}

// A pass that counts its runs, for the edit to add in front of `fusion`.
class CountRuns : public HloPassInterface {
 public:
  explicit CountRuns(int* runs) : runs_(runs) {}
  absl::string_view name() const override { return "count-runs"; }
  absl::StatusOr<bool> Run(HloModule*) override {
    ++*runs_;
    return false;
  }

 private:
  int* runs_;
};

TEST(BackendPipeline, AnEditAddsItsPassesAndMayLeaveTheNamedOneOut) {
  std::unique_ptr<HloModule> module = cleanup_test::Parse(R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  n = f32[4] negate(p)
  ROOT a = f32[4] abs(n)
})");
  ASSERT_NE(module, nullptr);
  int runs = 0;
  HloPassPipeline pipeline("test");
  ASSERT_TRUE(AddBackendPreparationPasses(
                  pipeline, /*run_backend_only=*/false,
                  [&](absl::string_view name, HloPassPipeline& passes) -> absl::StatusOr<bool> {
                    if (name != "fusion") return true;
                    passes.AddPass<CountRuns>(&runs);
                    return false;
                  })
                  .ok());
  ASSERT_TRUE(pipeline.Run(module.get()).ok());
  EXPECT_EQ(runs, 1);
  // No `fusion` ran: the two ops stay apart (multi-output-fusion merges
  // only fusions).
  EXPECT_EQ(cleanup_test::CountOpcode(*module, HloOpcode::kFusion), 0) << module->ToString();
}

constexpr absl::string_view kVariadicReduceFusion = R"(
HloModule m
max_and_index {
  a = f32[] parameter(0)
  i = s32[] parameter(1)
  b = f32[] parameter(2)
  j = s32[] parameter(3)
  gt = pred[] compare(a, b), direction=GT
  v = f32[] select(gt, a, b)
  k = s32[] select(gt, i, j)
  ROOT t = (f32[], s32[]) tuple(v, k)
}
fused {
  x = f32[3,4] parameter(0)
  y = s32[3,4] parameter(1)
  c = f32[] constant(-inf)
  z = s32[] constant(0)
  ROOT r = (f32[3], s32[3]) reduce(x, y, c, z), dimensions={1}, to_apply=max_and_index
}
ENTRY e {
  x = f32[3,4] parameter(0)
  y = s32[3,4] parameter(1)
  ROOT f = (f32[3], s32[3]) fusion(x, y), kind=kLoop, calls=fused
})";

TEST(BackendPipeline, AVariadicReduceFusionGetsATupleRoot) {
  std::unique_ptr<HloModule> module = cleanup_test::Parse(kVariadicReduceFusion);
  ASSERT_NE(module, nullptr);
  const Literal before = cleanup_test::Evaluate(*module);
  EXPECT_TRUE(AddTupleRootsToFusions(*module, [](const HloInstruction&) { return false; }));
  const HloInstruction* fusion = module->entry_computation()->root_instruction();
  const HloInstruction* root =
      cast<HloFusionInstruction>(fusion)->fused_instructions_computation()->root_instruction();
  ASSERT_EQ(root->opcode(), HloOpcode::kTuple) << module->ToString();
  ASSERT_EQ(root->operand_count(), 2);
  EXPECT_EQ(root->operand(0)->opcode(), HloOpcode::kGetTupleElement);
  EXPECT_EQ(root->operand(1)->opcode(), HloOpcode::kGetTupleElement);
  EXPECT_EQ(cleanup_test::Evaluate(*module), before);
  // Once is enough: a tuple root stays.
  EXPECT_FALSE(AddTupleRootsToFusions(*module, [](const HloInstruction&) { return false; }));
}

TEST(BackendPipeline, ASkippedFusionKeepsItsRoot) {
  std::unique_ptr<HloModule> module = cleanup_test::Parse(kVariadicReduceFusion);
  ASSERT_NE(module, nullptr);
  EXPECT_FALSE(AddTupleRootsToFusions(*module, [](const HloInstruction&) { return true; }));
  const HloInstruction* fusion = module->entry_computation()->root_instruction();
  EXPECT_EQ(cast<HloFusionInstruction>(fusion)
                ->fused_instructions_computation()
                ->root_instruction()
                ->opcode(),
            HloOpcode::kReduce);
}

// A negate, an all-reduce-start / done pair (no loop fusion computes
// them) and an exp after them.
constexpr absl::string_view kWithAsync = R"(
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  p = f32[4] parameter(0)
  n = f32[4] negate(p)
  s = f32[4] all-reduce-start(n), to_apply=add
  d = f32[4] all-reduce-done(s)
  ROOT x = f32[4] exponential(d)
})";

TEST(BackendPipeline, WrapInLoopFusionsSkipsOrStopsAtWhatNoLoopFusionComputes) {
  auto not_plumbing = [](const HloInstruction& instruction) {
    return !IsPlumbing(instruction.opcode());
  };
  auto no = [](const HloInstruction&) { return false; };
  for (bool stop : {false, true}) {
    SCOPED_TRACE(stop ? "stop" : "skip");
    std::unique_ptr<HloModule> module = cleanup_test::Parse(kWithAsync);
    ASSERT_NE(module, nullptr);
    WrapInLoopFusions pass("test-wrap", not_plumbing, no, stop);
    absl::StatusOr<bool> changed = pass.Run(module.get());
    ASSERT_TRUE(changed.ok()) << changed.status();
    EXPECT_TRUE(*changed);
    // The negate is wrapped either way; the exp only when skipping.
    EXPECT_EQ(cleanup_test::CountOpcode(*module, HloOpcode::kFusion), stop ? 1 : 2)
        << module->ToString();
    EXPECT_EQ(cleanup_test::CountOpcode(*module, HloOpcode::kAllReduceStart), 1);
  }
}

TEST(BackendPipeline, PlumbingAndLoopFusibleOps) {
  EXPECT_TRUE(IsPlumbing(HloOpcode::kTuple));
  EXPECT_TRUE(IsPlumbing(HloOpcode::kFusion));
  EXPECT_FALSE(IsPlumbing(HloOpcode::kAdd));
  std::unique_ptr<HloModule> module = cleanup_test::Parse(kVariadicReduceFusion);
  ASSERT_NE(module, nullptr);
  const HloInstruction* fusion = module->entry_computation()->root_instruction();
  // A variadic reduce's tuple is computed by a loop fusion.
  EXPECT_TRUE(LoopFusible(
      *cast<HloFusionInstruction>(fusion)->fused_instructions_computation()->root_instruction()));
  std::unique_ptr<HloModule> async = cleanup_test::Parse(kWithAsync);
  ASSERT_NE(async, nullptr);
  const HloInstruction* root = async->entry_computation()->root_instruction();
  EXPECT_TRUE(LoopFusible(*root));
  EXPECT_FALSE(LoopFusible(*root->operand(0)));              // all-reduce-done
  EXPECT_FALSE(LoopFusible(*root->operand(0)->operand(0)));  // all-reduce-start
}

}  // namespace
}  // namespace axle
