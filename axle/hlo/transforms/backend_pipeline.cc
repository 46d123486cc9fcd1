//===- backend_pipeline.cc - The passes every backend runs before codegen --===//
#include "axle/hlo/transforms/backend_pipeline.h"

#include <cstdint>
#include <memory>
#include <vector>

#include "axle/base/status_macros.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/pass/pass_registry.h"
#include "axle/hlo/transforms/fusion_utils.h"

namespace axle {

absl::Status AddBackendPreparationPasses(HloPassPipeline& pipeline, bool run_backend_only,
                                         BackendPassEdit edit) {
  static constexpr const char* kOptimizing[] = {"layout-normalization",
                                                "batchnorm-expander",
                                                "bf16-reductions-in-f32",
                                                "call-inliner",
                                                "algsimp",
                                                "tuple-simplifier",
                                                "while-loop-simplifier",
                                                "reshape-mover",
                                                "constant-folding",
                                                "cse",
                                                "while-loop-constant-sinking",
                                                "constant-folding",
                                                "while-loop-simplifier",
                                                "algsimp",
                                                "dce",
                                                "fusion",
                                                "multi-output-fusion",
                                                "cse"};
  static constexpr const char* kRequired[] = {"layout-normalization", "batchnorm-expander",
                                              "bf16-reductions-in-f32"};
  const absl::Span<const char* const> names =
      run_backend_only ? absl::Span<const char* const>(kRequired) : kOptimizing;
  for (const char* name : names) {
    AXLE_ASSIGN_OR_RETURN(const bool add, edit(name, pipeline));
    if (!add) continue;
    AXLE_ASSIGN_OR_RETURN(std::unique_ptr<HloPassInterface> pass, CreatePass(name));
    pipeline.AddPass(std::move(pass));
  }
  return absl::OkStatus();
}

bool AddTupleRootsToFusions(const HloModule& module,
                            absl::FunctionRef<bool(const HloInstruction& fusion)> skip) {
  bool changed = false;
  for (HloComputation* computation : ControlFlowComputations(module)) {
    for (HloInstruction* instruction : computation->instructions()) {
      if (instruction->opcode() != HloOpcode::kFusion || skip(*instruction)) continue;
      HloComputation* fused =
          cast<HloFusionInstruction>(instruction)->fused_instructions_computation();
      HloInstruction* root = fused->root_instruction();
      if (!root->shape().IsTuple() || root->opcode() == HloOpcode::kTuple) continue;
      std::vector<HloInstruction*> elements;
      for (int64_t i = 0; i < static_cast<int64_t>(root->shape().tuple_shapes().size()); ++i) {
        auto element = std::make_unique<HloGetTupleElementInstruction>(
            HloOpcode::kGetTupleElement, root->shape().tuple_shapes(i),
            absl::Span<HloInstruction* const>{root});
        element->mutable_attrs()->tuple_index = i;
        elements.push_back(fused->AddInstruction(std::move(element)));
      }
      fused->set_root_instruction(fused->AddInstruction(
          HloInstruction::Create(HloOpcode::kTuple, root->shape(), elements)));
      changed = true;
    }
  }
  return changed;
}

bool IsPlumbing(HloOpcode opcode) {
  switch (opcode) {
    case HloOpcode::kParameter:
    case HloOpcode::kConstant:
    case HloOpcode::kTuple:
    case HloOpcode::kGetTupleElement:
    case HloOpcode::kBitcast:
    case HloOpcode::kFusion:
    case HloOpcode::kAfterAll:
    case HloOpcode::kAddDependency:
    case HloOpcode::kOptimizationBarrier:
    case HloOpcode::kDomain:
      return true;
    default:
      return false;
  }
}

bool LoopFusible(const HloInstruction& instruction) {
  if (HloOpcodeIsAsyncStart(instruction.opcode()) || HloOpcodeIsAsyncDone(instruction.opcode())) {
    return false;
  }
  return instruction.shape().IsArray() || instruction.opcode() == HloOpcode::kReduce ||
         instruction.opcode() == HloOpcode::kReduceWindow;
}

absl::StatusOr<bool> WrapInLoopFusions::Run(HloModule* module) {
  bool changed = false;
  bool stopped = false;
  for (HloComputation* computation : ControlFlowComputations(*module)) {
    for (HloInstruction* instruction : computation->MakeInstructionPostOrder()) {
      if (!needs_kernel_(*instruction)) continue;
      if (!LoopFusible(*instruction)) {
        stopped = stop_at_unfusible_;
        if (stopped) break;
        continue;
      }
      AXLE_RETURN_IF_ERROR(WrapInFusion(instruction, FusionKind::kLoop).status());
      changed = true;
    }
    if (stopped) return changed;
  }
  if (AddTupleRootsToFusions(*module, keeps_root_)) changed = true;
  return changed;
}

}  // namespace axle
