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
// In the default pipeline (GpuPrepareOptions; AXLE_GPU_UNROLL=0 keeps the
// loops). threefry_random's unrolled rounds, whose values are each read two
// or three times, used to make the fusion pass run for minutes: a shared
// producer was copied into a consumer once per reader, so the fused
// computation became a tree of the chain behind it. The fusion pass now
// reuses a producer's copy within a fusion (fusion_utils.h:
// FusionGrowth::copies), the GPU's cap on a loop kernel is 1000
// instructions, and a long chain of cheap ops feeding a broadcast stays a
// kernel of its own (max_recomputed_instructions): threefry_random is 4
// kernels, compiled in well under a second.
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
