//===- topk_decomposer.h - topk as a sort and two slices -------------------===//
//
// Rewrites the topk ops a backend does not run itself (the predicate given
// to the pass says which: the cpu platform keeps those its topk thunk runs,
// TopKThunkSupports in cpu/runtime/thunk_emitters.h; with no predicate every
// topk is rewritten): `topk(x), k=K, largest=L` becomes
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
// With `custom_calls` (the cuda backend), XLA's TopK custom calls too
// ("TopK", "__gpu$TopK": operand [batch?, n], result (values [batch?, k],
// s32 indices [batch?, k])): the same sort by the call's own comparator of
// (value, value, index, index), stable, and the same slices.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_HLO_TRANSFORMS_TOPK_DECOMPOSER_H_
#define AXLE_HLO_TRANSFORMS_TOPK_DECOMPOSER_H_

#include <functional>
#include <utility>

#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/pass/hlo_pass_interface.h"

namespace axle {

class TopKDecomposer : public HloPassInterface {
 public:
  // Whether a topk is rewritten; an empty predicate rewrites every one.
  using Predicate = std::function<bool(const HloInstruction&)>;
  explicit TopKDecomposer(Predicate should_decompose = {}, bool custom_calls = false)
      : should_decompose_(std::move(should_decompose)), custom_calls_(custom_calls) {}
  absl::string_view name() const override { return "topk-decomposer"; }
  absl::StatusOr<bool> Run(HloModule* module) override;

 private:
  Predicate should_decompose_;
  bool custom_calls_;
};

// Whether `call` is one of XLA's TopK custom calls.
bool IsTopKCustomCall(const HloCustomCallInstruction& call);

}  // namespace axle

#endif  // AXLE_HLO_TRANSFORMS_TOPK_DECOMPOSER_H_
