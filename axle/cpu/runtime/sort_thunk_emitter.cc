//===- sort_thunk_emitter.cc - sort from HLO -------------------------------===//
#include <algorithm>
#include <optional>

#include "absl/strings/str_cat.h"
#include "axle/base/status_macros.h"
#include "axle/core/shape_util.h"
#include "axle/cpu/runtime/sort_thunk.h"
#include "axle/cpu/runtime/thunk_emitters.h"
#include "axle/hlo/ir/hlo_instructions.h"

namespace axle::cpu {

absl::Status EmitSortThunk(const HloInstruction& instruction, ProgramBuilder& builder) {
  const auto* sort = cast<HloSortInstruction>(&instruction);
  const int64_t n = instruction.operand_count();
  if (n == 0) return Unsupported(instruction, "sort needs at least one operand");
  const Shape& keys = instruction.operand(0)->shape();
  const int64_t dimension = sort->sort_dimension();
  if (!keys.IsArray() || dimension < 0 || dimension >= std::max<int64_t>(keys.rank(), 1)) {
    return absl::InvalidArgumentError(absl::StrCat("cpu platform: sort ", instruction.name(),
                                                   ": dimension ", dimension, " is out of range"));
  }
  const HloComputation* comparator = instruction.to_apply();
  if (comparator == nullptr || comparator->num_parameters() != 2 * n) {
    return absl::InvalidArgumentError(absl::StrCat("cpu platform: sort ", instruction.name(),
                                                   ": the comparator must take ", 2 * n,
                                                   " scalars (lhs and rhs of each operand)"));
  }
  const Shape& root = comparator->root_instruction()->shape();
  if (!root.IsArray() || root.rank() != 0 || root.element_type() != PRED) {
    return absl::InvalidArgumentError(absl::StrCat("cpu platform: sort ", instruction.name(),
                                                   ": the comparator must return a pred scalar"));
  }
  std::vector<int64_t> operand_values, element_bytes;
  for (int64_t i = 0; i < n; ++i) {
    const Shape& shape = instruction.operand(i)->shape();
    if (!shape.IsArray() || shape.dimensions() != keys.dimensions()) {
      return absl::InvalidArgumentError(
          absl::StrCat("cpu platform: sort ", instruction.name(), ": operand ", i, " has shape ",
                       shape.ToString(), ", the keys ", keys.ToString()));
    }
    for (int64_t side = 0; side < 2; ++side) {
      const Shape& parameter = comparator->parameter_instruction(2 * i + side)->shape();
      if (!parameter.IsArray() || parameter.element_type() != shape.element_type()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "cpu platform: sort ", instruction.name(), ": comparator parameter ", 2 * i + side,
            " is ", parameter.ToString(), " but operand ", i, " is ", shape.ToString()));
      }
    }
    AXLE_ASSIGN_OR_RETURN(int64_t value, builder.ValueOf(instruction.operand(i)));
    operand_values.push_back(value);
    const int64_t count = ShapeUtil::ElementsIn(shape);
    element_bytes.push_back(count == 0 ? 1 : ShapeUtil::ByteSizeOfElements(shape) / count);
  }
  SortThunk::Geometry geometry;
  geometry.outer = 1;
  geometry.inner = 1;
  geometry.length = keys.rank() == 0 ? 1 : keys.dimensions(dimension);
  for (int64_t d = 0; d < keys.rank(); ++d) {
    if (d < dimension) geometry.outer *= keys.dimensions(d);
    if (d > dimension) geometry.inner *= keys.dimensions(d);
  }
  // A comparator with a native key order is never called: not compiled
  // (unless the order holds for NaN-free slices only).
  std::optional<SortKeyOrder> key_order = MatchSortKeyOrder(*comparator);
  std::unique_ptr<CompiledScalarFunction> function;
  if (!key_order || key_order->nan_free_only()) {
    AXLE_ASSIGN_OR_RETURN(function, builder.kernels().AddScalarFunction(
                                        *comparator, builder.UniqueName("sort_comparator")));
  }
  std::vector<int64_t> output_values = builder.DefineTemporaries(&instruction);
  if (static_cast<int64_t>(output_values.size()) != n) {
    return Unsupported(instruction, "a sort whose result leaves do not match its operands");
  }
  builder.AddThunk(std::make_unique<SortThunk>(
      instruction.name(), std::move(function), std::move(key_order), geometry,
      std::move(element_bytes), std::move(operand_values), std::move(output_values)));
  return absl::OkStatus();
}

}  // namespace axle::cpu
