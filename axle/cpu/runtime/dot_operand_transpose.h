//===- dot_operand_transpose.h - Dot operands in the order the matmul reads -===//
//
// A cpu-prepare pass, run after layout normalization and before fusion. The
// dot thunks read an operand in place when its dims, major to minor, are
// the batch dims (in the dot's order) then the free and the contracting
// dims as two contiguous groups (either first): [B, M, K] or [B, K, M] for
// the lhs, [B, K, N] or [B, N, K] for the rhs, dims of size one aside
// (dot_plan.h: Collapse). Otherwise the oneDNN path gathers the operand
// into a dense copy on every run, element by element: JAX's attention
// `einsum('bqhd,bkhd->bhqk')` has its batch dims (b, h) apart, and the two
// [2, 8] x [256, 64] x [64, 256] dots of attention_bf16 spent most of
// their time gathering.
//
// Like XLA's DotDecomposer, this pass then rewrites such a dot (f32 or
// bf16 operands, above the emitted loop's size) to read
//
//   lhs' = transpose(lhs) as [batch..., free..., contracting...]
//          or [batch..., contracting..., free...]
//   rhs' = transpose(rhs) as [batch..., contracting..., free...]
//          or [batch..., free..., contracting...]
//
// with the dimension numbers renumbered; only the operand that needs it is
// transposed, and of the two orders it takes the one that keeps its minor
// dimension minor (the group holding it goes last), so the transpose
// copies whole rows instead of moving every element: attention_bf16's k
// and v ([b, s, h, d]) become [b, h, s, d] for both of its dots (before,
// [b, h, d, s]: 12% of its single-thread run in those two transposes).
// The result is the same dot (output dims unchanged). The transpose then
// fuses into the operand's producer (a convert, a scale), or runs as a
// tiled transpose kernel, instead of the per-run gather.
//
// First, the other way round (XLA's TransposeFolding): an operand that is
// a transpose of a value the matmul reads in place with its dims
// renumbered is replaced by that value, when the dot is oneDNN's (above
// the small-dot kernel's size) and the free dims keep their order. A
// PyTorch Linear layer's `x @ w.t()` and the transposed activations and
// gradients of its backward pass recorded a transpose of the whole weight
// or activation on every training step (the 784-256-256-10 MLP: five per
// step). An operand `transpose(x)` that does not read x in place may
// instead read another transpose of x in place, one that a dot reads as
// well (so it is computed anyway) and that copies whole rows (else the
// first): PyTorch's nn.MultiheadAttention records each head's q, k and v
// as [b*h, s, d] for one dot and transposed, [b*h, d, s], for another
// (the scores' k, the gradients' q and v): three extra copies per step,
// now one of each (transformer block at d_model 128: 88 -> 84 thunks).
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_CPU_RUNTIME_DOT_OPERAND_TRANSPOSE_H_
#define AXLE_CPU_RUNTIME_DOT_OPERAND_TRANSPOSE_H_

#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "axle/core/shape.h"
#include "axle/hlo/pass/hlo_pass_interface.h"

namespace axle::cpu {

// Whether an operand of `shape` (descending layout) reads in place as
// [batch, first, second] or [batch, second, first] (each a list of dims,
// `batch` and each group in the order the dot reads them), dims of size one
// aside.
bool DotOperandReadsInPlace(const Shape& shape, absl::Span<const int64_t> batch,
                            absl::Span<const int64_t> first, absl::Span<const int64_t> second);

class DotOperandTranspose : public HloPassInterface {
 public:
  absl::string_view name() const override { return "cpu-dot-operand-transpose"; }
  absl::StatusOr<bool> Run(HloModule* module) override;
};

}  // namespace axle::cpu

#endif  // AXLE_CPU_RUNTIME_DOT_OPERAND_TRANSPOSE_H_
