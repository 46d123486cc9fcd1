#include "axle/hlo/transforms/dce.h"

#include <vector>

#include "axle/base/status_macros.h"

namespace axle {
namespace {

bool IsDead(const HloInstruction* instruction) {
  return instruction->user_count() == 0 && !instruction->IsRoot() &&
         instruction->opcode() != HloOpcode::kParameter && !instruction->HasSideEffect() &&
         instruction->control_successors().empty();
}

}  // namespace

absl::StatusOr<bool> HloDCE::Run(HloModule* module) {
  bool changed = false;
  for (HloComputation* computation : module->MakeComputationPostOrder()) {
    // Reverse post order visits users before operands, so one sweep removes
    // whole dead chains.
    std::vector<HloInstruction*> order = computation->MakeInstructionPostOrder();
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      if (!IsDead(*it)) continue;
      AXLE_RETURN_IF_ERROR(computation->RemoveInstruction(*it));
      changed = true;
    }
  }
  int64_t before = module->computation_count();
  module->RemoveUnusedComputations();
  return changed || module->computation_count() != before;
}

}  // namespace axle
