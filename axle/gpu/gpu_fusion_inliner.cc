//===- gpu_fusion_inliner.cc - Fusions no loop kernel computes, unfused ----===//
#include "axle/gpu/gpu_fusion_inliner.h"

#include <vector>

#include "axle/base/status_macros.h"
#include "axle/gpu/gpu_thunk_factories.h"
#include "axle/gpu/ptx_kernel_emitter.h"
#include "axle/hlo/ir/hlo_computation.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/ir/hlo_module.h"
#include "axle/hlo/transforms/call_inliner.h"

namespace axle::gpu {
namespace {

// Whether a loop kernel can compute `instruction` inside a fused
// computation: not a library op, control flow, a custom call, a
// collective, a nested fusion or an op with side effects.
bool LoopKernelComputes(const HloInstruction& instruction) {
  if (IsGpuLibraryOp(instruction) || instruction.HasSideEffect() ||
      HloOpcodeIsCollective(instruction.opcode()) || HloOpcodeIsAsyncStart(instruction.opcode()) ||
      HloOpcodeIsAsyncDone(instruction.opcode())) {
    return false;
  }
  switch (instruction.opcode()) {
    case HloOpcode::kFusion:
    case HloOpcode::kWhile:
    case HloOpcode::kConditional:
    case HloOpcode::kCall:
    case HloOpcode::kCustomCall:
    case HloOpcode::kReplicaId:
    case HloOpcode::kPartitionId:
    case HloOpcode::kAsyncUpdate:
    case HloOpcode::kCopyStart:
    case HloOpcode::kCopyDone:
      return false;
    default:
      return true;
  }
}

}  // namespace

bool IsGpuLoopKernelFusion(const HloInstruction& fusion) {
  const auto* fused = cast<HloFusionInstruction>(&fusion);
  if (fused->fusion_kind() == FusionKind::kOutput || fused->fusion_kind() == FusionKind::kCustom) {
    return false;
  }
  for (const HloInstruction* operand : fusion.operands()) {
    if (!operand->shape().IsArray()) return false;
  }
  const HloComputation& computation = *fused->fused_instructions_computation();
  for (const HloInstruction* instruction : computation.instructions()) {
    if (!LoopKernelComputes(*instruction)) return false;
  }
  return LoopFusionOutputs(computation).ok();
}

absl::StatusOr<bool> GpuFusionInliner::Run(HloModule* module) {
  bool changed = false;
  // An inlined fusion's own fusions come out into the computation: look
  // again until none is left to inline.
  for (bool inlined = true; inlined;) {
    inlined = false;
    for (HloComputation* computation : module->MakeComputationPostOrder()) {
      if (computation->IsFusionComputation()) continue;
      for (HloInstruction* fusion : computation->MakeInstructionPostOrder()) {
        if (fusion->opcode() != HloOpcode::kFusion || !fusion->control_predecessors().empty() ||
            !fusion->control_successors().empty() || IsGpuLoopKernelFusion(*fusion)) {
          continue;
        }
        HloComputation* fused =
            cast<HloFusionInstruction>(fusion)->fused_instructions_computation();
        AXLE_ASSIGN_OR_RETURN(HloInstruction * root,
                              InlineComputation(*fused, fusion->operands(), computation));
        AXLE_RETURN_IF_ERROR(computation->ReplaceInstruction(fusion, root));
        if (CountCallSites(*module, *fused) == 0) {
          AXLE_RETURN_IF_ERROR(module->RemoveEmbeddedComputation(fused));
        }
        inlined = true;
        changed = true;
      }
    }
  }
  return changed;
}

}  // namespace axle::gpu
