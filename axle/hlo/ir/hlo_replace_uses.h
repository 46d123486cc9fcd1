//===- hlo_replace_uses.h - One instruction's uses moved to another --------===//
//
// The step HloComputation::ReplaceInstruction and the cleanup passes share:
// every use and control dependency of an instruction moved to its
// replacement. ReplaceInstruction then removes the old instruction; the
// cleanup passes (CSE, constant folding, inlining, tuple and while-loop
// simplification) leave it for RemoveDeadInstructions
// (hlo/transforms/side_effects.h) to sweep.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_HLO_IR_HLO_REPLACE_USES_H_
#define AXLE_HLO_IR_HLO_REPLACE_USES_H_

#include "absl/status/status.h"
#include "axle/hlo/ir/hlo_instruction.h"

namespace axle {

// Makes every use of `old_instruction` (and the root, if it is) use
// `replacement` and moves its control dependencies there. The old
// instruction stays, without users or control dependencies.
absl::Status ReplaceUsesAndControl(HloInstruction* old_instruction, HloInstruction* replacement);

}  // namespace axle

#endif  // AXLE_HLO_IR_HLO_REPLACE_USES_H_
