//===- dot_to_reduce.h - Dots no GEMM takes, as a multiply and a reduce ---===//
//
// cuBLAS has GEMMs for a few type combinations (gemm_plan.h): f16, bf16,
// f32, f64, c64, c128 and s8 x s8 -> s32. XLA defines dot for every
// numeric type (s32 x s32 -> s32, u16, s4, pred, f16 x f32 -> f16, ...);
// this pass rewrites each dot of a combination no GEMM takes into what the
// loop kernels compute:
//
//   p = multiply(broadcast(lhs'), broadcast(rhs'))  : [batch..., lhs free...,
//                                                      rhs free..., contracting...]
//   result = convert(reduce(p, 0, add), over the contracting dims)
//
// lhs' and rhs' are the operands transposed to (batch, free, contracting),
// converted to the dot's result type first (as XLA's evaluator, and so the
// cpu backend) and then to the accumulator: f32 for 16- and 32-bit floats,
// f64 with any f64, c64/c128 for complex, 32-bit integers of the result's
// signedness for integer results up to 32 bits (whose low bits are the
// narrower result's, which wraps alike), 64-bit for 64-bit. pred dots are
// an or of ands. Fusion puts the broadcasts, converts and multiply inside
// the reduce's kernel, so the products are never stored. Fusion
// computations are skipped; returns whether any dot changed.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_GPU_DOT_TO_REDUCE_H_
#define AXLE_GPU_DOT_TO_REDUCE_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "axle/hlo/pass/hlo_pass_interface.h"

namespace axle::gpu {

class GpuDotToReduce : public HloPassInterface {
 public:
  absl::string_view name() const override { return "gpu-dot-to-reduce"; }
  absl::StatusOr<bool> Run(HloModule* module) override;
};

}  // namespace axle::gpu

#endif  // AXLE_GPU_DOT_TO_REDUCE_H_
