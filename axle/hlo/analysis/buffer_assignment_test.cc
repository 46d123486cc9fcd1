#include "axle/hlo/analysis/buffer_assignment.h"

#include <string>

#include "axle/hlo/text/hlo_parser.h"
#include "gtest/gtest.h"

namespace axle {
namespace {

std::unique_ptr<HloModule> Parse(absl::string_view text) {
  auto module = ParseAndReturnUnverifiedModule(text);
  EXPECT_TRUE(module.ok()) << module.status();
  return module.ok() ? std::move(module).value() : nullptr;
}

const HloInstruction* Find(const HloModule& module, absl::string_view name) {
  for (const HloComputation* computation : module.computations()) {
    for (const HloInstruction* instruction : computation->instructions()) {
      if (instruction->name() == name) return instruction;
    }
  }
  ADD_FAILURE() << "no instruction " << name;
  return nullptr;
}

std::unique_ptr<BufferAssignment> Assign(const HloModule& module) {
  auto assignment = AssignBuffers(module);
  EXPECT_TRUE(assignment.ok()) << assignment.status();
  if (!assignment.ok()) return nullptr;
  absl::Status verified = VerifyBufferAssignment(**assignment);
  EXPECT_TRUE(verified.ok()) << verified << "\n" << (*assignment)->ToString();
  return std::move(assignment).value();
}

BufferSlice Slice(const BufferAssignment& assignment, const HloModule& module,
                  absl::string_view name, const ShapeIndex& index = {}) {
  auto slice = assignment.GetUniqueSlice(Find(module, name), index);
  EXPECT_TRUE(slice.ok()) << slice.status();
  return slice.ok() ? *slice : BufferSlice{};
}

BufferAllocation::Kind KindOf(const BufferAssignment& assignment, const BufferSlice& slice) {
  return assignment.Allocations().at(slice.allocation).kind();
}

// A backend with no in-place ops.
BufferAssignmentOptions NoInPlace() {
  BufferAssignmentOptions options;
  options.in_place_pairs = nullptr;
  return options;
}

std::unique_ptr<BufferAssignment> AssignWith(const HloModule& module,
                                             const BufferAssignmentOptions& options) {
  auto assignment = AssignBuffers(module, options);
  EXPECT_TRUE(assignment.ok()) << assignment.status();
  if (!assignment.ok()) return nullptr;
  absl::Status verified = VerifyBufferAssignment(**assignment, options);
  EXPECT_TRUE(verified.ok()) << verified << "\n" << (*assignment)->ToString();
  return std::move(assignment).value();
}

TEST(BufferAssignment, InPlaceHookLetsAResultTakeOverADeadOperand) {
  auto module = Parse(R"(
HloModule m
ENTRY e {
  p = f32[64] parameter(0)
  a = f32[64] exponential(p)
  b = f32[64] negate(a)
  c = f32[64] tanh(b)
  ROOT d = f32[64] add(c, c)
}
)");
  auto plain = AssignWith(*module, NoInPlace());
  auto in_place = Assign(*module);
  ASSERT_NE(plain, nullptr);
  ASSERT_NE(in_place, nullptr);
  // Each op writes over its dead operand (d reads c twice, both at the
  // output's index): one buffer, the output. Not over the parameter (the
  // caller's).
  EXPECT_EQ(Slice(*in_place, *module, "a"), Slice(*in_place, *module, "b"));
  EXPECT_EQ(Slice(*in_place, *module, "b"), Slice(*in_place, *module, "c"));
  EXPECT_EQ(Slice(*in_place, *module, "c"), Slice(*in_place, *module, "d"));
  EXPECT_EQ(KindOf(*in_place, Slice(*in_place, *module, "a")), BufferAllocation::Kind::kOutput);
  EXPECT_NE(Slice(*in_place, *module, "p").allocation, Slice(*in_place, *module, "a").allocation);
  EXPECT_EQ(in_place->temp_allocation_total_size(), 0);
  EXPECT_GT(plain->temp_allocation_total_size(), 0);
  // Without the hook nothing changes: a and b are live together at b.
  EXPECT_FALSE(Slice(*plain, *module, "a").Overlaps(Slice(*plain, *module, "b")));
}

TEST(BufferAssignment, InPlaceHookKeepsAnOperandReadLater) {
  auto module = Parse(R"(
HloModule m
ENTRY e {
  p = f32[64] parameter(0)
  a = f32[64] exponential(p)
  b = f32[64] negate(a)
  c = f32[64] add(b, a)
  ROOT t = (f32[64], f32[64]) tuple(c, a)
}
)");
  auto assignment = Assign(*module);
  ASSERT_NE(assignment, nullptr);
  // a is read by c and returned: b and c keep off it. c takes over b.
  EXPECT_FALSE(Slice(*assignment, *module, "a").Overlaps(Slice(*assignment, *module, "b")));
  EXPECT_FALSE(Slice(*assignment, *module, "a").Overlaps(Slice(*assignment, *module, "c")));
  EXPECT_EQ(Slice(*assignment, *module, "b"), Slice(*assignment, *module, "c"));
}

TEST(BufferAssignment, InPlaceHookStaysInsideLoopBodies) {
  auto module = Parse(R"(
HloModule m
cond {
  s = (s32[], f32[64]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(4)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[64]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  v = f32[64] get-tuple-element(s), index=1
  one = s32[] constant(1)
  next = s32[] add(i, one)
  e = f32[64] exponential(v)
  f = f32[64] negate(e)
  ROOT r = (s32[], f32[64]) tuple(next, f)
}
ENTRY e {
  p = f32[64] parameter(0)
  zero = s32[] constant(0)
  x = f32[64] sine(p)
  init = (s32[], f32[64]) tuple(zero, x)
  w = (s32[], f32[64]) while(init), condition=cond, body=body
  ROOT g = f32[64] get-tuple-element(w), index=1
}
)");
  auto assignment = Assign(*module);
  ASSERT_NE(assignment, nullptr);
  // The state (the body parameter's buffer) is no value of the body alone:
  // e keeps its own buffer; f writes over e.
  EXPECT_FALSE(Slice(*assignment, *module, "v").Overlaps(Slice(*assignment, *module, "e")));
  EXPECT_TRUE(Slice(*assignment, *module, "e").Overlaps(Slice(*assignment, *module, "f")) ||
              Slice(*assignment, *module, "f") == Slice(*assignment, *module, "v"));
}

TEST(BufferAssignment, ChainReusesTempSpaceOnceLastUserRan) {
  auto module = Parse(R"(
HloModule m
ENTRY e {
  p = f32[256] parameter(0)
  a = f32[256] negate(p)
  b = f32[256] exponential(a)
  c = f32[256] negate(b)
  d = f32[256] exponential(c)
  ROOT r = f32[256] add(d, p)
}
)");
  auto assignment = AssignWith(*module, NoInPlace());
  ASSERT_NE(assignment, nullptr);
  // a, b, c, d are 1 KiB temporaries; no more than two are live at once.
  EXPECT_EQ(assignment->temp_allocation_total_size(), 2048);
  BufferSlice a = Slice(*assignment, *module, "a"), b = Slice(*assignment, *module, "b");
  BufferSlice c = Slice(*assignment, *module, "c"), d = Slice(*assignment, *module, "d");
  EXPECT_EQ(KindOf(*assignment, a), BufferAllocation::Kind::kTemp);
  EXPECT_FALSE(a.Overlaps(b));
  EXPECT_FALSE(b.Overlaps(c));
  EXPECT_FALSE(c.Overlaps(d));
  EXPECT_TRUE(a == c || b == d);
  BufferSlice p = Slice(*assignment, *module, "p"), r = Slice(*assignment, *module, "r");
  EXPECT_EQ(KindOf(*assignment, p), BufferAllocation::Kind::kParameter);
  EXPECT_EQ(KindOf(*assignment, r), BufferAllocation::Kind::kOutput);
  EXPECT_TRUE(assignment->Allocations()[r.allocation].is_live_out());
  EXPECT_EQ(r.size, 1024);
}

TEST(BufferAssignment, OffsetsAreAlignedAndSizesRoundedUp) {
  auto module = Parse(R"(
HloModule m
ENTRY e {
  p = f32[3] parameter(0)
  a = f32[3] negate(p)
  b = f32[5] concatenate(a, a, a), dimensions={0}
  c = f32[3] slice(b), slice={[1:4]}
  ROOT r = f32[3] add(c, a)
}
)");
  auto assignment = AssignWith(*module, NoInPlace());
  ASSERT_NE(assignment, nullptr);
  for (absl::string_view name : {"a", "b", "c"}) {
    BufferSlice slice = Slice(*assignment, *module, name);
    EXPECT_EQ(KindOf(*assignment, slice), BufferAllocation::Kind::kTemp) << name;
    EXPECT_EQ(slice.offset % 64, 0) << name;
  }
  // a, b and c are live together at b's slice: three 64-byte slots.
  EXPECT_EQ(assignment->temp_allocation_total_size(), 192);
}

TEST(BufferAssignment, AliasedOutputLivesInItsParameter) {
  auto module = Parse(R"(
HloModule m, input_output_alias={ {}: (0, {}, may-alias) }
ENTRY e {
  p0 = f32[16] parameter(0)
  p1 = f32[16] parameter(1)
  a = f32[16] multiply(p1, p1)
  ROOT r = f32[16] add(p0, a)
}
)");
  auto assignment = Assign(*module);
  ASSERT_NE(assignment, nullptr);
  // r is written by the last reader of p0, element by element: in place.
  EXPECT_EQ(Slice(*assignment, *module, "r"), Slice(*assignment, *module, "p0"));
  ASSERT_EQ(assignment->aliased_outputs().size(), 1u);
  EXPECT_FALSE(assignment->aliased_outputs()[0].needs_copy);
  EXPECT_TRUE(assignment->required_copies().empty());
  const BufferAllocation& parameter =
      assignment->Allocations()[Slice(*assignment, *module, "p0").allocation];
  EXPECT_EQ(parameter.kind(), BufferAllocation::Kind::kParameter);
  EXPECT_TRUE(parameter.is_live_out());
  EXPECT_NE(Slice(*assignment, *module, "p1").allocation, parameter.index());
}

TEST(BufferAssignment, AliasedOutputWrittenBeforeTheParameterIsLastReadNeedsACopy) {
  auto module = Parse(R"(
HloModule m, input_output_alias={ {0}: (0, {}, may-alias) }
ENTRY e {
  p0 = f32[16] parameter(0)
  p1 = f32[16] parameter(1)
  a = f32[16] add(p0, p1)
  n = f32[16] negate(a)
  b = f32[16] multiply(n, p0)
  ROOT t = (f32[16], f32[16]) tuple(a, b)
}
)");
  auto assignment = Assign(*module);
  ASSERT_NE(assignment, nullptr);
  ASSERT_EQ(assignment->aliased_outputs().size(), 1u);
  EXPECT_TRUE(assignment->aliased_outputs()[0].needs_copy);
  BufferSlice a = Slice(*assignment, *module, "a"), p0 = Slice(*assignment, *module, "p0");
  EXPECT_NE(a.allocation, p0.allocation);
  EXPECT_EQ(KindOf(*assignment, a), BufferAllocation::Kind::kOutput);
  ASSERT_EQ(assignment->required_copies().size(), 1u);
  const RequiredCopy& copy = assignment->required_copies()[0];
  EXPECT_EQ(copy.from.instruction->name(), "t");
  EXPECT_EQ(copy.from.index, ShapeIndex({0}));
  EXPECT_EQ(copy.to.instruction->name(), "p0");
}

TEST(BufferAssignment, TupleElementsShareWithTheirOperandsAndConstantsAreReadOnly) {
  auto module = Parse(R"(
HloModule m
ENTRY e {
  p = f32[8] parameter(0)
  c = f32[8] constant({1, 2, 3, 4, 5, 6, 7, 8})
  a = f32[8] add(p, c)
  t = (f32[8], f32[8]) tuple(a, p)
  g = f32[8] get-tuple-element(t), index=0
  bc = f32[2,4] bitcast(g)
  ROOT r = f32[2,4] negate(bc)
}
)");
  auto assignment = Assign(*module);
  ASSERT_NE(assignment, nullptr);
  EXPECT_EQ(Slice(*assignment, *module, "t", {0}), Slice(*assignment, *module, "a"));
  EXPECT_EQ(Slice(*assignment, *module, "t", {1}), Slice(*assignment, *module, "p"));
  EXPECT_EQ(Slice(*assignment, *module, "g"), Slice(*assignment, *module, "a"));
  EXPECT_EQ(Slice(*assignment, *module, "bc"), Slice(*assignment, *module, "a"));
  // The tuple's index table: two pointers.
  EXPECT_EQ(Slice(*assignment, *module, "t").size, 16);
  BufferSlice c = Slice(*assignment, *module, "c");
  EXPECT_EQ(KindOf(*assignment, c), BufferAllocation::Kind::kConstant);
  EXPECT_TRUE(assignment->Allocations()[c.allocation].is_read_only());
}

TEST(BufferAssignment, WhileStateBodyAndConditionShareOneBuffer) {
  auto module = Parse(R"(
HloModule m
cond {
  s = (s32[], f32[64]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(4)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[64]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[64] get-tuple-element(s), index=1
  one = s32[] constant(1)
  i2 = s32[] add(i, one)
  x2 = f32[64] multiply(x, x)
  ROOT next = (s32[], f32[64]) tuple(i2, x2)
}
ENTRY e {
  p = f32[64] parameter(0)
  z = s32[] constant(0)
  np = f32[64] negate(p)
  init = (s32[], f32[64]) tuple(z, np)
  w = (s32[], f32[64]) while(init), condition=cond, body=body
  ROOT y = f32[64] get-tuple-element(w), index=1
}
)");
  auto assignment = Assign(*module);
  ASSERT_NE(assignment, nullptr);
  const HloComputation* body = module->GetComputationWithName("body");
  const HloComputation* cond = module->GetComputationWithName("cond");
  BufferSlice state = Slice(*assignment, *module, "w", {1});
  EXPECT_EQ(*assignment->GetUniqueSlice(body->parameter_instruction(0), {1}), state);
  EXPECT_EQ(*assignment->GetUniqueSlice(cond->parameter_instruction(0), {1}), state);
  EXPECT_EQ(*assignment->GetUniqueSlice(body->root_instruction(), {1}), state);
  EXPECT_EQ(Slice(*assignment, *module, "np"), state);
  EXPECT_EQ(Slice(*assignment, *module, "y"), state);
  EXPECT_EQ(KindOf(*assignment, state), BufferAllocation::Kind::kOutput);
  // The counter starts as a constant, which is read only: it is copied in.
  BufferSlice counter = Slice(*assignment, *module, "w", {0});
  EXPECT_EQ(KindOf(*assignment, counter), BufferAllocation::Kind::kTemp);
  EXPECT_NE(Slice(*assignment, *module, "z"), counter);
  bool copies_counter = false;
  for (const RequiredCopy& copy : assignment->required_copies()) {
    if (copy.from.instruction->name() == "init" && copy.from.index == ShapeIndex({0})) {
      copies_counter = copy.to.instruction->name() == "w";
    }
  }
  EXPECT_TRUE(copies_counter) << assignment->ToString();
}

TEST(BufferAssignment, WhileInitStillReadAfterTheLoopIsCopied) {
  auto module = Parse(R"(
HloModule m
cond {
  s = (f32[8]) parameter(0)
  ROOT t = pred[] constant(false)
}
body {
  s = (f32[8]) parameter(0)
  x = f32[8] get-tuple-element(s), index=0
  x2 = f32[8] add(x, x)
  ROOT next = (f32[8]) tuple(x2)
}
ENTRY e {
  p = f32[8] parameter(0)
  a = f32[8] negate(p)
  init = (f32[8]) tuple(a)
  w = (f32[8]) while(init), condition=cond, body=body
  y = f32[8] get-tuple-element(w), index=0
  ROOT r = f32[8] add(y, a)
}
)");
  auto assignment = Assign(*module);
  ASSERT_NE(assignment, nullptr);
  EXPECT_FALSE(Slice(*assignment, *module, "a").Overlaps(Slice(*assignment, *module, "w", {0})));
  ASSERT_FALSE(assignment->required_copies().empty());
  EXPECT_EQ(assignment->required_copies()[0].from.instruction->name(), "init");
}

TEST(BufferAssignment, ConditionalResultSharesWithBranchRoots) {
  auto module = Parse(R"(
HloModule m
on_true {
  x = f32[32] parameter(0)
  ROOT n = f32[32] negate(x)
}
on_false {
  x = f32[32] parameter(0)
  ROOT e = f32[32] exponential(x)
}
ENTRY main {
  b = pred[] parameter(0)
  p = f32[32] parameter(1)
  q = f32[32] add(p, p)
  c = f32[32] conditional(b, q, q), true_computation=on_true, false_computation=on_false
  ROOT r = f32[32] multiply(c, p)
}
)");
  auto assignment = Assign(*module);
  ASSERT_NE(assignment, nullptr);
  BufferSlice c = Slice(*assignment, *module, "c");
  EXPECT_EQ(Slice(*assignment, *module, "n"), c);
  EXPECT_EQ(Slice(*assignment, *module, "e"), c);
  // Branch parameters are the operand's buffer.
  EXPECT_EQ(*assignment->GetUniqueSlice(
                module->GetComputationWithName("on_true")->parameter_instruction(0)),
            Slice(*assignment, *module, "q"));
  EXPECT_TRUE(assignment->required_copies().empty());
}

TEST(BufferAssignment, FusedComputationsGetNoBuffersAndTheDumpListsAllocations) {
  auto module = Parse(R"(
HloModule m
fused {
  a = f32[4] parameter(0)
  ROOT n = f32[4] negate(a)
}
ENTRY e {
  p = f32[4] parameter(0)
  ROOT f = f32[4] fusion(p), kind=kLoop, calls=fused
}
)");
  auto assignment = Assign(*module);
  ASSERT_NE(assignment, nullptr);
  EXPECT_FALSE(assignment->HasSlice(Find(*module, "n")));
  EXPECT_FALSE(assignment->GetUniqueSlice(Find(*module, "n")).ok());
  EXPECT_TRUE(assignment->HasSlice(Find(*module, "f")));
  EXPECT_EQ(assignment->Allocations().size(), 2u);
  EXPECT_EQ(assignment->temp_allocation_index(), -1);
  EXPECT_EQ(assignment->ToString(),
            "allocation 0: parameter, size 16, parameter 0 at {}\n"
            "  %p{} (e): offset 0, size 16\n"
            "allocation 1: output, size 16, live out\n"
            "  %f{} (e): offset 0, size 16\n"
            "temp arena: 0 bytes\n");
  EXPECT_EQ(assignment->sequence().size(), 2u);
}

TEST(BufferAssignment, ValuesLiveTogetherGetDisjointSlices) {
  auto module = Parse(R"(
HloModule m
ENTRY e {
  p = f32[100] parameter(0)
  a = f32[100] negate(p)
  b = f32[100] exponential(p)
  c = f32[100] sine(p)
  d = f32[100] add(a, b)
  f = f32[100] add(d, c)
  ROOT r = f32[100] add(f, a)
}
)");
  auto assignment = AssignWith(*module, NoInPlace());
  ASSERT_NE(assignment, nullptr);
  // In the order p a b c d f r: while d is computed, a, b, c and d are live
  // (an instruction's result never reuses an operand's space); f then reuses
  // b's slot. Four slots of 400 bytes rounded up to 448.
  EXPECT_EQ(assignment->temp_allocation_total_size(), 4 * 448);
  EXPECT_EQ(Slice(*assignment, *module, "f"), Slice(*assignment, *module, "b"));
}

TEST(BufferAssignment, BranchReturningItsParameterIsCopiedAndBadAliasesAreErrors) {
  auto module = Parse(R"(
HloModule m
id {
  x = f32[8] parameter(0)
  ROOT y = f32[8] bitcast(x)
}
neg {
  x = f32[8] parameter(0)
  ROOT n = f32[8] negate(x)
}
ENTRY main {
  i = s32[] parameter(0)
  p = f32[8] parameter(1)
  ROOT c = f32[8] conditional(i, p, p), branch_computations={id, neg}
}
)");
  auto assignment = Assign(*module);
  ASSERT_NE(assignment, nullptr);
  // The identity branch returns the caller's parameter: the result cannot be
  // that buffer, so the branch copies; the negate branch writes in place.
  BufferSlice c = Slice(*assignment, *module, "c");
  EXPECT_NE(c.allocation, Slice(*assignment, *module, "p").allocation);
  EXPECT_EQ(Slice(*assignment, *module, "n"), c);
  ASSERT_EQ(assignment->required_copies().size(), 1u);
  EXPECT_EQ(assignment->required_copies()[0].from.instruction->name(), "y");
  EXPECT_EQ(assignment->required_copies()[0].to.instruction->name(), "c");

  ASSERT_TRUE(module->input_output_alias_config().SetUpAlias({}, 5, {}).ok());
  auto bad = AssignBuffers(*module);
  EXPECT_TRUE(absl::IsInvalidArgument(bad.status())) << bad.status();
}

TEST(BufferAssignment, ABackendsReportedChoicesAreAppliedAndShown) {
  // A backend's program builder reports what its steps do in place
  // (InPlaceChoices): a and b written straight into their slices of the
  // concatenation, the broadcast never stored (the scatter starts from its
  // fill), and the sine computed over the concatenation.
  auto module = Parse(R"(
HloModule choices
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT sum = f32[] add(x, y)
}
ENTRY e {
  p = f32[4,8] parameter(0)
  q = f32[4,8] parameter(1)
  a = f32[4,8] exponential(p)
  b = f32[4,8] negate(q)
  cat = f32[4,16] concatenate(a, b), dimensions={1}
  zero = f32[] constant(0)
  fill = f32[16] broadcast(zero), dimensions={}
  idx = s32[2,1] parameter(2)
  upd = f32[2] parameter(3)
  s = f32[16] scatter(fill, idx, upd), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
  r = f32[4,16] sine(cat)
  ROOT t = (f32[4,16], f32[16]) tuple(r, s)
}
)");
  ASSERT_NE(module, nullptr);
  InPlaceChoices choices;
  choices.values_in_users[Find(*module, "a")] = {Find(*module, "cat"), true, 0};
  choices.values_in_users[Find(*module, "b")] = {Find(*module, "cat"), true, 32};
  choices.values_in_users[Find(*module, "fill")] = {Find(*module, "s"), false};
  choices.pairs[Find(*module, "r")] = {{0, ShapeIndex{}}};
  auto assignment = AssignWith(*module, InPlaceChoicesOptions(choices));
  ASSERT_NE(assignment, nullptr);
  const BufferSlice cat = Slice(*assignment, *module, "cat");
  EXPECT_EQ(Slice(*assignment, *module, "a").allocation, cat.allocation);
  EXPECT_EQ(Slice(*assignment, *module, "a").offset, cat.offset);
  EXPECT_EQ(Slice(*assignment, *module, "b").offset, cat.offset);
  EXPECT_EQ(Slice(*assignment, *module, "r"), cat);
  EXPECT_FALSE(assignment->HasSlice(Find(*module, "fill")));
  // Only the reported pairs: the scatter, reported none, has its own.
  EXPECT_NE(Slice(*assignment, *module, "s").allocation, cat.allocation);
  ASSERT_EQ(assignment->values_in_users().size(), 3u);
  const std::string text = assignment->ToString();
  EXPECT_NE(text.find("%a is written into %cat from byte 0\n"), std::string::npos) << text;
  EXPECT_NE(text.find("%b is written into %cat from byte 32\n"), std::string::npos) << text;
  EXPECT_NE(text.find("%fill is not stored: %s computes from it\n"), std::string::npos) << text;

  // Without the report: every value in a buffer of its own but for the
  // target-neutral pairs (the sine over the concatenation, the scatter
  // over the broadcast).
  auto plain = Assign(*module);
  ASSERT_NE(plain, nullptr);
  EXPECT_FALSE(Slice(*plain, *module, "a").Overlaps(Slice(*plain, *module, "cat")));
  EXPECT_TRUE(plain->HasSlice(Find(*module, "fill")));
  EXPECT_TRUE(plain->values_in_users().empty());
}

TEST(BufferAssignment, AStepKeptFromTheLoopStateWritesABufferOfItsOwn) {
  // The body's new x is computed from y alone, so it may be computed
  // straight into x's state (WriteRootsInPlace) unless the backend says
  // the sine's step may not write into a loop's state (the CUDA backend's
  // library ops: InPlaceChoices::not_into_loop_state).
  auto module = Parse(R"(
HloModule kept
cond {
  s = (f32[8], f32[8]) parameter(0)
  ROOT t = pred[] constant(false)
}
body {
  s = (f32[8], f32[8]) parameter(0)
  y = f32[8] get-tuple-element(s), index=1
  x2 = f32[8] sine(y)
  ROOT t = (f32[8], f32[8]) tuple(x2, y)
}
ENTRY e {
  p = f32[8] parameter(0)
  q = f32[8] parameter(1)
  a = f32[8] negate(p)
  b = f32[8] negate(q)
  init = (f32[8], f32[8]) tuple(a, b)
  w = (f32[8], f32[8]) while(init), condition=cond, body=body
  x = f32[8] get-tuple-element(w), index=0
  y = f32[8] get-tuple-element(w), index=1
  ROOT r = f32[8] add(x, y)
}
)");
  ASSERT_NE(module, nullptr);
  const HloInstruction* x2 = Find(*module, "x2");
  const HloInstruction* state = module->GetComputationWithName("body")->parameter_instruction(0);
  InPlaceChoices choices;
  auto into_state = AssignWith(*module, InPlaceChoicesOptions(choices));
  ASSERT_NE(into_state, nullptr);
  EXPECT_EQ(*into_state->GetUniqueSlice(x2), *into_state->GetUniqueSlice(state, {0}));
  choices.not_into_loop_state.insert(x2);
  auto kept = AssignWith(*module, InPlaceChoicesOptions(choices));
  ASSERT_NE(kept, nullptr);
  EXPECT_FALSE(kept->GetUniqueSlice(x2)->Overlaps(*kept->GetUniqueSlice(state, {0})));
}

}  // namespace
}  // namespace axle
