//===- layout_normalization.h - Make every computing op row-major ----------===//
//
// XLA's LayoutNormalization (`--passes=layout-normalization`). An array whose
// layout is not descending ({0,1} for a matrix: column-major) is viewed, by a
// bitcast, as the array of its physical dimensions in row-major order (the
// "normalized" shape: f32[2,3]{0,1} -> f32[3,2]{1,0}). Every op that
// touches such an array is rewritten to compute on normalized shapes, with
// explicit transposes where operand and result disagree on the physical
// order, and its result is bitcast back to the original shape for its users.
// Bitcast pairs that meet cancel, so a chain of rewritten ops exchanges
// normalized values directly. Parameters, the root and every called
// computation's interface keep their shapes, so the entry computation's
// layout is unchanged.
//
// Rewritten: elementwise ops, broadcast, reshape, transpose, copy, iota,
// single-input reduce, slice, reverse, pad, concatenate and dynamic-(update-)
// slice by rules of their own. Every other op (dot, convolution, gather,
// sort, reduce-window, variadic reduce, array constants, ...) computes on
// row-major operands into a row-major result (a tuple of them), transposed to
// the normalized shape: layout assignment to the default layout, in short.
// Left as they are (they move buffers, not elements): parameter, tuple,
// get-tuple-element, bitcast, while, call, conditional, after-all,
// add-dependency, optimization-barrier. A layout-constrained custom call
// (operand_layout_constraints; jaxlib's LAPACK calls) keeps its buffers as
// its interface, as XLA's layout assignment leaves them: each array operand
// is passed in its constraint's layout (transposed there when it is not) and
// the result keeps the instruction's layout (users read it through
// bitcasts). A call whose operand (or result) is in another layout than its
// computation's parameter (or root) gets a copy into that layout (JAX's
// calls can disagree so around such custom calls). An unconstrained custom
// call, a fusion or a side-effecting op on a non-descending (or tiled, or
// dynamic) array, or a nested tuple, makes the pass leave the whole module
// unchanged.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_HLO_TRANSFORMS_LAYOUT_NORMALIZATION_H_
#define AXLE_HLO_TRANSFORMS_LAYOUT_NORMALIZATION_H_

#include "axle/hlo/pass/hlo_pass_interface.h"

namespace axle {

class LayoutNormalization : public HloPassInterface {
 public:
  absl::string_view name() const override { return "layout-normalization"; }
  absl::StatusOr<bool> Run(HloModule* module) override;
};

}  // namespace axle

#endif  // AXLE_HLO_TRANSFORMS_LAYOUT_NORMALIZATION_H_
