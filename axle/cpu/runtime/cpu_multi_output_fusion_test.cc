//===- cpu_multi_output_fusion_test.cc --------------------------------------===//
//
// The cpu backend's multi-output fusion: sibling column reductions (batch
// norm backward's sums) merge into one kInput fusion computing each shared
// value once; reductions over other dimensions, of rows, of pred, or of
// another reduction's result do not. Each module is evaluated before and
// after (fusion_test_util.h: bit for bit equal).
//
//===----------------------------------------------------------------------===//
#include "axle/cpu/runtime/cpu_multi_output_fusion.h"

#include <vector>

#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/transforms/fusion_test_util.h"
#include "gtest/gtest.h"

namespace axle::cpu {
namespace {

using fusion_test::EntryInstructions;
using fusion_test::FusedOpcodes;
using fusion_test::RunAndCompare;

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

TEST(CpuMultiOutputFusionTest, SiblingColumnReductionsMergeIntoOneReductionFusion) {
  CpuMultiOutputFusion pass;
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

TEST(CpuMultiOutputFusionTest, ReductionsOverOtherDimensionsOrOfRowsDoNotMerge) {
  CpuMultiOutputFusion pass;
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

TEST(CpuMultiOutputFusionTest, AReductionOfAnotherReductionsResultDoesNotMerge) {
  // Batch norm: the variance's sum reads the mean (through a broadcast),
  // so the two sums over one input cannot be one pass; a third sum of the
  // same input that reads neither merges with the first.
  CpuMultiOutputFusion pass;
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

TEST(CpuMultiOutputFusionTest, PredColumnReductionsDoNotMerge) {
  // A pred fold stays scalar (reduction_kernel_test.cc); merged, it would
  // keep its sibling's loop scalar too.
  CpuMultiOutputFusion pass;
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
}  // namespace axle::cpu
