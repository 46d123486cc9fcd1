//===- while_loop_simplifier.h - Remove loops that run 0 or 1 times --------===//
//
// XLA's WhileLoopSimplifier ("while-loop-simplifier"), its simple cases:
// a loop whose trip count is statically 0 is replaced by its init value, a
// loop that runs exactly once by its body inlined on the init value. The
// trip count is known when the condition's root compares one element of
// the loop state (an integer) with a constant, the body's root is a tuple
// that adds a constant to that element, and the init value of that element
// is a constant. Loops whose condition has side effects are kept (it runs
// once more than the body). Elements of the loop state that nothing observes
// (not read after the loop or by the condition, and in the body only
// feeding themselves or other such elements) are removed from the state when
// the loop's body and condition are its own and read the state only through
// get-tuple-element. Loops that carry tokens (send/recv pipelined across
// iterations) are left alone.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_HLO_TRANSFORMS_WHILE_LOOP_SIMPLIFIER_H_
#define AXLE_HLO_TRANSFORMS_WHILE_LOOP_SIMPLIFIER_H_

#include <cstdint>
#include <optional>

#include "axle/hlo/pass/hlo_pass_interface.h"

namespace axle {

class WhileLoopSimplifier : public HloPassInterface {
 public:
  absl::string_view name() const override { return "while-loop-simplifier"; }
  absl::StatusOr<bool> Run(HloModule* module) override;
};

// The number of times `loop` (a while instruction) runs its body, counted up
// to `limit`: nullopt when it cannot be told statically, `limit` when it is
// at least that.
std::optional<int64_t> CountWhileTrips(const HloInstruction& loop, int64_t limit);

}  // namespace axle

#endif  // AXLE_HLO_TRANSFORMS_WHILE_LOOP_SIMPLIFIER_H_
