//===- gpu_fusion_inliner.h - Fusions no loop kernel computes, unfused -----===//
//
// Modules XLA has already fused (its pass tests, dumps of its optimized
// HLO) hold fusions the CUDA backend's loop kernels do not compute: output
// and custom fusions (a dot or a convolution with its epilogue, Triton's
// GEMMs), fusions holding a library op (dot, sort, scatter, ...), control
// flow, a custom call, a collective or another fusion, multi-output
// fusions whose outputs differ in shape (LoopFusionOutputs), and fusions
// of a tuple operand. GpuFusionInliner replaces each such fusion in a
// computation that is not itself fused by its fused computation's
// instructions (call_inliner.h's InlineComputation), the fusions that this
// brings out included, and removes the fused computation: the backend's
// own passes then fuse what they can (or wrap each op in a loop fusion
// when only the backend's passes run), and the library ops get their
// thunks. Fusions with control dependencies are left alone. Returns whether
// any fusion was inlined.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_GPU_GPU_FUSION_INLINER_H_
#define AXLE_GPU_GPU_FUSION_INLINER_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "axle/hlo/pass/hlo_pass_interface.h"

namespace axle::gpu {

class GpuFusionInliner : public HloPassInterface {
 public:
  absl::string_view name() const override { return "gpu-fusion-inliner"; }
  absl::StatusOr<bool> Run(HloModule* module) override;
};

// Whether the CUDA backend compiles fusion `fusion` as a loop kernel as it
// is (what GpuFusionInliner leaves alone).
bool IsGpuLoopKernelFusion(const HloInstruction& fusion);

}  // namespace axle::gpu

#endif  // AXLE_GPU_GPU_FUSION_INLINER_H_
