//===- while_loop_invariant_code_motion.h - Hoist loop-invariant values ----===//
//
// XLA's WhileLoopInvariantCodeMotion ("while-loop-invariant-code-motion"):
// a value the loop body computes the same way in every iteration is
// computed once before the loop and passed in as an extra element of the
// loop state. Invariant are the state elements the body passes through
// unchanged (root tuple operand i is gte(parameter, i)), constants, and pure
// instructions (side_effects.h: no side effects, no collectives, ...) of
// invariant operands. As in XLA's default, values that depend on constants
// only are not hoisted (that would only make them live longer), and
// broadcasts, reshapes, bitcasts, transposes, slices, iotas and reverses
// are not worth hoisting on their own (carrying their result costs about
// what computing them does): they leave the body only as operands of a
// value that is, and stay in it for their other users. The loop is
// rewritten only when its body and condition are used by it alone and read
// the state only through get-tuple-element; its users see the original
// elements through a tuple of get-tuple-elements (tuple-simplifier removes
// it).
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_HLO_TRANSFORMS_WHILE_LOOP_INVARIANT_CODE_MOTION_H_
#define AXLE_HLO_TRANSFORMS_WHILE_LOOP_INVARIANT_CODE_MOTION_H_

#include "axle/hlo/pass/hlo_pass_interface.h"

namespace axle {

class WhileLoopInvariantCodeMotion : public HloPassInterface {
 public:
  absl::string_view name() const override { return "while-loop-invariant-code-motion"; }
  absl::StatusOr<bool> Run(HloModule* module) override;
};

}  // namespace axle

#endif  // AXLE_HLO_TRANSFORMS_WHILE_LOOP_INVARIANT_CODE_MOTION_H_
