//===- dot_variants_to_dot.h - ragged-dot and scaled-dot as dots -----------===//
//
// The CUDA backend runs dots on cuBLAS (gemm_thunk.h); ragged-dot and
// scaled-dot become dots and elementwise ops around them, with the
// evaluator's semantics (eval/dot.cc):
//
//   scaled-dot(lhs, rhs, lhs_scale, rhs_scale)
//     -> dot(lhs * expand(lhs_scale), rhs * expand(rhs_scale)): each scale
//        (a scalar, or of its operand's rank with every operand dimension a
//        whole number of blocks of it) broadcast over its blocks; the
//        products in f32 (f64 for an f64 result: exact for 8- and 4-bit
//        floats and power-of-two scales), converted to the result type.
//   ragged-dot(lhs, rhs, group_sizes), ragged dimension r of lhs, groups g
//     (group_sizes [prefix..., g]; group j holds coordinates [start_j,
//     start_j + size_j) of r, start_j the sum of the earlier sizes, negative
//     ones counting as 0):
//     - r a batch dimension: the dot itself;
//     - r non-contracting (rhs has group dimension G): lhs copied once per
//       group, [g, lhs...], each copy zero outside its group's rows; a dot
//       with g batched against G; the groups summed (one non-zero term per
//       element: exact);
//     - r contracting: the same copies (zero outside the group's part of
//       the contraction) as a leading free dimension: out [g, ...].
//   This costs g times the dense dot (XLA:GPU's grouped GEMMs do not).
//   __op$block_scaled_dot(lhs, rhs, lhs_scale, rhs_scale), XLA's custom
//     call (its BlockScalingRewriter's expansion): lhs [B?, M, K], rhs
//     [B?, N, K], scales [B?, M or N, K / block]; operands and scales
//     converted to the result type, multiplied with the scales broadcast
//     over their blocks, a dot contracting K (batched along B).
//
// Anything else (PACKED_NIBBLE precision, several ragged dimensions, scales
// whose dimensions do not divide their operand's) is left alone, for the
// program builder to refuse naming CUDA and the instruction.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_GPU_DOT_VARIANTS_TO_DOT_H_
#define AXLE_GPU_DOT_VARIANTS_TO_DOT_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/pass/hlo_pass_interface.h"

namespace axle::gpu {

// Whether `call` is XLA's __op$block_scaled_dot, which the pass rewrites.
bool IsBlockScaledDotCall(const HloCustomCallInstruction& call);

class GpuDotVariantsToDot : public HloPassInterface {
 public:
  absl::string_view name() const override { return "gpu-dot-variants-to-dot"; }
  absl::StatusOr<bool> Run(HloModule* module) override;
};

}  // namespace axle::gpu

#endif  // AXLE_GPU_DOT_VARIANTS_TO_DOT_H_
