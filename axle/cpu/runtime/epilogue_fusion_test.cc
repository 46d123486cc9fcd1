#include "axle/cpu/runtime/epilogue_fusion.h"

#include <string>

#include "axle/hlo/transforms/fusion_test_util.h"
#include "axle/hlo/transforms/instruction_fusion.h"
#include "gtest/gtest.h"

namespace axle::cpu {
namespace {

using fusion_test::EntryInstructions;
using fusion_test::FusedOpcodes;
using fusion_test::RunAndCompare;

TEST(DotEpilogueFusion, DotBiasReluIsOneOutputFusion) {
  DotEpilogueFusion pass;
  auto module = RunAndCompare(R"(
HloModule m
ENTRY e {
  x = f32[4,8] parameter(0)
  w = f32[8,16] parameter(1)
  bias = f32[16] parameter(2)
  d = f32[4,16] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = f32[4,16] broadcast(bias), dimensions={1}
  y = f32[4,16] add(d, bb)
  z = f32[] constant(0)
  zb = f32[4,16] broadcast(z), dimensions={}
  ROOT r = f32[4,16] maximum(y, zb)
}
)",
                              pass);
  ASSERT_NE(module, nullptr);
  const auto* fusion =
      dyn_cast<HloFusionInstruction>(module->entry_computation()->root_instruction());
  ASSERT_NE(fusion, nullptr) << module->ToString();
  EXPECT_EQ(fusion->fusion_kind(), FusionKind::kOutput);
  EXPECT_EQ(fusion->operand_count(), 3);  // x, w, bias
  EXPECT_EQ(FusedOpcodes(*fusion), "constant,broadcast,broadcast,dot,add,maximum");
  EXPECT_EQ(module->entry_computation()->instruction_count(), 4);
}

TEST(DotEpilogueFusion, ConvolutionWithTanhAndNoBias) {
  DotEpilogueFusion pass;
  auto module = RunAndCompare(R"(
HloModule m
ENTRY e {
  in = f32[1,6,6,2] parameter(0)
  k = f32[3,3,2,4] parameter(1)
  c = f32[1,4,4,4] convolution(in, k), window={size=3x3}, dim_labels=b01f_01io->b01f
  ROOT t = f32[1,4,4,4] tanh(c)
}
)",
                              pass);
  ASSERT_NE(module, nullptr);
  const auto* fusion =
      dyn_cast<HloFusionInstruction>(module->entry_computation()->root_instruction());
  ASSERT_NE(fusion, nullptr);
  EXPECT_EQ(fusion->fusion_kind(), FusionKind::kOutput);
  EXPECT_EQ(FusedOpcodes(*fusion), "convolution,tanh");
}

TEST(DotEpilogueFusion, ConvolutionBiasAlongFeaturesAndReluIsOneOutputFusion) {
  DotEpilogueFusion pass;
  auto module = RunAndCompare(R"(
HloModule m
ENTRY e {
  in = f32[2,3,6,6] parameter(0)
  k = f32[4,3,3,3] parameter(1)
  bias = f32[4] parameter(2)
  c = f32[2,4,4,4] convolution(in, k), window={size=3x3}, dim_labels=bf01_oi01->bf01
  bb = f32[2,4,4,4] broadcast(bias), dimensions={1}
  y = f32[2,4,4,4] add(bb, c)
  z = f32[] constant(0)
  zb = f32[2,4,4,4] broadcast(z), dimensions={}
  ROOT r = f32[2,4,4,4] maximum(y, zb)
}
)",
                              pass);
  ASSERT_NE(module, nullptr);
  const auto* fusion =
      dyn_cast<HloFusionInstruction>(module->entry_computation()->root_instruction());
  ASSERT_NE(fusion, nullptr) << module->ToString();
  EXPECT_EQ(fusion->fusion_kind(), FusionKind::kOutput);
  EXPECT_EQ(fusion->operand_count(), 3);  // in, k, bias
  EXPECT_EQ(FusedOpcodes(*fusion), "constant,broadcast,broadcast,convolution,add,maximum");
  EXPECT_EQ(module->entry_computation()->instruction_count(), 4);
}

TEST(DotEpilogueFusion, ConvolutionScaleOffsetReluIsOneOutputFusion) {
  // Inference batch norm folded into a scale and an offset per channel.
  DotEpilogueFusion pass;
  auto module = RunAndCompare(R"(
HloModule m
ENTRY e {
  in = f32[1,5,5,2] parameter(0)
  k = f32[3,3,2,4] parameter(1)
  scale = f32[4] parameter(2)
  offset = f32[4] parameter(3)
  c = f32[1,3,3,4] convolution(in, k), window={size=3x3}, dim_labels=b01f_01io->b01f
  sb = f32[1,3,3,4] broadcast(scale), dimensions={3}
  n = f32[1,3,3,4] multiply(c, sb)
  ob = f32[1,3,3,4] broadcast(offset), dimensions={3}
  y = f32[1,3,3,4] add(n, ob)
  z = f32[] constant(0)
  zb = f32[1,3,3,4] broadcast(z), dimensions={}
  ROOT r = f32[1,3,3,4] maximum(y, zb)
}
)",
                              pass);
  ASSERT_NE(module, nullptr);
  const auto* fusion =
      dyn_cast<HloFusionInstruction>(module->entry_computation()->root_instruction());
  ASSERT_NE(fusion, nullptr) << module->ToString();
  EXPECT_EQ(fusion->fusion_kind(), FusionKind::kOutput);
  EXPECT_EQ(fusion->operand_count(), 4);  // in, k, scale, offset
  EXPECT_EQ(FusedOpcodes(*fusion),
            "constant,broadcast,broadcast,broadcast,convolution,multiply,add,maximum");
}

TEST(DotEpilogueFusion, DotTakesNoScale) {
  DotEpilogueFusion pass;
  auto module = RunAndCompare(R"(
HloModule m
ENTRY e {
  x = f32[4,8] parameter(0)
  w = f32[8,16] parameter(1)
  scale = f32[16] parameter(2)
  d = f32[4,16] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  sb = f32[4,16] broadcast(scale), dimensions={1}
  ROOT n = f32[4,16] multiply(d, sb)
}
)",
                              pass, /*expect_change=*/false);
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(EntryInstructions(*module, HloOpcode::kDot).size(), 1u);
}

TEST(DotEpilogueFusion, ResidualAddOfSameShapeFuses) {
  DotEpilogueFusion pass;
  auto module = RunAndCompare(R"(
HloModule m
ENTRY e {
  x = f32[4,4] parameter(0)
  w = f32[4,4] parameter(1)
  d = f32[4,4] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT y = f32[4,4] add(x, d)
}
)",
                              pass);
  ASSERT_NE(module, nullptr);
  const auto* fusion =
      dyn_cast<HloFusionInstruction>(module->entry_computation()->root_instruction());
  ASSERT_NE(fusion, nullptr);
  EXPECT_EQ(FusedOpcodes(*fusion), "dot,add");
  EXPECT_EQ(fusion->operand_count(), 2);
}

TEST(DotEpilogueFusion, ConvolutionBiasResidualAndClampAsMaxThenMin) {
  // ONNX's Conv + Add (a residual) + Clip(0, 6): the clip is max then min.
  DotEpilogueFusion pass;
  auto module = RunAndCompare(R"(
HloModule m
ENTRY e {
  in = f32[1,5,5,3] parameter(0)
  k = f32[4,3,3,3] parameter(1)
  bias = f32[4] parameter(2)
  res = f32[1,5,5,4] parameter(3)
  c = f32[1,5,5,4] convolution(in, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_oi01->b01f
  bb = f32[1,5,5,4] broadcast(bias), dimensions={3}
  y = f32[1,5,5,4] add(c, bb)
  s = f32[1,5,5,4] add(res, y)
  lo = f32[] constant(0)
  lob = f32[1,5,5,4] broadcast(lo), dimensions={}
  hi = f32[] constant(6)
  hib = f32[1,5,5,4] broadcast(hi), dimensions={}
  m = f32[1,5,5,4] maximum(s, lob)
  ROOT r = f32[1,5,5,4] minimum(m, hib)
}
)",
                              pass);
  ASSERT_NE(module, nullptr);
  const auto* fusion =
      dyn_cast<HloFusionInstruction>(module->entry_computation()->root_instruction());
  ASSERT_NE(fusion, nullptr) << module->ToString();
  EXPECT_EQ(fusion->fusion_kind(), FusionKind::kOutput);
  EXPECT_EQ(fusion->operand_count(), 4);  // in, k, bias, res
  EXPECT_EQ(FusedOpcodes(*fusion),
            "constant,broadcast,constant,broadcast,broadcast,convolution,add,add,maximum,minimum");
}

TEST(DotEpilogueFusion, ClampNeedsLowAtMostHighAndDotsTakeNoResidual) {
  DotEpilogueFusion pass;
  // min(max(x, 6), 0) is no clamp: the maximum alone is no relu either.
  auto module = RunAndCompare(R"(
HloModule m
ENTRY e {
  in = f32[1,5,5,3] parameter(0)
  k = f32[4,3,3,3] parameter(1)
  c = f32[1,3,3,4] convolution(in, k), window={size=3x3}, dim_labels=b01f_oi01->b01f
  lo = f32[] constant(6)
  lob = f32[1,3,3,4] broadcast(lo), dimensions={}
  hi = f32[] constant(0)
  hib = f32[1,3,3,4] broadcast(hi), dimensions={}
  m = f32[1,3,3,4] maximum(c, lob)
  ROOT r = f32[1,3,3,4] minimum(m, hib)
}
)",
                              pass, /*expect_change=*/false);
  ASSERT_NE(module, nullptr);
  // A dot's bias add fuses, the add above it does not.
  module = RunAndCompare(R"(
HloModule m
ENTRY e {
  x = f32[4,4] parameter(0)
  w = f32[4,4] parameter(1)
  b = f32[4] parameter(2)
  d = f32[4,4] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = f32[4,4] broadcast(b), dimensions={1}
  y = f32[4,4] add(d, bb)
  ROOT s = f32[4,4] add(y, x)
}
)",
                         pass);
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(module->entry_computation()->root_instruction()->opcode(), HloOpcode::kAdd);
}

TEST(DotEpilogueFusion, TransposedConvolutionInputFusesAsAView) {
  // ONNX's NCHW model input to a channels-last convolution.
  DotEpilogueFusion pass;
  auto module = RunAndCompare(R"(
HloModule m
ENTRY e {
  in = f32[1,3,6,6] parameter(0)
  k = f32[4,3,3,3] parameter(1)
  bias = f32[4] parameter(2)
  t = f32[1,6,6,3] transpose(in), dimensions={0,2,3,1}
  c = f32[1,4,4,4] convolution(t, k), window={size=3x3}, dim_labels=b01f_oi01->b01f
  bb = f32[1,4,4,4] broadcast(bias), dimensions={3}
  ROOT y = f32[1,4,4,4] add(c, bb)
}
)",
                              pass);
  ASSERT_NE(module, nullptr);
  const auto* fusion =
      dyn_cast<HloFusionInstruction>(module->entry_computation()->root_instruction());
  ASSERT_NE(fusion, nullptr) << module->ToString();
  EXPECT_EQ(fusion->operand_count(), 3);  // in, k, bias
  EXPECT_EQ(FusedOpcodes(*fusion), "broadcast,transpose,convolution,add");
}

TEST(DotEpilogueFusion, DotWithSeveralUsersOrNoEpilogueStaysPlain) {
  DotEpilogueFusion pass;
  auto module = RunAndCompare(R"(
HloModule m
ENTRY e {
  x = f32[4,4] parameter(0)
  w = f32[4,4] parameter(1)
  d = f32[4,4] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  n = f32[4,4] negate(d)
  t = f32[4,4] tanh(d)
  d2 = f32[4,4] dot(n, t), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT s = f32[4,4] subtract(d2, x)
}
)",
                              pass, /*expect_change=*/false);
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(EntryInstructions(*module, HloOpcode::kDot).size(), 2u);
}

// jax.nn.gelu(approximate=True) above a dot + bias, as JAX lowers it.
constexpr char kGeluModule[] = R"(
HloModule m
ENTRY e {
  x = f32[4,8] parameter(0)
  w = f32[8,16] parameter(1)
  b = f32[16] parameter(2)
  d = f32[4,16] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = f32[4,16] broadcast(b), dimensions={1}
  a = f32[4,16] add(d, bb)
  p2 = f32[4,16] multiply(a, a)
  p3 = f32[4,16] multiply(p2, a)
  k = f32[] constant(0.044715)
  kb = f32[4,16] broadcast(k), dimensions={}
  t = f32[4,16] multiply(p3, kb)
  u = f32[4,16] add(a, t)
  c = f32[] constant(0.797884583)
  cb = f32[4,16] broadcast(c), dimensions={}
  v = f32[4,16] multiply(u, cb)
  th = f32[4,16] tanh(v)
  one = f32[] constant(1)
  ob = f32[4,16] broadcast(one), dimensions={}
  wv = f32[4,16] add(th, ob)
  half = f32[] constant(0.5)
  hb = f32[4,16] broadcast(half), dimensions={}
  h = f32[4,16] multiply(wv, hb)
  ROOT y = f32[4,16] multiply(a, h)
}
)";

TEST(DotEpilogueFusion, GeluTanhAboveBiasIsOneOutputFusion) {
  DotEpilogueFusion pass;
  auto module = RunAndCompare(kGeluModule, pass);
  ASSERT_NE(module, nullptr);
  const HloInstruction* root = module->entry_computation()->root_instruction();
  const auto* fusion = dyn_cast<HloFusionInstruction>(root);
  ASSERT_NE(fusion, nullptr) << module->ToString();
  EXPECT_EQ(fusion->fusion_kind(), FusionKind::kOutput);
  EXPECT_EQ(fusion->operand_count(), 3);  // x, w, b
  EXPECT_EQ(module->entry_computation()->instruction_count(), 4);
  std::vector<const HloInstruction*> nodes;
  const HloInstruction* x =
      MatchGeluTanh(*fusion->fused_instructions_computation()->root_instruction(), &nodes);
  ASSERT_NE(x, nullptr);
  EXPECT_EQ(x->opcode(), HloOpcode::kAdd);
  EXPECT_EQ(nodes.size(), 9u);
}

TEST(DotEpilogueFusion, GeluTanhWithTheHalfOnXAndSwappedOperands) {
  // 0.5 * x first, constants on the left, x^3 as x * (x * x).
  DotEpilogueFusion pass;
  auto module = RunAndCompare(R"(
HloModule m
ENTRY e {
  x = f32[4,8] parameter(0)
  w = f32[8,16] parameter(1)
  d = f32[4,16] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  p2 = f32[4,16] multiply(d, d)
  p3 = f32[4,16] multiply(d, p2)
  k = f32[] constant(0.044715)
  kb = f32[4,16] broadcast(k), dimensions={}
  t = f32[4,16] multiply(kb, p3)
  u = f32[4,16] add(t, d)
  c = f32[] constant(0.7978846)
  cb = f32[4,16] broadcast(c), dimensions={}
  v = f32[4,16] multiply(cb, u)
  th = f32[4,16] tanh(v)
  one = f32[] constant(1)
  ob = f32[4,16] broadcast(one), dimensions={}
  wv = f32[4,16] add(ob, th)
  half = f32[] constant(0.5)
  hb = f32[4,16] broadcast(half), dimensions={}
  hx = f32[4,16] multiply(hb, d)
  ROOT y = f32[4,16] multiply(hx, wv)
}
)",
                              pass);
  ASSERT_NE(module, nullptr);
  const auto* fusion =
      dyn_cast<HloFusionInstruction>(module->entry_computation()->root_instruction());
  ASSERT_NE(fusion, nullptr) << module->ToString();
  EXPECT_EQ(fusion->operand_count(), 2);  // x, w
  std::vector<const HloInstruction*> nodes;
  const HloInstruction* x =
      MatchGeluTanh(*fusion->fused_instructions_computation()->root_instruction(), &nodes);
  ASSERT_NE(x, nullptr);
  EXPECT_EQ(x->opcode(), HloOpcode::kDot);
}

TEST(DotEpilogueFusion, GeluTanhWithAnOpReadElsewhereOrWrongConstantStays) {
  DotEpilogueFusion pass;
  // tanh's input is also a result: the GELU stays out (the bias joins).
  std::string escaped = kGeluModule;
  escaped.replace(escaped.find("ROOT y = f32[4,16] multiply(a, h)"),
                  std::string("ROOT y = f32[4,16] multiply(a, h)").size(),
                  "y = f32[4,16] multiply(a, h)\n  ROOT r = (f32[4,16], f32[4,16]) tuple(y, v)");
  auto module = RunAndCompare(escaped, pass);
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(EntryInstructions(*module, HloOpcode::kTanh).size(), 1u) << module->ToString();
  // 0.0447 is not GELU's constant.
  std::string other = kGeluModule;
  other.replace(other.find("0.044715"), 8, "0.0447");
  module = RunAndCompare(other, pass);
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(EntryInstructions(*module, HloOpcode::kTanh).size(), 1u) << module->ToString();
}

TEST(DotEpilogueFusion, ReluGradientTestsReadTheReluSoItFuses) {
  // JAX's relu and its gradient: the pre-activation feeds max(x, 0) and
  // x > 0; the test reads the relu instead, and the relu joins the dot.
  DotEpilogueFusion pass;
  auto module = RunAndCompare(R"(
HloModule m
ENTRY e {
  x = f32[4,8] parameter(0)
  w = f32[8,16] parameter(1)
  b = f32[16] parameter(2)
  g = f32[4,16] parameter(3)
  d = f32[4,16] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = f32[4,16] broadcast(b), dimensions={1}
  a = f32[4,16] add(d, bb)
  z = f32[] constant(0)
  zb = f32[4,16] broadcast(z), dimensions={}
  r = f32[4,16] maximum(a, zb)
  z2 = f32[4,16] broadcast(z), dimensions={}
  gt = pred[4,16] compare(a, z2), direction=GT
  lt = pred[4,16] compare(z2, a), direction=LT
  s = f32[4,16] select(gt, g, z2)
  s2 = f32[4,16] select(lt, s, z2)
  ROOT t = (f32[4,16], f32[4,16]) tuple(r, s2)
}
)",
                              pass);
  ASSERT_NE(module, nullptr);
  std::vector<HloInstruction*> fusions = EntryInstructions(*module, HloOpcode::kFusion);
  ASSERT_EQ(fusions.size(), 1u) << module->ToString();
  EXPECT_EQ(FusedOpcodes(*fusions[0]), "constant,broadcast,broadcast,dot,add,maximum");
  for (HloInstruction* compare : EntryInstructions(*module, HloOpcode::kCompare)) {
    EXPECT_TRUE(compare->operand(0) == fusions[0] || compare->operand(1) == fusions[0]);
  }
}

TEST(DotEpilogueFusion, ReluGradientOtherTestsKeepThePreActivation) {
  // x >= 0 is not relu(x) >= 0 (x = -1): nothing changes, the relu stays.
  DotEpilogueFusion pass;
  auto module = RunAndCompare(R"(
HloModule m
ENTRY e {
  x = f32[4,8] parameter(0)
  w = f32[8,16] parameter(1)
  d = f32[4,16] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  z = f32[] constant(0)
  zb = f32[4,16] broadcast(z), dimensions={}
  r = f32[4,16] maximum(d, zb)
  ge = pred[4,16] compare(d, zb), direction=GE
  ROOT t = (f32[4,16], pred[4,16]) tuple(r, ge)
}
)",
                              pass, /*expect_change=*/false);
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(EntryInstructions(*module, HloOpcode::kMaximum).size(), 1u);
}

TEST(DotEpilogueFusion, ThenLoopFusionLeavesTheOutputFusionAlone) {
  // maximum with a non-zero constant is not relu: it stays for loop fusion,
  // which must not swallow the kOutput fusion.
  auto text = R"(
HloModule m
ENTRY e {
  x = f32[2,8] parameter(0)
  w = f32[8,3] parameter(1)
  b = f32[3] parameter(2)
  d = f32[2,3] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = f32[2,3] broadcast(b), dimensions={1}
  y = f32[2,3] add(bb, d)
  h = f32[] constant(0.25)
  hb = f32[2,3] broadcast(h), dimensions={}
  ROOT r = f32[2,3] maximum(y, hb)
}
)";
  DotEpilogueFusion epilogue;
  auto module = RunAndCompare(text, epilogue);
  ASSERT_NE(module, nullptr);
  InstructionFusion loop;
  ASSERT_TRUE(loop.Run(module.get()).ok());
  ASSERT_TRUE(VerifyHloModule(*module).ok());
  std::vector<HloInstruction*> fusions = EntryInstructions(*module, HloOpcode::kFusion);
  ASSERT_EQ(fusions.size(), 2u) << module->ToString();
  EXPECT_EQ(cast<HloFusionInstruction>(fusions[0])->fusion_kind(), FusionKind::kOutput);
  EXPECT_EQ(FusedOpcodes(*fusions[0]), "broadcast,dot,add");
  EXPECT_EQ(cast<HloFusionInstruction>(fusions[1])->fusion_kind(), FusionKind::kLoop);
  EXPECT_EQ(FusedOpcodes(*fusions[1]), "constant,broadcast,maximum");
}

}  // namespace
}  // namespace axle::cpu
