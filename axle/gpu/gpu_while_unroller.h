//===- gpu_while_unroller.h - Small counted loops unrolled for the GPU -----===//
//
// XLA:GPU's WhileLoopUnroller (full unrolling, as its pipeline runs it):
// a while loop whose trip count is known (CountWhileTrips: an induction
// variable initialized to a constant, stepped by a constant, compared with a
// constant) and small is replaced by that many copies of its body, each
// taking the previous copy's result, the first the loop's operand. The
// copies then meet the simplification passes (the induction variable folds
// to a constant in each, so a dynamic-slice at it becomes a slice) and the
// fusion pass, which merges what the iterations compute into few kernels:
// a scan's steps (lstm_scan) lose their state copies, and a fori_loop's
// iterations their dynamic slices.
//
// XLA's limits: at most 64 trips, at most 800 instructions in the body,
// at most 10000 instructions once unrolled (trips times the body's
// instructions). Loops whose condition or body has side effects (custom
// calls, infeed, ...) or whose body holds fusions or asynchronous ops (whose
// computations belong to one instruction) or loops (an inner loop is
// unrolled, not the outer) are kept. After unrolling, the pass runs
// tuple-simplifier, constant-folding and algsimp once, so the passes after
// it see constant indices.
//
// Not in the default pipeline yet (GpuPrepareOptions, AXLE_GPU_UNROLL=1):
// with it, threefry_random's compile spends minutes in the fusion passes.
// Found (session 14): the unrolled rounds' values are each read two or
// three times; the fusion pass copies a shared producer into a consumer
// while the original stays for its other readers, and a producer read
// again through another copy is copied again, so a fused computation
// becomes a tree of the chain behind it (copies doubling round by round up
// to the size cap) and every surviving original roots another such
// fusion; multi-output-fusion then rescans them all after every merge.
// Reusing a producer's copy within a consumer keeps the DAG but changes
// the layer-norm fusion (instruction_fusion_row_test); not fixed yet.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_GPU_GPU_WHILE_UNROLLER_H_
#define AXLE_GPU_GPU_WHILE_UNROLLER_H_

#include <cstdint>
#include <optional>

#include "axle/hlo/ir/hlo_instruction.h"
#include "axle/hlo/pass/hlo_pass_interface.h"

namespace axle::gpu {

struct WhileUnrollLimits {
  int64_t max_trips = 64;
  int64_t max_body_instructions = 800;
  int64_t max_unrolled_instructions = 10000;
};

// The trip count of `loop` when the unroller would unroll it under
// `limits`; nullopt when it keeps the loop.
std::optional<int64_t> UnrollableTripCount(const HloInstruction& loop,
                                           const WhileUnrollLimits& limits);

class GpuWhileLoopUnroller : public HloPassInterface {
 public:
  explicit GpuWhileLoopUnroller(WhileUnrollLimits limits = WhileUnrollLimits()) : limits_(limits) {}
  absl::string_view name() const override { return "gpu-while-loop-unroller"; }
  absl::StatusOr<bool> Run(HloModule* module) override;

 private:
  WhileUnrollLimits limits_;
};

}  // namespace axle::gpu

#endif  // AXLE_GPU_GPU_WHILE_UNROLLER_H_
