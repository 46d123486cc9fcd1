//===- shape_inference_windowed.cc - Reductions, windows, convolution ------===//
//
// reduce, reduce-window, select-and-scatter and convolution, plus the checks
// a reducer computation must pass (2N scalar parameters, N scalar results).
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <numeric>

#include "absl/container/flat_hash_set.h"
#include "axle/hlo/shape_inference/shape_inference.h"
#include "axle/hlo/shape_inference/shape_inference_util.h"

namespace axle {

using namespace shape_inference_internal;  // NOLINT

namespace {

std::string WindowString(const Window& window) {
  std::vector<std::string> dims;
  for (const WindowDimension& d : window.dimensions()) {
    dims.push_back(absl::StrCat(
        "{size=", d.size(), " stride=", d.stride(), " pad=", d.padding_low(), "_", d.padding_high(),
        " lhs_dilate=", d.base_dilation(), " rhs_dilate=", d.window_dilation(), "}"));
  }
  return absl::StrCat("[", absl::StrJoin(dims, ", "), "]");
}

int64_t DilatedBound(int64_t bound, int64_t dilation) {
  return bound == 0 ? 0 : (bound - 1) * dilation + 1;
}

int64_t StridedBound(int64_t bound, int64_t window, int64_t stride) {
  if (bound == 0 || window > bound) return 0;
  return (bound - window) / stride + 1;
}

// A reducer takes N accumulators and N inputs (all scalars) and returns N
// scalars (a scalar for N = 1, else a tuple).
absl::Status VerifyReducerShape(absl::string_view op, const ProgramShape& reducer,
                                absl::Span<const Shape* const> init_values,
                                absl::Span<const PrimitiveType> input_types, int64_t inputs) {
  if (static_cast<int64_t>(reducer.parameters().size()) != inputs * 2) {
    return InvalidArgument(op, ": the reduction computation must take ", inputs * 2,
                           " parameters, but takes ", reducer.parameters().size(), " (",
                           Str(reducer), ").");
  }
  std::vector<const Shape*> accumulators;
  const Shape& result = reducer.result();
  if (result.IsArray()) {
    if (inputs != 1) {
      return InvalidArgument(op, ": the reduction computation must return a tuple of ", inputs,
                             " scalars, but returns ", Str(result), ".");
    }
    accumulators.push_back(&result);
  } else if (result.IsTuple()) {
    if (result.tuple_shapes_size() != inputs) {
      return InvalidArgument(op, ": the reduction computation must return a tuple of ", inputs,
                             " scalars, but returns ", Str(result), ".");
    }
    for (const Shape& element : result.tuple_shapes()) accumulators.push_back(&element);
  } else {
    return InvalidArgument(op,
                           ": the reduction computation must return a scalar or a tuple of "
                           "scalars, but returns ",
                           Str(result), ".");
  }
  for (const Shape* accumulator : accumulators) {
    if (!accumulator->IsArray() || accumulator->rank() != 0) {
      return InvalidArgument(op, ": the reduction computation must return scalars, but returns ",
                             Str(result), ".");
    }
  }
  for (int64_t i = 0; i < inputs; ++i) {
    const Shape& accumulator = *accumulators[i];
    if (!CompatibleShapes(accumulator, reducer.parameters()[i])) {
      return InvalidArgument(op, ": parameter ", i, " of the reduction computation (",
                             Str(reducer.parameters()[i]), ") differs from its result ",
                             Str(accumulator), ".");
    }
    if (!CompatibleShapes(accumulator, *init_values[i], /*ignore_fp_precision=*/true)) {
      return InvalidArgument(op, ": the reduction computation's accumulator ", i, " (",
                             Str(accumulator), ") differs from the init value ",
                             Str(*init_values[i]), ".");
    }
    Shape input_element = MakeScalar(input_types[i]);
    if (!CompatibleShapes(input_element, reducer.parameters()[inputs + i], true)) {
      return InvalidArgument(op, ": parameter ", inputs + i, " of the reduction computation (",
                             Str(reducer.parameters()[inputs + i]),
                             ") differs from the input element type ", Str(input_element), ".");
    }
    if (!CompatibleShapes(accumulator, reducer.parameters()[inputs + i], true)) {
      return InvalidArgument(op, ": parameter ", inputs + i, " of the reduction computation (",
                             Str(reducer.parameters()[inputs + i]),
                             ") must match the result shape ", Str(accumulator), ".");
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Shape> ShapeInference::InferReduceShape(absl::Span<const Shape* const> operands,
                                                       absl::Span<const int64_t> dimensions,
                                                       const ProgramShape& to_apply) {
  if (operands.empty() || operands.size() % 2 != 0) {
    return InvalidArgument(
        "reduce: expected an even number (>= 2) of operands (inputs, then "
        "init values); got ",
        operands.size(), ".");
  }
  int64_t n = static_cast<int64_t>(operands.size()) / 2;
  for (int64_t i = 0; i < n; ++i) {
    if (auto s = ExpectArray(*operands[i], "input of reduce"); !s.ok()) return s;
    if (!SameDimensions(*operands[0], *operands[i])) {
      return InvalidArgument("reduce: all inputs must have the same dimensions; input 0 is ",
                             Str(*operands[0]), ", input ", i, " is ", Str(*operands[i]), ".");
    }
  }
  const Shape& arg = *operands[0];
  for (int64_t d : dimensions) {
    if (d < 0 || d >= arg.rank()) {
      return InvalidArgument("reduce: dimensions=", Str(dimensions), " but the input ", Str(arg),
                             " has rank ", arg.rank(), ".");
    }
  }
  std::vector<PrimitiveType> types;
  for (int64_t i = 0; i < n; ++i) types.push_back(operands[i]->element_type());
  if (auto s = VerifyReducerShape("reduce", to_apply, operands.subspan(n), types, n); !s.ok()) {
    return s;
  }
  if (!AllUnique(dimensions)) {
    return InvalidArgument("reduce: duplicate dimension in dimensions=", Str(dimensions), ".");
  }
  std::vector<int64_t> dims;
  std::vector<bool> dynamic;
  for (int64_t d = 0; d < arg.rank(); ++d) {
    if (std::find(dimensions.begin(), dimensions.end(), d) != dimensions.end()) continue;
    dims.push_back(arg.dimensions(d));
    dynamic.push_back(arg.is_dynamic_dimension(d));
  }
  if (to_apply.result().IsArray())
    return MakeArray(to_apply.result().element_type(), dims, dynamic);
  std::vector<Shape> results;
  for (const Shape& element : to_apply.result().tuple_shapes()) {
    results.push_back(MakeArray(element.element_type(), dims, dynamic));
  }
  return ShapeUtil::MakeTupleShape(std::move(results));
}

absl::StatusOr<Shape> ShapeInference::InferWindowOutputShape(const Shape& base,
                                                             const Window& window,
                                                             PrimitiveType element_type) {
  if (window.dimensions_size() != base.rank()) {
    return InvalidArgument("the window has ", window.dimensions_size(),
                           " dimensions but the base shape ", Str(base), " has rank ", base.rank(),
                           ".");
  }
  std::vector<int64_t> dims(base.rank());
  for (int64_t i = 0; i < base.rank(); ++i) {
    const WindowDimension& d = window.dimensions(static_cast<int>(i));
    if (d.size() <= 0) {
      return InvalidArgument("window ", WindowString(window), " has a non-positive size.");
    }
    if (d.stride() <= 0) {
      return InvalidArgument("window ", WindowString(window), " has a non-positive stride.");
    }
    if (d.base_dilation() < 1) {
      return InvalidArgument("window ", WindowString(window),
                             " has a non-positive base (lhs) dilation.");
    }
    if (d.window_dilation() < 1) {
      return InvalidArgument("window ", WindowString(window),
                             " has a non-positive window (rhs) dilation.");
    }
    if (base.is_unbounded_dynamic_dimension(i)) {
      dims[i] = Shape::kUnboundedSize;
      continue;
    }
    int64_t padded =
        d.padding_low() + DilatedBound(base.dimensions(i), d.base_dilation()) + d.padding_high();
    if (padded < 0) {
      return InvalidArgument("window ", WindowString(window), " pads dimension ", i, " of ",
                             Str(base), " to a negative size.");
    }
    dims[i] = StridedBound(padded, DilatedBound(d.size(), d.window_dilation()), d.stride());
  }
  return MakeArray(element_type, dims, base.dynamic_dimensions());
}

absl::StatusOr<Shape> ShapeInference::InferReduceWindowShape(
    absl::Span<const Shape* const> operands, absl::Span<const Shape* const> init_values,
    const Window& window, const ProgramShape& to_apply) {
  if (operands.empty() || operands.size() != init_values.size()) {
    return InvalidArgument("reduce-window: expected as many init values as inputs; got ",
                           operands.size(), " inputs and ", init_values.size(), " init values.");
  }
  std::vector<PrimitiveType> types;
  for (size_t i = 0; i < operands.size(); ++i) {
    if (auto s = ExpectArray(*operands[i], "input of reduce-window"); !s.ok()) return s;
    if (!SameDimensions(*operands[0], *operands[i])) {
      return InvalidArgument(
          "reduce-window: all inputs must have the same dimensions; input 0 "
          "is ",
          Str(*operands[0]), ", input ", i, " is ", Str(*operands[i]), ".");
    }
    types.push_back(operands[i]->element_type());
  }
  if (auto s = VerifyReducerShape("reduce-window", to_apply, init_values, types,
                                  static_cast<int64_t>(operands.size()));
      !s.ok()) {
    return s;
  }
  std::vector<Shape> results;
  for (size_t i = 0; i < operands.size(); ++i) {
    auto shape = InferWindowOutputShape(*operands[i], window, init_values[i]->element_type());
    if (!shape.ok()) {
      return InvalidArgument("reduce-window: ", shape.status().message());
    }
    results.push_back(*shape);
  }
  if (to_apply.result().IsArray()) return results[0];
  return ShapeUtil::MakeTupleShape(std::move(results));
}

absl::StatusOr<Shape> ShapeInference::InferSelectAndScatterShape(
    const Shape& operand, const ProgramShape& select, const Window& window, const Shape& source,
    const Shape& init_value, const ProgramShape& scatter) {
  if (auto s = ExpectArray(operand, "operand of select-and-scatter"); !s.ok()) return s;
  if (select.parameters().size() != 2) {
    return InvalidArgument(
        "select-and-scatter: the select computation must take 2 parameters, "
        "but takes ",
        select.parameters().size(), ".");
  }
  if (!CompatibleShapes(select.result(), MakeScalar(PRED))) {
    return InvalidArgument("select-and-scatter: the select computation must return pred[]; got ",
                           Str(select.result()), ".");
  }
  Shape element = MakeScalar(operand.element_type());
  for (int i = 0; i < 2; ++i) {
    if (!CompatibleShapes(element, select.parameters()[i], true)) {
      return InvalidArgument("select-and-scatter: parameter ", i, " of the select computation (",
                             Str(select.parameters()[i]), ") must match the operand element shape ",
                             Str(element), ".");
    }
  }
  const Shape* init = &init_value;
  if (auto s = VerifyReducerShape("select-and-scatter", scatter, absl::MakeSpan(&init, 1),
                                  {source.element_type()}, 1);
      !s.ok()) {
    return s;
  }
  auto window_result = InferWindowOutputShape(operand, window, operand.element_type());
  if (!window_result.ok()) {
    return InvalidArgument("select-and-scatter: ", window_result.status().message());
  }
  if (!CompatibleShapes(source, *window_result, true)) {
    return InvalidArgument("select-and-scatter: the source shape ", Str(source),
                           " does not match the shape of the window-reduced operand ",
                           Str(*window_result), ".");
  }
  return operand;
}

absl::StatusOr<Shape> ShapeInference::InferConvolveShape(
    const Shape& lhs, const Shape& rhs, int64_t feature_group_count, int64_t batch_group_count,
    const Window& window, const ConvolutionDimensionNumbers& dnums,
    std::optional<PrimitiveType> preferred_element_type) {
  if (auto s = ExpectArray(lhs, "lhs of convolution"); !s.ok()) return s;
  if (auto s = ExpectArray(rhs, "rhs of convolution"); !s.ok()) return s;
  if (feature_group_count <= 0) {
    return InvalidArgument("convolution: feature_group_count must be positive; got ",
                           feature_group_count, ".");
  }
  if (batch_group_count <= 0) {
    return InvalidArgument("convolution: batch_group_count must be positive; got ",
                           batch_group_count, ".");
  }
  if (batch_group_count > 1 && feature_group_count > 1) {
    return InvalidArgument("convolution: batch_group_count (", batch_group_count,
                           ") and feature_group_count (", feature_group_count,
                           ") cannot both be greater than 1.");
  }
  const int64_t num_spatial = dnums.input_spatial_dimensions_size();
  if (dnums.kernel_spatial_dimensions_size() != num_spatial ||
      dnums.output_spatial_dimensions_size() != num_spatial) {
    return InvalidArgument(
        "convolution: input, kernel and output must have the same number of "
        "spatial dimensions in dim_labels.");
  }
  if (window.dimensions_size() != num_spatial) {
    return InvalidArgument("convolution: the window has ", window.dimensions_size(),
                           " dimensions but dim_labels has ", num_spatial, " spatial dimensions.");
  }
  const int64_t num_dims = num_spatial + 2;
  if (lhs.rank() != num_dims) {
    return InvalidArgument("convolution: the lhs should have rank ", num_dims, "; lhs: ", Str(lhs),
                           ".");
  }
  if (rhs.rank() != num_dims) {
    return InvalidArgument("convolution: the rhs should have rank ", num_dims, "; rhs: ", Str(rhs),
                           ".");
  }
  auto check_perm = [&](absl::string_view what, int64_t a, int64_t b,
                        const std::vector<int64_t>& spatial) -> absl::Status {
    std::vector<int64_t> all = {a, b};
    all.insert(all.end(), spatial.begin(), spatial.end());
    if (!IsPermutation(all, num_dims)) {
      return InvalidArgument("convolution: ", what,
                             " dimensions must name each dimension exactly once; got ", Str(all),
                             ".");
    }
    return absl::OkStatus();
  };
  if (auto s = check_perm("input", dnums.input_batch_dimension(), dnums.input_feature_dimension(),
                          dnums.input_spatial_dimensions());
      !s.ok()) {
    return s;
  }
  if (auto s =
          check_perm("kernel", dnums.kernel_input_feature_dimension(),
                     dnums.kernel_output_feature_dimension(), dnums.kernel_spatial_dimensions());
      !s.ok()) {
    return s;
  }
  if (auto s = check_perm("output", dnums.output_batch_dimension(),
                          dnums.output_feature_dimension(), dnums.output_spatial_dimensions());
      !s.ok()) {
    return s;
  }
  const int64_t input_features = lhs.dimensions(dnums.input_feature_dimension());
  const int64_t input_batch = lhs.dimensions(dnums.input_batch_dimension());
  const int64_t kernel_input_features = rhs.dimensions(dnums.kernel_input_feature_dimension());
  const int64_t kernel_output_features = rhs.dimensions(dnums.kernel_output_feature_dimension());
  const std::string operands = absl::StrCat("; got lhs ", Str(lhs), ", rhs ", Str(rhs), ".");
  if (kernel_output_features % batch_group_count != 0) {
    return InvalidArgument("convolution: the kernel output feature dimension (",
                           kernel_output_features, ") must be a multiple of batch_group_count (",
                           batch_group_count, ")", operands);
  }
  if (input_features % feature_group_count != 0 ||
      input_features / feature_group_count != kernel_input_features) {
    return InvalidArgument("convolution: the lhs feature dimension (", input_features,
                           ") must be a multiple of feature_group_count (", feature_group_count,
                           ") and lhs features / feature_group_count must equal the kernel input "
                           "feature dimension (",
                           kernel_input_features, ")", operands);
  }
  if (kernel_output_features % feature_group_count != 0) {
    return InvalidArgument("convolution: the kernel output feature dimension (",
                           kernel_output_features, ") must be a multiple of feature_group_count (",
                           feature_group_count, ")", operands);
  }
  if (input_batch % batch_group_count != 0) {
    return InvalidArgument("convolution: the lhs batch dimension (", input_batch,
                           ") must be a multiple of batch_group_count (", batch_group_count, ")",
                           operands);
  }
  std::vector<int64_t> input_spatial(num_spatial);
  for (int64_t i = 0; i < num_spatial; ++i) {
    input_spatial[i] = lhs.dimensions(dnums.input_spatial_dimensions(static_cast<int>(i)));
    int64_t kernel_size = rhs.dimensions(dnums.kernel_spatial_dimensions(static_cast<int>(i)));
    if (window.dimensions(static_cast<int>(i)).size() != kernel_size) {
      return InvalidArgument(
          "convolution: window size ", window.dimensions(static_cast<int>(i)).size(),
          " of spatial dimension ", i, " does not match the kernel's size ", kernel_size, operands);
    }
  }
  auto window_output = InferWindowOutputShape(MakeArray(lhs.element_type(), input_spatial), window,
                                              lhs.element_type());
  if (!window_output.ok())
    return InvalidArgument("convolution: ", window_output.status().message());

  std::vector<int64_t> dims(num_dims);
  std::vector<bool> dynamic(num_dims, false);
  dims[dnums.output_batch_dimension()] = input_batch / batch_group_count;
  dims[dnums.output_feature_dimension()] = kernel_output_features;
  dynamic[dnums.output_batch_dimension()] = lhs.is_dynamic_dimension(dnums.input_batch_dimension());
  for (int64_t i = 0; i < num_spatial; ++i) {
    int64_t out = dnums.output_spatial_dimensions(static_cast<int>(i));
    dims[out] = window_output->dimensions(i);
    dynamic[out] = lhs.is_dynamic_dimension(dnums.input_spatial_dimensions(static_cast<int>(i))) ||
                   rhs.is_dynamic_dimension(dnums.kernel_spatial_dimensions(static_cast<int>(i)));
  }
  PrimitiveType type = HigherPrecisionElementType(lhs, rhs);
  if (preferred_element_type.has_value() && *preferred_element_type != type) {
    if (!primitive_util::IsFloatingPointType(type) &&
        primitive_util::BitWidth(*preferred_element_type) < primitive_util::BitWidth(type)) {
      return InvalidArgument("convolution: the preferred element type ",
                             Str(*preferred_element_type), " must not be narrower than ", Str(type),
                             ".");
    }
    type = *preferred_element_type;
  }
  return MakeArray(type, dims, dynamic);
}

}  // namespace axle
