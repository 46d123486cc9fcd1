//===- select_and_scatter_shapes.cc - A select-and-scatter's shapes, checked ===//
#include "axle/hlo/analysis/select_and_scatter_shapes.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "axle/base/status_macros.h"
#include "axle/core/primitive_type.h"
#include "axle/hlo/ir/hlo_instructions.h"

namespace axle {
namespace {

// reduce-window's output size along one dimension.
int64_t WindowedOutputSize(int64_t input, const WindowDimension& w) {
  const int64_t dilated_input = input == 0 ? 0 : (input - 1) * w.base_dilation() + 1;
  const int64_t padded = dilated_input + w.padding_low() + w.padding_high();
  const int64_t dilated_window = w.size() == 0 ? 0 : (w.size() - 1) * w.window_dilation() + 1;
  if (padded < dilated_window) return 0;
  return (padded - dilated_window) / w.stride() + 1;
}

// `computation` takes two `type` scalars and returns a `result` scalar.
absl::Status CheckScalarFunction(const HloComputation& computation, PrimitiveType type,
                                 PrimitiveType result, absl::string_view what) {
  bool ok = computation.num_parameters() == 2;
  for (int64_t p = 0; ok && p < 2; ++p) {
    const Shape& parameter = computation.parameter_instruction(p)->shape();
    ok = parameter.IsArray() && parameter.rank() == 0 && parameter.element_type() == type;
  }
  const Shape& root = computation.root_instruction()->shape();
  ok = ok && root.IsArray() && root.rank() == 0 && root.element_type() == result;
  if (ok) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(what, " must take two ", primitive_util::LowercasePrimitiveTypeName(type),
                   " scalars and return a ", primitive_util::LowercasePrimitiveTypeName(result)));
}

}  // namespace

absl::StatusOr<SelectAndScatterShapes> AnalyzeSelectAndScatter(const HloInstruction& instruction) {
  const auto* windowed = dyn_cast<HloWindowInstruction>(&instruction);
  if (windowed == nullptr || instruction.opcode() != HloOpcode::kSelectAndScatter) {
    return absl::InvalidArgumentError("is not a select-and-scatter");
  }
  if (instruction.operand_count() != 3 || instruction.called_computations().size() != 2) {
    return absl::InvalidArgumentError(
        "takes operand, source, init_value and a select and a scatter");
  }
  const Shape& operand = instruction.operand(0)->shape();
  const Shape& source = instruction.operand(1)->shape();
  const Shape& init = instruction.operand(2)->shape();
  const Shape& shape = instruction.shape();
  if (!operand.IsArray() || !source.IsArray() || !init.IsArray() || init.rank() != 0 ||
      !shape.IsArray() || shape.dimensions() != operand.dimensions() ||
      source.element_type() != operand.element_type() ||
      init.element_type() != operand.element_type() ||
      shape.element_type() != operand.element_type()) {
    return absl::InvalidArgumentError(
        absl::StrCat("operand ", operand.ToString(), ", source ", source.ToString(),
                     ", init_value ", init.ToString(), " and result ", shape.ToString(),
                     " must share one element type (init_value a scalar)"));
  }
  SelectAndScatterShapes shapes;
  shapes.window = windowed->window();
  if (shapes.window.dimensions_size() != operand.rank()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the window has ", shapes.window.dimensions_size(),
                     " dimensions, the operand rank ", operand.rank()));
  }
  for (int64_t d = 0; d < operand.rank(); ++d) {
    const WindowDimension& w = shapes.window.dimensions(d);
    if (w.size() < 0 || w.stride() < 1 || w.base_dilation() < 1 || w.window_dilation() < 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "window dimension ", d, " has a negative size or a non-positive stride or dilation"));
    }
    shapes.window_reversal = shapes.window_reversal || w.window_reversal();
    shapes.source_dims.push_back(WindowedOutputSize(operand.dimensions(d), w));
  }
  if (source.dimensions() != shapes.source_dims) {
    return absl::InvalidArgumentError(
        absl::StrCat("source ", source.ToString(), " must have dimensions {",
                     absl::StrJoin(shapes.source_dims, ","), "} (the reduce-window output)"));
  }
  shapes.operand_dims = operand.dimensions();
  shapes.type = operand.element_type();
  shapes.select = instruction.called_computations()[0];
  shapes.scatter = instruction.called_computations()[1];
  AXLE_RETURN_IF_ERROR(CheckScalarFunction(*shapes.select, shapes.type, PRED, "select"));
  AXLE_RETURN_IF_ERROR(CheckScalarFunction(*shapes.scatter, shapes.type, shapes.type, "scatter"));
  return shapes;
}

}  // namespace axle
