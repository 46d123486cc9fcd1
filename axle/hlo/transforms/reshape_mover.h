//===- reshape_mover.h - Sink reshapes and transposes past elementwise ops -===//
//
// XLA's ReshapeMover (`--passes=reshape-mover`): an elementwise instruction
// whose operands are all the same rearrangement (reshapes from one shape to
// another, or transposes with one permutation) of their inputs, apart from
// scalar broadcasts and scalar-valued constants, is computed on the inputs
// instead, and the rearrangement is applied once to its result:
//
//   add(reshape(a), reshape(b))  ->  reshape(add(a, b))
//   mul(transpose(a), broadcast(s))  ->  transpose(mul(a, broadcast'(s)))
//
// Moving rearrangements towards the outputs lets them meet and cancel
// (algsimp merges reshape(reshape) and transpose(transpose)). Transposes
// also sink below a reduce-window of one array (the window permuted) and
// fold into a reduce of one array (its dimensions permuted; a transpose of
// the result remains only when the kept dims change order):
//
//   reduce-window(transpose(a))  ->  transpose(reduce-window'(a))
//   reduce(transpose(a), {2,3})  ->  reduce(a, {1,2})   (a channels-last pool)
//
// and below a concatenate of transposes with one permutation (the concat
// dimension permuted), and a broadcast operand of a transposed elementwise
// op moves with the transpose when its dimensions keep their order (a
// per-channel batch-norm scale after a channels-last convolution):
//
//   concatenate(transpose(a), transpose(b)), dim d  ->
//       transpose(concatenate(a, b), dim p[d])
//   mul(transpose(a), broadcast(v, {1}))  ->  transpose(mul(a, broadcast(v, {3})))
//
// At least one
// operand must be a rearrangement of something other than a constant or a
// broadcast, so the pass never just shuffles constants around. Arrays with
// non-default layouts are left alone; the pass runs to a fixed point.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_HLO_TRANSFORMS_RESHAPE_MOVER_H_
#define AXLE_HLO_TRANSFORMS_RESHAPE_MOVER_H_

#include "axle/hlo/pass/hlo_pass_interface.h"

namespace axle {

class ReshapeMover : public HloPassInterface {
 public:
  absl::string_view name() const override { return "reshape-mover"; }
  absl::StatusOr<bool> Run(HloModule* module) override;
};

}  // namespace axle

#endif  // AXLE_HLO_TRANSFORMS_RESHAPE_MOVER_H_
