//===- collective_permute_splitter.h - One NCCL permute per operand --------===//
//
// XLA's collective-permute combiner (and its parser tests) write one
// collective-permute of several operands whose result is the tuple of the
// permuted operands. The NCCL thunk moves one buffer per peer; this pass
// gives each operand its own collective-permute with the same pairs,
// channel and attributes, and the tuple of their results replaces the
// combined one. The in-place form (collective/in_place_permute.h) and
// permutes with control edges are left alone. Host-only, no CUDA.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_GPU_COLLECTIVE_PERMUTE_SPLITTER_H_
#define AXLE_GPU_COLLECTIVE_PERMUTE_SPLITTER_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "axle/hlo/pass/hlo_pass_interface.h"

namespace axle::gpu {

class GpuCollectivePermuteSplitter : public HloPassInterface {
 public:
  absl::string_view name() const override { return "gpu-collective-permute-splitter"; }
  absl::StatusOr<bool> Run(HloModule* module) override;
};

}  // namespace axle::gpu

#endif  // AXLE_GPU_COLLECTIVE_PERMUTE_SPLITTER_H_
