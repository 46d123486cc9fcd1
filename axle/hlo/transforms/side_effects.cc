//===- side_effects.cc - What cleanup passes may remove, merge or move -----===//
#include "axle/hlo/transforms/side_effects.h"

#include <vector>

#include "absl/container/flat_hash_set.h"
#include "axle/hlo/ir/hlo_instructions.h"

namespace axle {
namespace {

bool HasOwnSideEffect(const HloInstruction& instruction) {
  if (instruction.HasSideEffect()) return true;
  if (const auto* collective = dyn_cast<HloCollectiveInstruction>(&instruction)) {
    return collective->channel_id().has_value() || collective->attrs().constrain_layout;
  }
  return false;
}

bool ComputationHasSideEffectImpl(const HloComputation& computation,
                                  absl::flat_hash_set<const HloComputation*>* visiting);

bool HasSideEffectDeepImpl(const HloInstruction& instruction,
                           absl::flat_hash_set<const HloComputation*>* visiting) {
  if (HasOwnSideEffect(instruction)) return true;
  for (const HloComputation* callee : instruction.called_computations()) {
    if (callee != nullptr && ComputationHasSideEffectImpl(*callee, visiting)) return true;
  }
  return false;
}

bool ComputationHasSideEffectImpl(const HloComputation& computation,
                                  absl::flat_hash_set<const HloComputation*>* visiting) {
  // A (malformed) recursive call graph counts as effect-free on the cycle.
  if (!visiting->insert(&computation).second) return false;
  bool result = false;
  for (const HloInstruction* instruction : computation.instructions()) {
    if (HasSideEffectDeepImpl(*instruction, visiting)) {
      result = true;
      break;
    }
  }
  visiting->erase(&computation);
  return result;
}

}  // namespace

bool HasSideEffectDeep(const HloInstruction& instruction) {
  absl::flat_hash_set<const HloComputation*> visiting;
  return HasSideEffectDeepImpl(instruction, &visiting);
}

bool ComputationHasSideEffect(const HloComputation& computation) {
  absl::flat_hash_set<const HloComputation*> visiting;
  return ComputationHasSideEffectImpl(computation, &visiting);
}

bool IsPureValue(const HloInstruction& instruction) {
  HloOpcode opcode = instruction.opcode();
  if (HloOpcodeIsCollective(opcode) || HloOpcodeIsAsyncStart(opcode) ||
      HloOpcodeIsAsyncDone(opcode)) {
    return false;
  }
  switch (opcode) {
    case HloOpcode::kParameter:
    case HloOpcode::kAfterAll:
    case HloOpcode::kAddDependency:
    case HloOpcode::kOptimizationBarrier:
    case HloOpcode::kDomain:
    case HloOpcode::kAsyncUpdate:
    case HloOpcode::kReplicaId:
    case HloOpcode::kPartitionId:
      return false;
    default:
      break;
  }
  if (instruction.shape().IsToken()) return false;
  return !HasSideEffectDeep(instruction);
}

absl::StatusOr<bool> RemoveDeadInstructions(HloComputation* computation) {
  bool changed = false;
  // Reverse post order visits users before operands, so one sweep removes
  // whole dead chains.
  std::vector<HloInstruction*> order = computation->MakeInstructionPostOrder();
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    HloInstruction* instruction = *it;
    if (instruction->user_count() != 0 || instruction->IsRoot() ||
        instruction->opcode() == HloOpcode::kParameter ||
        !instruction->control_successors().empty() || HasSideEffectDeep(*instruction)) {
      continue;
    }
    absl::Status status = computation->RemoveInstruction(instruction);
    if (!status.ok()) return status;
    changed = true;
  }
  return changed;
}

}  // namespace axle
