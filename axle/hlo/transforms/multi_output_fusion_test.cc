#include "axle/hlo/transforms/multi_output_fusion.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/text/hlo_parser.h"
#include "axle/hlo/transforms/fusion_test_util.h"
#include "axle/hlo/transforms/fusion_utils.h"
#include "gtest/gtest.h"

namespace axle {
namespace {

using fusion_test::EntryInstructions;
using fusion_test::FusedOpcodes;
using fusion_test::RunAndCompare;

TEST(MultiOutputFusion, SiblingsReadingOneOperandMergeAndShareTheirCommonPart) {
  MultiOutputFusion pass;
  auto module = RunAndCompare(R"(
HloModule m
f1 {
  p0 = f32[16,32] parameter(0)
  c = f32[] constant(3)
  b = f32[16,32] broadcast(c), dimensions={}
  m = f32[16,32] multiply(p0, b)
  ROOT a = f32[16,32] add(m, p0)
}
f2 {
  p0 = f32[16,32] parameter(0)
  c = f32[] constant(3)
  b = f32[16,32] broadcast(c), dimensions={}
  m = f32[16,32] multiply(p0, b)
  ROOT s = f32[16,32] subtract(m, p0)
}
ENTRY e {
  x = f32[16,32] parameter(0)
  f1 = f32[16,32] fusion(x), kind=kLoop, calls=f1
  f2 = f32[16,32] fusion(x), kind=kLoop, calls=f2
  ROOT t = (f32[16,32], f32[16,32]) tuple(f1, f2)
}
)",
                              pass);
  ASSERT_NE(module, nullptr);
  std::vector<HloInstruction*> fusions = EntryInstructions(*module, HloOpcode::kFusion);
  ASSERT_EQ(fusions.size(), 1u) << module->ToString();
  EXPECT_TRUE(fusions[0]->shape().IsTuple());
  // The constant, broadcast and multiply once, for both outputs.
  EXPECT_EQ(FusedOpcodes(*fusions[0]), "constant,broadcast,multiply,add,subtract,tuple");
  EXPECT_EQ(EntryInstructions(*module, HloOpcode::kGetTupleElement).size(), 2u);
  EXPECT_FALSE(*pass.Run(module.get()));
}

TEST(MultiOutputFusion, ProducerReadByOthersTooIsComputedInItsConsumer) {
  MultiOutputFusion pass;
  auto module = RunAndCompare(R"(
HloModule m
f1 {
  p0 = f32[8,8] parameter(0)
  ROOT e = f32[8,8] exponential(p0)
}
f2 {
  p0 = f32[8,8] parameter(0)
  p1 = f32[8,8] parameter(1)
  ROOT a = f32[8,8] add(p0, p1)
}
ENTRY e {
  x = f32[8,8] parameter(0)
  y = f32[8,8] parameter(1)
  f1 = f32[8,8] fusion(x), kind=kLoop, calls=f1
  f2 = f32[8,8] fusion(f1, y), kind=kLoop, calls=f2
  ROOT t = (f32[8,8], f32[8,8]) tuple(f1, f2)
}
)",
                              pass);
  ASSERT_NE(module, nullptr);
  std::vector<HloInstruction*> fusions = EntryInstructions(*module, HloOpcode::kFusion);
  ASSERT_EQ(fusions.size(), 1u) << module->ToString();
  EXPECT_EQ(FusedOpcodes(*fusions[0]), "exponential,add,tuple");
  EXPECT_EQ(fusions[0]->operand_count(), 2);
}

TEST(MultiOutputFusion, AnOutputOnlyTheConsumerReadIsNoOutput) {
  MultiOutputFusion pass;
  auto module = RunAndCompare(R"(
HloModule m
f1 {
  p0 = f32[8,8] parameter(0)
  ROOT e = f32[8,8] exponential(p0)
}
f2 {
  p0 = f32[8,8] parameter(0)
  p1 = f32[8,8] parameter(1)
  ROOT a = f32[8,8] add(p0, p1)
}
f3 {
  p0 = f32[8,8] parameter(0)
  p1 = f32[8,8] parameter(1)
  ROOT m = f32[8,8] multiply(p0, p1)
}
ENTRY e {
  x = f32[8,8] parameter(0)
  y = f32[8,8] parameter(1)
  f1 = f32[8,8] fusion(x), kind=kLoop, calls=f1
  f2 = f32[8,8] fusion(f1, y), kind=kLoop, calls=f2
  ROOT f3 = f32[8,8] fusion(f1, f2), kind=kLoop, calls=f3
}
)",
                              pass);
  ASSERT_NE(module, nullptr);
  std::vector<HloInstruction*> fusions = EntryInstructions(*module, HloOpcode::kFusion);
  ASSERT_EQ(fusions.size(), 1u) << module->ToString();
  EXPECT_TRUE(fusions[0]->shape().IsArray()) << module->ToString();
  EXPECT_EQ(module->entry_computation()->root_instruction(), fusions[0]);
  EXPECT_EQ(FusedOpcodes(*fusions[0]), "exponential,add,multiply");
}

TEST(MultiOutputFusion, AConsumerReadingElsewhereThanItsIndexDoesNotMerge) {
  MultiOutputFusion pass;
  RunAndCompare(R"(
HloModule m
f1 {
  p0 = f32[8,8] parameter(0)
  ROOT e = f32[8,8] exponential(p0)
}
f2 {
  p0 = f32[8,8] parameter(0)
  r = f32[8,8] reverse(p0), dimensions={0}
  p1 = f32[8,8] parameter(1)
  ROOT a = f32[8,8] add(r, p1)
}
ENTRY e {
  x = f32[8,8] parameter(0)
  y = f32[8,8] parameter(1)
  f1 = f32[8,8] fusion(x), kind=kLoop, calls=f1
  f2 = f32[8,8] fusion(f1, y), kind=kLoop, calls=f2
  ROOT t = (f32[8,8], f32[8,8]) tuple(f1, f2)
}
)",
                pass, /*expect_change=*/false);
}

TEST(MultiOutputFusion, SiblingsWithAPathBetweenThemDoNotMerge) {
  MultiOutputFusion pass;
  RunAndCompare(R"(
HloModule m
f1 {
  p0 = f32[8,8] parameter(0)
  ROOT e = f32[8,8] exponential(p0)
}
f2 {
  p0 = f32[8,8] parameter(0)
  p1 = f32[8,8] parameter(1)
  ROOT a = f32[8,8] add(p0, p1)
}
ENTRY e {
  x = f32[8,8] parameter(0)
  f1 = f32[8,8] fusion(x), kind=kLoop, calls=f1
  n = f32[8,8] transpose(f1), dimensions={1,0}
  f2 = f32[8,8] fusion(n, x), kind=kLoop, calls=f2
  ROOT t = (f32[8,8], f32[8,8]) tuple(f1, f2)
}
)",
                pass, /*expect_change=*/false);
}

TEST(MultiOutputFusion, OtherDimensionsReductionsAndSmallSharedOperandsDoNotMerge) {
  MultiOutputFusion pass;
  RunAndCompare(R"(
HloModule m
f1 {
  p0 = f32[8,8] parameter(0)
  ROOT e = f32[8,8] exponential(p0)
}
f2 {
  p0 = f32[8,8] parameter(0)
  ROOT r = f32[64] reshape(p0)
}
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
f3 {
  p0 = f32[8,8] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[8] reduce(p0, z), dimensions={1}, to_apply=add
}
f4 {
  p0 = f32[8] parameter(0)
  ROOT n = f32[8] negate(p0)
}
f5 {
  p0 = f32[] parameter(0)
  ROOT b = f32[64,64] broadcast(p0), dimensions={}
}
f6 {
  p0 = f32[] parameter(0)
  b = f32[64,64] broadcast(p0), dimensions={}
  ROOT n = f32[64,64] negate(b)
}
ENTRY e {
  x = f32[8,8] parameter(0)
  s = f32[] parameter(1)
  f1 = f32[8,8] fusion(x), kind=kLoop, calls=f1
  f2 = f32[64] fusion(x), kind=kLoop, calls=f2
  f3 = f32[8] fusion(x), kind=kInput, calls=f3
  f4 = f32[8] fusion(f3), kind=kLoop, calls=f4
  f5 = f32[64,64] fusion(s), kind=kLoop, calls=f5
  f6 = f32[64,64] fusion(s), kind=kLoop, calls=f6
  ROOT t = (f32[8,8], f32[64], f32[8], f32[64,64], f32[64,64]) tuple(f1, f2, f4, f5, f6)
}
)",
                pass, /*expect_change=*/false);
}

TEST(MultiOutputFusion, ChainsMergeStepByStepIntoOneKernel) {
  // Two arrays updated from both, the shape of a threefry round: the fusion
  // pass leaves a kernel per array; merged, one kernel writes both.
  MultiOutputFusion pass;
  auto module = RunAndCompare(R"(
HloModule m
g {
  p0 = u32[64,16] parameter(0)
  p1 = u32[64,16] parameter(1)
  a = u32[64,16] add(p0, p1)
  c = u32[] constant(13)
  b = u32[64,16] broadcast(c), dimensions={}
  s = u32[64,16] shift-left(p1, b)
  ROOT x = u32[64,16] xor(a, s)
}
h {
  p0 = u32[64,16] parameter(0)
  p1 = u32[64,16] parameter(1)
  ROOT a = u32[64,16] add(p0, p1)
}
h2 {
  p0 = u32[64,16] parameter(0)
  p1 = u32[64,16] parameter(1)
  ROOT a = u32[64,16] add(p0, p1)
}
k {
  p0 = u32[64,16] parameter(0)
  p1 = u32[64,16] parameter(1)
  p2 = u32[64,16] parameter(2)
  a = u32[64,16] add(p0, p1)
  ROOT x = u32[64,16] xor(a, p2)
}
ENTRY e {
  x0 = u32[64,16] parameter(0)
  x1 = u32[64,16] parameter(1)
  y1 = u32[64,16] fusion(x0, x1), kind=kLoop, calls=g
  y0 = u32[64,16] fusion(x0, x1), kind=kLoop, calls=h
  z1 = u32[64,16] fusion(x0, x1, y1), kind=kLoop, calls=k
  z0 = u32[64,16] fusion(y0, y1), kind=kLoop, calls=h2
  ROOT t = (u32[64,16], u32[64,16]) tuple(z0, z1)
}
)",
                              pass);
  ASSERT_NE(module, nullptr);
  std::vector<HloInstruction*> fusions = EntryInstructions(*module, HloOpcode::kFusion);
  ASSERT_EQ(fusions.size(), 1u) << module->ToString();
  // x0 + x1 once, though three of the kernels computed it.
  std::string opcodes = FusedOpcodes(*fusions[0]);
  EXPECT_EQ(opcodes, "add,constant,broadcast,shift-left,xor,xor,add,tuple") << opcodes;
}

TEST(MultiOutputFusion, MergedKernelsStayWithinTheSizeCap) {
  // Two siblings of 120 distinct instructions each: together over the cap.
  std::string text = "HloModule m\n";
  for (const char* name : {"f1", "f2"}) {
    absl::StrAppend(&text, name, " {\n  v0 = f32[32,32] parameter(0)\n");
    for (int i = 1; i <= 120; ++i) {
      absl::StrAppend(&text, "  v", i, " = f32[32,32] ",
                      std::string(name) == "f1" ? "negate" : "abs", "(v", i - 1, ")\n");
    }
    absl::StrAppend(&text, "  ROOT r = f32[32,32] add(v120, v0)\n}\n");
  }
  absl::StrAppend(&text, R"(ENTRY e {
  x = f32[32,32] parameter(0)
  f1 = f32[32,32] fusion(x), kind=kLoop, calls=f1
  f2 = f32[32,32] fusion(x), kind=kLoop, calls=f2
  ROOT t = (f32[32,32], f32[32,32]) tuple(f1, f2)
}
)");
  MultiOutputFusion pass;
  RunAndCompare(text, pass, /*expect_change=*/false);
}

TEST(MultiOutputFusion, LoopBodiesMergeToo) {
  MultiOutputFusion pass;
  auto module = RunAndCompare(R"(
HloModule m
f1 {
  p0 = f32[8,8] parameter(0)
  ROOT e = f32[8,8] negate(p0)
}
f2 {
  p0 = f32[8,8] parameter(0)
  ROOT a = f32[8,8] abs(p0)
}
body {
  s = (s32[], f32[8,8], f32[8,8]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  one = s32[] constant(1)
  j = s32[] add(i, one)
  x = f32[8,8] get-tuple-element(s), index=1
  a = f32[8,8] fusion(x), kind=kLoop, calls=f1
  b = f32[8,8] fusion(x), kind=kLoop, calls=f2
  ROOT t = (s32[], f32[8,8], f32[8,8]) tuple(j, a, b)
}
cond {
  s = (s32[], f32[8,8], f32[8,8]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
ENTRY e {
  x = f32[8,8] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[8,8], f32[8,8]) tuple(zero, x, x)
  w = (s32[], f32[8,8], f32[8,8]) while(init), condition=cond, body=body
  ROOT r = f32[8,8] get-tuple-element(w), index=2
}
)",
                              pass);
  ASSERT_NE(module, nullptr);
  int fusions = 0;
  for (const HloInstruction* instruction : module->GetComputationWithName("body")->instructions()) {
    fusions += instruction->opcode() == HloOpcode::kFusion;
  }
  EXPECT_EQ(fusions, 1) << module->ToString();
}

// Two sums over the rows of one array, one kInput fusion each.
constexpr char kSiblingReductions[] = R"(
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
sum {
  x = f32[64,32] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[32] reduce(x, z), dimensions={0}, to_apply=add
}
squares {
  x = f32[64,32] parameter(0)
  s = f32[64,32] multiply(x, x)
  z = f32[] constant(0)
  ROOT r = f32[32] reduce(s, z), dimensions={0}, to_apply=add
}
ENTRY e {
  x = f32[64,32] parameter(0)
  a = f32[32] fusion(x), kind=kInput, calls=sum
  b = f32[32] fusion(x), kind=kInput, calls=squares
  ROOT t = (f32[32], f32[32]) tuple(a, b)
}
)";

TEST(MultiOutputFusion, SiblingReductionsStayApartWithoutAHook) {
  MultiOutputFusion pass;  // the GPU's: its emitters take one reduce root
  auto module = RunAndCompare(kSiblingReductions, pass, /*expect_change=*/false);
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(EntryInstructions(*module, HloOpcode::kFusion).size(), 2u);
}

TEST(MultiOutputFusion, ABackendsReductionHookDecidesWhichReductionsMerge) {
  // A hook that takes fusions of one reduce root over dimension 0, keyed
  // by the reduce's input dimensions: the two sums merge as siblings.
  int calls = 0;
  MultiOutputFusion::Options options;
  options.reduction_space = [&calls](const HloComputation&,
                                     const std::vector<const HloInstruction*>& outputs)
      -> std::optional<MultiOutputFusion::IterationSpace> {
    ++calls;
    if (outputs.size() != 1 || outputs[0]->opcode() != HloOpcode::kReduce) return std::nullopt;
    return MultiOutputFusion::IterationSpace{outputs[0]->operand(0)->shape().dimensions(),
                                             /*reduction=*/false,
                                             {0}};
  };
  MultiOutputFusion pass(options);
  auto module = RunAndCompare(kSiblingReductions, pass);
  ASSERT_NE(module, nullptr);
  std::vector<HloInstruction*> fusions = EntryInstructions(*module, HloOpcode::kFusion);
  ASSERT_EQ(fusions.size(), 1u) << module->ToString();
  EXPECT_EQ(cast<HloFusionInstruction>(fusions[0])->fusion_kind(), FusionKind::kInput);
  EXPECT_EQ(fusions[0]->shape().tuple_shapes().size(), 2u);
  EXPECT_EQ(calls, 3);  // each sum, then the merged fusion (two roots: declined)

  // A hook that declines: nothing merges.
  MultiOutputFusion::Options declining;
  declining.reduction_space = [](const HloComputation&, const std::vector<const HloInstruction*>&)
      -> std::optional<MultiOutputFusion::IterationSpace> { return std::nullopt; };
  MultiOutputFusion none(declining);
  auto unchanged = RunAndCompare(kSiblingReductions, none, /*expect_change=*/false);
  ASSERT_NE(unchanged, nullptr);
  EXPECT_EQ(EntryInstructions(*unchanged, HloOpcode::kFusion).size(), 2u);
}

// Two sibling fusions, each summing `slices` slices of exp(x) (first at
// even offsets, second at odd ones): merged, exp(x) is computed once and
// emitted once per slice of both.
std::string SiblingSlicesModule(int64_t slices) {
  std::string first;
  std::string second;
  for (int64_t i = 0; i < slices; ++i) {
    for (auto [body, offset] : {std::pair{&first, 2 * i}, std::pair{&second, 2 * i + 1}}) {
      absl::StrAppend(body, "  s", i, " = f32[4] slice(e), slice={[", offset, ":", offset + 4,
                      "]}\n");
      if (i > 0) {
        absl::StrAppend(body, "  a", i, " = f32[4] add(", i == 1 ? "s0" : absl::StrCat("a", i - 1),
                        ", s", i, ")\n");
      }
    }
  }
  const std::string root = absl::StrCat("a", slices - 1);
  auto computation = [&](absl::string_view name, const std::string& body) {
    return absl::StrCat(name, " {\n  p = f32[64] parameter(0)\n  e = f32[64] exponential(p)\n",
                        body, "  ROOT r = f32[4] copy(", root, ")\n}\n");
  };
  return absl::StrCat("HloModule m\n", computation("f1", first), computation("f2", second),
                      "ENTRY e {\n  x = f32[64] parameter(0)\n"
                      "  f1 = f32[4] fusion(x), kind=kLoop, calls=f1\n"
                      "  f2 = f32[4] fusion(x), kind=kLoop, calls=f2\n"
                      "  ROOT t = (f32[4], f32[4]) tuple(f1, f2)\n}\n");
}

// Whether MergeIntoMultiOutputFusion merges f1 and f2 of `text`.
bool Merges(const std::string& text) {
  auto module = ParseAndReturnUnverifiedModule(text);
  EXPECT_TRUE(module.ok()) << module.status();
  if (!module.ok()) return false;
  std::vector<HloInstruction*> fusions = EntryInstructions(**module, HloOpcode::kFusion);
  EXPECT_EQ(fusions.size(), 2u);
  if (fusions.size() != 2) return false;
  auto merged = MergeIntoMultiOutputFusion(cast<HloFusionInstruction>(fusions[0]),
                                           cast<HloFusionInstruction>(fusions[1]), 1000);
  EXPECT_TRUE(merged.ok()) << merged.status();
  return merged.ok() && *merged != nullptr;
}

TEST(MultiOutputFusion, MergedSiblingsEmitNothingMoreThan15Times) {
  // 4 + 4 slices: exp emitted 8 times per element, merged. 8 + 8: 16.
  EXPECT_TRUE(Merges(SiblingSlicesModule(4)));
  EXPECT_FALSE(Merges(SiblingSlicesModule(8)));
}

}  // namespace
}  // namespace axle
