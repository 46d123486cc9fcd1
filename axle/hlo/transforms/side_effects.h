//===- side_effects.h - What cleanup passes may remove, merge or move ------===//
//
// The cleanup passes (DCE, CSE, constant folding, inlining, tuple and
// while-loop simplification) share one notion of "has an effect beyond its
// value": HloInstruction::HasSideEffect() (side-effecting custom calls, rng,
// send/recv, infeed/outfeed), collectives that talk to other programs (a
// channel id or a constrained layout), and any instruction that calls a
// computation containing one of those (a while loop whose body prints).
// Such instructions are never removed, merged, duplicated or reordered
// across each other.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_HLO_TRANSFORMS_SIDE_EFFECTS_H_
#define AXLE_HLO_TRANSFORMS_SIDE_EFFECTS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "axle/hlo/ir/hlo_computation.h"

namespace axle {

// The instruction's own effect or one in a computation it calls
// (transitively).
bool HasSideEffectDeep(const HloInstruction& instruction);
bool ComputationHasSideEffect(const HloComputation& computation);

// A pure value computation: no deep side effect, and none of the
// instructions whose identity matters even without one (parameters,
// collectives and async pairs, tokens, add-dependency, opt-barrier, domain,
// replica/partition ids whose values differ per device). CSE merges,
// loop-invariant code motion hoists and constant folding evaluates only
// these.
bool IsPureValue(const HloInstruction& instruction);

// Removes every instruction of `computation` that has no users and is not
// the root, a parameter, a control predecessor or side-effecting (deep), in
// one sweep users-first. Returns whether anything was removed.
absl::StatusOr<bool> RemoveDeadInstructions(HloComputation* computation);

}  // namespace axle

#endif  // AXLE_HLO_TRANSFORMS_SIDE_EFFECTS_H_
