//===- while_loop_constant_sinking_test.cc - Constants sunk into loops -----===//
//
// Two loops share one body and condition but carry different constant
// weights: each gets its own body with its weights as a constant, the
// values agree with the original module's, and while-loop-simplifier then
// drops the weights from the loop state. Elements the body changes, or
// whose init is not a constant, stay.
//
//===----------------------------------------------------------------------===//
#include "axle/hlo/transforms/while_loop_constant_sinking.h"

#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/transforms/cleanup_test_util.h"
#include "axle/hlo/transforms/while_loop_simplifier.h"

namespace axle {
namespace {

using cleanup_test::RunAndCompare;

// Two RNN-like loops over state (i, h, w, limit): h = tanh(h * w) while
// i < limit; the limit and the weights are constants.
constexpr absl::string_view kSharedBody = R"(
HloModule m
cond {
  s = (s32[], f32[4], f32[4], s32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  limit = s32[] get-tuple-element(s), index=3
  ROOT lt = pred[] compare(i, limit), direction=LT
}
body {
  s = (s32[], f32[4], f32[4], s32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  h = f32[4] get-tuple-element(s), index=1
  w = f32[4] get-tuple-element(s), index=2
  limit = s32[] get-tuple-element(s), index=3
  one = s32[] constant(1)
  next = s32[] add(i, one)
  product = f32[4] multiply(h, w)
  nh = f32[4] tanh(product)
  ROOT t = (s32[], f32[4], f32[4], s32[]) tuple(next, nh, w, limit)
}
ENTRY e {
  p = f32[4] parameter(0)
  zero = s32[] constant(0)
  w1 = f32[4] constant({0.5, 1, 1.5, 2})
  w2 = f32[4] constant({-1, 0.25, 3, -0.5})
  three = s32[] constant(3)
  init1 = (s32[], f32[4], f32[4], s32[]) tuple(zero, p, w1, three)
  init2 = (s32[], f32[4], f32[4], s32[]) tuple(zero, p, w2, three)
  l1 = (s32[], f32[4], f32[4], s32[]) while(init1), condition=cond, body=body
  l2 = (s32[], f32[4], f32[4], s32[]) while(init2), condition=cond, body=body
  h1 = f32[4] get-tuple-element(l1), index=1
  h2 = f32[4] get-tuple-element(l2), index=1
  ROOT r = f32[4] add(h1, h2)
}
)";

std::vector<const HloInstruction*> Loops(const HloModule& module) {
  std::vector<const HloInstruction*> loops;
  for (const HloInstruction* instruction : module.entry_computation()->instructions()) {
    if (instruction->opcode() == HloOpcode::kWhile) loops.push_back(instruction);
  }
  return loops;
}

TEST(WhileLoopConstantSinking, SharedBodyIsClonedAndWeightsSunk) {
  WhileLoopConstantSinking pass;
  std::unique_ptr<HloModule> module = RunAndCompare(pass, kSharedBody);
  ASSERT_NE(module, nullptr);
  std::vector<const HloInstruction*> loops = Loops(*module);
  ASSERT_EQ(loops.size(), 2u);
  EXPECT_NE(loops[0]->while_body(), loops[1]->while_body());
  EXPECT_NE(loops[0]->while_condition(), loops[1]->while_condition());
  for (const HloInstruction* loop : loops) {
    // The product reads a constant, the condition compares with one.
    const HloComputation* body = loop->while_body();
    bool multiplies_constant = false;
    for (const HloInstruction* instruction : body->instructions()) {
      if (instruction->opcode() == HloOpcode::kMultiply) {
        multiplies_constant = instruction->operand(1)->opcode() == HloOpcode::kConstant;
      }
    }
    EXPECT_TRUE(multiplies_constant) << body->ToString();
    EXPECT_EQ(loop->while_condition()->root_instruction()->operand(1)->opcode(),
              HloOpcode::kConstant);
  }
  // Nothing reads the weights from the state any more: a second run
  // changes nothing, and the simplifier drops them and the limit.
  EXPECT_FALSE(*pass.Run(module.get()));
  WhileLoopSimplifier simplifier;
  ASSERT_TRUE(cleanup_test::RunPass(simplifier, module.get()));
  for (const HloInstruction* loop : Loops(*module)) {
    EXPECT_EQ(loop->shape().tuple_shapes_size(), 2) << loop->ToString();
  }
}

TEST(WhileLoopConstantSinking, InitThroughTupleOfGetTupleElements) {
  // while-loop-simplifier narrows an init into gtes of the old tuple.
  constexpr absl::string_view kNarrowedInit = R"(
HloModule m
cond {
  s = (s32[], f32[4], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  three = s32[] constant(3)
  ROOT lt = pred[] compare(i, three), direction=LT
}
body {
  s = (s32[], f32[4], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  h = f32[4] get-tuple-element(s), index=1
  w = f32[4] get-tuple-element(s), index=2
  one = s32[] constant(1)
  next = s32[] add(i, one)
  product = f32[4] multiply(h, w)
  ROOT t = (s32[], f32[4], f32[4]) tuple(next, product, w)
}
ENTRY e {
  p = f32[4] parameter(0)
  zero = s32[] constant(0)
  w = f32[4] constant({0.5, 1, 1.5, 2})
  old = (s32[], f32[4], f32[4]) tuple(zero, p, w)
  g0 = s32[] get-tuple-element(old), index=0
  g1 = f32[4] get-tuple-element(old), index=1
  g2 = f32[4] get-tuple-element(old), index=2
  init = (s32[], f32[4], f32[4]) tuple(g0, g1, g2)
  l = (s32[], f32[4], f32[4]) while(init), condition=cond, body=body
  ROOT r = f32[4] get-tuple-element(l), index=1
}
)";
  WhileLoopConstantSinking pass;
  std::unique_ptr<HloModule> module = RunAndCompare(pass, kNarrowedInit);
  ASSERT_NE(module, nullptr);
  const HloInstruction* loop = Loops(*module).at(0);
  for (const HloInstruction* instruction : loop->while_body()->instructions()) {
    if (instruction->opcode() == HloOpcode::kMultiply) {
      EXPECT_EQ(instruction->operand(1)->opcode(), HloOpcode::kConstant);
    }
  }
}

TEST(WhileLoopConstantSinking, ChangedAndParameterElementsStay) {
  // The weights are updated by the body (w * h) or come from a parameter.
  for (absl::string_view text : {R"(
HloModule changed
cond {
  s = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  three = s32[] constant(3)
  ROOT lt = pred[] compare(i, three), direction=LT
}
body {
  s = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  w = f32[4] get-tuple-element(s), index=1
  one = s32[] constant(1)
  next = s32[] add(i, one)
  nw = f32[4] multiply(w, w)
  ROOT t = (s32[], f32[4]) tuple(next, nw)
}
ENTRY e {
  zero = s32[] constant(0)
  w = f32[4] constant({0.5, 1, 1.5, 2})
  init = (s32[], f32[4]) tuple(zero, w)
  l = (s32[], f32[4]) while(init), condition=cond, body=body
  ROOT r = f32[4] get-tuple-element(l), index=1
}
)",
                                 R"(
HloModule parameter
cond {
  s = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  three = s32[] constant(3)
  ROOT lt = pred[] compare(i, three), direction=LT
}
body {
  s = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  w = f32[4] get-tuple-element(s), index=1
  one = s32[] constant(1)
  next = s32[] add(i, one)
  ROOT t = (s32[], f32[4]) tuple(next, w)
}
ENTRY e {
  zero = s32[] constant(0)
  p = f32[4] parameter(0)
  init = (s32[], f32[4]) tuple(zero, p)
  l = (s32[], f32[4]) while(init), condition=cond, body=body
  ROOT r = f32[4] get-tuple-element(l), index=1
}
)"}) {
    WhileLoopConstantSinking pass;
    RunAndCompare(pass, text, /*expect_change=*/false);
  }
}

}  // namespace
}  // namespace axle
