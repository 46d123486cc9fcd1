//===- bf16_reductions.cc - bf16 sums and products accumulated in f32 ------===//
#include "axle/gpu/bf16_reductions.h"

#include <memory>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "axle/base/status_macros.h"
#include "axle/hlo/ir/hlo_computation.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/ir/hlo_module.h"
#include "axle/hlo/transforms/hlo_creation_utils.h"

namespace axle::gpu {
namespace {

// The reducer's op where it is add or multiply of its two parameters.
std::optional<HloOpcode> AccumulatingOp(const HloComputation& reducer) {
  const HloInstruction* root = reducer.root_instruction();
  if (reducer.num_parameters() != 2 || root->operand_count() != 2) return std::nullopt;
  if (root->opcode() != HloOpcode::kAdd && root->opcode() != HloOpcode::kMultiply) {
    return std::nullopt;
  }
  const HloInstruction* lhs = root->operand(0);
  const HloInstruction* rhs = root->operand(1);
  if (lhs->opcode() != HloOpcode::kParameter || rhs->opcode() != HloOpcode::kParameter ||
      lhs == rhs) {
    return std::nullopt;
  }
  return root->opcode();
}

HloInstruction* Convert(HloInstruction* operand, PrimitiveType type) {
  Shape shape = operand->shape();
  shape.set_element_type(type);
  return operand->parent()->AddInstruction(
      HloInstruction::Create(HloOpcode::kConvert, shape, {operand}));
}

}  // namespace

absl::StatusOr<bool> GpuBf16ReductionsInF32::Run(HloModule* module) {
  bool changed = false;
  for (HloComputation* computation : module->MakeComputationPostOrder()) {
    if (computation->IsFusionComputation()) continue;
    for (HloInstruction* instruction : computation->MakeInstructionPostOrder()) {
      if (instruction->opcode() != HloOpcode::kReduce || instruction->operand_count() != 2 ||
          !instruction->shape().IsArray() || instruction->shape().element_type() != BF16 ||
          instruction->operand(0)->shape().element_type() != BF16 ||
          instruction->operand(1)->shape().element_type() != BF16 ||
          instruction->called_computations().size() != 1) {
        continue;
      }
      const std::optional<HloOpcode> op = AccumulatingOp(*instruction->called_computations()[0]);
      if (!op.has_value()) continue;
      HloComputation* reducer = AddScalarCombiner(
          module, absl::StrCat(instruction->called_computations()[0]->name(), "_f32"), *op, F32);
      Shape wide = instruction->shape();
      wide.set_element_type(F32);
      HloInstruction* input = Convert(instruction->mutable_operand(0), F32);
      HloInstruction* init = Convert(instruction->mutable_operand(1), F32);
      std::unique_ptr<HloInstruction> reduce =
          instruction->CloneWithNewOperands(wide, std::vector<HloInstruction*>{input, init});
      reduce->set_called_computation(0, reducer);
      HloInstruction* accumulated = computation->AddInstruction(std::move(reduce));
      AXLE_RETURN_IF_ERROR(
          computation->ReplaceInstruction(instruction, Convert(accumulated, BF16)));
      changed = true;
    }
  }
  return changed;
}

}  // namespace axle::gpu
