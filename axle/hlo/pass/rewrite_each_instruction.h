//===- rewrite_each_instruction.h - A pass's walk over a module ------------===//
//
// The loop most rewriting passes run: every instruction of every non-fusion
// computation, each computation's in the post order taken before the walk
// reaches it, so that a rewrite may replace the instruction it is given;
// and that loop for the lowering passes, which replace each instruction
// they lower.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_HLO_PASS_REWRITE_EACH_INSTRUCTION_H_
#define AXLE_HLO_PASS_REWRITE_EACH_INSTRUCTION_H_

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "axle/hlo/ir/hlo_computation.h"
#include "axle/hlo/ir/hlo_module.h"

namespace axle {

// Calls `rewrite(computation, instruction)` on each instruction of the
// non-fusion computations of `module` (computations in post order, callees
// first) and returns whether any call returned true; the first error stops
// the walk.
absl::StatusOr<bool> RewriteEachInstruction(
    HloModule* module,
    absl::FunctionRef<absl::StatusOr<bool>(HloComputation*, HloInstruction*)> rewrite);

// The same walk for a pass that lowers instructions one at a time:
// `lower(instruction)` returns the instruction's replacement, which takes
// its place (HloComputation::ReplaceInstruction), or null to leave it.
absl::StatusOr<bool> ReplaceEachInstruction(
    HloModule* module, absl::FunctionRef<absl::StatusOr<HloInstruction*>(HloInstruction*)> lower);

}  // namespace axle

#endif  // AXLE_HLO_PASS_REWRITE_EACH_INSTRUCTION_H_
