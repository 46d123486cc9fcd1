#include "axle/hlo/transforms/instruction_fusion.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "axle/hlo/text/hlo_parser.h"
#include "axle/hlo/transforms/fusion_test_util.h"
#include "axle/hlo/transforms/fusion_utils.h"
#include "gtest/gtest.h"

namespace axle {
namespace {

using fusion_test::EntryInstructions;
using fusion_test::FusedOpcodes;
using fusion_test::RunAndCompare;

const HloFusionInstruction* RootFusion(const HloModule& module) {
  return dyn_cast<HloFusionInstruction>(module.entry_computation()->root_instruction());
}

TEST(InstructionFusion, ElementwiseWithBroadcastAndConstantIsOneLoopFusion) {
  InstructionFusion pass;
  auto module = RunAndCompare(R"(
HloModule m
ENTRY e {
  p0 = f32[4,8] parameter(0)
  p1 = f32[8] parameter(1)
  c = f32[] constant(2)
  bc = f32[4,8] broadcast(c), dimensions={}
  b1 = f32[4,8] broadcast(p1), dimensions={1}
  m = f32[4,8] multiply(p0, bc)
  ROOT a = f32[4,8] add(m, b1)
}
)",
                              pass);
  ASSERT_NE(module, nullptr);
  const HloFusionInstruction* fusion = RootFusion(*module);
  ASSERT_NE(fusion, nullptr) << module->ToString();
  EXPECT_EQ(fusion->fusion_kind(), FusionKind::kLoop);
  EXPECT_EQ(module->entry_computation()->instruction_count(), 3);  // p0, p1, fusion
  EXPECT_EQ(fusion->operand_count(), 2);
  EXPECT_EQ(fusion->fused_instructions_computation()->root_instruction()->opcode(),
            HloOpcode::kAdd);
  EXPECT_EQ(fusion->fused_instructions_computation()->instruction_count(), 7);
  // A second run finds nothing more.
  EXPECT_FALSE(*pass.Run(module.get()));
}

TEST(InstructionFusion, DataMovementOpsFuse) {
  InstructionFusion pass;
  auto module = RunAndCompare(R"(
HloModule m
ENTRY e {
  p0 = f32[4,6] parameter(0)
  p1 = f32[6,2] parameter(1)
  t = f32[6,4] transpose(p0), dimensions={1,0}
  r = f32[6,2,2] reshape(t)
  s = f32[6,2,1] slice(r), slice={[0:6], [0:2], [1:2]}
  s_2 = f32[6,2] reshape(s)
  cat = f32[6,4] concatenate(s_2, p1), dimensions={1}
  z = f32[] constant(0)
  pd = f32[8,5] pad(cat, z), padding=1_1x0_1
  io = s32[8,5] iota(), iota_dimension=0
  cv = f32[8,5] convert(io)
  rv = f32[8,5] reverse(pd), dimensions={1}
  ROOT a = f32[8,5] add(rv, cv)
}
)",
                              pass);
  ASSERT_NE(module, nullptr);
  const HloFusionInstruction* fusion = RootFusion(*module);
  ASSERT_NE(fusion, nullptr);
  EXPECT_EQ(fusion->fusion_kind(), FusionKind::kLoop);
  EXPECT_EQ(module->entry_computation()->instruction_count(), 3);
  EXPECT_EQ(FusedOpcodes(*fusion),
            "iota,convert,constant,transpose,reshape,slice,reshape,concatenate,pad,reverse,add");
}

TEST(InstructionFusion, SelectClampCompareDynamicSliceFuse) {
  InstructionFusion pass;
  auto module = RunAndCompare(R"(
HloModule m
ENTRY e {
  p0 = f32[8] parameter(0)
  p1 = f32[8] parameter(1)
  i = s32[] parameter(2)
  lo = f32[] constant(-0.5)
  hi = f32[] constant(0.5)
  cl = f32[8] clamp(lo, p0, hi)
  cmp = pred[8] compare(p0, p1), direction=LT
  sel = f32[8] select(cmp, cl, p1)
  ROOT ds = f32[3] dynamic-slice(sel, i), dynamic_slice_sizes={3}
}
)",
                              pass);
  ASSERT_NE(module, nullptr);
  const HloFusionInstruction* fusion = RootFusion(*module);
  ASSERT_NE(fusion, nullptr);
  EXPECT_EQ(module->entry_computation()->instruction_count(), 4);
  EXPECT_EQ(fusion->fused_instructions_computation()->root_instruction()->opcode(),
            HloOpcode::kDynamicSlice);
}

TEST(InstructionFusion, ProducersFuseIntoReduceAsInputFusion) {
  InstructionFusion pass;
  auto module = RunAndCompare(R"(
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  p0 = f32[16,32] parameter(0)
  p1 = f32[32] parameter(1)
  b = f32[16,32] broadcast(p1), dimensions={1}
  m = f32[16,32] multiply(p0, b)
  x = f32[16,32] exponential(m)
  z = f32[] constant(0)
  r = f32[32] reduce(x, z), dimensions={0}, to_apply=add
  ROOT n = f32[32] negate(r)
}
)",
                              pass);
  ASSERT_NE(module, nullptr);
  std::vector<HloInstruction*> fusions = EntryInstructions(*module, HloOpcode::kFusion);
  ASSERT_EQ(fusions.size(), 1u) << module->ToString();
  // The reduce (with everything before it) is a kInput fusion; the negate
  // after it stays alone (a column reduction is not a fused producer; row
  // reductions are: instruction_fusion_row_test.cc).
  auto* reduction = cast<HloFusionInstruction>(fusions[0]);
  EXPECT_EQ(reduction->fusion_kind(), FusionKind::kInput);
  EXPECT_EQ(FusedOpcodes(*reduction), "constant,broadcast,multiply,exponential,reduce");
  EXPECT_EQ(module->entry_computation()->root_instruction()->opcode(), HloOpcode::kNegate);
  // The reducer is not touched.
  EXPECT_EQ(module->GetComputationWithName("add")->instruction_count(), 3);
}

TEST(InstructionFusion, ExpensiveProducerWithTwoUsersIsNotDuplicated) {
  InstructionFusion pass;
  auto module = RunAndCompare(R"(
HloModule m
ENTRY e {
  p = f32[8] parameter(0)
  x = f32[8] exponential(p)
  a = f32[8] add(x, p)
  b = f32[8] multiply(x, p)
  ROOT t = (f32[8], f32[8]) tuple(a, b)
}
)",
                              pass, /*expect_change=*/false);
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(EntryInstructions(*module, HloOpcode::kExp).size(), 1u);
}

TEST(InstructionFusion, CheapProducerWithFusibleUsersIsDuplicated) {
  InstructionFusion pass;
  auto module = RunAndCompare(R"(
HloModule m
ENTRY e {
  p = f32[8] parameter(0)
  q = f32[8] parameter(1)
  n = f32[8] negate(p)
  a = f32[8] add(n, q)
  b = f32[8] multiply(n, q)
  ROOT t = (f32[8], f32[8]) tuple(a, b)
}
)",
                              pass);
  ASSERT_NE(module, nullptr);
  EXPECT_TRUE(EntryInstructions(*module, HloOpcode::kNegate).empty()) << module->ToString();
  std::vector<HloInstruction*> fusions = EntryInstructions(*module, HloOpcode::kFusion);
  ASSERT_EQ(fusions.size(), 2u);
  for (HloInstruction* fusion : fusions) {
    EXPECT_EQ(fusion->operand_count(), 2);
    EXPECT_NE(FusedOpcodes(*fusion).find("negate"), std::string::npos);
  }
}

TEST(InstructionFusion, CheapProducerReadByADotStaysOutside) {
  InstructionFusion pass;
  auto module = RunAndCompare(R"(
HloModule m
ENTRY e {
  p = f32[4,4] parameter(0)
  n = f32[4,4] negate(p)
  d = f32[4,4] dot(n, p), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT a = f32[4,4] add(n, d)
}
)",
                              pass, /*expect_change=*/false);
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(EntryInstructions(*module, HloOpcode::kNegate).size(), 1u);
  EXPECT_EQ(EntryInstructions(*module, HloOpcode::kDot).size(), 1u);
}

TEST(InstructionFusion, NeverFusesOpaqueOrSideEffectingOps) {
  InstructionFusion pass;
  auto module = RunAndCompare(R"(
HloModule m
lt {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=LT
}
ENTRY e {
  p = f32[4] parameter(0)
  lo = f32[] constant(0)
  hi = f32[] constant(1)
  r = f32[4] rng(lo, hi), distribution=rng_uniform
  s = f32[4] sort(p), dimensions={0}, to_apply=lt
  ROOT t = (f32[4], f32[4]) tuple(r, s)
}
)",
                              pass, /*expect_change=*/false);
  ASSERT_NE(module, nullptr);
}

TEST(InstructionFusion, LargeConstantsStayOutside) {
  InstructionFusion pass;
  auto module = RunAndCompare(R"(
HloModule m
ENTRY e {
  p = f32[2,40] parameter(0)
  c = f32[2,40] constant({...})
  n = f32[2,40] negate(c)
  ROOT a = f32[2,40] add(p, n)
}
)",
                              pass);
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(EntryInstructions(*module, HloOpcode::kConstant).size(), 1u);
  EXPECT_EQ(FusedOpcodes(*RootFusion(*module)), "negate,add");
}

TEST(InstructionFusion, ExistingLoopFusionMergesIntoItsConsumer) {
  InstructionFusion pass;
  auto module = RunAndCompare(R"(
HloModule m
inner {
  a = f32[8] parameter(0)
  b = f32[8] parameter(1)
  ROOT s = f32[8] subtract(a, b)
}
ENTRY e {
  p = f32[8] parameter(0)
  q = f32[8] parameter(1)
  f = f32[8] fusion(p, q), kind=kLoop, calls=inner
  ROOT m = f32[8] multiply(f, p)
}
)",
                              pass);
  ASSERT_NE(module, nullptr);
  const HloFusionInstruction* fusion = RootFusion(*module);
  ASSERT_NE(fusion, nullptr);
  EXPECT_EQ(FusedOpcodes(*fusion), "subtract,multiply");
  EXPECT_EQ(fusion->operand_count(), 2);
  // The merged fusion's old body is gone.
  EXPECT_EQ(module->GetComputationWithName("inner"), nullptr);
  EXPECT_EQ(module->computation_count(), 2);
}

TEST(InstructionFusion, FusesInsideWhileBodies) {
  InstructionFusion pass;
  auto module = RunAndCompare(R"(
HloModule m
cond {
  s = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(3)
  ROOT c = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[4] get-tuple-element(s), index=1
  one = s32[] constant(1)
  i2 = s32[] add(i, one)
  h = f32[] constant(0.5)
  hb = f32[4] broadcast(h), dimensions={}
  m = f32[4] multiply(x, hb)
  a = f32[4] add(m, x)
  ROOT t = (s32[], f32[4]) tuple(i2, a)
}
ENTRY e {
  p = f32[4] parameter(0)
  z = s32[] constant(0)
  init = (s32[], f32[4]) tuple(z, p)
  ROOT w = (s32[], f32[4]) while(init), condition=cond, body=body
}
)",
                              pass);
  ASSERT_NE(module, nullptr);
  const HloComputation* body = module->GetComputationWithName("body");
  ASSERT_NE(body, nullptr);
  int fusions = 0;
  for (const HloInstruction* instruction : body->instructions()) {
    if (instruction->opcode() == HloOpcode::kFusion) ++fusions;
  }
  EXPECT_EQ(fusions, 2);  // the counter add (with its constant) and the vector math
}

TEST(InstructionFusion, AFusedScheduledModuleIsNoLongerScheduled) {
  InstructionFusion pass;
  auto module = RunAndCompare(R"(
HloModule m, is_scheduled=true
ENTRY e {
  p = f32[4] parameter(0)
  n = f32[4] negate(p)
  a = f32[4] add(n, p)
  ROOT t = (f32[4]) tuple(a)
}
)",
                              pass);
  ASSERT_NE(module, nullptr);
  EXPECT_FALSE(module->config().is_scheduled);
  EXPECT_EQ(EntryInstructions(*module, HloOpcode::kFusion).size(), 1u);
}

TEST(InstructionFusion, ExpensiveProducerIsNotRecomputedPerBroadcastElement) {
  InstructionFusion pass;
  auto module = RunAndCompare(R"(
HloModule m
ENTRY e {
  p = f32[8] parameter(0)
  q = f32[8,8] parameter(1)
  x = f32[8] exponential(p)
  b = f32[8,8] broadcast(x), dimensions={1}
  ROOT a = f32[8,8] add(b, q)
}
)",
                              pass);
  ASSERT_NE(module, nullptr);
  // The broadcast fuses into the add, the exponential stays outside.
  EXPECT_EQ(EntryInstructions(*module, HloOpcode::kExp).size(), 1u);
  ASSERT_NE(RootFusion(*module), nullptr);
  EXPECT_EQ(FusedOpcodes(*RootFusion(*module)), "broadcast,add");
}

TEST(InstructionFusion, GatherFusesWithItsConsumersAndCheapProducers) {
  // An embedding gradient's lookup: the rows of a cheap elementwise value
  // gathered and masked are one loop; an expensive producer of the table
  // stays outside (the gather may read each element many times).
  InstructionFusion pass;
  auto module = RunAndCompare(R"(
HloModule m
ENTRY e {
  t = f32[6,4] parameter(0)
  idx = s32[10,1] parameter(1)
  keep = pred[10] parameter(2)
  one = f32[] constant(1)
  ones = f32[6,4] broadcast(one), dimensions={}
  d = f32[6,4] subtract(ones, t)
  g = f32[10,4] gather(d, idx), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,4}
  kb = pred[10,4] broadcast(keep), dimensions={0}
  zero = f32[] constant(0)
  zeros = f32[10,4] broadcast(zero), dimensions={}
  ROOT s = f32[10,4] select(kb, g, zeros)
}
)",
                              pass);
  ASSERT_NE(module, nullptr);
  ASSERT_NE(RootFusion(*module), nullptr) << module->ToString();
  EXPECT_EQ(EntryInstructions(*module, HloOpcode::kGather).size(), 0u);
  EXPECT_TRUE(absl::StrContains(FusedOpcodes(*RootFusion(*module)), "subtract"));
  EXPECT_TRUE(absl::StrContains(FusedOpcodes(*RootFusion(*module)), "gather"));

  auto expensive = RunAndCompare(R"(
HloModule m
ENTRY e {
  t = f32[6,4] parameter(0)
  idx = s32[10,1] parameter(1)
  x = f32[6,4] exponential(t)
  g = f32[10,4] gather(x, idx), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,4}
  ROOT n = f32[10,4] negate(g)
}
)",
                                 pass);
  ASSERT_NE(expensive, nullptr);
  EXPECT_EQ(EntryInstructions(*expensive, HloOpcode::kExp).size(), 1u);
  ASSERT_NE(RootFusion(*expensive), nullptr);
  EXPECT_EQ(FusedOpcodes(*RootFusion(*expensive)), "gather,negate");
}

TEST(InstructionFusion, LayoutChangingBitcastsStayOutside) {
  // After layout-normalization: the bitcasts between a column-major array
  // and its row-major view move no data, so the kernel reads the views.
  InstructionFusion pass;
  auto module = RunAndCompare(R"(
HloModule m
ENTRY e {
  p0 = f32[2,3]{0,1} parameter(0)
  v = f32[3,2] bitcast(p0)
  n = f32[3,2] negate(v)
  e = f32[3,2] exponential(n)
  ROOT r = f32[2,3]{0,1} bitcast(e)
}
)",
                              pass);
  ASSERT_NE(module, nullptr);
  const HloInstruction* root = module->entry_computation()->root_instruction();
  EXPECT_EQ(root->opcode(), HloOpcode::kBitcast);
  ASSERT_EQ(root->operand(0)->opcode(), HloOpcode::kFusion) << module->ToString();
  EXPECT_EQ(root->operand(0)->operand(0)->opcode(), HloOpcode::kBitcast);
}

// A long chain grows one fusion in place (fusion_utils.h:
// FuseProducerIntoFusionInPlace), then compacted once: no parameter is left
// unused, the parameters are numbered as fusing step by step numbers them
// (each producer's operands first), and the result is the interpreter's.
TEST(InstructionFusion, LongChainGrowsOneFusionWithoutUnusedParameters) {
  std::string text =
      "HloModule m\nENTRY e {\n  p0 = u32[16] parameter(0)\n"
      "  p1 = u32[16] parameter(1)\n  p2 = u32[16] parameter(2)\n"
      "  x0 = u32[16] add(p0, p1)\n";
  constexpr int kSteps = 60;
  for (int i = 1; i <= kSteps; ++i) {
    // Operands the fusion reads already (p0, p1) and one it reads from the
    // middle of the chain on (p2).
    const char* other = i % 3 == 0 ? "p0" : (i > kSteps / 2 ? "p2" : "p1");
    const char* op = i % 2 == 0 ? "xor" : "add";
    text += absl::StrCat("  x", i, " = u32[16] ", op, "(x", i - 1, ", ", other, ")\n");
  }
  text += absl::StrCat("  ROOT r = u32[16] multiply(x", kSteps, ", x", kSteps, ")\n}\n");
  InstructionFusion pass;
  auto module = RunAndCompare(text, pass);
  ASSERT_NE(module, nullptr);
  const HloFusionInstruction* fusion = RootFusion(*module);
  ASSERT_NE(fusion, nullptr) << module->ToString();
  EXPECT_EQ(module->entry_computation()->instruction_count(), 4);  // p0, p1, p2, fusion
  const HloComputation* fused = fusion->fused_instructions_computation();
  EXPECT_EQ(fused->instruction_count(), 3 + kSteps + 2);
  ASSERT_EQ(fusion->operand_count(), 3);
  for (const HloInstruction* parameter : fused->parameter_instructions()) {
    EXPECT_GT(parameter->user_count(), 0) << parameter->name();
  }
  // The last producer fused is x0 = add(p0, p1): its operands come first.
  EXPECT_EQ(fusion->operand(0)->name(), "p0");
  EXPECT_EQ(fusion->operand(1)->name(), "p1");
  EXPECT_EQ(fusion->operand(2)->name(), "p2");
  // Only the fusion passes' own instructions are left (no placeholder).
  for (const HloInstruction* instruction : module->entry_computation()->instructions()) {
    EXPECT_NE(instruction->opcode(), HloOpcode::kAfterAll);
  }
  EXPECT_FALSE(*pass.Run(module.get()));
}

// A producer read elsewhere too is duplicated into a fusion grown in place:
// it stays, its copy gets a name of its own, and both results are right.
TEST(InstructionFusion, InPlaceGrowthDuplicatesASharedProducer) {
  InstructionFusion pass;
  auto module = RunAndCompare(R"(
HloModule m
ENTRY e {
  p0 = f32[8] parameter(0)
  p1 = f32[8] parameter(1)
  n = f32[8] negate(p0)
  a = f32[8] add(n, p1)
  b = f32[8] multiply(a, p1)
  c = f32[8] subtract(b, n)
  d = f32[8] multiply(n, n)
  ROOT t = (f32[8], f32[8]) tuple(c, d)
}
)",
                              pass);
  ASSERT_NE(module, nullptr);
  const HloInstruction* root = module->entry_computation()->root_instruction();
  for (int64_t i = 0; i < 2; ++i) {
    const auto* fusion = dyn_cast<HloFusionInstruction>(root->operand(i));
    ASSERT_NE(fusion, nullptr) << module->ToString();
    int64_t negates = 0;
    for (const HloInstruction* fused : fusion->fused_instructions_computation()->instructions()) {
      negates += fused->opcode() == HloOpcode::kNegate ? 1 : 0;
      if (fused->opcode() == HloOpcode::kParameter) {
        EXPECT_GT(fused->user_count(), 0) << fused->name();
      }
    }
    EXPECT_EQ(negates, 1) << module->ToString();
  }
  // p0, p1, two fusions, the tuple: the negate itself is gone.
  EXPECT_EQ(module->entry_computation()->instruction_count(), 5) << module->ToString();
}

// Threefry's rounds: every value is read by two or three of the next
// round's ops. The chain is one fusion whose fused computation holds each
// op once (a producer's copy is reused by its later readers inside the
// fusion, not copied again: no tree of copies).
TEST(InstructionFusion, SharedChainFusesAsADag) {
  InstructionFusion pass;
  auto module = RunAndCompare(R"(
HloModule m
ENTRY e {
  p0 = u32[256] parameter(0)
  p1 = u32[256] parameter(1)
  c13 = u32[] constant(13)
  r = u32[256] broadcast(c13), dimensions={}
  c19 = u32[] constant(19)
  q = u32[256] broadcast(c19), dimensions={}
  a0 = u32[256] add(p0, p1)
  l0 = u32[256] shift-left(p1, r)
  s0 = u32[256] shift-right-logical(p1, q)
  o0 = u32[256] or(l0, s0)
  b0 = u32[256] xor(a0, o0)
  a1 = u32[256] add(a0, b0)
  l1 = u32[256] shift-left(b0, r)
  s1 = u32[256] shift-right-logical(b0, q)
  o1 = u32[256] or(l1, s1)
  b1 = u32[256] xor(a1, o1)
  a2 = u32[256] add(a1, b1)
  l2 = u32[256] shift-left(b1, r)
  s2 = u32[256] shift-right-logical(b1, q)
  o2 = u32[256] or(l2, s2)
  b2 = u32[256] xor(a2, o2)
  a3 = u32[256] add(a2, b2)
  l3 = u32[256] shift-left(b2, r)
  s3 = u32[256] shift-right-logical(b2, q)
  o3 = u32[256] or(l3, s3)
  b3 = u32[256] xor(a3, o3)
  a4 = u32[256] add(a3, b3)
  l4 = u32[256] shift-left(b3, r)
  s4 = u32[256] shift-right-logical(b3, q)
  o4 = u32[256] or(l4, s4)
  b4 = u32[256] xor(a4, o4)
  a5 = u32[256] add(a4, b4)
  l5 = u32[256] shift-left(b4, r)
  s5 = u32[256] shift-right-logical(b4, q)
  o5 = u32[256] or(l5, s5)
  b5 = u32[256] xor(a5, o5)
  ROOT x = u32[256] xor(a5, b5)
}
)",
                              pass);
  ASSERT_NE(module, nullptr);
  const HloFusionInstruction* fusion = RootFusion(*module);
  ASSERT_NE(fusion, nullptr) << module->ToString();
  // p0, p1 and the fusion: nothing duplicated stays outside.
  EXPECT_EQ(module->entry_computation()->instruction_count(), 3) << module->ToString();
  // 2 parameters, 4 for the rotations, 5 per round, the root.
  EXPECT_EQ(fusion->fused_instructions_computation()->instruction_count(), 2 + 4 + 5 * 6 + 1)
      << module->ToString();
}

// A bitcast-convert between types of one width is elementwise: random bits
// made floats fuse with what made the bits and what uses the floats.
TEST(InstructionFusion, SameWidthBitcastConvertFuses) {
  InstructionFusion pass;
  auto module = RunAndCompare(R"(
HloModule m
ENTRY e {
  p0 = u32[64] parameter(0)
  c9 = u32[] constant(9)
  nines = u32[64] broadcast(c9), dimensions={}
  m = u32[64] shift-right-logical(p0, nines)
  e = u32[] constant(1065353216)
  es = u32[64] broadcast(e), dimensions={}
  bits = u32[64] or(m, es)
  f = f32[64] bitcast-convert(bits)
  one = f32[] constant(1)
  ones = f32[64] broadcast(one), dimensions={}
  ROOT u = f32[64] subtract(f, ones)
}
)",
                              pass);
  ASSERT_NE(module, nullptr);
  ASSERT_NE(RootFusion(*module), nullptr) << module->ToString();
  EXPECT_EQ(module->entry_computation()->instruction_count(), 2) << module->ToString();
}

// With max_recomputed_instructions (the GPU's), a long chain on a few
// values read through a broadcast stays out of its readers (computed once,
// not once per element); a short one fuses. Without it, both fuse.
TEST(InstructionFusion, LongChainsBehindBroadcastsStayOut) {
  constexpr char kText[] = R"(
HloModule m
ENTRY e {
  k = u32[4] parameter(0)
  p = u32[1024,4] parameter(1)
  a1 = u32[4] add(k, k)
  a2 = u32[4] multiply(a1, k)
  a3 = u32[4] xor(a2, a1)
  a4 = u32[4] add(a3, a2)
  a5 = u32[4] multiply(a4, a3)
  a6 = u32[4] xor(a5, a4)
  b = u32[1024,4] broadcast(a6), dimensions={1}
  ROOT s = u32[1024,4] add(p, b)
}
)";
  InstructionFusion::Options options;
  options.max_recomputed_instructions = 4;
  InstructionFusion limited(options);
  auto kept = RunAndCompare(kText, limited);
  ASSERT_NE(kept, nullptr);
  const HloFusionInstruction* reader = RootFusion(*kept);
  ASSERT_NE(reader, nullptr) << kept->ToString();
  // The chain: a fusion of its own, read by the broadcasting one.
  EXPECT_EQ(reader->operand(0)->opcode() == HloOpcode::kFusion ||
                reader->operand(1)->opcode() == HloOpcode::kFusion,
            true)
      << kept->ToString();
  options.max_recomputed_instructions = 8;
  InstructionFusion roomy(options);
  auto fused = RunAndCompare(kText, roomy);
  ASSERT_NE(fused, nullptr);
  EXPECT_EQ(fused->entry_computation()->instruction_count(), 3) << fused->ToString();
  InstructionFusion unlimited;
  auto cpu = RunAndCompare(kText, unlimited);
  ASSERT_NE(cpu, nullptr);
  EXPECT_EQ(cpu->entry_computation()->instruction_count(), 3) << cpu->ToString();
}

// IndexUsageCounts of the computation `name` of `text`, by instruction name.
std::map<std::string, int64_t> CountsOf(absl::string_view text, absl::string_view name) {
  auto module = ParseAndReturnUnverifiedModule(text);
  EXPECT_TRUE(module.ok()) << module.status();
  if (!module.ok()) return {};
  const HloComputation* computation = (*module)->GetComputationWithName(name);
  EXPECT_NE(computation, nullptr);
  if (computation == nullptr) return {};
  const auto counts = IndexUsageCounts(*computation);
  std::map<std::string, int64_t> out;
  for (const auto& [instruction, count] : counts) out[std::string(instruction->name())] = count;
  return out;
}

using Counts = std::map<std::string, int64_t>;

TEST(IndexUsageCounts, ElementwiseOpsAndTransposesShareTheirUsersIndex) {
  // e is read three ways (negate, multiply, transpose): each keeps the index,
  // so e is emitted once per element of the output.
  EXPECT_EQ(CountsOf(R"(
HloModule m
fused {
  p = f32[8,8] parameter(0)
  e = f32[8,8] exponential(p)
  n = f32[8,8] negate(e)
  t = f32[8,8] transpose(e), dimensions={1,0}
  m = f32[8,8] multiply(n, e)
  ROOT a = f32[8,8] add(m, t)
}
ENTRY e {
  x = f32[8,8] parameter(0)
  ROOT f = f32[8,8] fusion(x), kind=kLoop, calls=fused
}
)",
                     "fused"),
            (Counts{{"e", 1}, {"n", 1}, {"m", 1}, {"t", 1}, {"a", 1}}));
}

TEST(IndexUsageCounts, SlicesPadsAndConcatenationsMultiply) {
  // Two levels of halving: e is read by two slices of a1, itself read by
  // two slices and the concatenation.
  EXPECT_EQ(CountsOf(R"(
HloModule m
fused {
  p = f32[16] parameter(0)
  e = f32[16] exponential(p)
  s0 = f32[8] slice(e), slice={[0:8]}
  s1 = f32[8] slice(e), slice={[8:16]}
  a1 = f32[8] add(s0, s1)
  s2 = f32[4] slice(a1), slice={[0:4]}
  s3 = f32[4] slice(a1), slice={[4:8]}
  a2 = f32[4] add(s2, s3)
  z = f32[] constant(0)
  pd = f32[8] pad(a2, z), padding=0_4
  ROOT c = f32[16] concatenate(pd, a1), dimensions={0}
}
ENTRY e {
  x = f32[16] parameter(0)
  ROOT f = f32[16] fusion(x), kind=kLoop, calls=fused
}
)",
                     "fused"),
            (Counts{{"e", 6},
                    {"s0", 3},
                    {"s1", 3},
                    {"a1", 3},
                    {"s2", 1},
                    {"s3", 1},
                    {"a2", 1},
                    {"z", 1},
                    {"pd", 1},
                    {"c", 1}}));
}

TEST(IndexUsageCounts, ReverseOfTheSameShapeAddsAnIndex) {
  EXPECT_EQ(CountsOf(R"(
HloModule m
fused {
  p = f32[8] parameter(0)
  e = f32[8] exponential(p)
  r = f32[8] reverse(e), dimensions={0}
  ROOT a = f32[8] add(e, r)
}
ENTRY e {
  x = f32[8] parameter(0)
  ROOT f = f32[8] fusion(x), kind=kLoop, calls=fused
}
)",
                     "fused"),
            (Counts{{"e", 2}, {"r", 1}, {"a", 1}}));
}

// lax.associative_scan of the linear recurrence h_t = a_t * h_{t-1} + b_t
// over `steps` rows of [steps, width], as jax lowers it: log2(steps) levels
// of strided slices, the combining ops, concatenations and interior pads
// interleaving the levels (tests/jax_kinds/associative_scan_linear_rnn.hlo
// is this for 32 steps of width 128).
std::string AssociativeScanModule(int64_t steps, int64_t width) {
  struct Value {
    std::string name;
    int64_t rows;
  };
  std::string body;
  int64_t next = 0;
  auto emit = [&](int64_t rows, const std::string& op) {
    Value value{absl::StrCat("v", next++), rows};
    absl::StrAppend(&body, "  ", value.name, " = f32[", rows, ",", width, "] ", op, "\n");
    return value;
  };
  auto slice = [&](const Value& value, int64_t start, int64_t stop, int64_t step) {
    stop = std::max(std::min(stop, value.rows), start);
    const int64_t rows = (stop - start + step - 1) / step;
    return emit(rows, absl::StrCat("slice(", value.name, "), slice={[", start, ":", stop, ":", step,
                                   "], [0:", width, "]}"));
  };
  using Pair = std::pair<Value, Value>;
  auto combine = [&](const Pair& x, const Pair& y) {
    const int64_t rows = x.first.rows;
    Value a = emit(rows, absl::StrCat("multiply(", x.first.name, ", ", y.first.name, ")"));
    Value m = emit(rows, absl::StrCat("multiply(", y.first.name, ", ", x.second.name, ")"));
    Value b = emit(rows, absl::StrCat("add(", m.name, ", ", y.second.name, ")"));
    return Pair{a, b};
  };
  auto interleave = [&](const Value& even, const Value& odd) {
    const bool same = even.rows == odd.rows;
    const int64_t rows = even.rows + odd.rows;
    Value pe = emit(
        rows, absl::StrCat("pad(", even.name, ", zero), padding=0_", same ? 1 : 0, "_1x0_0_0"));
    Value po =
        emit(rows, absl::StrCat("pad(", odd.name, ", zero), padding=1_", same ? 0 : 1, "_1x0_0_0"));
    return emit(rows, absl::StrCat("add(", pe.name, ", ", po.name, ")"));
  };
  auto scan = [&](auto& self, const Pair& elems) -> Pair {
    const int64_t rows = elems.first.rows;
    if (rows < 2) return elems;
    const Pair odd = self(
        self, combine({slice(elems.first, 0, rows - 1, 2), slice(elems.second, 0, rows - 1, 2)},
                      {slice(elems.first, 1, rows, 2), slice(elems.second, 1, rows, 2)}));
    const Pair later = {slice(elems.first, 2, rows, 2), slice(elems.second, 2, rows, 2)};
    Pair even = rows % 2 == 0 ? combine({slice(odd.first, 0, odd.first.rows - 1, 1),
                                         slice(odd.second, 0, odd.second.rows - 1, 1)},
                                        later)
                              : combine(odd, later);
    auto concatenate = [&](const Value& first, const Value& rest) {
      return emit(first.rows + rest.rows,
                  absl::StrCat("concatenate(", first.name, ", ", rest.name, "), dimensions={0}"));
    };
    even = {concatenate(slice(elems.first, 0, 1, 1), even.first),
            concatenate(slice(elems.second, 0, 1, 1), even.second)};
    return {interleave(even.first, odd.first), interleave(even.second, odd.second)};
  };
  const std::string shape = absl::StrCat("f32[", steps, ",", width, "]");
  absl::StrAppend(
      &body, "  x = ", shape, " parameter(0)\n  b = ", shape,
      " parameter(1)\n  zero = f32[] constant(0)\n  one = f32[] constant(1)\n  ones = ", shape,
      " broadcast(one), dimensions={}\n  n = ", shape, " negate(x)\n  e = ", shape,
      " exponential(n)\n  d = ", shape, " add(ones, e)\n  a = ", shape, " divide(ones, d)\n");
  const Pair result = scan(scan, {Value{"a", steps}, Value{"b", steps}});
  return absl::StrCat("HloModule scan\nENTRY main {\n", body, "  ROOT t = (", shape, ", ", shape,
                      ") tuple(", result.first.name, ", ", result.second.name, ")\n}\n");
}

TEST(InstructionFusion, AssociativeScanFusionsEmitEachInstructionAtMost15Times) {
  // Fused without a bound, a level's kernel would emit the levels below it
  // at ~2^depth indices each: 1024 steps never finished compiling.
  const std::string text = AssociativeScanModule(1024, 4);
  {
    auto original = ParseAndReturnUnverifiedModule(text);
    ASSERT_TRUE(original.ok()) << original.status();
    EXPECT_GT((*original)->entry_computation()->instruction_count(), 200);
  }
  InstructionFusion pass;
  auto module = RunAndCompare(text, pass);
  ASSERT_NE(module, nullptr);
  const std::vector<HloInstruction*> fusions = EntryInstructions(*module, HloOpcode::kFusion);
  EXPECT_GT(fusions.size(), 1u);
  int64_t fused_slices = 0;
  for (const HloInstruction* fusion : fusions) {
    const HloComputation* fused =
        cast<HloFusionInstruction>(fusion)->fused_instructions_computation();
    EXPECT_LE(MaxIndexUsageCount(*fused), kAllowedCodeDuplication) << fusion->ToString();
    for (const HloInstruction* instruction : fused->instructions()) {
      fused_slices += instruction->opcode() == HloOpcode::kSlice ? 1 : 0;
    }
  }
  // It still fuses: the slices do not stay kernels of their own.
  EXPECT_TRUE(EntryInstructions(*module, HloOpcode::kSlice).empty()) << module->ToString();
  EXPECT_GT(fused_slices, 0);
}

TEST(InstructionFusion, ChainOfHalvingsSplitsWhereCountsPassTheBound) {
  // Each level reads the one below at two indices: fused whole, x's
  // exponential would be emitted 2^5 = 32 times per output element.
  std::string body = "  x = f32[64] parameter(0)\n  v0 = f32[64] exponential(x)\n";
  int64_t rows = 64;
  for (int level = 1; level <= 5; ++level) {
    rows /= 2;
    absl::StrAppend(&body, "  l", level, " = f32[", rows, "] slice(v", level - 1,
                    "), slice={[0:", rows, "]}\n  h", level, " = f32[", rows, "] slice(v",
                    level - 1, "), slice={[", rows, ":", 2 * rows, "]}\n  v", level, " = f32[",
                    rows, "] add(l", level, ", h", level, ")\n");
  }
  absl::StrReplaceAll({{"  v5 =", "  ROOT v5 ="}}, &body);
  InstructionFusion pass;
  auto module = RunAndCompare(absl::StrCat("HloModule m\nENTRY e {\n", body, "}\n"), pass);
  ASSERT_NE(module, nullptr);
  const std::vector<HloInstruction*> fusions = EntryInstructions(*module, HloOpcode::kFusion);
  ASSERT_EQ(fusions.size(), 2u) << module->ToString();
  for (const HloInstruction* fusion : fusions) {
    EXPECT_LE(
        MaxIndexUsageCount(*cast<HloFusionInstruction>(fusion)->fused_instructions_computation()),
        kAllowedCodeDuplication)
        << fusion->ToString();
  }
}

}  // namespace
}  // namespace axle
