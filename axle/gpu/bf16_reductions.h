//===- bf16_reductions.h - bf16 sums and products accumulated in f32 -------===//
//
// XLA:GPU normalizes bf16 arithmetic the GPU does not do natively to f32
// (gpu_compiler.cc runs FloatNormalization with GpuFloatSupport(BF16);
// gpu/float_support.cc supports a bf16 kReduce in no case), so a bf16
// reduction accumulates in f32 and rounds once at the end. f16 is left
// alone (no f16 normalization there). Axle's kernels fold a reduction in
// its reducer's type, which for a long bf16 sum loses the small terms
// (the sum of 1000 ones stalls at 256 when folded in order). This pass
// does what the normalization does for the reductions that matter:
//
//   reduce(x: bf16[...], init: bf16), to_apply=add|multiply of its two
//   parameters
//     -> convert<bf16>(reduce(convert<f32>(x), convert<f32>(init)),
//                      to_apply=the same op in f32)
//
// Max and min are exact in either type and stay bf16, as do variadic
// reductions and reducers of several ops (which XLA also converts; not
// here yet). Fusion computations are skipped (it runs before fusion).
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_GPU_BF16_REDUCTIONS_H_
#define AXLE_GPU_BF16_REDUCTIONS_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "axle/hlo/pass/hlo_pass_interface.h"

namespace axle::gpu {

class GpuBf16ReductionsInF32 : public HloPassInterface {
 public:
  absl::string_view name() const override { return "gpu-bf16-reductions-in-f32"; }
  absl::StatusOr<bool> Run(HloModule* module) override;
};

}  // namespace axle::gpu

#endif  // AXLE_GPU_BF16_REDUCTIONS_H_
