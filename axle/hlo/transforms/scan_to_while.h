//===- scan_to_while.h - scan as a while loop -------------------------------===//
//
// For backends without a scan of their own (cpu): `scan(x_1..x_n, c_1..c_m), dimensions={d},
// num_carries=m, is_reverse=R, to_apply=f` becomes a while loop over
//
//   state = (s64[] i, x_1..x_n, c_1..c_m, o_1..o_k)   (outputs start at 0)
//
// whose body, at k = i (or length-1-i when R), slices element k of every x
// along d (dynamic-slice, then a reshape dropping d), calls f on
// (slices..., carries...), writes f's first k results into o_j at k
// (reshape, dynamic-update-slice) and takes its last m results as the new
// carries. The scan's result is (o_1..o_k, final carries) — as the
// interpreter computes it (axle/eval/evaluator_reduce.cc, EvaluateScan).
// call-inliner then inlines f into the body.
//
// Inputs, carries and outputs that are not arrays, and a to_apply whose
// outputs do not have the element type of the scan's, stay Unimplemented,
// naming the scan.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_HLO_TRANSFORMS_SCAN_TO_WHILE_H_
#define AXLE_HLO_TRANSFORMS_SCAN_TO_WHILE_H_

#include "axle/hlo/pass/hlo_pass_interface.h"

namespace axle {

class ScanToWhile : public HloPassInterface {
 public:
  absl::string_view name() const override { return "scan-to-while"; }
  absl::StatusOr<bool> Run(HloModule* module) override;
};

}  // namespace axle

#endif  // AXLE_HLO_TRANSFORMS_SCAN_TO_WHILE_H_
