//===- collective_major_dimension.h - NCCL's pieces made contiguous --------===//
//
// NCCL gathers, scatters and exchanges contiguous pieces of a buffer: an
// all-gather, reduce-scatter or all-to-all (array form) whose dimension is
// not the most major one of size > 1 in its layout moves pieces with
// strides between them, which the NCCL plan refuses
// (nccl_collective_plan.h). XLA:GPU's layout assignment gives such
// collectives a layout with that dimension most major. This pass does the
// same in HLO: the operand transposed so the dimension comes first (a
// descending layout), the collective along dimension 0, its result
// transposed back into the original dimensions and layout. The values are
// the collective's: piece k of the dimension is participant k's (or goes
// to participant k).
//
// Collectives of several operands, with control edges, or already
// contiguous are left alone. Host-only, no CUDA.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_GPU_COLLECTIVE_MAJOR_DIMENSION_H_
#define AXLE_GPU_COLLECTIVE_MAJOR_DIMENSION_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "axle/hlo/pass/hlo_pass_interface.h"

namespace axle::gpu {

class GpuCollectiveMajorDimension : public HloPassInterface {
 public:
  absl::string_view name() const override { return "gpu-collective-major-dimension"; }
  absl::StatusOr<bool> Run(HloModule* module) override;
};

}  // namespace axle::gpu

#endif  // AXLE_GPU_COLLECTIVE_MAJOR_DIMENSION_H_
