//===- constant_folding.cc - Evaluate instructions of constants ------------===//
#include "axle/hlo/transforms/constant_folding.h"

#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "axle/base/status_macros.h"
#include "axle/eval/hlo_evaluator.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/ir/hlo_replace_uses.h"
#include "axle/hlo/transforms/side_effects.h"

namespace axle {
namespace {

// Loops inside folded calls and conditionals may not run longer than this.
constexpr int64_t kMaxLoopIterations = 1000;

int64_t ArrayElements(const Shape& shape) { return shape.IsArray() ? shape.num_elements() : 0; }

bool IsFoldable(const HloInstruction& instruction) {
  switch (instruction.opcode()) {
    case HloOpcode::kConstant:
    case HloOpcode::kBroadcast:
    case HloOpcode::kIota:
    case HloOpcode::kTuple:
    case HloOpcode::kWhile:
    case HloOpcode::kCustomCall:
    case HloOpcode::kRngBitGenerator:
    case HloOpcode::kFusion:
      return false;
    default:
      break;
  }
  if (instruction.operand_count() == 0 || !instruction.shape().IsArray() ||
      instruction.shape().is_dynamic()) {
    return false;
  }
  if (ArrayElements(instruction.shape()) > HloConstantFolding::kMaxElements) return false;
  for (const HloInstruction* operand : instruction.operands()) {
    const auto* constant = dyn_cast<HloConstantInstruction>(operand);
    if (constant == nullptr || constant->attrs().elided) return false;
    if (ArrayElements(operand->shape()) > HloConstantFolding::kMaxElements ||
        operand->shape().is_dynamic()) {
      return false;
    }
  }
  return instruction.control_predecessors().empty() && instruction.control_successors().empty() &&
         IsPureValue(instruction);
}

// Evaluates `instruction` on its constant operands: a copy of it is the root
// of a throwaway computation whose parameters are the operands.
absl::StatusOr<Literal> Evaluate(const HloInstruction& instruction, HloEvaluator* evaluator) {
  HloComputation scratch("constant_folding_scratch");
  std::vector<HloInstruction*> parameters;
  std::vector<const Literal*> arguments;
  for (int64_t i = 0; i < instruction.operand_count(); ++i) {
    const HloInstruction* operand = instruction.operand(i);
    auto parameter = std::make_unique<HloParameterInstruction>(
        HloOpcode::kParameter, operand->shape(), absl::Span<HloInstruction* const>{});
    parameter->mutable_attrs()->parameter_number = i;
    parameter->SetName(absl::StrCat("p", i));
    parameters.push_back(scratch.AddInstruction(std::move(parameter)));
    arguments.push_back(&cast<HloConstantInstruction>(operand)->literal());
  }
  std::unique_ptr<HloInstruction> copy =
      instruction.CloneWithNewOperands(instruction.shape(), parameters);
  scratch.set_root_instruction(scratch.AddInstruction(std::move(copy)));
  return evaluator->Evaluate(scratch, arguments);
}

}  // namespace

absl::StatusOr<bool> HloConstantFolding::Run(HloModule* module) {
  bool changed = false;
  HloEvaluator evaluator(kMaxLoopIterations);
  for (HloComputation* computation : module->MakeComputationPostOrder()) {
    bool computation_changed = false;
    for (HloInstruction* instruction : computation->MakeInstructionPostOrder()) {
      if (!IsFoldable(*instruction)) continue;
      absl::StatusOr<Literal> result = Evaluate(*instruction, &evaluator);
      if (!result.ok()) continue;  // not something the interpreter folds
      if (!ShapeUtil::Compatible(result->shape(), instruction->shape())) continue;
      if (instruction->shape().has_layout()) result->set_layout(instruction->shape().layout());
      auto constant = std::make_unique<HloConstantInstruction>(
          HloOpcode::kConstant, instruction->shape(), absl::Span<HloInstruction* const>{});
      constant->mutable_attrs()->literal = *std::move(result);
      HloInstruction* added = computation->AddInstruction(std::move(constant));
      AXLE_RETURN_IF_ERROR(ReplaceUsesAndControl(instruction, added));
      computation_changed = true;
    }
    if (computation_changed) AXLE_RETURN_IF_ERROR(RemoveDeadInstructions(computation).status());
    changed |= computation_changed;
  }
  return changed;
}

}  // namespace axle
