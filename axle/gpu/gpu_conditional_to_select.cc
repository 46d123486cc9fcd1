//===- gpu_conditional_to_select.cc - Cheap conditionals as selects --------===//
#include "axle/gpu/gpu_conditional_to_select.h"

#include <memory>
#include <vector>

#include "axle/base/status_macros.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/ir/hlo_module.h"
#include "axle/hlo/transforms/call_inliner.h"
#include "axle/hlo/transforms/hlo_creation_utils.h"
#include "axle/hlo/transforms/side_effects.h"

namespace axle::gpu {
namespace {

bool CheapOpcode(const HloInstruction& instruction) {
  if (instruction.IsElementwise()) return true;
  switch (instruction.opcode()) {
    case HloOpcode::kParameter:
    case HloOpcode::kConstant:
    case HloOpcode::kGetTupleElement:
    case HloOpcode::kTuple:
    case HloOpcode::kBitcast:
    case HloOpcode::kBroadcast:
    case HloOpcode::kReshape:
    case HloOpcode::kSlice:
    case HloOpcode::kDynamicSlice:
    case HloOpcode::kTranspose:
    case HloOpcode::kConcatenate:
    case HloOpcode::kIota:
    case HloOpcode::kReduce:
      return true;
    default:
      return false;
  }
}

bool SmallShape(const Shape& shape, int64_t max_elements) {
  bool small = true;
  ShapeUtil::ForEachLeafShape(shape, [&](const Shape& leaf, const ShapeIndex&) {
    if (leaf.IsArray() && leaf.num_elements() > max_elements) small = false;
  });
  return small;
}

// `values[i]` chosen by `taken[i]` (null for the last: taken otherwise),
// leaf by leaf.
HloInstruction* Select(HloComputation* into, const Shape& shape,
                       const std::vector<HloInstruction*>& taken,
                       const std::vector<HloInstruction*>& values) {
  if (shape.IsTuple()) {
    std::vector<HloInstruction*> elements;
    for (int64_t j = 0; j < shape.tuple_shapes_size(); ++j) {
      std::vector<HloInstruction*> parts;
      parts.reserve(values.size());
      for (HloInstruction* value : values) parts.push_back(MakeGetTupleElement(value, j));
      elements.push_back(Select(into, shape.tuple_shapes(j), taken, parts));
    }
    return MakeTuple(into, elements);
  }
  if (!shape.IsArray()) return values.back();  // a token: any will do
  HloInstruction* result = values.back();
  const Shape mask_shape = ShapeUtil::ChangeElementType(shape, PRED);
  for (int64_t i = static_cast<int64_t>(values.size()) - 2; i >= 0; --i) {
    HloInstruction* mask = taken[i];
    if (shape.rank() > 0) mask = MakeBroadcast(mask, mask_shape, {});
    HloInstruction* operands[] = {mask, values[i], result};
    result = into->AddInstruction(HloInstruction::Create(HloOpcode::kSelect, shape, operands));
  }
  return result;
}

}  // namespace

bool CheapConditional(const HloInstruction& conditional, const ConditionalToSelectLimits& limits) {
  if (conditional.opcode() != HloOpcode::kConditional) return false;
  const std::vector<HloComputation*>& branches = conditional.branch_computations();
  const PrimitiveType selector = conditional.operand(0)->shape().element_type();
  if (branches.empty() || !conditional.operand(0)->shape().IsScalar() ||
      (selector != PRED && selector != S32) || (selector == PRED && branches.size() != 2) ||
      conditional.operand_count() != static_cast<int64_t>(branches.size()) + 1 ||
      !SmallShape(conditional.shape(), limits.max_elements)) {
    return false;
  }
  int64_t instructions = 0;
  for (const HloComputation* branch : branches) {
    if (branch->num_parameters() != 1 || ComputationHasSideEffect(*branch)) return false;
    for (const HloInstruction* instruction : branch->instructions()) {
      if (!CheapOpcode(*instruction) || instruction->HasSideEffect() ||
          !SmallShape(instruction->shape(), limits.max_elements)) {
        return false;
      }
      if (instruction->opcode() == HloOpcode::kReduce &&
          !SmallShape(instruction->operand(0)->shape(), limits.max_elements)) {
        return false;
      }
    }
    instructions += branch->instruction_count();
  }
  return instructions <= limits.max_instructions;
}

absl::StatusOr<bool> GpuConditionalToSelect::Run(HloModule* module) {
  std::vector<HloInstruction*> conditionals;
  for (HloComputation* computation : module->MakeComputationPostOrder()) {
    for (HloInstruction* instruction : computation->instructions()) {
      if (CheapConditional(*instruction, limits_)) conditionals.push_back(instruction);
    }
  }
  for (HloInstruction* conditional : conditionals) {
    HloComputation* into = conditional->parent();
    const std::vector<HloComputation*> branches = conditional->branch_computations();
    HloInstruction* selector = conditional->mutable_operand(0);
    std::vector<HloInstruction*> values;
    std::vector<HloInstruction*> taken;
    for (size_t i = 0; i < branches.size(); ++i) {
      AXLE_ASSIGN_OR_RETURN(
          HloInstruction * value,
          InlineComputation(*branches[i],
                            {conditional->mutable_operand(static_cast<int64_t>(i) + 1)}, into));
      values.push_back(value);
      if (selector->shape().element_type() == PRED) {
        taken.push_back(selector);  // true: branch 0
        continue;
      }
      HloInstruction* index =
          MakeConstant(into, LiteralUtil::CreateR0<int32_t>(static_cast<int32_t>(i)));
      HloInstruction* operands[] = {selector, index};
      auto compare = std::make_unique<HloCompareInstruction>(
          HloOpcode::kCompare, ShapeUtil::MakeShape(PRED, {}), operands);
      compare->mutable_attrs()->direction = ComparisonDirection::kEq;
      taken.push_back(into->AddInstruction(std::move(compare)));
    }
    HloInstruction* selected = Select(into, conditional->shape(), taken, values);
    AXLE_RETURN_IF_ERROR(into->ReplaceInstruction(conditional, selected));
  }
  if (!conditionals.empty()) module->RemoveUnusedComputations();
  return !conditionals.empty();
}

}  // namespace axle::gpu
