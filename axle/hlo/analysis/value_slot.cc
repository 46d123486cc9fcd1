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

std::vector<std::pair<ShapeIndex, Shape>> ArrayLeaves(const Shape& shape) {
  std::vector<std::pair<ShapeIndex, Shape>> leaves;
  ShapeUtil::ForEachLeafShape(shape, [&](const Shape& leaf, const ShapeIndex& index) {
    if (leaf.IsArray()) leaves.emplace_back(index, leaf);
  });
  return leaves;
}

std::vector<std::pair<ShapeIndex, ValueSlot>> SourceSlots(const HloInstruction& instruction,
                                                          std::vector<Literal>& constants) {
  std::vector<std::pair<ShapeIndex, ValueSlot>> slots;
  if (const auto* parameter = dyn_cast<HloParameterInstruction>(&instruction)) {
    for (const auto& [index, shape] : ArrayLeaves(instruction.shape())) {
      slots.emplace_back(index, ParameterSlot(parameter->parameter_number(), index, shape));
    }
  } else if (const auto* constant = dyn_cast<HloConstantInstruction>(&instruction)) {
    for (const auto& [index, shape] : ArrayLeaves(instruction.shape())) {
      slots.emplace_back(index, ConstantSlot(static_cast<int64_t>(constants.size()), shape));
      constants.push_back(constant->literal().GetSubliteral(index).Clone());
    }
  }
  return slots;
}

void ReportInPlacePairs(const HloInstruction& instruction,
                        absl::Span<const std::pair<int64_t, int64_t>> step_pairs,
                        absl::Span<const ValueSlot> values, const LeafValueTable& table,
                        InPlaceChoices& choices) {
  std::vector<std::pair<int64_t, ShapeIndex>> pairs;
  for (const auto& [operand_value, output_value] : step_pairs) {
    const ValueSlot& output = values[output_value];
    if (output.instruction != &instruction) continue;
    for (int64_t number = 0; number < instruction.operand_count(); ++number) {
      auto it = table.find({instruction.operand(number), {}});
      if (it != table.end() && it->second == operand_value)
        pairs.emplace_back(number, output.index);
    }
  }
  if (!pairs.empty()) choices.pairs[&instruction] = std::move(pairs);
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

}  // namespace axle
