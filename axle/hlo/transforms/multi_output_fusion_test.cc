#include "axle/hlo/transforms/multi_output_fusion.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "axle/hlo/transforms/fusion_test_util.h"
#include "gtest/gtest.h"

namespace axle {
namespace {

using fusion_test::EntryInstructions;
using fusion_test::FusedOpcodes;
using fusion_test::RunAndCompare;

TEST(CpuMultiOutputFusion, SiblingsReadingOneOperandMergeAndShareTheirCommonPart) {
  CpuMultiOutputFusion pass;
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

TEST(CpuMultiOutputFusion, ProducerReadByOthersTooIsComputedInItsConsumer) {
  CpuMultiOutputFusion pass;
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

TEST(CpuMultiOutputFusion, AnOutputOnlyTheConsumerReadIsNoOutput) {
  CpuMultiOutputFusion pass;
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

TEST(CpuMultiOutputFusion, AConsumerReadingElsewhereThanItsIndexDoesNotMerge) {
  CpuMultiOutputFusion pass;
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

TEST(CpuMultiOutputFusion, SiblingsWithAPathBetweenThemDoNotMerge) {
  CpuMultiOutputFusion pass;
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

TEST(CpuMultiOutputFusion, OtherDimensionsReductionsAndSmallSharedOperandsDoNotMerge) {
  CpuMultiOutputFusion pass;
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

TEST(CpuMultiOutputFusion, ChainsMergeStepByStepIntoOneKernel) {
  // Two arrays updated from both, the shape of a threefry round: the fusion
  // pass leaves a kernel per array; merged, one kernel writes both.
  CpuMultiOutputFusion pass;
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

TEST(CpuMultiOutputFusion, MergedKernelsStayWithinTheSizeCap) {
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
  CpuMultiOutputFusion pass;
  RunAndCompare(text, pass, /*expect_change=*/false);
}

TEST(CpuMultiOutputFusion, LoopBodiesMergeToo) {
  CpuMultiOutputFusion pass;
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

// Batch norm backward's shape: sums over N, H and W (column reductions) of
// several expressions of the same two arrays, one kInput fusion each.
constexpr char kSiblingColumnReductions[] = R"(
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] maximum(a, b)
}
r1 {
  x = f32[3,5,7,19] parameter(0)
  y = f32[3,5,7,19] parameter(1)
  m = f32[3,5,7,19] multiply(x, y)
  z = f32[] constant(0)
  ROOT r = f32[19] reduce(m, z), dimensions={0,1,2}, to_apply=add
}
r2 {
  x = f32[3,5,7,19] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[19] reduce(x, z), dimensions={0,1,2}, to_apply=add
}
r3 {
  x = f32[3,5,7,19] parameter(0)
  y = f32[3,5,7,19] parameter(1)
  m = f32[3,5,7,19] multiply(x, y)
  s = f32[3,5,7,19] subtract(m, y)
  lo = f32[] constant(-inf)
  ROOT r = f32[19] reduce(s, lo), dimensions={0,1,2}, to_apply=max
}
r4 {
  y = bf16[3,5,7,19] parameter(0)
  c = f32[3,5,7,19] convert(y)
  z = f32[] constant(0)
  ROOT r = f32[19] reduce(c, z), dimensions={0,1,2}, to_apply=add
}
ENTRY e {
  x = f32[3,5,7,19] parameter(0)
  y = f32[3,5,7,19] parameter(1)
  yb = bf16[3,5,7,19] convert(y)
  a = f32[19] fusion(x, y), kind=kInput, calls=r1
  b = f32[19] fusion(x), kind=kInput, calls=r2
  c = f32[19] fusion(x, y), kind=kInput, calls=r3
  d = f32[19] fusion(yb), kind=kInput, calls=r4
  ROOT t = (f32[19], f32[19], f32[19], f32[19]) tuple(a, b, c, d)
}
)";

TEST(CpuMultiOutputFusion, SiblingColumnReductionsMergeIntoOneReductionFusion) {
  CpuMultiOutputFusion pass(CpuMultiOutputFusion::Options{.merge_sibling_reductions = true});
  auto module = RunAndCompare(kSiblingColumnReductions, pass);
  ASSERT_NE(module, nullptr);
  std::vector<HloInstruction*> fusions = EntryInstructions(*module, HloOpcode::kFusion);
  // r4 reads the bf16 copy only, which no other reduction reads.
  ASSERT_EQ(fusions.size(), 2u) << module->ToString();
  const auto* merged =
      cast<HloFusionInstruction>(fusions[0]->shape().IsTuple() ? fusions[0] : fusions[1]);
  EXPECT_EQ(merged->fusion_kind(), FusionKind::kInput);
  EXPECT_EQ(merged->shape().tuple_shapes().size(), 3u) << module->ToString();
  // x * y computed once for both reductions that read it.
  int multiplies = 0;
  for (const HloInstruction* instruction :
       merged->fused_instructions_computation()->instructions()) {
    multiplies += instruction->opcode() == HloOpcode::kMultiply;
  }
  EXPECT_EQ(multiplies, 1) << module->ToString();
  EXPECT_FALSE(*pass.Run(module.get()));
}

TEST(CpuMultiOutputFusion, SiblingReductionsStayApartWithoutTheOption) {
  CpuMultiOutputFusion pass;  // the GPU's: its emitters take one reduce root
  auto module = RunAndCompare(kSiblingColumnReductions, pass, /*expect_change=*/false);
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(EntryInstructions(*module, HloOpcode::kFusion).size(), 4u);
}

TEST(CpuMultiOutputFusion, ReductionsOverOtherDimensionsOrOfRowsDoNotMerge) {
  CpuMultiOutputFusion pass(CpuMultiOutputFusion::Options{.merge_sibling_reductions = true});
  auto module = RunAndCompare(R"(
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
over012 {
  x = f32[4,6,8,16] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[16] reduce(x, z), dimensions={0,1,2}, to_apply=add
}
over12 {
  x = f32[4,6,8,16] parameter(0)
  e = f32[4,6,8,16] exponential(x)
  z = f32[] constant(0)
  ROOT r = f32[4,16] reduce(e, z), dimensions={1,2}, to_apply=add
}
rows {
  x = f32[4,6,8,16] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[4,6,8] reduce(x, z), dimensions={3}, to_apply=add
}
rows2 {
  x = f32[4,6,8,16] parameter(0)
  n = f32[4,6,8,16] negate(x)
  z = f32[] constant(0)
  ROOT r = f32[4,6,8] reduce(n, z), dimensions={3}, to_apply=add
}
loop {
  x = f32[4,6,8,16] parameter(0)
  ROOT n = f32[4,6,8,16] negate(x)
}
ENTRY e {
  x = f32[4,6,8,16] parameter(0)
  a = f32[16] fusion(x), kind=kInput, calls=over012
  b = f32[4,16] fusion(x), kind=kInput, calls=over12
  c = f32[4,6,8] fusion(x), kind=kInput, calls=rows
  d = f32[4,6,8] fusion(x), kind=kInput, calls=rows2
  l = f32[4,6,8,16] fusion(x), kind=kLoop, calls=loop
  ROOT t = (f32[16], f32[4,16], f32[4,6,8], f32[4,6,8], f32[4,6,8,16]) tuple(a, b, c, d, l)
}
)",
                              pass, /*expect_change=*/false);
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(EntryInstructions(*module, HloOpcode::kFusion).size(), 5u);
}

TEST(CpuMultiOutputFusion, AReductionOfAnotherReductionsResultDoesNotMerge) {
  // Batch norm: the variance's sum reads the mean (through a broadcast),
  // so the two sums over one input cannot be one pass; a third sum of the
  // same input that reads neither merges with the first.
  CpuMultiOutputFusion pass(CpuMultiOutputFusion::Options{.merge_sibling_reductions = true});
  auto module = RunAndCompare(R"(
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
mean {
  x = f32[64,32] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[32] reduce(x, z), dimensions={0}, to_apply=add
}
var {
  x = f32[64,32] parameter(0)
  m = f32[32] parameter(1)
  b = f32[64,32] broadcast(m), dimensions={1}
  d = f32[64,32] subtract(x, b)
  s = f32[64,32] multiply(d, d)
  z = f32[] constant(0)
  ROOT r = f32[32] reduce(s, z), dimensions={0}, to_apply=add
}
squares {
  x = f32[64,32] parameter(0)
  s = f32[64,32] multiply(x, x)
  z = f32[] constant(0)
  ROOT r = f32[32] reduce(s, z), dimensions={0}, to_apply=add
}
ENTRY e {
  x = f32[64,32] parameter(0)
  m = f32[32] fusion(x), kind=kInput, calls=mean
  v = f32[32] fusion(x, m), kind=kInput, calls=var
  q = f32[32] fusion(x), kind=kInput, calls=squares
  ROOT t = (f32[32], f32[32], f32[32]) tuple(m, v, q)
}
)",
                              pass);
  ASSERT_NE(module, nullptr);
  std::vector<HloInstruction*> fusions = EntryInstructions(*module, HloOpcode::kFusion);
  ASSERT_EQ(fusions.size(), 2u) << module->ToString();
  // The merged mean and squares first, then the variance reading the mean.
  EXPECT_TRUE(fusions[0]->shape().IsTuple()) << module->ToString();
  EXPECT_EQ(FusedOpcodes(*fusions[1]), "broadcast,subtract,multiply,constant,reduce")
      << module->ToString();
}

TEST(CpuMultiOutputFusion, PredColumnReductionsDoNotMerge) {
  // A pred fold stays scalar (reduction_kernel_test.cc); merged, it would
  // keep its sibling's loop scalar too.
  CpuMultiOutputFusion pass(CpuMultiOutputFusion::Options{.merge_sibling_reductions = true});
  auto module = RunAndCompare(R"(
HloModule m
or {
  a = pred[] parameter(0)
  b = pred[] parameter(1)
  ROOT s = pred[] or(a, b)
}
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
any {
  x = f32[64,32] parameter(0)
  z = f32[] constant(0)
  zb = f32[64,32] broadcast(z), dimensions={}
  g = pred[64,32] compare(x, zb), direction=GT
  f = pred[] constant(false)
  ROOT r = pred[32] reduce(g, f), dimensions={0}, to_apply=or
}
sum {
  x = f32[64,32] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[32] reduce(x, z), dimensions={0}, to_apply=add
}
ENTRY e {
  x = f32[64,32] parameter(0)
  a = pred[32] fusion(x), kind=kInput, calls=any
  s = f32[32] fusion(x), kind=kInput, calls=sum
  ROOT t = (pred[32], f32[32]) tuple(a, s)
}
)",
                              pass, /*expect_change=*/false);
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(EntryInstructions(*module, HloOpcode::kFusion).size(), 2u);
}

}  // namespace
}  // namespace axle
