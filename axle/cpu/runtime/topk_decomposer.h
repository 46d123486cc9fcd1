//===- topk_decomposer.h - topk as a sort and two slices -------------------===//
//
// A cpu-prepare pass for the topk ops the topk thunk does not run (the 8-
// and 4-bit floats; TopKThunkSupports in thunk_emitters.h):
// `topk(x), k=K, largest=L` becomes
//
//   iota    = s32[...,n] iota(), iota_dimension=last
//   sorted  = (T[...,n], s32[...,n]) sort(x, iota), dimensions={last},
//             is_stable=true, to_apply=comparator
//   result  = (slice [0:K] of element 0, slice [0:K] of element 1)
//
// (as XLA's TopkDecomposer). The sort is stable and the comparator strict,
// so ties keep the lower index first. Floats order as the interpreter's
// topk does (axle/eval/evaluator_sort.cc): by total order (-0 below +0),
// except that every NaN, whatever its sign, is above +inf.
// topk of complex numbers stays Unimplemented.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_CPU_RUNTIME_TOPK_DECOMPOSER_H_
#define AXLE_CPU_RUNTIME_TOPK_DECOMPOSER_H_

#include "axle/hlo/pass/hlo_pass_interface.h"

namespace axle::cpu {

class TopKDecomposer : public HloPassInterface {
 public:
  absl::string_view name() const override { return "cpu-topk-decomposer"; }
  absl::StatusOr<bool> Run(HloModule* module) override;
};

}  // namespace axle::cpu

#endif  // AXLE_CPU_RUNTIME_TOPK_DECOMPOSER_H_
