//===- rewrite_each_instruction.cc - A pass's walk over a module -----------===//
#include "axle/hlo/pass/rewrite_each_instruction.h"

#include "axle/base/status_macros.h"

namespace axle {

absl::StatusOr<bool> RewriteEachInstruction(
    HloModule* module,
    absl::FunctionRef<absl::StatusOr<bool>(HloComputation*, HloInstruction*)> rewrite) {
  bool changed = false;
  for (HloComputation* computation : module->MakeComputationPostOrder()) {
    if (computation->IsFusionComputation()) continue;
    for (HloInstruction* instruction : computation->MakeInstructionPostOrder()) {
      AXLE_ASSIGN_OR_RETURN(const bool rewritten, rewrite(computation, instruction));
      changed = changed || rewritten;
    }
  }
  return changed;
}

absl::StatusOr<bool> ReplaceEachInstruction(
    HloModule* module, absl::FunctionRef<absl::StatusOr<HloInstruction*>(HloInstruction*)> lower) {
  return RewriteEachInstruction(
      module,
      [&](HloComputation* computation, HloInstruction* instruction) -> absl::StatusOr<bool> {
        AXLE_ASSIGN_OR_RETURN(HloInstruction * replacement, lower(instruction));
        if (replacement == nullptr) return false;
        AXLE_RETURN_IF_ERROR(computation->ReplaceInstruction(instruction, replacement));
        return true;
      });
}

}  // namespace axle
