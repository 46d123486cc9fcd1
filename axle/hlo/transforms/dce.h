//===- dce.h - Dead code elimination ---------------------------------------===//
//
// Removes instructions whose values are never used (not the root, no users,
// no side effects: side-effecting custom calls, rng, send/recv, infeed/
// outfeed, channel collectives, and loops/calls whose computations contain
// any of those stay; see side_effects.h), then computations no longer called
// from the entry.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_HLO_TRANSFORMS_DCE_H_
#define AXLE_HLO_TRANSFORMS_DCE_H_

#include "axle/hlo/pass/hlo_pass_interface.h"

namespace axle {

class HloDCE : public HloPassInterface {
 public:
  absl::string_view name() const override { return "dce"; }
  absl::StatusOr<bool> Run(HloModule* module) override;
};

}  // namespace axle

#endif  // AXLE_HLO_TRANSFORMS_DCE_H_
