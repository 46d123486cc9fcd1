// Building and growing fusion instructions (see fusion_utils.h).
#include "axle/hlo/transforms/fusion_utils.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "axle/base/status_macros.h"
#include "axle/hlo/ir/hlo_module.h"

namespace axle {
namespace {

// Collects the instructions of a new fused computation: clones of outside
// instructions, inlined fused computations, and one parameter per distinct
// outside value read.
class FusedComputationBuilder {
 public:
  explicit FusedComputationBuilder(HloModule* module)
      : module_(module),
        computation_(std::make_unique<HloComputation>(module->GetUniqueName("fused_computation"))) {
  }

  // The fused value that stands for the outside value `outer`.
  HloInstruction* Parameter(HloInstruction* outer) {
    auto it = parameters_.find(outer);
    if (it != parameters_.end()) return it->second;
    int64_t number = static_cast<int64_t>(outer_operands_.size());
    auto parameter = std::make_unique<HloParameterInstruction>(
        HloOpcode::kParameter, outer->shape(), absl::Span<HloInstruction* const>{});
    parameter->mutable_attrs()->parameter_number = number;
    parameter->SetName(module_->GetUniqueName(absl::StrCat("param_", number)));
    HloInstruction* added = computation_->AddInstruction(std::move(parameter));
    parameters_[outer] = added;
    outer_operands_.push_back(outer);
    return added;
  }

  // A clone of `original` over `operands`. `rename`: the original stays in
  // the module, so the clone needs a name of its own.
  HloInstruction* Clone(const HloInstruction& original, absl::Span<HloInstruction* const> operands,
                        bool rename) {
    std::unique_ptr<HloInstruction> clone =
        original.CloneWithNewOperands(original.shape(), operands);
    if (rename) clone->SetName(module_->GetUniqueName(original.name()));
    return computation_->AddInstruction(std::move(clone));
  }

  // Clones `original` (an outside instruction, maybe a fusion) reading
  // `operands` in place of its own operands; returns the value it computes.
  HloInstruction* Emit(const HloInstruction& original, const std::vector<HloInstruction*>& operands,
                       bool rename) {
    const auto* fusion = dyn_cast<HloFusionInstruction>(&original);
    if (fusion == nullptr) return Clone(original, operands, rename);
    const HloComputation* fused = fusion->fused_instructions_computation();
    absl::flat_hash_map<const HloInstruction*, HloInstruction*> map;
    for (int64_t i = 0; i < fused->num_parameters(); ++i) {
      map[fused->parameter_instruction(i)] = operands[i];
    }
    for (HloInstruction* instruction : fused->MakeInstructionPostOrder()) {
      if (instruction->opcode() == HloOpcode::kParameter) continue;
      std::vector<HloInstruction*> new_operands;
      for (HloInstruction* operand : instruction->operands())
        new_operands.push_back(map.at(operand));
      map[instruction] = Clone(*instruction, new_operands, rename);
    }
    return map.at(fused->root_instruction());
  }

  // Installs the fused computation in the module and adds the fusion
  // instruction (not yet used by anything) to `outer`.
  HloFusionInstruction* Finish(HloInstruction* root, FusionKind kind, const Shape& shape,
                               HloComputation* outer) {
    computation_->set_root_instruction(root);
    HloComputation* fused = module_->AddEmbeddedComputation(std::move(computation_));
    auto fusion =
        std::make_unique<HloFusionInstruction>(HloOpcode::kFusion, shape, outer_operands_);
    fusion->mutable_attrs()->kind = kind;
    fusion->SetName(module_->GetUniqueName("fusion"));
    fusion->AppendCalledComputation(fused);
    auto* added = cast<HloFusionInstruction>(outer->AddInstruction(std::move(fusion)));
    fused->SetFusionInstruction(added);
    return added;
  }

 private:
  HloModule* module_;
  std::unique_ptr<HloComputation> computation_;
  absl::flat_hash_map<HloInstruction*, HloInstruction*> parameters_;
  std::vector<HloInstruction*> outer_operands_;
};

// Replaces `old_instruction` by `fusion` and removes the fused computations
// of fusions that are gone as a result.
absl::Status ReplaceWithFusion(HloInstruction* old_instruction, HloFusionInstruction* fusion,
                               std::vector<HloComputation*> maybe_dead) {
  HloComputation* computation = old_instruction->parent();
  std::vector<HloInstruction*> candidates;
  for (HloComputation* fused : maybe_dead) candidates.push_back(fused->FusionInstruction());
  AXLE_RETURN_IF_ERROR(computation->ReplaceInstruction(old_instruction, fusion));
  // A fusion instruction that is still in the computation keeps its body.
  absl::flat_hash_map<const HloInstruction*, bool> alive;
  for (HloInstruction* instruction : computation->instructions()) alive[instruction] = true;
  for (size_t i = 0; i < maybe_dead.size(); ++i) {
    if (alive.contains(candidates[i])) continue;
    AXLE_RETURN_IF_ERROR(computation->parent()->RemoveEmbeddedComputation(maybe_dead[i]));
  }
  return absl::OkStatus();
}

}  // namespace

std::vector<HloComputation*> ControlFlowComputations(const HloModule& module) {
  std::vector<HloComputation*> order;
  if (module.entry_computation() == nullptr) return order;
  absl::flat_hash_map<const HloComputation*, bool> seen;
  // Depth-first over call edges; a computation is listed after its callees.
  std::vector<std::pair<HloComputation*, bool>> stack = {{module.entry_computation(), false}};
  while (!stack.empty()) {
    auto [computation, expanded] = stack.back();
    stack.pop_back();
    if (expanded) {
      order.push_back(computation);
      continue;
    }
    if (seen.contains(computation)) continue;
    seen[computation] = true;
    stack.push_back({computation, true});
    for (HloInstruction* instruction : computation->MakeInstructionPostOrder()) {
      HloOpcode op = instruction->opcode();
      if (op != HloOpcode::kWhile && op != HloOpcode::kConditional && op != HloOpcode::kCall) {
        continue;
      }
      for (HloComputation* callee : instruction->called_computations()) {
        if (callee != nullptr && !seen.contains(callee)) stack.push_back({callee, false});
      }
    }
  }
  return order;
}

bool IsExpensiveElementwise(HloOpcode opcode) {
  return HloOpcodeIsTranscendental(opcode) || opcode == HloOpcode::kDivide ||
         opcode == HloOpcode::kRemainder;
}

bool IsCheapToDuplicate(const HloInstruction& instruction) {
  if (const auto* fusion = dyn_cast<HloFusionInstruction>(&instruction)) {
    for (const HloInstruction* fused : fusion->fused_instructions_computation()->instructions()) {
      if (!IsCheapToDuplicate(*fused)) return false;
    }
    return true;
  }
  return !IsExpensiveElementwise(instruction.opcode());
}

absl::StatusOr<HloFusionInstruction*> WrapInFusion(HloInstruction* instruction, FusionKind kind) {
  HloComputation* outer = instruction->parent();
  FusedComputationBuilder builder(outer->parent());
  std::vector<HloInstruction*> operands;
  for (HloInstruction* operand : instruction->operands())
    operands.push_back(builder.Parameter(operand));
  HloInstruction* root = builder.Emit(*instruction, operands, /*rename=*/false);
  HloFusionInstruction* fusion = builder.Finish(root, kind, instruction->shape(), outer);
  std::vector<HloComputation*> maybe_dead;
  if (auto* old = dyn_cast<HloFusionInstruction>(instruction)) {
    maybe_dead.push_back(old->fused_instructions_computation());
  }
  AXLE_RETURN_IF_ERROR(ReplaceWithFusion(instruction, fusion, maybe_dead));
  return fusion;
}

absl::StatusOr<HloFusionInstruction*> FuseProducerIntoConsumer(HloInstruction* producer,
                                                               HloInstruction* consumer,
                                                               FusionKind kind) {
  HloComputation* outer = consumer->parent();
  if (producer->parent() != outer || !consumer->IsUserOf(producer)) {
    return absl::InvalidArgumentError(
        absl::StrCat(producer->name(), " is not an operand of ", consumer->name()));
  }
  // The producer stays when something besides the consumer reads it.
  bool producer_stays = producer->IsRoot() || producer->user_count() != 1;
  FusedComputationBuilder builder(outer->parent());
  std::vector<HloInstruction*> producer_operands;
  for (HloInstruction* operand : producer->operands()) {
    producer_operands.push_back(builder.Parameter(operand));
  }
  HloInstruction* producer_value = builder.Emit(*producer, producer_operands, producer_stays);
  std::vector<HloInstruction*> consumer_operands;
  for (HloInstruction* operand : consumer->operands()) {
    consumer_operands.push_back(operand == producer ? producer_value : builder.Parameter(operand));
  }
  HloInstruction* root = builder.Emit(*consumer, consumer_operands, /*rename=*/false);
  HloFusionInstruction* fusion = builder.Finish(root, kind, consumer->shape(), outer);
  std::vector<HloComputation*> maybe_dead;
  for (HloInstruction* old : {producer, consumer}) {
    if (auto* old_fusion = dyn_cast<HloFusionInstruction>(old)) {
      maybe_dead.push_back(old_fusion->fused_instructions_computation());
    }
  }
  AXLE_RETURN_IF_ERROR(ReplaceWithFusion(consumer, fusion, maybe_dead));
  return fusion;
}

}  // namespace axle
