// One instruction's uses moved to another (see hlo_replace_uses.h).
#include "axle/hlo/ir/hlo_replace_uses.h"

#include <vector>

namespace axle {

absl::Status ReplaceUsesAndControl(HloInstruction* old_instruction, HloInstruction* replacement) {
  absl::Status status = old_instruction->ReplaceAllUsesWith(replacement);
  if (!status.ok()) return status;
  for (HloInstruction* pred :
       std::vector<HloInstruction*>(old_instruction->control_predecessors())) {
    // An edge to itself would be a cycle: the replacement (already one
    // of the old instruction's neighbours) is ordered as it was.
    if (pred != replacement) pred->AddControlDependencyTo(replacement);
  }
  for (HloInstruction* succ : std::vector<HloInstruction*>(old_instruction->control_successors())) {
    if (succ != replacement) replacement->AddControlDependencyTo(succ);
  }
  old_instruction->DropAllControlDeps();
  return absl::OkStatus();
}

}  // namespace axle
