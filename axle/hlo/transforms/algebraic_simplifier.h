//===- algebraic_simplifier.h - Local algebraic rewrites -------------------===//
//
// XLA's AlgebraicSimplifier (`--passes=algsimp`): rewrites single
// instructions into cheaper equivalents, to a fixed point:
//
//   arithmetic   x+0, 0+x, x-0, x*1, 1*x, x/1 -> x; x*0 -> 0 (integers and
//                pred only: 0*NaN is NaN); negate(negate x), not(not x) -> x;
//                max(x,x), min(x,x), and(x,x), or(x,x) -> x;
//                pow(x,0) -> 1, pow(x,1) -> x, pow(x,2) -> x*x (real types)
//   select       constant all-true/all-false predicate, identical branches
//   compare      x cmp x on integers and pred (not floats: NaN != NaN)
//   convert      to the same type -> x; convert(convert x) -> convert x when
//                the inner conversion is lossless
//   data movement  no-op reshape / transpose / broadcast / slice / reverse /
//                pad / concatenate / copy / bitcast -> operand; reshape of
//                reshape, transpose of transpose, broadcast of broadcast,
//                bitcast of bitcast merged; reshape or transpose of a scalar
//                broadcast -> broadcast
//   indexing     dynamic-slice with constant starts -> slice (starts clamped
//                as the op would); dynamic-update-slice that covers the whole
//                operand -> the update; iota along a size-1 dimension -> 0
//   reduce       reduce that keeps the element count, with an init value
//                that is the reducer's identity -> reshape
//
// Floating-point results are kept exactly, with one exception XLA also makes:
// x + 0.0 -> x, which gives -0 where the original gives +0 for x = -0.
// Nothing is reassociated. Instructions with side effects or control
// dependencies, dynamic shapes and fused computations are left alone; a
// rewrite never changes an instruction's shape or layout.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_HLO_TRANSFORMS_ALGEBRAIC_SIMPLIFIER_H_
#define AXLE_HLO_TRANSFORMS_ALGEBRAIC_SIMPLIFIER_H_

#include "axle/hlo/pass/hlo_pass_interface.h"

namespace axle {

class AlgebraicSimplifier : public HloPassInterface {
 public:
  absl::string_view name() const override { return "algsimp"; }
  absl::StatusOr<bool> Run(HloModule* module) override;
};

}  // namespace axle

#endif  // AXLE_HLO_TRANSFORMS_ALGEBRAIC_SIMPLIFIER_H_
