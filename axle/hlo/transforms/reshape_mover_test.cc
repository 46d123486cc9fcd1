#include "axle/hlo/transforms/reshape_mover.h"

#include "axle/hlo/transforms/simplification_test_util.h"
#include "gtest/gtest.h"

namespace axle {
namespace {

using test::RootStructure;
using test::RunPassAndCompare;

TEST(ReshapeMover, SinksMatchingReshapesPastAnElementwiseOp) {
  ReshapeMover pass;
  std::unique_ptr<HloModule> module = RunPassAndCompare(pass, R"(
HloModule m

ENTRY e {
  a = f32[2,3] parameter(0)
  b = f32[2,3] parameter(1)
  ra = f32[6] reshape(a)
  rb = f32[6] reshape(b)
  ROOT r = f32[6] add(ra, rb)
}
)");
  EXPECT_EQ(module->entry_computation()->ToString(), R"(%e (a: f32[2,3], b: f32[2,3]) -> f32[6] {
  %a = f32[2,3]{1,0} parameter(0)
  %b = f32[2,3]{1,0} parameter(1)
  %r = f32[2,3]{1,0} add(%a, %b)
  ROOT %reshape = f32[6]{0} reshape(%r)
})");
}

TEST(ReshapeMover, SinksTransposesThroughAChainAndRebroadcastsScalars) {
  ReshapeMover pass;
  std::unique_ptr<HloModule> module = RunPassAndCompare(pass, R"(
HloModule m

ENTRY e {
  a = f32[2,3,4] parameter(0)
  b = f32[2,3,4] parameter(1)
  s = f32[] parameter(2)
  ta = f32[4,2,3] transpose(a), dimensions={2,0,1}
  tb = f32[4,2,3] transpose(b), dimensions={2,0,1}
  bs = f32[4,2,3] broadcast(s), dimensions={}
  m = f32[4,2,3] multiply(ta, bs)
  x = f32[4,2,3] exponential(m)
  c = s32[4,2,3] convert(tb)
  cf = f32[4,2,3] convert(c)
  ROOT r = f32[4,2,3] subtract(x, cf)
}
)");
  EXPECT_EQ(RootStructure(*module),
            "transpose(subtract(exponential(multiply(parameter, broadcast(parameter))), "
            "convert(convert(parameter))))");
}

TEST(ReshapeMover, SinksReshapesOfConstantsAlongWithAComputedOne) {
  ReshapeMover pass;
  std::unique_ptr<HloModule> module = RunPassAndCompare(pass, R"(
HloModule m

ENTRY e {
  a = f32[2,2] parameter(0)
  c = f32[2,2] constant({{1,2},{3,4}})
  ra = f32[4] reshape(a)
  rc = f32[4] reshape(c)
  ROOT r = f32[4] maximum(ra, rc)
}
)");
  EXPECT_EQ(RootStructure(*module), "reshape(maximum(parameter, constant))");
}

TEST(ReshapeMover, SinksATransposeBelowAReduceWindowAndOnThroughAnAdd) {
  ReshapeMover pass;
  // A channels-last value max-pooled channels-first (ONNX MaxPool between
  // convolutions), then added to another channels-last value transposed the
  // same way: the pool runs channels-last with its window permuted, and the
  // transposes meet at the root.
  std::unique_ptr<HloModule> module = RunPassAndCompare(pass, R"(
HloModule m

max {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT m = f32[] maximum(x, y)
}

ENTRY e {
  a = f32[2,7,6,3] parameter(0)
  b = f32[2,4,3,3] parameter(1)
  ta = f32[2,3,7,6] transpose(a), dimensions={0,3,1,2}
  z = f32[] constant(-inf)
  w = f32[2,3,4,3] reduce-window(ta, z), window={size=1x1x3x2 stride=1x1x2x2 pad=0_0x0_0x1_1x0_1 lhs_dilate=1x1x1x1 rhs_dilate=1x1x1x2}, to_apply=max
  tb = f32[2,3,4,3] transpose(b), dimensions={0,3,1,2}
  ROOT r = f32[2,3,4,3] add(w, tb)
}
)");
  EXPECT_EQ(RootStructure(*module),
            "transpose(add(reduce-window(parameter, constant), parameter))");
  const HloInstruction* window =
      module->entry_computation()->root_instruction()->operand(0)->operand(0);
  EXPECT_EQ(window->shape().dimensions(), (std::vector<int64_t>{2, 4, 3, 3}));
}

TEST(ReshapeMover, FoldsATransposeIntoAReduce) {
  ReshapeMover pass;
  // ONNX GlobalAveragePool of a channels-last value: no transpose left.
  std::unique_ptr<HloModule> module = RunPassAndCompare(pass, R"(
HloModule m

add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}

ENTRY e {
  a = f32[2,3,4,5] parameter(0)
  t = f32[2,5,3,4] transpose(a), dimensions={0,3,1,2}
  z = f32[] constant(0)
  ROOT r = f32[2,5] reduce(t, z), dimensions={2,3}, to_apply=add
}
)");
  EXPECT_EQ(RootStructure(*module), "reduce(parameter, constant)");
  // The kept dims come out of the input in another order: a transpose of
  // the (smaller) result.
  module = RunPassAndCompare(pass, R"(
HloModule m

add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}

ENTRY e {
  a = f32[2,3,4,5] parameter(0)
  t = f32[5,3,2,4] transpose(a), dimensions={3,1,0,2}
  z = f32[] constant(0)
  ROOT r = f32[5,2] reduce(t, z), dimensions={1,3}, to_apply=add
}
)");
  EXPECT_EQ(RootStructure(*module), "transpose(reduce(parameter, constant))");
}

TEST(ReshapeMover, LeavesAReduceWindowOfAPlainValueAlone) {
  ReshapeMover pass;
  RunPassAndCompare(pass, R"(
HloModule m

add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}

ENTRY e {
  a = f32[4,6] parameter(0)
  z = f32[] constant(0)
  ROOT w = f32[4,3] reduce-window(a, z), window={size=1x2 stride=1x2}, to_apply=add
}
)",
                    /*expect_changed=*/false);
}

TEST(ReshapeMover, SinksTransposesPastAPerChannelBroadcast) {
  // A batch norm after a channels-last convolution's transpose back to NCHW:
  // the per-channel scale and shift are broadcast along the channel dim of
  // the NHWC value instead.
  ReshapeMover pass;
  std::unique_ptr<HloModule> module = RunPassAndCompare(pass, R"(
HloModule m

ENTRY e {
  a = f32[1,2,3,4] parameter(0)
  s = f32[4] parameter(1)
  b = f32[4] parameter(2)
  t = f32[1,4,2,3] transpose(a), dimensions={0,3,1,2}
  bs = f32[1,4,2,3] broadcast(s), dimensions={1}
  bb = f32[1,4,2,3] broadcast(b), dimensions={1}
  m = f32[1,4,2,3] multiply(t, bs)
  ROOT r = f32[1,4,2,3] add(m, bb)
}
)");
  EXPECT_EQ(RootStructure(*module),
            "transpose(add(multiply(parameter, broadcast(parameter)), broadcast(parameter)))");
  const HloInstruction* add = module->entry_computation()->root_instruction()->operand(0);
  EXPECT_EQ(add->operand(1)->ToString(),
            "%broadcast.1 = f32[1,2,3,4]{3,2,1,0} broadcast(%b), dimensions={3}");
}

TEST(ReshapeMover, LeavesABroadcastWhoseDimsWouldSwapAlone) {
  // [2,3] broadcast along dims {1,2} of the transpose's result lands on dims
  // {2,1} of its input: that needs a transpose of its own.
  ReshapeMover pass;
  RunPassAndCompare(pass, R"(
HloModule m

ENTRY e {
  a = f32[4,3,2] parameter(0)
  v = f32[2,3] parameter(1)
  t = f32[4,2,3] transpose(a), dimensions={0,2,1}
  bv = f32[4,2,3] broadcast(v), dimensions={1,2}
  ROOT r = f32[4,2,3] add(t, bv)
}
)",
                    /*expect_changed=*/false);
}

TEST(ReshapeMover, SinksTransposesBelowAConcatenate) {
  // Concat of channels-last values, each transposed to NCHW: concatenated
  // along their channel dim, then transposed once.
  ReshapeMover pass;
  std::unique_ptr<HloModule> module = RunPassAndCompare(pass, R"(
HloModule m

ENTRY e {
  a = f32[1,2,3,4] parameter(0)
  b = f32[1,2,3,5] parameter(1)
  ta = f32[1,4,2,3] transpose(a), dimensions={0,3,1,2}
  tb = f32[1,5,2,3] transpose(b), dimensions={0,3,1,2}
  c = f32[1,9,2,3] concatenate(ta, tb), dimensions={1}
  ROOT r = f32[1,9,2,3] negate(c)
}
)");
  EXPECT_EQ(RootStructure(*module), "transpose(negate(concatenate(parameter, parameter)))");
  const HloInstruction* concat =
      module->entry_computation()->root_instruction()->operand(0)->operand(0);
  EXPECT_EQ(concat->shape().ToString(), "f32[1,2,3,9]{3,2,1,0}");
  EXPECT_EQ(cast<HloDimensionsInstruction>(concat)->dimensions(), std::vector<int64_t>{3});
}

TEST(ReshapeMover, LeavesAConcatenateOfMixedOperandsAlone) {
  ReshapeMover pass;
  // Different permutations.
  RunPassAndCompare(pass, R"(
HloModule m

ENTRY e {
  a = f32[2,3] parameter(0)
  b = f32[3,2] parameter(1)
  ta = f32[3,2] transpose(a), dimensions={1,0}
  tb = f32[3,2] transpose(b), dimensions={0,1}
  ROOT c = f32[6,2] concatenate(ta, tb), dimensions={0}
}
)",
                    /*expect_changed=*/false);
  // One operand not transposed.
  RunPassAndCompare(pass, R"(
HloModule m

ENTRY e {
  a = f32[2,3] parameter(0)
  b = f32[3,2] parameter(1)
  ta = f32[3,2] transpose(a), dimensions={1,0}
  ROOT c = f32[6,2] concatenate(ta, b), dimensions={0}
}
)",
                    /*expect_changed=*/false);
}

TEST(ReshapeMover, LeavesMismatchedOrTrivialRearrangementsAlone) {
  ReshapeMover pass;
  // Reshapes from different shapes.
  RunPassAndCompare(pass, R"(
HloModule m

ENTRY e {
  a = f32[2,3] parameter(0)
  b = f32[3,2] parameter(1)
  ra = f32[6] reshape(a)
  rb = f32[6] reshape(b)
  ROOT r = f32[6] add(ra, rb)
}
)",
                    /*expect_changed=*/false);
  // Different permutations.
  RunPassAndCompare(pass, R"(
HloModule m

ENTRY e {
  a = f32[2,2] parameter(0)
  b = f32[2,2] parameter(1)
  ta = f32[2,2] transpose(a), dimensions={1,0}
  tb = f32[2,2] transpose(b), dimensions={0,1}
  ROOT r = f32[2,2] add(ta, tb)
}
)",
                    /*expect_changed=*/false);
  // Only a reshaped constant next to a plain parameter.
  RunPassAndCompare(pass, R"(
HloModule m

ENTRY e {
  p = f32[4] parameter(0)
  c = f32[2,2] constant({{1,2},{3,4}})
  rc = f32[4] reshape(c)
  ROOT r = f32[4] add(p, rc)
}
)",
                    /*expect_changed=*/false);
  // Non-default layouts.
  RunPassAndCompare(pass, R"(
HloModule m

ENTRY e {
  a = f32[2,3]{0,1} parameter(0)
  ta = f32[3,2]{1,0} transpose(a), dimensions={1,0}
  ROOT r = f32[3,2]{1,0} negate(ta)
}
)",
                    /*expect_changed=*/false);
}

}  // namespace
}  // namespace axle
