// InstructionFusion's row reductions: a reduce of trailing dimensions
// fuses into consumers that read it through row broadcasts (softmax, layer
// norm), and nowhere it would be recomputed per element.
#include "axle/hlo/analysis/row_index_analysis.h"
#include "axle/hlo/transforms/fusion_test_util.h"
#include "axle/hlo/transforms/instruction_fusion.h"
#include "gtest/gtest.h"

namespace axle {
namespace {

using fusion_test::EntryInstructions;
using fusion_test::FusedOpcodes;
using fusion_test::RunAndCompare;

constexpr char kReducers[] = R"(
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
)";

std::unique_ptr<HloModule> Fuse(const std::string& entry, bool expect_change = true) {
  InstructionFusion pass;
  return RunAndCompare(std::string(kReducers) + entry, pass, expect_change);
}

// Every reduce in every fusion of `module` other than a root is hoistable.
void ExpectReducesHoistable(const HloModule& module) {
  for (const HloInstruction* fusion : EntryInstructions(module, HloOpcode::kFusion)) {
    const HloComputation* fused =
        cast<HloFusionInstruction>(fusion)->fused_instructions_computation();
    EXPECT_TRUE(RowIndexAnalysis(*fused).ReducesAreHoistable()) << fused->ToString();
  }
}

TEST(RowFusion, SoftmaxIsOneLoopFusion) {
  auto module = Fuse(R"(
ENTRY e {
  x = f32[8,16] parameter(0)
  ninf = f32[] constant(-inf)
  rowmax = f32[8] reduce(x, ninf), dimensions={1}, to_apply=max
  rowmaxb = f32[8,16] broadcast(rowmax), dimensions={0}
  shifted = f32[8,16] subtract(x, rowmaxb)
  ex = f32[8,16] exponential(shifted)
  zero = f32[] constant(0)
  rowsum = f32[8] reduce(ex, zero), dimensions={1}, to_apply=add
  rowsumb = f32[8,16] broadcast(rowsum), dimensions={0}
  ROOT probs = f32[8,16] divide(ex, rowsumb)
}
)");
  ASSERT_NE(module, nullptr);
  std::vector<HloInstruction*> fusions = EntryInstructions(*module, HloOpcode::kFusion);
  ASSERT_EQ(fusions.size(), 1u) << module->ToString();
  auto* fusion = cast<HloFusionInstruction>(fusions[0]);
  EXPECT_EQ(fusion->fusion_kind(), FusionKind::kLoop);
  EXPECT_EQ(fusion->operand_count(), 1);
  // One exponential, read by the row sum and by the divide.
  EXPECT_EQ(FusedOpcodes(*fusion),
            "constant,constant,reduce,broadcast,subtract,exponential,reduce,broadcast,divide");
  ExpectReducesHoistable(*module);
}

TEST(RowFusion, LayerNormIsOneLoopFusion) {
  auto module = Fuse(R"(
ENTRY e {
  x = f32[8,16] parameter(0)
  gamma = f32[16] parameter(1)
  zero = f32[] constant(0)
  inv_n = f32[] constant(0.0625)
  inv_nb = f32[8] broadcast(inv_n), dimensions={}
  sum = f32[8] reduce(x, zero), dimensions={1}, to_apply=add
  mean = f32[8] multiply(sum, inv_nb)
  meanb = f32[8,16] broadcast(mean), dimensions={0}
  centered = f32[8,16] subtract(x, meanb)
  squared = f32[8,16] multiply(centered, centered)
  sumsq = f32[8] reduce(squared, zero), dimensions={1}, to_apply=add
  var = f32[8] multiply(sumsq, inv_nb)
  rstd = f32[8] rsqrt(var)
  rstdb = f32[8,16] broadcast(rstd), dimensions={0}
  normed = f32[8,16] multiply(centered, rstdb)
  gammab = f32[8,16] broadcast(gamma), dimensions={1}
  ROOT out = f32[8,16] multiply(normed, gammab)
}
)");
  ASSERT_NE(module, nullptr);
  std::vector<HloInstruction*> fusions = EntryInstructions(*module, HloOpcode::kFusion);
  ASSERT_EQ(fusions.size(), 1u) << module->ToString();
  EXPECT_EQ(cast<HloFusionInstruction>(fusions[0])->fusion_kind(), FusionKind::kLoop);
  ExpectReducesHoistable(*module);
}

TEST(RowFusion, ElementwiseConsumerOfAReduceIsAnEpilogue) {
  auto module = Fuse(R"(
ENTRY e {
  x = f32[8,16] parameter(0)
  zero = f32[] constant(0)
  r = f32[8] reduce(x, zero), dimensions={1}, to_apply=add
  ROOT n = f32[8] negate(r)
}
)");
  ASSERT_NE(module, nullptr);
  std::vector<HloInstruction*> fusions = EntryInstructions(*module, HloOpcode::kFusion);
  ASSERT_EQ(fusions.size(), 1u) << module->ToString();
  EXPECT_EQ(FusedOpcodes(*fusions[0]), "constant,reduce,negate");
  ExpectReducesHoistable(*module);
}

TEST(RowFusion, ReduceOverLeadingDimensionsDoesNotFuseIntoItsConsumer) {
  // Column sums broadcast back along rows: each would be recomputed per element.
  auto module = Fuse(R"(
ENTRY e {
  x = f32[8,16] parameter(0)
  zero = f32[] constant(0)
  colsum = f32[16] reduce(x, zero), dimensions={0}, to_apply=add
  colsumb = f32[8,16] broadcast(colsum), dimensions={1}
  ROOT d = f32[8,16] subtract(x, colsumb)
}
)");
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(EntryInstructions(*module, HloOpcode::kFusion).size(), 2u) << module->ToString();
  ExpectReducesHoistable(*module);
}

// The GPU's options: no reduction fuses into a consumer (a kernel with a
// thread per element would compute it per element), and f32 exp counts as
// cheap to duplicate: softmax is the row max, the exp-and-sum, and the
// exp-and-divide.
TEST(RowFusion, GpuOptionsKeepReductionsOutOfTheirConsumers) {
  InstructionFusion::Options options;
  options.fuse_reductions_into_consumers = false;
  options.duplicate_fast_gpu_math = true;
  InstructionFusion pass(options);
  auto module = RunAndCompare(std::string(kReducers) + R"(
ENTRY e {
  x = f32[8,16] parameter(0)
  ninf = f32[] constant(-inf)
  rowmax = f32[8] reduce(x, ninf), dimensions={1}, to_apply=max
  rowmaxb = f32[8,16] broadcast(rowmax), dimensions={0}
  shifted = f32[8,16] subtract(x, rowmaxb)
  ex = f32[8,16] exponential(shifted)
  zero = f32[] constant(0)
  rowsum = f32[8] reduce(ex, zero), dimensions={1}, to_apply=add
  rowsumb = f32[8,16] broadcast(rowsum), dimensions={0}
  ROOT probs = f32[8,16] divide(ex, rowsumb)
}
)",
                              pass);
  ASSERT_NE(module, nullptr);
  std::vector<HloInstruction*> fusions = EntryInstructions(*module, HloOpcode::kFusion);
  ASSERT_EQ(fusions.size(), 3u) << module->ToString();
  int reductions = 0;
  for (HloInstruction* instruction : fusions) {
    auto* fusion = cast<HloFusionInstruction>(instruction);
    const HloComputation* fused = fusion->fused_instructions_computation();
    for (const HloInstruction* inner : fused->instructions()) {
      if (inner->opcode() == HloOpcode::kReduce) {
        EXPECT_EQ(inner, fused->root_instruction()) << fused->ToString();
        EXPECT_EQ(fusion->fusion_kind(), FusionKind::kInput);
        ++reductions;
      }
    }
  }
  EXPECT_EQ(reductions, 2);
  // The exponential is computed by both the sum's and the divide's kernel.
  int exponentials = 0;
  for (HloInstruction* fusion : fusions) {
    for (const HloInstruction* inner :
         cast<HloFusionInstruction>(fusion)->fused_instructions_computation()->instructions()) {
      exponentials += inner->opcode() == HloOpcode::kExp;
    }
  }
  EXPECT_EQ(exponentials, 2) << module->ToString();
}

TEST(RowFusion, RowValueReadThroughATransposeDoesNotFuse) {
  auto module = Fuse(R"(
ENTRY e {
  x = f32[16,16] parameter(0)
  zero = f32[] constant(0)
  rowsum = f32[16] reduce(x, zero), dimensions={1}, to_apply=add
  rowsumb = f32[16,16] broadcast(rowsum), dimensions={0}
  t = f32[16,16] transpose(rowsumb), dimensions={1,0}
  ROOT d = f32[16,16] subtract(x, t)
}
)");
  ASSERT_NE(module, nullptr);
  std::vector<HloInstruction*> fusions = EntryInstructions(*module, HloOpcode::kFusion);
  EXPECT_EQ(fusions.size(), 2u) << module->ToString();
  ExpectReducesHoistable(*module);
}

TEST(RowFusion, FullReductionToAScalarDoesNotFuse) {
  // Rank 0: every thread's range would recompute the whole reduction.
  auto module = Fuse(R"(
ENTRY e {
  x = f32[8,16] parameter(0)
  zero = f32[] constant(0)
  total = f32[] reduce(x, zero), dimensions={0,1}, to_apply=add
  totalb = f32[8,16] broadcast(total), dimensions={}
  ROOT d = f32[8,16] divide(x, totalb)
}
)");
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(EntryInstructions(*module, HloOpcode::kFusion).size(), 2u) << module->ToString();
}

TEST(RowFusion, AReduceWithTwoConsumersIsNotDuplicated) {
  auto module = Fuse(R"(
ENTRY e {
  x = f32[8,16] parameter(0)
  y = f32[8,16] parameter(1)
  zero = f32[] constant(0)
  rowsum = f32[8] reduce(x, zero), dimensions={1}, to_apply=add
  rowsumb = f32[8,16] broadcast(rowsum), dimensions={0}
  a = f32[8,16] subtract(x, rowsumb)
  b = f32[8,16] add(y, rowsumb)
  ROOT t = (f32[8,16], f32[8,16], f32[8]) tuple(a, b, rowsum)
}
)");
  ASSERT_NE(module, nullptr);
  int reduces = 0;
  for (const HloInstruction* fusion : EntryInstructions(*module, HloOpcode::kFusion)) {
    for (const HloInstruction* fused :
         cast<HloFusionInstruction>(fusion)->fused_instructions_computation()->instructions()) {
      reduces += fused->opcode() == HloOpcode::kReduce;
    }
  }
  EXPECT_EQ(reduces, 1) << module->ToString();
  ExpectReducesHoistable(*module);
}

TEST(RowFusion, ThreeDimensionalRowsKeepTheirLeadingIndex) {
  // Reduce the last dimension of [4,6,8], broadcast back with dimensions={0,1}.
  auto module = Fuse(R"(
ENTRY e {
  x = f32[4,6,8] parameter(0)
  ninf = f32[] constant(-inf)
  m = f32[4,6] reduce(x, ninf), dimensions={2}, to_apply=max
  mb = f32[4,6,8] broadcast(m), dimensions={0,1}
  ROOT d = f32[4,6,8] subtract(x, mb)
}
)");
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(EntryInstructions(*module, HloOpcode::kFusion).size(), 1u) << module->ToString();
  ExpectReducesHoistable(*module);
}

TEST(RowIndexAnalysis, LoopPrefixes) {
  auto parsed = ParseAndReturnUnverifiedModule(std::string(kReducers) + R"(
ENTRY e {
  x = f32[8,16] parameter(0)
  zero = f32[] constant(0)
  rowsum = f32[8] reduce(x, zero), dimensions={1}, to_apply=add
  rowsumb = f32[8,16] broadcast(rowsum), dimensions={0}
  colsum = f32[16] reduce(x, zero), dimensions={0}, to_apply=add
  colsumb = f32[8,16] broadcast(colsum), dimensions={1}
  both = f32[8,16] add(rowsumb, colsumb)
  t = f32[8,16] transpose(x), dimensions={1,0}
  ROOT d = f32[8,16] subtract(both, t)
}
)");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  const HloComputation* entry = (*parsed)->entry_computation();
  RowIndexAnalysis analysis(*entry);
  auto named = [&](absl::string_view name) -> const HloInstruction* {
    for (const HloInstruction* instruction : entry->instructions()) {
      if (instruction->name() == name) return instruction;
    }
    ADD_FAILURE() << "no instruction " << name;
    return nullptr;
  };
  auto prefix = [&](absl::string_view name) { return analysis.LoopPrefix(named(name)); };
  EXPECT_EQ(prefix("d"), 2);
  EXPECT_EQ(prefix("both"), 2);
  EXPECT_EQ(prefix("rowsum"), 1);
  EXPECT_EQ(prefix("colsum"), 0);
  // x is read at (row, reduction loop) by the row sum, along columns by the
  // column sum and transposed: no index entry is a loop variable throughout.
  EXPECT_EQ(prefix("x"), 0);
  EXPECT_EQ(prefix("t"), 2);
  EXPECT_TRUE(analysis.IsHoistableRowValue(named("rowsum")));
  EXPECT_FALSE(analysis.IsHoistableRowValue(named("colsum")));
  EXPECT_FALSE(analysis.ReducesAreHoistable());
}

}  // namespace
}  // namespace axle
