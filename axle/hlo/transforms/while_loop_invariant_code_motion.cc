//===- while_loop_invariant_code_motion.cc - Hoist loop-invariant values ---===//
#include "axle/hlo/transforms/while_loop_invariant_code_motion.h"

#include <functional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "axle/base/status_macros.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/ir/hlo_replace_uses.h"
#include "axle/hlo/transforms/call_inliner.h"
#include "axle/hlo/transforms/hlo_creation_utils.h"
#include "axle/hlo/transforms/side_effects.h"

namespace axle {
namespace {

bool ReadsStateOnlyThroughGtes(const HloComputation& computation) {
  if (computation.num_parameters() != 1) return false;
  for (const HloInstruction* user : computation.parameter_instruction(0)->users()) {
    if (user->opcode() != HloOpcode::kGetTupleElement) return false;
  }
  return !computation.parameter_instruction(0)->IsRoot();
}

// XLA's rule: layout and indexing ops cost about as much as the copy that
// carrying their result would, so they leave the body only as operands of a
// hoisted value worth the move (and stay in it for their other users).
bool NotWorthHoistingIndividually(const HloInstruction& instruction) {
  switch (instruction.opcode()) {
    case HloOpcode::kBitcast:
    case HloOpcode::kBroadcast:
    case HloOpcode::kIota:
    case HloOpcode::kReshape:
    case HloOpcode::kReverse:
    case HloOpcode::kSlice:
    case HloOpcode::kTranspose:
    case HloOpcode::kTuple:
      return true;
    default:
      return false;
  }
}

// Hoists the invariant values of one loop; returns whether it did.
absl::StatusOr<bool> HoistFromLoop(HloModule* module, HloInstruction* loop) {
  HloComputation* parent = loop->parent();
  HloComputation* body = loop->while_body();
  HloComputation* condition = loop->while_condition();
  HloInstruction* root = body->root_instruction();
  const Shape& state_shape = loop->shape();
  if (!state_shape.IsTuple() || root->opcode() != HloOpcode::kTuple ||
      CountCallSites(*module, *body) != 1 || CountCallSites(*module, *condition) != 1 ||
      !ReadsStateOnlyThroughGtes(*body) || !ReadsStateOnlyThroughGtes(*condition) ||
      !loop->control_predecessors().empty() || !loop->control_successors().empty()) {
    return false;
  }
  HloInstruction* state = body->parameter_instruction(0);
  auto passes_through = [&](int64_t i) {
    const auto* gte = dyn_cast<HloGetTupleElementInstruction>(root->operand(i));
    return gte != nullptr && gte->operand(0) == state && gte->tuple_index() == i;
  };
  // Invariant values, and whether each depends on the loop state.
  absl::flat_hash_map<const HloInstruction*, bool> invariant;
  std::vector<HloInstruction*> hoisted;  // post order
  for (HloInstruction* instruction : body->MakeInstructionPostOrder()) {
    if (instruction->opcode() == HloOpcode::kConstant) {
      invariant[instruction] = false;
      continue;
    }
    if (auto* gte = dyn_cast<HloGetTupleElementInstruction>(instruction)) {
      if (gte->operand(0) == state) {
        if (passes_through(gte->tuple_index())) invariant[instruction] = true;
        continue;
      }
    }
    if (instruction == root || !instruction->control_predecessors().empty() ||
        !instruction->control_successors().empty() || !IsPureValue(*instruction)) {
      continue;
    }
    bool all_invariant = true, depends_on_state = false;
    for (const HloInstruction* operand : instruction->operands()) {
      auto it = invariant.find(operand);
      if (it == invariant.end()) {
        all_invariant = false;
        break;
      }
      depends_on_state |= it->second;
    }
    if (!all_invariant) continue;
    invariant[instruction] = depends_on_state;
    if (depends_on_state) hoisted.push_back(instruction);
  }
  // Only values worth the move, with the invariant operands they need.
  absl::flat_hash_set<const HloInstruction*> needed;
  for (auto it = hoisted.rbegin(); it != hoisted.rend(); ++it) {
    HloInstruction* instruction = *it;
    if (!NotWorthHoistingIndividually(*instruction)) needed.insert(instruction);
    if (!needed.contains(instruction)) continue;
    for (const HloInstruction* operand : instruction->operands()) needed.insert(operand);
  }
  std::erase_if(hoisted, [&](HloInstruction* value) { return !needed.contains(value); });
  if (hoisted.empty()) return false;

  // Copies before the loop: state elements read from the init value,
  // constants and hoisted instructions cloned.
  HloInstruction* init = loop->mutable_operand(0);
  absl::flat_hash_map<const HloInstruction*, HloInstruction*> outside;
  absl::flat_hash_set<const HloInstruction*> hoisted_set(hoisted.begin(), hoisted.end());
  // Invariant values that do not depend on the state (constants and what is
  // computed from them only) are cloned as needed, operands first.
  std::function<HloInstruction*(HloInstruction*)> outside_value =
      [&](HloInstruction* inner) -> HloInstruction* {
    auto it = outside.find(inner);
    if (it != outside.end()) return it->second;
    HloInstruction* value;
    if (auto* gte = dyn_cast<HloGetTupleElementInstruction>(inner);
        gte != nullptr && gte->operand(0) == state) {
      value = MakeGetTupleElement(init, gte->tuple_index());
    } else {
      std::vector<HloInstruction*> operands;
      for (HloInstruction* operand : inner->operands()) operands.push_back(outside_value(operand));
      std::unique_ptr<HloInstruction> copy = inner->CloneWithNewOperands(inner->shape(), operands);
      copy->SetName(module->GetUniqueName(inner->name()));
      value = parent->AddInstruction(std::move(copy));
    }
    outside[inner] = value;
    return value;
  };
  std::vector<HloInstruction*> carried;  // hoisted values some body value still needs
  for (HloInstruction* instruction : hoisted) {
    outside_value(instruction);
    // A cheap value stays in the body for its users there.
    if (NotWorthHoistingIndividually(*instruction)) continue;
    for (const HloInstruction* user : instruction->users()) {
      if (!hoisted_set.contains(user)) {
        carried.push_back(instruction);
        break;
      }
    }
  }

  // The new loop state: the old elements, then the carried values.
  int64_t old_size = state_shape.tuple_shapes_size();
  std::vector<HloInstruction*> init_elements;
  for (int64_t i = 0; i < old_size; ++i) init_elements.push_back(MakeGetTupleElement(init, i));
  for (HloInstruction* value : carried) init_elements.push_back(outside.at(value));
  HloInstruction* new_init = MakeTuple(parent, init_elements);
  const Shape& new_shape = new_init->shape();
  *state->mutable_shape() = new_shape;
  *condition->parameter_instruction(0)->mutable_shape() = new_shape;

  std::vector<HloInstruction*> root_elements = root->operands();
  for (int64_t j = 0; j < static_cast<int64_t>(carried.size()); ++j) {
    HloInstruction* element = MakeGetTupleElement(state, old_size + j);
    AXLE_RETURN_IF_ERROR(ReplaceUsesAndControl(carried[j], element));
    root_elements.push_back(element);
  }
  // The root tuple's operands may have been replaced just now: read them again.
  for (int64_t i = 0; i < old_size; ++i) root_elements[i] = root->mutable_operand(i);
  body->set_root_instruction(MakeTuple(body, root_elements));
  AXLE_RETURN_IF_ERROR(RemoveDeadInstructions(body).status());

  std::unique_ptr<HloInstruction> new_loop = loop->CloneWithNewOperands(new_shape, {new_init});
  new_loop->SetName(module->GetUniqueName(loop->name()));
  HloInstruction* added_loop = parent->AddInstruction(std::move(new_loop));
  std::vector<HloInstruction*> results;
  for (int64_t i = 0; i < old_size; ++i) results.push_back(MakeGetTupleElement(added_loop, i));
  AXLE_RETURN_IF_ERROR(ReplaceUsesAndControl(loop, MakeTuple(parent, results)));
  AXLE_RETURN_IF_ERROR(parent->RemoveInstruction(loop));
  return true;
}

}  // namespace

absl::StatusOr<bool> WhileLoopInvariantCodeMotion::Run(HloModule* module) {
  bool changed = false;
  for (HloComputation* computation : module->MakeComputationPostOrder()) {
    for (HloInstruction* loop : computation->MakeInstructionPostOrder()) {
      if (loop->opcode() != HloOpcode::kWhile) continue;
      AXLE_ASSIGN_OR_RETURN(bool hoisted, HoistFromLoop(module, loop));
      changed |= hoisted;
    }
  }
  return changed;
}

}  // namespace axle
