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
#include "axle/hlo/pass/hlo_pass_interface.h"

namespace axle::gpu {

class GpuDotVariantsToDot : public HloPassInterface {
 public:
  absl::string_view name() const override { return "gpu-dot-variants-to-dot"; }
  absl::StatusOr<bool> Run(HloModule* module) override;
};

}  // namespace axle::gpu

#endif  // AXLE_GPU_DOT_VARIANTS_TO_DOT_H_
