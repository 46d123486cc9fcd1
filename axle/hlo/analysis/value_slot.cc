//===- value_slot.cc - Where a backend program's array values live ---------===//
#include "axle/hlo/analysis/value_slot.h"

#include "axle/core/shape_util.h"
#include "axle/hlo/ir/hlo_instructions.h"

namespace axle {

ValueSlot ParameterSlot(int64_t parameter, const ShapeIndex& index, const Shape& shape) {
  ValueSlot slot;
  slot.kind = ValueSlot::Kind::kParameter;
  slot.parameter = parameter;
  slot.parameter_index = index;
  slot.size_bytes = ShapeUtil::ByteSizeOfElements(shape);
  return slot;
}

ValueSlot ConstantSlot(int64_t constant, const Shape& shape) {
  ValueSlot slot;
  slot.kind = ValueSlot::Kind::kConstant;
  slot.constant = constant;
  slot.size_bytes = ShapeUtil::ByteSizeOfElements(shape);
  return slot;
}

std::optional<std::vector<ForwardedLeaf>> ForwardedLeaves(const HloInstruction& instruction) {
  switch (instruction.opcode()) {
    case HloOpcode::kTuple: {
      std::vector<ForwardedLeaf> leaves;
      for (int64_t i = 0; i < instruction.operand_count(); ++i) {
        leaves.push_back({instruction.operand(i), {}, {i}});
      }
      return leaves;
    }
    case HloOpcode::kGetTupleElement:
      return std::vector<ForwardedLeaf>{
          {instruction.operand(0),
           {cast<HloGetTupleElementInstruction>(&instruction)->tuple_index()},
           {}}};
    case HloOpcode::kBitcast:
    case HloOpcode::kAddDependency:
    case HloOpcode::kOptimizationBarrier:
    case HloOpcode::kDomain:
      return std::vector<ForwardedLeaf>{{instruction.operand(0), {}, {}}};
    default:
      return std::nullopt;
  }
}

bool IsRunnableConditional(const HloInstruction& conditional) {
  const int64_t branches = static_cast<int64_t>(conditional.branch_computations().size());
  const PrimitiveType selector = conditional.operand(0)->shape().element_type();
  return branches > 0 && (selector == S32 || (selector == PRED && branches == 2)) &&
         conditional.operand_count() == branches + 1;
}

int64_t SelectedBranch(bool selector_is_pred, int32_t selector, int64_t branch_count) {
  if (selector_is_pred) return selector != 0 ? 0 : 1;
  return selector < 0 || selector >= branch_count ? branch_count - 1 : selector;
}

}  // namespace axle
