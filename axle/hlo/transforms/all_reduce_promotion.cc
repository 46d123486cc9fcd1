//===- all_reduce_promotion.cc - Collective reductions in a wider type ----===//
#include "axle/hlo/transforms/all_reduce_promotion.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "axle/base/status_macros.h"
#include "axle/core/shape_util.h"
#include "axle/hlo/ir/hlo_computation.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/transforms/hlo_creation_utils.h"

namespace axle {
namespace {

// The one element type of all of `instruction`'s operands, if they share one.
std::optional<PrimitiveType> UniformOperandType(const HloInstruction& instruction) {
  std::optional<PrimitiveType> type;
  for (const HloInstruction* operand : instruction.operands()) {
    if (!operand->shape().IsArray()) return std::nullopt;
    if (!type.has_value()) {
      type = operand->shape().element_type();
    } else if (*type != operand->shape().element_type()) {
      return std::nullopt;
    }
  }
  return type;
}

// Whether `reducer` is one binary elementwise op of its two scalar `type`
// parameters (either order) returning `type`: what the promoted reducer,
// the same op in the wider type, computes too.
bool IsBinaryOpOfParameters(const HloComputation& reducer, PrimitiveType type) {
  const HloInstruction* root = reducer.root_instruction();
  if (reducer.num_parameters() != 2 || root == nullptr || !root->IsElementwise() ||
      root->operand_count() != 2 || !root->shape().IsArray() || root->shape().rank() != 0 ||
      root->shape().element_type() != type) {
    return false;
  }
  for (const HloInstruction* parameter : reducer.parameter_instructions()) {
    const Shape& shape = parameter->shape();
    if (!shape.IsArray() || shape.rank() != 0 || shape.element_type() != type) return false;
  }
  const HloInstruction* lhs = root->operand(0);
  const HloInstruction* rhs = root->operand(1);
  return lhs->opcode() == HloOpcode::kParameter && rhs->opcode() == HloOpcode::kParameter &&
         lhs != rhs;
}

// `reducer`'s root op on two scalars of `type`, its parameters kept in the
// root's operand order, added to `module`.
HloComputation* PromotedReducer(HloModule* module, const HloComputation& reducer,
                                PrimitiveType type) {
  const HloInstruction* root = reducer.root_instruction();
  auto promoted = std::make_unique<HloComputation>(
      module->GetUniqueName(absl::StrCat(reducer.name(), "_promoted")));
  const Shape scalar = ShapeUtil::MakeScalarShape(type);
  std::vector<HloInstruction*> parameters;
  for (int64_t i = 0; i < 2; ++i) {
    const HloInstruction* original = reducer.parameter_instruction(i);
    auto parameter = std::make_unique<HloParameterInstruction>(HloOpcode::kParameter, scalar,
                                                               absl::Span<HloInstruction* const>{});
    parameter->mutable_attrs()->parameter_number = i;
    parameter->SetName(module->GetUniqueName(original->name()));
    parameters.push_back(promoted->AddInstruction(std::move(parameter)));
  }
  std::vector<HloInstruction*> operands;
  for (const HloInstruction* operand : root->operands()) {
    operands.push_back(parameters[cast<HloParameterInstruction>(operand)->parameter_number()]);
  }
  std::unique_ptr<HloInstruction> op = root->CloneWithNewOperands(scalar, operands);
  op->SetName(module->GetUniqueName(root->name()));
  promoted->set_root_instruction(promoted->AddInstruction(std::move(op)));
  return module->AddEmbeddedComputation(std::move(promoted));
}

}  // namespace

absl::StatusOr<bool> AllReducePromotion::Run(HloModule* module) {
  bool changed = false;
  // One promoted reducer per (reducer, wider type).
  absl::flat_hash_map<std::pair<const HloComputation*, PrimitiveType>, HloComputation*> promoted;
  for (HloComputation* computation : module->MakeComputationPostOrder()) {
    if (computation->IsFusionComputation()) continue;
    for (HloInstruction* instruction : computation->MakeInstructionPostOrder()) {
      if ((instruction->opcode() != HloOpcode::kAllReduce &&
           instruction->opcode() != HloOpcode::kReduceScatter) ||
          !instruction->shape().IsArray() || instruction->called_computations().size() != 1) {
        continue;
      }
      const std::optional<PrimitiveType> from = UniformOperandType(*instruction);
      if (!from.has_value() || instruction->shape().element_type() != *from) continue;
      std::optional<PrimitiveType> to;
      for (const auto& [listed_from, listed_to] : from_to_) {
        if (listed_from == *from) {
          to = listed_to;
          break;
        }
      }
      const HloComputation* reducer = instruction->to_apply();
      if (!to.has_value() || !IsBinaryOpOfParameters(*reducer, *from)) continue;
      auto [it, inserted] = promoted.try_emplace(std::make_pair(reducer, *to), nullptr);
      if (inserted) it->second = PromotedReducer(module, *reducer, *to);

      std::vector<HloInstruction*> operands;
      for (HloInstruction* operand : instruction->operands()) {
        operands.push_back(MakeConvert(operand, *to));
      }
      Shape shape = instruction->shape();
      shape.set_element_type(*to);
      std::unique_ptr<HloInstruction> copy = instruction->CloneWithNewOperands(shape, operands);
      copy->SetName(module->GetUniqueName(instruction->name()));
      copy->set_to_apply(it->second);
      HloInstruction* wide = computation->AddInstruction(std::move(copy));
      AXLE_RETURN_IF_ERROR(computation->ReplaceInstruction(instruction, MakeConvert(wide, *from)));
      changed = true;
    }
  }
  return changed;
}

}  // namespace axle
