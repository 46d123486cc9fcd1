//===- dynamic_update_slice_thunk_emitter.cc - dynamic-update-slice from HLO ===//
#include "axle/base/status_macros.h"
#include "axle/core/shape_util.h"
#include "axle/cpu/runtime/dynamic_update_slice_thunk.h"
#include "axle/cpu/runtime/thunk_emitters.h"

namespace axle::cpu {
namespace {

namespace pu = primitive_util;

bool IsByteSizedArray(const Shape& shape) {
  return shape.IsArray() && !pu::IsSubByteType(shape.element_type()) &&
         pu::ByteWidth(shape.element_type()) > 0;
}

}  // namespace

bool DynamicUpdateSliceRunsAsThunk(const HloInstruction& instruction) {
  if (instruction.opcode() != HloOpcode::kDynamicUpdateSlice || instruction.operand_count() < 3) {
    return false;
  }
  const Shape& operand = instruction.operand(0)->shape();
  const Shape& update = instruction.operand(1)->shape();
  if (!IsByteSizedArray(operand) || !update.IsArray() ||
      update.element_type() != operand.element_type() || update.rank() != operand.rank() ||
      !instruction.shape().IsArray() ||
      instruction.shape().element_type() != operand.element_type() ||
      instruction.shape().dimensions() != operand.dimensions()) {
    return false;
  }
  for (int64_t d = 0; d < operand.rank(); ++d) {
    if (update.dimensions(d) > operand.dimensions(d)) return false;
  }
  const int64_t starts = instruction.operand_count() - 2;
  const bool start_vector = starts == 1 && instruction.operand(2)->shape().rank() == 1;
  if (!start_vector && starts != operand.rank()) return false;
  const PrimitiveType type = instruction.operand(2)->shape().element_type();
  for (int64_t i = 2; i < instruction.operand_count(); ++i) {
    const Shape& start = instruction.operand(i)->shape();
    if (!start.IsArray() || start.element_type() != type || !pu::IsIntegralType(type)) {
      return false;
    }
    if (start_vector ? start.dimensions(0) != operand.rank() : start.rank() != 0) return false;
  }
  return true;
}

absl::Status EmitDynamicUpdateSliceThunk(const HloInstruction& instruction,
                                         ProgramBuilder& builder) {
  DynamicUpdateSliceThunk::Geometry g;
  const Shape& operand = instruction.operand(0)->shape();
  g.operand_dims = operand.dimensions();
  g.update_dims = instruction.operand(1)->shape().dimensions();
  g.element_bytes = pu::ByteWidth(operand.element_type());
  g.start_type = instruction.operand(2)->shape().element_type();
  g.start_vector = instruction.operand_count() == 3 && instruction.operand(2)->shape().rank() == 1;
  AXLE_ASSIGN_OR_RETURN(int64_t operand_value, builder.ValueOf(instruction.operand(0)));
  AXLE_ASSIGN_OR_RETURN(int64_t update_value, builder.ValueOf(instruction.operand(1)));
  std::vector<int64_t> start_values;
  for (int64_t i = 2; i < instruction.operand_count(); ++i) {
    AXLE_ASSIGN_OR_RETURN(int64_t value, builder.ValueOf(instruction.operand(i)));
    start_values.push_back(value);
  }
  const int64_t output = builder.DefineTemporary(&instruction, {}, instruction.shape());
  if (builder.slot(output).size_bytes != ShapeUtil::ElementsIn(operand) * g.element_bytes) {
    return Unsupported(instruction, "a dynamic-update-slice whose buffer is not dense");
  }
  builder.AddThunk(std::make_unique<DynamicUpdateSliceThunk>(instruction.name(), std::move(g),
                                                             operand_value, update_value,
                                                             std::move(start_values), output));
  return absl::OkStatus();
}

}  // namespace axle::cpu
