//===- dynamic_update_slice_thunk.cc - dynamic-update-slice, in place -------===//
#include "axle/cpu/runtime/dynamic_update_slice_thunk.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "axle/base/status_macros.h"
#include "axle/core/shape_util.h"
#include "axle/cpu/runtime/thunk_emitters.h"

namespace axle::cpu {
namespace {

namespace pu = primitive_util;

// Start `i` (element i of a start vector, else the scalar) clamped to
// [0, high]: signed types clamp below at 0, unsigned ones compare unsigned.
int64_t ClampedStart(const void* base, PrimitiveType type, int64_t i, int64_t high) {
  auto clamp_signed = [&](int64_t v) { return std::clamp<int64_t>(v, 0, high); };
  auto clamp_unsigned = [&](uint64_t v) {
    return static_cast<int64_t>(std::min<uint64_t>(v, static_cast<uint64_t>(high)));
  };
  switch (type) {
    case S8:
      return clamp_signed(static_cast<const int8_t*>(base)[i]);
    case S16:
      return clamp_signed(static_cast<const int16_t*>(base)[i]);
    case S32:
      return clamp_signed(static_cast<const int32_t*>(base)[i]);
    case S64:
      return clamp_signed(static_cast<const int64_t*>(base)[i]);
    case U8:
      return clamp_unsigned(static_cast<const uint8_t*>(base)[i]);
    case U16:
      return clamp_unsigned(static_cast<const uint16_t*>(base)[i]);
    case U32:
      return clamp_unsigned(static_cast<const uint32_t*>(base)[i]);
    case U64:
      return clamp_unsigned(static_cast<const uint64_t*>(base)[i]);
    default:
      return 0;  // DynamicUpdateSliceRunsAsThunk admits integers only
  }
}

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

std::optional<Thunk::BufferUses> DynamicUpdateSliceThunk::buffer_uses() const {
  BufferUses uses{{operand_value_, update_value_}, {output_value_}};
  uses.reads.insert(uses.reads.end(), start_values_.begin(), start_values_.end());
  return uses;
}

absl::Status DynamicUpdateSliceThunk::Execute(const ThunkContext& context) const {
  const Geometry& g = geometry_;
  const int64_t rank = static_cast<int64_t>(g.operand_dims.size());
  char* out = static_cast<char*>(context.address(output_value_));
  const void* operand = context.address(operand_value_);
  const int64_t operand_bytes = context.size_bytes(output_value_);
  if (operand_bytes > 0 && operand != out) std::memmove(out, operand, operand_bytes);
  int64_t update_elements = 1;
  for (int64_t d : g.update_dims) update_elements *= d;
  if (update_elements == 0) return absl::OkStatus();
  // Element offset of the window's first element, and the operand's
  // row-major strides.
  const std::vector<int64_t> strides = ShapeUtil::RowMajorStrides(g.operand_dims);
  int64_t base = 0;
  for (int64_t d = 0; d < rank; ++d) {
    const int64_t high = g.operand_dims[d] - g.update_dims[d];
    const int64_t start =
        g.start_vector ? ClampedStart(context.address(start_values_[0]), g.start_type, d, high)
                       : ClampedStart(context.address(start_values_[d]), g.start_type, 0, high);
    base += start * strides[d];
  }
  const char* update = static_cast<const char*>(context.address(update_value_));
  // Rows of the update's last dimension (a scalar: one element).
  const int64_t row = rank == 0 ? 1 : g.update_dims[rank - 1];
  const int64_t row_bytes = row * g.element_bytes;
  const int64_t rows = update_elements / row;
  std::vector<int64_t> index(std::max<int64_t>(rank - 1, 0), 0);  // over the update's outer dims
  for (int64_t r = 0; r < rows; ++r) {
    int64_t offset = base;
    for (int64_t d = 0; d + 1 < rank; ++d) offset += index[d] * strides[d];
    std::memmove(out + offset * g.element_bytes, update + r * row_bytes, row_bytes);
    for (int64_t d = rank - 2; d >= 0; --d) {
      if (++index[d] < g.update_dims[d]) break;
      index[d] = 0;
    }
  }
  return absl::OkStatus();
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
