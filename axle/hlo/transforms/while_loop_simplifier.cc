//===- while_loop_simplifier.cc - Remove loops that run 0 or 1 times -------===//
#include "axle/hlo/transforms/while_loop_simplifier.h"

#include <vector>

#include "absl/container/flat_hash_set.h"
#include "axle/base/status_macros.h"
#include "axle/core/compare_by_direction.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/ir/hlo_replace_uses.h"
#include "axle/hlo/transforms/call_inliner.h"
#include "axle/hlo/transforms/hlo_creation_utils.h"
#include "axle/hlo/transforms/side_effects.h"

namespace axle {
namespace {

// A scalar integer constant's value, when it fits comfortably in int64.
std::optional<int64_t> ScalarIntConstant(const HloInstruction* instruction) {
  const auto* constant = dyn_cast<HloConstantInstruction>(instruction);
  if (constant == nullptr || constant->attrs().elided || !instruction->shape().IsScalar()) {
    return std::nullopt;
  }
  PrimitiveType type = instruction->shape().element_type();
  if (type != S32 && type != S64 && type != U32) return std::nullopt;
  return constant->literal().GetIntegralAsS64(0);
}

// Element `index` of the loop state's parameter: gte(parameter, index).
bool IsStateElement(const HloInstruction* instruction, const HloComputation& computation,
                    int64_t* index) {
  const auto* gte = dyn_cast<HloGetTupleElementInstruction>(instruction);
  if (gte == nullptr || computation.num_parameters() != 1 ||
      gte->operand(0) != computation.parameter_instruction(0)) {
    return false;
  }
  *index = gte->tuple_index();
  return true;
}

ComparisonDirection Swapped(ComparisonDirection direction) {
  switch (direction) {
    case ComparisonDirection::kGe:
      return ComparisonDirection::kLe;
    case ComparisonDirection::kGt:
      return ComparisonDirection::kLt;
    case ComparisonDirection::kLe:
      return ComparisonDirection::kGe;
    case ComparisonDirection::kLt:
      return ComparisonDirection::kGt;
    default:
      return direction;
  }
}

// The init value of state element `index`, when it is a scalar constant.
std::optional<int64_t> InitElement(const HloInstruction* init, int64_t index) {
  if (init->opcode() == HloOpcode::kTuple) return ScalarIntConstant(init->operand(index));
  const auto* constant = dyn_cast<HloConstantInstruction>(init);
  if (constant == nullptr || constant->attrs().elided || !constant->literal().shape().IsTuple() ||
      index >= constant->literal().tuple_size()) {
    return std::nullopt;
  }
  const Literal& element = constant->literal().tuple_element(index);
  PrimitiveType type = element.shape().element_type();
  if (!element.shape().IsScalar() || (type != S32 && type != S64 && type != U32))
    return std::nullopt;
  return element.GetIntegralAsS64(0);
}

// The users of `instruction` when all are get-tuple-elements, else nullopt.
std::optional<std::vector<HloGetTupleElementInstruction*>> GteUsers(HloInstruction* instruction) {
  std::vector<HloGetTupleElementInstruction*> gtes;
  for (HloInstruction* user : instruction->users()) {
    auto* gte = dyn_cast<HloGetTupleElementInstruction>(user);
    if (gte == nullptr) return std::nullopt;
    gtes.push_back(gte);
  }
  return gtes;
}

// Removes the elements of the loop state that nothing observes: not read by
// the loop's users or its condition, and in the body only feeding their own
// next value (or other such elements). Only for a loop whose body and
// condition are its own, read the state through get-tuple-element only and
// have no control dependencies; returns whether it removed any.
absl::StatusOr<bool> RemoveDeadStateElements(HloModule* module, HloInstruction* loop) {
  HloComputation* parent = loop->parent();
  HloComputation* body = loop->while_body();
  HloComputation* condition = loop->while_condition();
  HloInstruction* root = body->root_instruction();
  if (!loop->shape().IsTuple() || loop->IsRoot() || root->opcode() != HloOpcode::kTuple ||
      CountCallSites(*module, *body) != 1 || CountCallSites(*module, *condition) != 1 ||
      body->num_parameters() != 1 || condition->num_parameters() != 1) {
    return false;
  }
  for (const HloComputation* computation : {body, condition}) {
    for (const HloInstruction* instruction : computation->instructions()) {
      if (!instruction->control_predecessors().empty()) return false;
    }
  }
  HloInstruction* state = body->parameter_instruction(0);
  auto outside = GteUsers(loop);
  auto in_body = GteUsers(state);
  auto in_condition = GteUsers(condition->parameter_instruction(0));
  if (!outside || !in_body || !in_condition || state->IsRoot() ||
      condition->parameter_instruction(0)->IsRoot()) {
    return false;
  }
  int64_t size = loop->shape().tuple_shapes_size();
  std::vector<bool> live(size, false);
  std::vector<HloInstruction*> worklist;
  auto mark_element = [&](int64_t i) {
    if (live[i]) return;
    live[i] = true;
    worklist.push_back(root->mutable_operand(i));
  };
  for (const auto* gte : *outside) mark_element(gte->tuple_index());
  for (const auto* gte : *in_condition) mark_element(gte->tuple_index());
  for (HloInstruction* instruction : body->instructions()) {
    if (HasSideEffectDeep(*instruction)) worklist.push_back(instruction);
  }
  // Everything the live values and the side effects read is live.
  absl::flat_hash_set<const HloInstruction*> visited;
  while (!worklist.empty()) {
    HloInstruction* instruction = worklist.back();
    worklist.pop_back();
    if (!visited.insert(instruction).second) continue;
    if (auto* gte = dyn_cast<HloGetTupleElementInstruction>(instruction);
        gte != nullptr && gte->operand(0) == state) {
      mark_element(gte->tuple_index());
    }
    for (HloInstruction* operand : instruction->operands()) worklist.push_back(operand);
  }
  std::vector<int64_t> new_index(size, -1);
  std::vector<int64_t> kept;
  for (int64_t i = 0; i < size; ++i) {
    if (!live[i]) continue;
    new_index[i] = static_cast<int64_t>(kept.size());
    kept.push_back(i);
  }
  if (kept.empty() || static_cast<int64_t>(kept.size()) == size) return false;

  // The body: a root of the live elements; the dead ones' chains go.
  std::vector<HloInstruction*> root_elements;
  root_elements.reserve(kept.size());
  for (int64_t i : kept) root_elements.push_back(root->mutable_operand(i));
  body->set_root_instruction(MakeTuple(body, root_elements));
  AXLE_RETURN_IF_ERROR(RemoveDeadInstructions(body).status());
  const Shape& new_shape = body->root_instruction()->shape();
  for (HloComputation* computation : {body, condition}) {
    HloInstruction* parameter = computation->parameter_instruction(0);
    for (HloInstruction* user : parameter->users()) {
      auto* gte = cast<HloGetTupleElementInstruction>(user);
      gte->mutable_attrs()->tuple_index = new_index[gte->tuple_index()];
    }
    *parameter->mutable_shape() = new_shape;
  }
  // The loop: a narrower init and state; its users read the new positions.
  std::vector<HloInstruction*> init_elements;
  init_elements.reserve(kept.size());
  for (int64_t i : kept) init_elements.push_back(MakeGetTupleElement(loop->mutable_operand(0), i));
  HloInstruction* new_init = MakeTuple(parent, init_elements);
  std::unique_ptr<HloInstruction> copy = loop->CloneWithNewOperands(new_shape, {new_init});
  copy->SetName(module->GetUniqueName(loop->name()));
  HloInstruction* new_loop = parent->AddInstruction(std::move(copy));
  for (HloGetTupleElementInstruction* gte : *outside) {
    AXLE_RETURN_IF_ERROR(gte->ReplaceOperandWith(0, new_loop));
    gte->mutable_attrs()->tuple_index = new_index[gte->tuple_index()];
  }
  AXLE_RETURN_IF_ERROR(parent->RemoveInstruction(loop));
  return true;
}

}  // namespace

std::optional<int64_t> CountWhileTrips(const HloInstruction& loop, int64_t limit) {
  if (loop.opcode() != HloOpcode::kWhile || !loop.shape().IsTuple()) return std::nullopt;
  const HloComputation& condition = *loop.while_condition();
  const HloComputation& body = *loop.while_body();
  const auto* compare = dyn_cast<HloCompareInstruction>(condition.root_instruction());
  if (compare == nullptr) return std::nullopt;
  int64_t index = -1;
  std::optional<int64_t> bound;
  ComparisonDirection direction = compare->direction();
  if (IsStateElement(compare->operand(0), condition, &index)) {
    bound = ScalarIntConstant(compare->operand(1));
  } else if (IsStateElement(compare->operand(1), condition, &index)) {
    bound = ScalarIntConstant(compare->operand(0));
    direction = Swapped(direction);
  }
  if (!bound.has_value()) return std::nullopt;
  // The body must add a constant step to that element.
  const HloInstruction* root = body.root_instruction();
  if (root->opcode() != HloOpcode::kTuple || index >= root->operand_count()) return std::nullopt;
  const HloInstruction* update = root->operand(index);
  if (update->opcode() != HloOpcode::kAdd) return std::nullopt;
  int64_t updated = -1;
  std::optional<int64_t> step;
  if (IsStateElement(update->operand(0), body, &updated)) {
    step = ScalarIntConstant(update->operand(1));
  } else if (IsStateElement(update->operand(1), body, &updated)) {
    step = ScalarIntConstant(update->operand(0));
  }
  if (!step.has_value() || updated != index) return std::nullopt;
  std::optional<int64_t> value = InitElement(loop.operand(0), index);
  if (!value.has_value()) return std::nullopt;
  // Stay far from the narrowest accepted type's (s32, u32) wrap-around.
  constexpr int64_t kSafe = int64_t{1} << 30;
  for (int64_t trips = 0; trips < limit; ++trips) {
    if (*value < -kSafe || *value > kSafe || *bound < -kSafe || *bound > kSafe || *step < -kSafe ||
        *step > kSafe) {
      return std::nullopt;
    }
    if (!CompareByDirection(direction, *value, *bound)) return trips;
    *value += *step;
  }
  return limit;
}

absl::StatusOr<bool> WhileLoopSimplifier::Run(HloModule* module) {
  bool changed = false;
  for (HloComputation* computation : module->MakeComputationPostOrder()) {
    bool computation_changed = false;
    for (HloInstruction* loop : computation->MakeInstructionPostOrder()) {
      if (loop->opcode() != HloOpcode::kWhile || !loop->control_predecessors().empty() ||
          !loop->control_successors().empty()) {
        continue;
      }
      // Loops that carry tokens pipeline send/recv across iterations: their
      // pairing is left alone.
      bool carries_token = false;
      ShapeUtil::ForEachLeafShape(loop->shape(), [&](const Shape& shape, const ShapeIndex&) {
        carries_token |= shape.IsToken();
      });
      if (carries_token) continue;
      if (ComputationHasSideEffect(*loop->while_condition())) {
        AXLE_ASSIGN_OR_RETURN(bool narrowed, RemoveDeadStateElements(module, loop));
        computation_changed |= narrowed;
        continue;
      }
      std::optional<int64_t> trips = CountWhileTrips(*loop, 2);
      if (!trips.has_value() || *trips > 1) {
        AXLE_ASSIGN_OR_RETURN(bool narrowed, RemoveDeadStateElements(module, loop));
        computation_changed |= narrowed;
        continue;
      }
      HloInstruction* replacement = loop->mutable_operand(0);
      if (*trips == 1) {
        if (!CanInlineComputation(*module, *loop->while_body())) continue;
        AXLE_ASSIGN_OR_RETURN(replacement,
                              InlineComputation(*loop->while_body(), {replacement}, computation));
      }
      AXLE_RETURN_IF_ERROR(ReplaceUsesAndControl(loop, replacement));
      // A loop with side effects in its body is gone too: it ran 0 times, or
      // its body's copy now holds them.
      AXLE_RETURN_IF_ERROR(computation->RemoveInstruction(loop));
      computation_changed = true;
    }
    if (computation_changed) AXLE_RETURN_IF_ERROR(RemoveDeadInstructions(computation).status());
    changed |= computation_changed;
  }
  if (changed) module->RemoveUnusedComputations();
  return changed;
}

}  // namespace axle
