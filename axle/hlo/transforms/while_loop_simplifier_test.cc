//===- while_loop_simplifier_test.cc - Tests of the while-loop passes ------===//
#include "axle/hlo/transforms/while_loop_simplifier.h"

#include "absl/strings/str_replace.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/transforms/cleanup_test_util.h"
#include "axle/hlo/transforms/while_loop_invariant_code_motion.h"

namespace axle {
namespace {

using cleanup_test::CountOpcode;
using cleanup_test::RunAndCompare;

// A loop `for (i = INIT; i < 3; ++i) x = x * y` over state (i, x, y).
constexpr absl::string_view kCountedLoop = R"(
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
  x = f32[4] get-tuple-element(s), index=1
  y = f32[4] get-tuple-element(s), index=2
  one = s32[] constant(1)
  next = s32[] add(i, one)
  ey = f32[4] exponential(y)
  ny = f32[4] negate(ey)
  mul = f32[4] multiply(x, ny)
  ROOT t = (s32[], f32[4], f32[4]) tuple(next, mul, y)
}
ENTRY e {
  p = f32[4] parameter(0)
  q = f32[4] parameter(1)
  init_i = s32[] constant(INIT)
  init = (s32[], f32[4], f32[4]) tuple(init_i, p, q)
  w = (s32[], f32[4], f32[4]) while(init), condition=cond, body=body
  ROOT r = f32[4] get-tuple-element(w), index=1
}
)";

std::string Loop(absl::string_view init) {
  return absl::StrReplaceAll(kCountedLoop, {{"INIT", init}});
}

TEST(WhileLoopSimplifier, CountsTrips) {
  for (auto [init, trips] : {std::pair{"0", 3}, {"2", 1}, {"3", 0}, {"7", 0}}) {
    auto module = cleanup_test::Parse(Loop(init));
    ASSERT_NE(module, nullptr);
    const HloInstruction* loop = module->entry_computation()->root_instruction()->operand(0);
    EXPECT_EQ(CountWhileTrips(*loop, 10), trips) << init;
  }
}

TEST(WhileLoopSimplifier, RemovesLoopThatNeverRuns) {
  WhileLoopSimplifier pass;
  auto module = RunAndCompare(pass, Loop("3"));
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(CountOpcode(*module, HloOpcode::kWhile), 0);
  EXPECT_EQ(module->computation_count(), 1);
}

TEST(WhileLoopSimplifier, InlinesLoopThatRunsOnce) {
  WhileLoopSimplifier pass;
  auto module = RunAndCompare(pass, Loop("2"));
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(CountOpcode(*module, HloOpcode::kWhile), 0);
  EXPECT_EQ(CountOpcode(*module, HloOpcode::kMultiply), 1);
}

TEST(WhileLoopSimplifier, KeepsLoopsThatRunMoreOrUnknown) {
  WhileLoopSimplifier pass;
  auto module = RunAndCompare(pass, Loop("0"), /*expect_change=*/false);
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(CountOpcode(*module, HloOpcode::kWhile), 1);
}

TEST(WhileLoopSimplifier, RemovesStateElementsNothingObserves) {
  WhileLoopSimplifier pass;
  // Element 2 (d) only feeds itself; element 3 (k) feeds only d. Element 1
  // is read after the loop, element 0 by the condition; element 4 feeds a
  // side-effecting custom call in the body, so it stays too.
  auto module = cleanup_test::Parse(R"(
HloModule m
cond {
  s = (s32[], f32[4], f32[4], f32[4], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  ten = s32[] constant(10)
  ROOT lt = pred[] compare(i, ten), direction=LT
}
body {
  s = (s32[], f32[4], f32[4], f32[4], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[4] get-tuple-element(s), index=1
  d = f32[4] get-tuple-element(s), index=2
  k = f32[4] get-tuple-element(s), index=3
  e = f32[4] get-tuple-element(s), index=4
  one = s32[] constant(1)
  next = s32[] add(i, one)
  nx = f32[4] add(x, x)
  nd = f32[4] multiply(d, k)
  log = f32[4] custom-call(e), custom_call_target="Log", custom_call_has_side_effect=true
  ROOT t = (s32[], f32[4], f32[4], f32[4], f32[4]) tuple(next, nx, nd, k, e)
}
ENTRY e {
  p = f32[4] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[4], f32[4], f32[4], f32[4]) tuple(zero, p, p, p, p)
  w = (s32[], f32[4], f32[4], f32[4], f32[4]) while(init), condition=cond, body=body
  ROOT r = f32[4] get-tuple-element(w), index=1
}
)");
  ASSERT_NE(module, nullptr);
  EXPECT_TRUE(cleanup_test::RunPass(pass, module.get()));
  const HloInstruction* root = module->entry_computation()->root_instruction();
  ASSERT_EQ(root->operand(0)->opcode(), HloOpcode::kWhile);
  EXPECT_EQ(root->operand(0)->shape().tuple_shapes_size(), 3);
  EXPECT_EQ(cast<HloGetTupleElementInstruction>(root)->tuple_index(), 1);
  EXPECT_EQ(CountOpcode(*module, HloOpcode::kMultiply), 0);
  EXPECT_EQ(CountOpcode(*module, HloOpcode::kCustomCall), 1);
  EXPECT_FALSE(cleanup_test::RunPass(pass, module.get()));
}

TEST(WhileLoopSimplifier, NarrowedLoopComputesTheSameValues) {
  WhileLoopSimplifier pass;
  auto module = RunAndCompare(pass, R"(
HloModule m
cond {
  s = (s32[], f32[4], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  ten = s32[] constant(10)
  ROOT lt = pred[] compare(i, ten), direction=LT
}
body {
  s = (s32[], f32[4], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[4] get-tuple-element(s), index=1
  d = f32[4] get-tuple-element(s), index=2
  one = s32[] constant(1)
  next = s32[] add(i, one)
  nx = f32[4] multiply(x, x)
  nd = f32[4] exponential(d)
  ROOT t = (s32[], f32[4], f32[4]) tuple(next, nx, nd)
}
ENTRY e {
  p = f32[4] parameter(0)
  c = f32[4] constant({1, 0.5, 1.0001, 0.9})
  zero = s32[] constant(0)
  init = (s32[], f32[4], f32[4]) tuple(zero, c, p)
  w = (s32[], f32[4], f32[4]) while(init), condition=cond, body=body
  ROOT r = f32[4] get-tuple-element(w), index=1
}
)");
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(CountOpcode(*module, HloOpcode::kExp), 0);
}

TEST(WhileLoopInvariantCodeMotion, HoistsValuesOfUnchangedElements) {
  WhileLoopInvariantCodeMotion pass;
  auto module = RunAndCompare(pass, Loop("0"));
  ASSERT_NE(module, nullptr);
  // exp(y) and -exp(y) now run once, before the loop.
  const HloComputation* entry = module->entry_computation();
  int64_t in_entry = 0;
  for (const HloInstruction* instruction : entry->instructions()) {
    if (instruction->opcode() == HloOpcode::kExp || instruction->opcode() == HloOpcode::kNegate) {
      ++in_entry;
    }
  }
  EXPECT_EQ(in_entry, 2);
  const HloComputation* body = module->GetComputationWithName("body");
  ASSERT_NE(body, nullptr);
  for (const HloInstruction* instruction : body->instructions()) {
    EXPECT_NE(instruction->opcode(), HloOpcode::kExp);
  }
  EXPECT_EQ(body->root_instruction()->operand_count(), 4);
  // Nothing left to hoist.
  EXPECT_FALSE(cleanup_test::RunPass(pass, module.get()));
}

// An invariant value computed from the state and a broadcast constant: the
// broadcast is copied out of the loop with it.
TEST(WhileLoopInvariantCodeMotion, CopiesConstantOperandsOfHoistedValues) {
  WhileLoopInvariantCodeMotion pass;
  auto module = RunAndCompare(pass, R"(
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
  x = f32[4] get-tuple-element(s), index=1
  y = f32[4] get-tuple-element(s), index=2
  one = s32[] constant(1)
  next = s32[] add(i, one)
  half = f32[] constant(0.5)
  halves = f32[4] broadcast(half), dimensions={}
  scaled = f32[4] multiply(y, halves)
  sum = f32[4] add(x, scaled)
  ROOT t = (s32[], f32[4], f32[4]) tuple(next, sum, y)
}
ENTRY e {
  p = f32[4] parameter(0)
  q = f32[4] parameter(1)
  zero = s32[] constant(0)
  init = (s32[], f32[4], f32[4]) tuple(zero, p, q)
  w = (s32[], f32[4], f32[4]) while(init), condition=cond, body=body
  ROOT r = f32[4] get-tuple-element(w), index=1
}
)");
  ASSERT_NE(module, nullptr);
  const HloComputation* body = module->GetComputationWithName("body");
  ASSERT_NE(body, nullptr);
  for (const HloInstruction* instruction : body->instructions()) {
    EXPECT_NE(instruction->opcode(), HloOpcode::kMultiply);
  }
}

// As XLA's: a broadcast or transpose of an unchanged element costs about
// what carrying its result would; alone it stays in the body, and as the
// operand of a value worth hoisting it is copied out with that value (and
// kept in the body for its users there).
TEST(WhileLoopInvariantCodeMotion, MovesLayoutOpsOnlyWithTheValuesTheyFeed) {
  WhileLoopInvariantCodeMotion pass;
  auto module = RunAndCompare(pass, R"(
HloModule m
cond {
  s = (s32[], f32[4,8], f32[8,4], f32[8]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  three = s32[] constant(3)
  ROOT lt = pred[] compare(i, three), direction=LT
}
body {
  s = (s32[], f32[4,8], f32[8,4], f32[8]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[4,8] get-tuple-element(s), index=1
  w = f32[8,4] get-tuple-element(s), index=2
  b = f32[8] get-tuple-element(s), index=3
  one = s32[] constant(1)
  next = s32[] add(i, one)
  bb = f32[4,8] broadcast(b), dimensions={1}
  wt = f32[4,8] transpose(w), dimensions={1,0}
  ew = f32[4,8] exponential(wt)
  sum = f32[4,8] add(x, bb)
  prod = f32[4,8] multiply(sum, ew)
  both = f32[4,8] add(prod, wt)
  ROOT t = (s32[], f32[4,8], f32[8,4], f32[8]) tuple(next, both, w, b)
}
ENTRY e {
  p = f32[4,8] parameter(0)
  q = f32[8,4] parameter(1)
  r = f32[8] parameter(2)
  zero = s32[] constant(0)
  init = (s32[], f32[4,8], f32[8,4], f32[8]) tuple(zero, p, q, r)
  w = (s32[], f32[4,8], f32[8,4], f32[8]) while(init), condition=cond, body=body
  ROOT out = f32[4,8] get-tuple-element(w), index=1
}
)");
  ASSERT_NE(module, nullptr);
  const HloComputation* body = module->GetComputationWithName("body");
  ASSERT_NE(body, nullptr);
  // Only exp(transpose(w)) joins the state; the broadcast and the
  // transpose's other use stay.
  EXPECT_EQ(body->root_instruction()->operand_count(), 5);
  EXPECT_EQ(CountOpcode(*module, HloOpcode::kExp), 1);
  for (const HloInstruction* instruction : body->instructions()) {
    EXPECT_NE(instruction->opcode(), HloOpcode::kExp);
  }
  EXPECT_EQ(CountOpcode(*module, HloOpcode::kTranspose), 2);
  EXPECT_FALSE(cleanup_test::RunPass(pass, module.get()));
}

TEST(WhileLoopSimplifier, LeavesLoopsCarryingTokens) {
  WhileLoopSimplifier pass;
  auto module = cleanup_test::Parse(R"(
HloModule m
cond {
  s = (s32[], token[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  one = s32[] constant(1)
  ROOT lt = pred[] compare(i, one), direction=LT
}
body {
  s = (s32[], token[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  t = token[] get-tuple-element(s), index=1
  one = s32[] constant(1)
  next = s32[] add(i, one)
  ROOT r = (s32[], token[]) tuple(next, t)
}
ENTRY e {
  zero = s32[] constant(0)
  tok = token[] after-all()
  init = (s32[], token[]) tuple(zero, tok)
  w = (s32[], token[]) while(init), condition=cond, body=body
  ROOT r = s32[] get-tuple-element(w), index=0
}
)");
  ASSERT_NE(module, nullptr);
  EXPECT_FALSE(cleanup_test::RunPass(pass, module.get()));
}

TEST(WhileLoopInvariantCodeMotion, KeepsSideEffectsAndValuesOfChangingElements) {
  WhileLoopInvariantCodeMotion pass;
  auto module = cleanup_test::Parse(R"(
HloModule m
cond {
  s = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  three = s32[] constant(3)
  ROOT lt = pred[] compare(i, three), direction=LT
}
body {
  s = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[4] get-tuple-element(s), index=1
  one = s32[] constant(1)
  next = s32[] add(i, one)
  log = f32[4] custom-call(x), custom_call_target="Log", custom_call_has_side_effect=true
  ex = f32[4] exponential(x)
  ROOT t = (s32[], f32[4]) tuple(next, ex)
}
ENTRY e {
  p = f32[4] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[4]) tuple(zero, p)
  ROOT w = (s32[], f32[4]) while(init), condition=cond, body=body
}
)");
  ASSERT_NE(module, nullptr);
  EXPECT_FALSE(cleanup_test::RunPass(pass, module.get()));
}

}  // namespace
}  // namespace axle
