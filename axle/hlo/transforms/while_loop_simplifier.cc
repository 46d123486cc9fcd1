//===- while_loop_simplifier.cc - Remove loops that run 0 or 1 times -------===//
#include "axle/hlo/transforms/while_loop_simplifier.h"

#include <vector>

#include "axle/base/status_macros.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/transforms/call_inliner.h"
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

bool Compare(ComparisonDirection direction, int64_t a, int64_t b) {
  switch (direction) {
    case ComparisonDirection::kEq: return a == b;
    case ComparisonDirection::kNe: return a != b;
    case ComparisonDirection::kGe: return a >= b;
    case ComparisonDirection::kGt: return a > b;
    case ComparisonDirection::kLe: return a <= b;
    case ComparisonDirection::kLt: return a < b;
  }
  return false;
}

ComparisonDirection Swapped(ComparisonDirection direction) {
  switch (direction) {
    case ComparisonDirection::kGe: return ComparisonDirection::kLe;
    case ComparisonDirection::kGt: return ComparisonDirection::kLt;
    case ComparisonDirection::kLe: return ComparisonDirection::kGe;
    case ComparisonDirection::kLt: return ComparisonDirection::kGt;
    default: return direction;
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
  if (!element.shape().IsScalar() || (type != S32 && type != S64 && type != U32)) return std::nullopt;
  return element.GetIntegralAsS64(0);
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
    if (*value < -kSafe || *value > kSafe || *bound < -kSafe || *bound > kSafe ||
        *step < -kSafe || *step > kSafe) {
      return std::nullopt;
    }
    if (!Compare(direction, *value, *bound)) return trips;
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
          !loop->control_successors().empty() ||
          ComputationHasSideEffect(*loop->while_condition())) {
        continue;
      }
      std::optional<int64_t> trips = CountWhileTrips(*loop, 2);
      if (!trips.has_value() || *trips > 1) continue;
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
