//===- gpu_while_unroller.cc - Small counted loops unrolled for the GPU ----===//
#include "axle/gpu/gpu_while_unroller.h"

#include <memory>
#include <vector>

#include "axle/base/status_macros.h"
#include "axle/hlo/ir/hlo_module.h"
#include "axle/hlo/pass/pass_registry.h"
#include "axle/hlo/transforms/call_inliner.h"
#include "axle/hlo/transforms/side_effects.h"
#include "axle/hlo/transforms/while_loop_simplifier.h"

namespace axle::gpu {
namespace {

// Whether copies of `body` may be made: no fusion or asynchronous op, whose
// called computation belongs to that one instruction, and no loop of its
// own (unrolled first, it would multiply the copies' size). A body with a
// dot or convolution (cuBLAS, cuDNN) stays a loop: lstm_scan's step (a
// [16,640]x[640,512] dot and its gates) unrolled ran 0.94 ms on an H200
// against 0.46 ms as a loop (2026-11-28), its steps' kernels fused into
// fewer, slower ones.
bool CopyableBody(const HloComputation& body) {
  for (const HloInstruction* instruction : body.instructions()) {
    if (instruction->opcode() == HloOpcode::kFusion || instruction->opcode() == HloOpcode::kWhile ||
        instruction->opcode() == HloOpcode::kDot ||
        instruction->opcode() == HloOpcode::kConvolution ||
        HloOpcodeIsAsyncStart(instruction->opcode()) ||
        HloOpcodeIsAsyncDone(instruction->opcode())) {
      return false;
    }
  }
  return true;
}

}  // namespace

std::optional<int64_t> UnrollableTripCount(const HloInstruction& loop,
                                           const WhileUnrollLimits& limits) {
  if (loop.opcode() != HloOpcode::kWhile) return std::nullopt;
  const HloComputation& condition = *loop.while_condition();
  const HloComputation& body = *loop.while_body();
  const int64_t body_instructions = body.instruction_count();
  if (body_instructions > limits.max_body_instructions || ComputationHasSideEffect(condition) ||
      ComputationHasSideEffect(body) || !CopyableBody(body) || body.num_parameters() != 1) {
    return std::nullopt;
  }
  std::optional<int64_t> trips = CountWhileTrips(loop, limits.max_trips + 1);
  if (!trips.has_value() || *trips > limits.max_trips ||
      *trips * body_instructions > limits.max_unrolled_instructions) {
    return std::nullopt;
  }
  return trips;
}

absl::StatusOr<bool> GpuWhileLoopUnroller::Run(HloModule* module) {
  // Loops found first (unrolling adds instructions and may copy nested
  // loops, which a later run of the pass would see).
  std::vector<std::pair<HloInstruction*, int64_t>> loops;
  for (HloComputation* computation : module->MakeComputationPostOrder()) {
    for (HloInstruction* instruction : computation->instructions()) {
      if (std::optional<int64_t> trips = UnrollableTripCount(*instruction, limits_)) {
        loops.emplace_back(instruction, *trips);
      }
    }
  }
  if (loops.empty()) return false;
  for (const auto& [loop, trips] : loops) {
    HloComputation* into = loop->parent();
    const HloComputation& body = *loop->while_body();
    HloInstruction* state = loop->mutable_operand(0);
    for (int64_t trip = 0; trip < trips; ++trip) {
      AXLE_ASSIGN_OR_RETURN(state, InlineComputation(body, {state}, into));
    }
    AXLE_RETURN_IF_ERROR(into->ReplaceInstruction(loop, state));
  }
  module->RemoveUnusedComputations();
  // The copies' induction variables folded to constants (their indexing
  // with them simplified) before the passes that follow look at them.
  for (const char* name : {"tuple-simplifier", "constant-folding", "algsimp", "dce"}) {
    AXLE_ASSIGN_OR_RETURN(std::unique_ptr<HloPassInterface> pass, CreatePass(name));
    AXLE_RETURN_IF_ERROR(pass->Run(module).status());
  }
  return true;
}

}  // namespace axle::gpu
