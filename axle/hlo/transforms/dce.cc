//===- dce.cc - Dead code elimination --------------------------------------===//
#include "axle/hlo/transforms/dce.h"

#include <vector>

#include "axle/base/status_macros.h"
#include "axle/hlo/transforms/side_effects.h"

namespace axle {

absl::StatusOr<bool> HloDCE::Run(HloModule* module) {
  bool changed = false;
  for (HloComputation* computation : module->MakeComputationPostOrder()) {
    AXLE_ASSIGN_OR_RETURN(bool removed, RemoveDeadInstructions(computation));
    changed |= removed;
  }
  int64_t before = module->computation_count();
  module->RemoveUnusedComputations();
  return changed || module->computation_count() != before;
}

}  // namespace axle
