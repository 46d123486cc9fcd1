//===- control_flow_thunk_emitter.cc - while, conditional, call from HLO ---===//
//
// The emitters (EmitWhileThunk, EmitConditionalThunk, EmitCallThunk) build
// nested computations with ProgramBuilder::BuildSequence after binding their
// parameters to existing values, so nested thunks read loop state and branch
// operands in place.
//
// Storing a body's root into the loop state (a branch's root into the
// conditional's result) at the end of its sequence:
//  - a root leaf that is its own state leaf (passed through) costs nothing;
//  - an output whose operand is the state leaf it replaces is computed in
//    the state (a dynamic-update-slice of the state updates it in place),
//    and a root leaf computed by a thunk of the sequence that does not read
//    the state leaf, when no later thunk and no other root leaf reads it
//    either, is written there directly: the shared rules of
//    hlo/analysis/in_place_sharing.h (ProgramBuilder::ShareNestedInPlace:
//    ShareInPlaceOperands, WriteRootsInPlace);
//  - any other leaf is copied. The swap hazard: a root leaf that is another
//    state leaf being overwritten (the body returns `(gte1, gte0)`) is first
//    copied to a fresh temporary, then all copies into the state are made.
//
// A while's state leaf that the body passes through unchanged and that
// starts as a parameter or a constant is not a temporary of the loop at all
// (no copy when the loop starts): the body and the loop's users read the
// parameter or constant itself (PassesThrough).
//
//===----------------------------------------------------------------------===//
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "axle/base/status_macros.h"
#include "axle/cpu/runtime/control_flow_thunk.h"
#include "axle/cpu/runtime/thunk_emitters.h"
#include "axle/hlo/analysis/conditional_branch.h"
#include "axle/hlo/analysis/in_place_sharing.h"
#include "axle/hlo/analysis/value_slot.h"
#include "axle/hlo/ir/hlo_instructions.h"

namespace axle::cpu {
namespace {

// The values of the array leaves of `root`, in index order.
absl::StatusOr<std::vector<int64_t>> RootValues(const HloInstruction& root,
                                                const ProgramBuilder& builder) {
  std::vector<int64_t> values;
  for (const auto& [index, shape] : ArrayLeaves(root.shape())) {
    AXLE_ASSIGN_OR_RETURN(int64_t value, builder.ValueOf(&root, index));
    values.push_back(value);
  }
  return values;
}

// The thunk that copies `sources` into `destinations` (of leaves of
// `shape`, in index order). A leaf already in its destination is not
// copied; a leaf that is another destination being overwritten is first
// copied to a fresh temporary. Null when there is nothing to copy.
std::unique_ptr<Thunk> CopyInto(const std::string& name, const Shape& shape,
                                const std::vector<int64_t>& sources,
                                const std::vector<int64_t>& destinations, ProgramBuilder& builder) {
  std::vector<std::pair<ShapeIndex, Shape>> leaves = ArrayLeaves(shape);
  std::vector<std::pair<int64_t, int64_t>> copies = StoreCopies(
      sources, destinations, [&](size_t i) { return sources[i] == destinations[i]; },
      [&](size_t i) { return builder.NewTemporary(leaves[i].second); });
  if (copies.empty()) return nullptr;
  return std::make_unique<CopyThunk>(name, std::move(copies));
}

// Ends `sequence` (the thunks of `computation`) with writing its root's
// leaves into `destinations`.
absl::Status StoreRoot(const HloComputation& computation, const std::vector<int64_t>& destinations,
                       ThunkSequence& sequence, ProgramBuilder& builder) {
  const HloInstruction& root = *computation.root_instruction();
  AXLE_ASSIGN_OR_RETURN(std::vector<int64_t> sources, RootValues(root, builder));
  if (sources.size() != destinations.size()) {
    return Unsupported(root, "a root whose array leaves do not match its caller's result");
  }
  builder.ShareNestedInPlace(sequence, sources, destinations);
  std::unique_ptr<Thunk> copy =
      CopyInto(absl::StrCat(root.name(), ".copy"), root.shape(), sources, destinations, builder);
  if (copy != nullptr) sequence.push_back(std::move(copy));
  return absl::OkStatus();
}

// Whether `body` returns leaf `index` of its parameter unchanged: its root
// holds, at `index`, get-tuple-elements of parameter 0 taking that index.
bool PassesThrough(const HloComputation& body, const ShapeIndex& index) {
  const HloInstruction* node = body.root_instruction();
  size_t depth = 0;
  while (depth < index.size() && node->opcode() == HloOpcode::kTuple) {
    node = node->operand(index[depth++]);
  }
  std::vector<int64_t> taken;  // innermost get-tuple-element first
  while (node->opcode() == HloOpcode::kGetTupleElement) {
    taken.push_back(cast<HloGetTupleElementInstruction>(node)->tuple_index());
    node = node->operand(0);
  }
  if (body.num_parameters() != 1 || node != body.parameter_instruction(0)) return false;
  std::vector<int64_t> from(taken.rbegin(), taken.rend());
  from.insert(from.end(), index.begin() + depth, index.end());
  return std::equal(from.begin(), from.end(), index.begin(), index.end());
}

}  // namespace

absl::Status EmitWhileThunk(const HloInstruction& instruction, ProgramBuilder& builder) {
  const HloComputation& condition = *instruction.while_condition();
  const HloComputation& body = *instruction.while_body();
  // The state: the while's own temporaries, initialized from the operand;
  // but a leaf the body passes through unchanged whose initial value is a
  // parameter or a constant (an RNN's weights and input sequence, read by
  // every step) is that value itself, not copied: no thunk writes
  // parameters or constants, and no body thunk writes a leaf the body
  // passes through (in_place_sharing.h shares temporaries only).
  builder.ForwardLeaves(instruction.operand(0), &instruction);
  std::vector<int64_t> state;
  std::vector<std::pair<int64_t, int64_t>> init;
  std::vector<std::pair<ShapeIndex, Shape>> leaves = ArrayLeaves(instruction.shape());
  for (size_t i = 0; i < leaves.size(); ++i) {
    const auto& [index, shape] = leaves[i];
    AXLE_ASSIGN_OR_RETURN(int64_t source, builder.ValueOf(instruction.operand(0), index));
    const ValueSlot::Kind kind = builder.slot(source).kind;
    if (kind != ValueSlot::Kind::kTemporary && PassesThrough(body, index)) {
      state.push_back(source);  // forwarded above
      continue;
    }
    state.push_back(builder.DefineTemporary(&instruction, index, shape));
    init.emplace_back(source, state.back());
  }
  builder.BindParameter(condition, 0, &instruction);
  AXLE_ASSIGN_OR_RETURN(ThunkSequence condition_thunks, builder.BuildSequence(condition));
  if (!ShapeUtil::Equal(condition.root_instruction()->shape(), ShapeUtil::MakeShape(PRED, {}))) {
    return Unsupported(instruction, "a while condition that does not return pred[]");
  }
  AXLE_ASSIGN_OR_RETURN(int64_t condition_value, builder.ValueOf(condition.root_instruction(), {}));
  builder.BindParameter(body, 0, &instruction);
  AXLE_ASSIGN_OR_RETURN(ThunkSequence body_thunks, builder.BuildSequence(body));
  AXLE_RETURN_IF_ERROR(StoreRoot(body, state, body_thunks, builder));
  builder.AddThunk(std::make_unique<WhileThunk>(instruction.name(), std::move(init),
                                                std::move(condition_thunks), condition_value,
                                                std::move(body_thunks)));
  return absl::OkStatus();
}

absl::Status EmitConditionalThunk(const HloInstruction& instruction, ProgramBuilder& builder) {
  const std::vector<HloComputation*>& branches = instruction.branch_computations();
  const PrimitiveType selector_type = instruction.operand(0)->shape().element_type();
  if (!IsRunnableConditional(instruction)) {
    return Unsupported(instruction, kRunnableConditionalForm);
  }
  AXLE_ASSIGN_OR_RETURN(int64_t selector, builder.ValueOf(instruction.operand(0)));
  std::vector<int64_t> results = builder.DefineTemporaries(&instruction);
  std::vector<ThunkSequence> sequences;
  for (size_t i = 0; i < branches.size(); ++i) {
    const HloComputation& branch = *branches[i];
    if (branch.num_parameters() > 0) builder.BindParameter(branch, 0, instruction.operand(i + 1));
    AXLE_ASSIGN_OR_RETURN(ThunkSequence thunks, builder.BuildSequence(branch));
    AXLE_RETURN_IF_ERROR(StoreRoot(branch, results, thunks, builder));
    sequences.push_back(std::move(thunks));
  }
  builder.AddThunk(std::make_unique<ConditionalThunk>(instruction.name(), selector,
                                                      selector_type == PRED, std::move(sequences)));
  return absl::OkStatus();
}

absl::Status EmitCallThunk(const HloInstruction& instruction, ProgramBuilder& builder) {
  const HloComputation& callee = *instruction.to_apply();
  for (int64_t i = 0; i < instruction.operand_count(); ++i) {
    builder.BindParameter(callee, i, instruction.operand(i));
  }
  AXLE_ASSIGN_OR_RETURN(ThunkSequence thunks, builder.BuildSequence(callee));
  for (std::unique_ptr<Thunk>& thunk : thunks) builder.AddThunk(std::move(thunk));
  builder.ForwardLeaves(callee.root_instruction(), &instruction);
  return absl::OkStatus();
}

}  // namespace axle::cpu
