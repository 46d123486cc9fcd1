//===- dot_output_transpose.h - A transposed dot result as the swapped dot -===//
//
// A cpu-prepare pass, run after layout normalization and before fusion.
// JAX's gradient of `x @ w` with respect to `w` comes out as
//
//   g = dot(dy, x), lhs_contracting_dims={0}, rhs_contracting_dims={0}
//   w' = w - transpose(g * lr), dimensions={1,0}
//
// and the transpose then runs as a loop of its own over the whole weight
// on every step (mlp_train_step: 14% of a single-thread step). A dot's
// result is [batch..., lhs free..., rhs free...]; transposed to [batch...,
// rhs free..., lhs free...] it is the dot with its operands swapped, as in
// XLA's algebraic simplifier. This pass finds a transpose of that
// permutation above a dot, through a chain of elementwise ops whose other
// operands are scalars broadcast (a scale, a convert, a negate), each the
// only user of the value below it, and rewrites it as the swapped dot with
// the chain on top, when both its sides have at least 64 elements (a
// skinny result transposes cheaply, and its dot runs on the small-row
// kernel only in its own orientation). No values change: each output
// element is the same sum.
//
// A dot with several users is swapped when each of them, through
// elementwise ops over values computed from the dot and scalar broadcasts,
// ends in transposes of that permutation: the algebraic simplifier sinks a
// transpose below elementwise ops, so the PyTorch device's Adam step
// (the gradient, a result, and both moments read it) gives
//
//   grad = transpose(g); m' = m * b1 + transpose(g * (1 - b1));
//   v' = v * b2 + transpose(g * g * (1 - b2))
//
// and the whole region then runs in the swapped orientation, with no
// transpose left.
//
// More generally, a transpose whose minor dimension is the dot's last lhs
// free dimension (the swapped dot's minor one) becomes the swapped dot, the
// chain, and the remaining transpose, which keeps the minor dimension minor
// (a copy of whole rows, fused with the chain) instead of moving every
// element: JAX's attention output einsum('bkhd,bhqk->bqhd') is a dot
// giving [b, h, d, q] transposed to [b, q, h, d]; swapped it gives
// [b, h, q, d] and a row copy (attention_bf16).
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_CPU_RUNTIME_DOT_OUTPUT_TRANSPOSE_H_
#define AXLE_CPU_RUNTIME_DOT_OUTPUT_TRANSPOSE_H_

#include "axle/hlo/pass/hlo_pass_interface.h"

namespace axle::cpu {

class DotOutputTranspose : public HloPassInterface {
 public:
  absl::string_view name() const override { return "cpu-dot-output-transpose"; }
  absl::StatusOr<bool> Run(HloModule* module) override;
};

}  // namespace axle::cpu

#endif  // AXLE_CPU_RUNTIME_DOT_OUTPUT_TRANSPOSE_H_
