//===- select_and_scatter_thunk_emitter.cc - select-and-scatter from HLO --===//
#include <memory>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "axle/base/status_macros.h"
#include "axle/core/shape_util.h"
#include "axle/cpu/runtime/select_and_scatter_thunk.h"
#include "axle/cpu/runtime/thunk_emitters.h"
#include "axle/hlo/analysis/select_and_scatter_shapes.h"
#include "axle/hlo/ir/hlo_instructions.h"

namespace axle::cpu {
namespace {

absl::Status Invalid(const HloInstruction& instruction, absl::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat("cpu platform: select-and-scatter ", instruction.name(), ": ", what));
}

// The inline form of (select, scatter) on f32 (Geometry::inline_select), if
// any: the select's direction.
std::optional<ComparisonDirection> InlineFormOf(const HloComputation& select,
                                                const HloComputation& scatter, PrimitiveType type) {
  if (type != F32) return std::nullopt;
  const HloInstruction* add = scatter.root_instruction();
  if (add->opcode() != HloOpcode::kAdd || add->operand(0)->opcode() != HloOpcode::kParameter ||
      add->operand(1)->opcode() != HloOpcode::kParameter || add->operand(0) == add->operand(1)) {
    return std::nullopt;
  }
  const auto* compare = dyn_cast<HloCompareInstruction>(select.root_instruction());
  if (compare == nullptr || compare->operand(0) != select.parameter_instruction(0) ||
      compare->operand(1) != select.parameter_instruction(1) ||
      compare->type() == ComparisonType::kFloatTotalOrder ||
      compare->direction() == ComparisonDirection::kEq ||
      compare->direction() == ComparisonDirection::kNe) {
    return std::nullopt;
  }
  return compare->direction();
}

}  // namespace

absl::Status EmitSelectAndScatterThunk(const HloInstruction& instruction, ProgramBuilder& builder) {
  absl::StatusOr<SelectAndScatterShapes> shapes = AnalyzeSelectAndScatter(instruction);
  if (!shapes.ok()) return Invalid(instruction, shapes.status().message());
  if (shapes->window_reversal) {
    return Unsupported(instruction, "window reversal in select-and-scatter is not supported");
  }
  const Shape& operand = instruction.operand(0)->shape();
  const Shape& init = instruction.operand(2)->shape();
  const Shape& shape = instruction.shape();
  const HloComputation* select = shapes->select;
  const HloComputation* scatter = shapes->scatter;
  const PrimitiveType type = shapes->type;

  SelectAndScatterThunk::Geometry geometry;
  geometry.operand_dims = shapes->operand_dims;
  geometry.source_dims = shapes->source_dims;
  geometry.window = shapes->window;
  const int64_t count = ShapeUtil::ElementsIn(operand);
  geometry.element_bytes = count == 0 ? ShapeUtil::ByteSizeOfElements(init)
                                      : ShapeUtil::ByteSizeOfElements(operand) / count;
  SelectAndScatterThunk::Values values;
  AXLE_ASSIGN_OR_RETURN(values.operand, builder.ValueOf(instruction.operand(0)));
  AXLE_ASSIGN_OR_RETURN(values.source, builder.ValueOf(instruction.operand(1)));
  AXLE_ASSIGN_OR_RETURN(values.init_value, builder.ValueOf(instruction.operand(2)));
  AXLE_ASSIGN_OR_RETURN(std::unique_ptr<CompiledScalarFunction> select_function,
                        builder.kernels().AddScalarFunction(*select, builder.UniqueName("select")));
  AXLE_ASSIGN_OR_RETURN(
      std::unique_ptr<CompiledScalarFunction> scatter_function,
      builder.kernels().AddScalarFunction(*scatter, builder.UniqueName("scatter")));
  geometry.inline_select = InlineFormOf(*select, *scatter, type);
  values.output = builder.DefineTemporary(&instruction, {}, shape);
  builder.AddThunk(std::make_unique<SelectAndScatterThunk>(
      instruction.name(), std::move(select_function), std::move(scatter_function),
      std::move(geometry), values));
  return absl::OkStatus();
}

}  // namespace axle::cpu
