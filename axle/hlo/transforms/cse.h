//===- cse.h - Common subexpression elimination ----------------------------===//
//
// XLA's HloCSE ("cse"). Two instructions of one computation are merged when
// they compute the same value: same opcode, attributes, result shape (layout
// included) and operands, or constants of the same shape with bitwise equal
// values. Called computations must be the same computation; computations
// that are structurally identical (same instructions in the same order) are
// first made one, so `reduce(..., to_apply=add)` and
// `reduce(..., to_apply=add.1)` merge too. Side-effecting instructions
// (side-effecting custom calls, rng, send/recv, infeed/outfeed,
// collectives, async ops; see side_effects.h) and instructions with control
// dependencies are never merged.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_HLO_TRANSFORMS_CSE_H_
#define AXLE_HLO_TRANSFORMS_CSE_H_

#include "axle/hlo/pass/hlo_pass_interface.h"

namespace axle {

class HloCSE : public HloPassInterface {
 public:
  absl::string_view name() const override { return "cse"; }
  absl::StatusOr<bool> Run(HloModule* module) override;
};

}  // namespace axle

#endif  // AXLE_HLO_TRANSFORMS_CSE_H_
