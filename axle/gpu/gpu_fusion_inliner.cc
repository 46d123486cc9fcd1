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
// computation: not an op with a thunk of its own (a library op, control
// flow, a custom call, a device id, a collective), a nested fusion, an
// asynchronous op or an op with side effects.
bool LoopKernelComputes(const HloInstruction& instruction) {
  const HloOpcode opcode = instruction.opcode();
  return !HasOwnGpuThunk(instruction) && !instruction.HasSideEffect() &&
         !HloOpcodeIsAsyncStart(opcode) && !HloOpcodeIsAsyncDone(opcode) &&
         opcode != HloOpcode::kAsyncUpdate && opcode != HloOpcode::kCopyStart &&
         opcode != HloOpcode::kCopyDone && opcode != HloOpcode::kFusion;
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
