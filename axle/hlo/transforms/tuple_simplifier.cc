//===- tuple_simplifier.cc - Remove tuple/get-tuple-element round trips ----===//
#include "axle/hlo/transforms/tuple_simplifier.h"

#include <vector>

#include "axle/base/status_macros.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/ir/hlo_replace_uses.h"
#include "axle/hlo/transforms/side_effects.h"

namespace axle {
namespace {

// The value `instruction` forwards unchanged, or null.
HloInstruction* ForwardedValue(HloInstruction* instruction) {
  if (auto* gte = dyn_cast<HloGetTupleElementInstruction>(instruction)) {
    HloInstruction* tuple = gte->mutable_operand(0);
    if (tuple->opcode() != HloOpcode::kTuple) return nullptr;
    HloInstruction* element = tuple->mutable_operand(gte->tuple_index());
    return element->shape() == instruction->shape() ? element : nullptr;
  }
  if (instruction->opcode() != HloOpcode::kTuple || instruction->operand_count() == 0) {
    return nullptr;
  }
  HloInstruction* source = nullptr;
  for (int64_t i = 0; i < instruction->operand_count(); ++i) {
    auto* gte = dyn_cast<HloGetTupleElementInstruction>(instruction->mutable_operand(i));
    if (gte == nullptr || gte->tuple_index() != i) return nullptr;
    if (source != nullptr && gte->mutable_operand(0) != source) return nullptr;
    source = gte->mutable_operand(0);
  }
  return source->shape() == instruction->shape() ? source : nullptr;
}

}  // namespace

absl::StatusOr<bool> TupleSimplifier::Run(HloModule* module) {
  bool changed = false;
  for (HloComputation* computation : module->MakeComputationPostOrder()) {
    bool computation_changed = false;
    for (HloInstruction* instruction : computation->MakeInstructionPostOrder()) {
      HloInstruction* value = ForwardedValue(instruction);
      if (value == nullptr) continue;
      AXLE_RETURN_IF_ERROR(ReplaceUsesAndControl(instruction, value));
      computation_changed = true;
    }
    if (computation_changed) AXLE_RETURN_IF_ERROR(RemoveDeadInstructions(computation).status());
    changed |= computation_changed;
  }
  return changed;
}

}  // namespace axle
