//===- shape_inference_data_movement.cc - Ops that move elements -----------===//
//
// broadcast, reshape, dynamic-reshape, transpose, reverse, slice,
// dynamic-slice, dynamic-update-slice, concatenate, pad, get-tuple-element,
// get/set-dimension-size, topk, iota.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <limits>

#include "axle/hlo/shape_inference/shape_inference.h"
#include "axle/hlo/shape_inference/shape_inference_util.h"

namespace axle {

using namespace shape_inference_internal;  // NOLINT

absl::StatusOr<Shape> ShapeInference::InferBroadcastShape(
    const Shape& operand, absl::Span<const int64_t> broadcast_sizes) {
  if (auto s = ExpectArray(operand, "operand of broadcast"); !s.ok()) return s;
  std::vector<int64_t> dims(broadcast_sizes.begin(), broadcast_sizes.end());
  std::vector<bool> dynamic(broadcast_sizes.size(), false);
  for (int64_t size : broadcast_sizes) {
    if (size < 0) return InvalidArgument("broadcast with negative dimension size ", size, ".");
  }
  for (int64_t i = 0; i < operand.rank(); ++i) {
    dims.push_back(operand.dimensions(i));
    dynamic.push_back(operand.is_dynamic_dimension(i));
  }
  return MakeArray(operand.element_type(), dims, dynamic);
}

absl::StatusOr<Shape> ShapeInference::InferBroadcastShape(
    const Shape& operand, const Shape& output, absl::Span<const int64_t> broadcast_dimensions) {
  if (auto s = ExpectArray(operand, "operand of broadcast"); !s.ok()) return s;
  if (auto s = ExpectArray(output, "result of broadcast"); !s.ok()) return s;
  if (operand.rank() > output.rank()) {
    return InvalidArgument("broadcast must be to an equal or higher rank; operand rank is ",
                           operand.rank(), ", output rank is ", output.rank(), ".");
  }
  if (static_cast<int64_t>(broadcast_dimensions.size()) != operand.rank()) {
    return InvalidArgument("broadcast: dimensions=", Str(broadcast_dimensions), " has ",
                           broadcast_dimensions.size(), " entries but the operand has rank ",
                           operand.rank(), ".");
  }
  for (int64_t i = 0; i < operand.rank(); ++i) {
    int64_t to = broadcast_dimensions[i];
    if (to < 0 || to >= output.rank()) {
      return InvalidArgument("broadcast: dimension ", to, " is out of range for output ",
                             Str(output), ".");
    }
    if (operand.dimensions(i) != output.dimensions(to) && operand.dimensions(i) != 1 &&
        !operand.is_unbounded_dynamic_dimension(i) && !output.is_unbounded_dynamic_dimension(to)) {
      return InvalidArgument("broadcast: operand dimension ", i, " has size ",
                             operand.dimensions(i), " but output dimension ", to, " has size ",
                             output.dimensions(to), " (must be equal, or 1 in the operand).");
    }
    if (i > 0 && broadcast_dimensions[i - 1] >= to) {
      return InvalidArgument("broadcast: dimensions must be strictly increasing; got ",
                             Str(broadcast_dimensions), ".");
    }
  }
  return output;
}

absl::StatusOr<Shape> ShapeInference::InferReshapeShape(const Shape& operand,
                                                        absl::Span<const int64_t> new_sizes,
                                                        int64_t inferred_dimension) {
  if (auto s = ExpectArray(operand, "operand of reshape"); !s.ok()) return s;
  for (int64_t size : new_sizes) {
    if (size < 0 && size != Shape::kUnboundedSize) {
      return InvalidArgument("reshape: negative dimension size ", size, ".");
    }
  }
  Shape result = MakeArray(operand.element_type(), new_sizes);
  // With an unbounded `?` dimension the element count is unknown.
  const bool unbounded =
      std::find(operand.dimensions().begin(), operand.dimensions().end(), Shape::kUnboundedSize) !=
          operand.dimensions().end() ||
      std::find(new_sizes.begin(), new_sizes.end(), Shape::kUnboundedSize) != new_sizes.end();
  if (!unbounded && ShapeUtil::ElementsIn(operand) != ShapeUtil::ElementsIn(result)) {
    return InvalidArgument(
        "reshape has mismatched element counts: from=", ShapeUtil::ElementsIn(operand), " (",
        Str(operand), ") to=", ShapeUtil::ElementsIn(result), " (", Str(result), ").");
  }
  if (inferred_dimension >= 0 && inferred_dimension < result.rank() && operand.is_dynamic()) {
    result.set_dynamic_dimension(inferred_dimension, true);
  }
  return result;
}

absl::StatusOr<Shape> ShapeInference::InferDynamicReshapeShape(
    const Shape& operand, absl::Span<const Shape* const> dim_size_shapes,
    absl::Span<const int64_t> new_size_bounds, const std::vector<bool>& dims_are_dynamic) {
  if (new_size_bounds.size() != dims_are_dynamic.size()) {
    return InvalidArgument("dynamic-reshape: ", new_size_bounds.size(), " sizes but ",
                           dims_are_dynamic.size(), " dynamic markers.");
  }
  if (dim_size_shapes.size() != new_size_bounds.size()) {
    return InvalidArgument("dynamic-reshape: the result has rank ", new_size_bounds.size(),
                           " but there are ", dim_size_shapes.size(), " size operands.");
  }
  for (const Shape* s : dim_size_shapes) {
    if (!s->IsArray() || s->element_type() != S32 || s->rank() != 0) {
      return InvalidArgument("dynamic-reshape: sizes must be s32 scalars; got ", Str(*s), ".");
    }
  }
  Shape result = MakeArray(operand.element_type(), new_size_bounds, dims_are_dynamic);
  if (ShapeUtil::ElementsIn(operand) != ShapeUtil::ElementsIn(result)) {
    return InvalidArgument(
        "dynamic-reshape has mismatched element counts: from=", ShapeUtil::ElementsIn(operand),
        " (", Str(operand), ") to=", ShapeUtil::ElementsIn(result), " (", Str(result), ").");
  }
  return result;
}

absl::StatusOr<Shape> ShapeInference::InferTransposeShape(const Shape& operand,
                                                          absl::Span<const int64_t> dimensions) {
  if (auto s = ExpectArray(operand, "operand of transpose"); !s.ok()) return s;
  if (!IsPermutation(dimensions, operand.rank())) {
    return InvalidArgument("transpose: dimensions=", Str(dimensions),
                           " is not a permutation of the operand dimensions (operand shape is ",
                           Str(operand), ").");
  }
  return ShapeUtil::PermuteDimensions(dimensions, operand);
}

absl::StatusOr<Shape> ShapeInference::InferReverseShape(const Shape& operand,
                                                        absl::Span<const int64_t> dimensions) {
  if (auto s = ExpectArray(operand, "operand of reverse"); !s.ok()) return s;
  if (!AllUnique(dimensions)) {
    return InvalidArgument(
        "reverse: a dimension number is duplicated in dimensions=", Str(dimensions), ".");
  }
  for (int64_t d : dimensions) {
    if (d < 0 || d >= operand.rank()) {
      return InvalidArgument("reverse: dimension ", d, " is out of bounds for shape ", Str(operand),
                             ".");
    }
  }
  return operand;
}

absl::StatusOr<Shape> ShapeInference::InferSliceShape(const Shape& operand,
                                                      absl::Span<const int64_t> starts,
                                                      absl::Span<const int64_t> limits,
                                                      absl::Span<const int64_t> strides) {
  if (auto s = ExpectArray(operand, "operand of slice"); !s.ok()) return s;
  auto error = [&](const std::string& message) {
    return InvalidArgument("slice: ", message, "; operand shape: ", Str(operand),
                           "; starts: ", Str(starts), "; limits: ", Str(limits),
                           "; strides: ", Str(strides), ".");
  };
  if (starts.size() != limits.size() || starts.size() != strides.size()) {
    return error("starts, limits and strides must have the same length");
  }
  if (static_cast<int64_t>(starts.size()) != operand.rank()) {
    return error(absl::StrCat("the slice has ", starts.size(),
                              " dimensions but the operand has rank ", operand.rank()));
  }
  std::vector<int64_t> sizes;
  std::vector<bool> dynamic;
  for (int64_t d = 0; d < operand.rank(); ++d) {
    int64_t start = starts[d], limit = limits[d], stride = strides[d];
    if (start < 0) return error(absl::StrCat("negative start index ", start));
    if (!operand.is_unbounded_dynamic_dimension(d) && limit > operand.dimensions(d)) {
      return error(absl::StrCat("limit index (", limit, ") of dimension ", d,
                                " must be at most the dimension size (", operand.dimensions(d),
                                ")"));
    }
    if (start > limit) {
      return error(
          absl::StrCat("limit index (", limit, ") must be at least the start index (", start, ")"));
    }
    if (stride <= 0) return error(absl::StrCat("stride (", stride, ") must be positive"));
    int64_t size = (limit - start + stride - 1) / stride;
    sizes.push_back(size);
    dynamic.push_back(size != 1 && operand.is_dynamic_dimension(d));
  }
  return MakeArray(operand.element_type(), sizes, dynamic);
}

namespace {

absl::Status CheckStartIndices(absl::string_view op, const Shape& operand,
                               absl::Span<const Shape> indices) {
  if (!indices.empty() && indices[0].IsArray() && indices[0].rank() == 1) {
    if (indices.size() != 1) {
      return InvalidArgument(op,
                             ": a rank-1 start index operand must be the only index operand; "
                             "got ",
                             indices.size(), ".");
    }
    if (!IsIntegral(indices[0])) {
      return InvalidArgument(op, ": start indices must be integral; got ", Str(indices[0]), ".");
    }
    if (indices[0].dimensions(0) != operand.rank()) {
      return InvalidArgument(op, ": start indices ", Str(indices[0]),
                             " must have one entry per operand dimension (operand ", Str(operand),
                             ").");
    }
    return absl::OkStatus();
  }
  if (static_cast<int64_t>(indices.size()) != operand.rank()) {
    return InvalidArgument(op, ": there are ", indices.size(),
                           " start indices but the operand has rank ", operand.rank(), " (",
                           Str(operand), ").");
  }
  for (const Shape& index : indices) {
    if (!index.IsArray() || !index.IsScalar()) {
      return InvalidArgument(op, ": start indices must be scalars; got ", Str(index), ".");
    }
    if (!IsIntegral(index)) {
      return InvalidArgument(op, ": start indices must be integral; got ", Str(index), ".");
    }
    if (index.element_type() != indices[0].element_type()) {
      return InvalidArgument(op, ": start indices must all have the same type; got ",
                             Str(indices[0]), " and ", Str(index), ".");
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Shape> ShapeInference::InferDynamicSliceShape(
    const Shape& operand, absl::Span<const Shape> start_indices,
    absl::Span<const int64_t> slice_sizes) {
  if (auto s = ExpectArray(operand, "operand of dynamic-slice"); !s.ok()) return s;
  if (auto s = CheckStartIndices("dynamic-slice", operand, start_indices); !s.ok()) return s;
  if (static_cast<int64_t>(slice_sizes.size()) != operand.rank()) {
    return InvalidArgument("dynamic-slice: dynamic_slice_sizes=", Str(slice_sizes), " has ",
                           slice_sizes.size(), " entries but the operand has rank ", operand.rank(),
                           ".");
  }
  std::vector<bool> dynamic(operand.rank(), false);
  for (int64_t d = 0; d < operand.rank(); ++d) {
    if (slice_sizes[d] < 0) {
      return InvalidArgument("dynamic-slice: negative slice size ", slice_sizes[d], ".");
    }
    if (!operand.is_unbounded_dynamic_dimension(d) && slice_sizes[d] > operand.dimensions(d)) {
      return InvalidArgument("dynamic-slice: slice size ", slice_sizes[d], " of dimension ", d,
                             " is larger than the operand dimension ", operand.dimensions(d), ".");
    }
    dynamic[d] = operand.is_dynamic_dimension(d) && slice_sizes[d] == operand.dimensions(d);
  }
  return MakeArray(operand.element_type(), slice_sizes, dynamic);
}

absl::StatusOr<Shape> ShapeInference::InferDynamicUpdateSliceShape(
    const Shape& operand, const Shape& update, absl::Span<const Shape> start_indices) {
  if (auto s = ExpectArray(operand, "operand of dynamic-update-slice"); !s.ok()) return s;
  if (auto s = ExpectArray(update, "update of dynamic-update-slice"); !s.ok()) return s;
  if (auto s = CheckStartIndices("dynamic-update-slice", operand, start_indices); !s.ok()) {
    return s;
  }
  if (update.rank() != operand.rank()) {
    return InvalidArgument("dynamic-update-slice: update rank ", update.rank(),
                           " does not match operand rank ", operand.rank(), ".");
  }
  if (!SameElementTypeIgnoringFpPrecision(operand, update)) {
    return InvalidArgument("dynamic-update-slice: update element type ", Str(update.element_type()),
                           " does not match operand element type ", Str(operand.element_type()),
                           ".");
  }
  Shape result = operand;
  for (int64_t d = 0; d < operand.rank(); ++d) {
    if (!operand.is_unbounded_dynamic_dimension(d) && !update.is_unbounded_dynamic_dimension(d) &&
        update.dimensions(d) > operand.dimensions(d)) {
      return InvalidArgument("dynamic-update-slice: update dimension ", d, " (",
                             update.dimensions(d), ") is larger than the operand dimension (",
                             operand.dimensions(d), ").");
    }
    if (update.is_dynamic_dimension(d) && update.dimensions(d) == operand.dimensions(d)) {
      result.set_dynamic_dimension(d, true);
    }
  }
  return result;
}

absl::StatusOr<Shape> ShapeInference::InferConcatOpShape(absl::Span<const Shape* const> operands,
                                                         int64_t dimension) {
  if (operands.empty()) return InvalidArgument("concatenate: expected at least one operand.");
  for (const Shape* s : operands) {
    if (auto st = ExpectArray(*s, "operand of concatenate"); !st.ok()) return st;
  }
  const Shape& first = *operands[0];
  if (dimension < 0 || dimension >= first.rank()) {
    return InvalidArgument("concatenate: dimension ", dimension, " is out of bounds for ",
                           Str(first), ".");
  }
  PrimitiveType type = first.element_type();
  std::vector<int64_t> dims = first.dimensions();
  std::vector<bool> dynamic = first.dynamic_dimensions();
  for (size_t i = 1; i < operands.size(); ++i) {
    const Shape& s = *operands[i];
    if (s.rank() != first.rank()) {
      return InvalidArgument("concatenate: cannot concatenate arrays of different ranks: ",
                             Str(first), " and ", Str(s), ".");
    }
    if (!SameElementTypeIgnoringFpPrecision(first, s)) {
      return InvalidArgument("concatenate: cannot concatenate arrays of different element types: ",
                             Str(first), " and ", Str(s), ".");
    }
    for (int64_t d = 0; d < first.rank(); ++d) {
      if (d == dimension) continue;
      if (first.dimensions(d) != s.dimensions(d) && !first.is_unbounded_dynamic_dimension(d) &&
          !s.is_unbounded_dynamic_dimension(d)) {
        return InvalidArgument("concatenate: operands may differ only in dimension ", dimension,
                               ", but dimension ", d, " differs: ", Str(first), " vs ", Str(s),
                               ".");
      }
      if (s.is_dynamic_dimension(d)) dynamic[d] = true;
    }
    if (dims[dimension] == Shape::kUnboundedSize || s.is_unbounded_dynamic_dimension(dimension)) {
      dims[dimension] = Shape::kUnboundedSize;
    } else {
      dims[dimension] += s.dimensions(dimension);
    }
    if (s.is_dynamic_dimension(dimension)) dynamic[dimension] = true;
    type = primitive_util::IsFloatingPointType(type) && IsFloat(s)
               ? primitive_util::HigherPrecisionType(type, s.element_type())
               : type;
  }
  return MakeArray(type, dims, dynamic);
}

absl::StatusOr<Shape> ShapeInference::InferPadShape(const Shape& operand,
                                                    const Shape& padding_value,
                                                    const PaddingConfig& padding_config) {
  if (auto s = ExpectArray(operand, "operand of pad"); !s.ok()) return s;
  if (!padding_value.IsArray() || !padding_value.IsScalar()) {
    return InvalidArgument("pad: the padding value must be a scalar; got ", Str(padding_value),
                           ".");
  }
  if (operand.rank() != padding_config.dimensions_size()) {
    return InvalidArgument("pad: the padding configuration has ", padding_config.dimensions_size(),
                           " dimensions but the operand ", Str(operand), " has rank ",
                           operand.rank(), ".");
  }
  if (!SameElementTypeIgnoringFpPrecision(operand, padding_value)) {
    return InvalidArgument("pad: the operand (", Str(operand), ") and the padding value (",
                           Str(padding_value), ") have different element types.");
  }
  std::vector<int64_t> dims(operand.rank());
  for (int64_t d = 0; d < operand.rank(); ++d) {
    const auto& p = padding_config.dimensions(static_cast<int>(d));
    if (p.interior_padding() < 0) {
      return InvalidArgument("pad: interior padding of dimension ", d, " is negative (",
                             p.interior_padding(), ").");
    }
    int64_t size = operand.dimensions(d);
    if (operand.is_unbounded_dynamic_dimension(d)) {
      dims[d] = Shape::kUnboundedSize;
      continue;
    }
    dims[d] = size + p.edge_padding_low() + p.edge_padding_high() +
              std::max<int64_t>(size - 1, 0) * p.interior_padding();
    if (dims[d] < 0) {
      return InvalidArgument("pad: the padding gives dimension ", d, " a negative size (", dims[d],
                             ").");
    }
  }
  return MakeArray(HigherPrecisionElementType(operand, padding_value), dims,
                   operand.dynamic_dimensions());
}

absl::StatusOr<Shape> ShapeInference::InferGetTupleElementShape(const Shape& tuple, int64_t index) {
  if (!tuple.IsTuple()) {
    return InvalidArgument("get-tuple-element: the operand is not a tuple: ", Str(tuple), ".");
  }
  if (index < 0 || index >= tuple.tuple_shapes_size()) {
    return InvalidArgument("get-tuple-element: index=", index, " is out of bounds for ", Str(tuple),
                           " (", tuple.tuple_shapes_size(), " elements).");
  }
  return tuple.tuple_shapes(index);
}

absl::StatusOr<Shape> ShapeInference::InferGetDimensionSizeShape(const Shape& operand,
                                                                 int64_t dimension) {
  if (auto s = ExpectArray(operand, "operand of get-dimension-size"); !s.ok()) return s;
  if (dimension < 0 || dimension >= operand.rank()) {
    return InvalidArgument("get-dimension-size: dimension ", dimension, " is out of bounds for ",
                           Str(operand), ".");
  }
  if (operand.dimensions(dimension) > std::numeric_limits<int32_t>::max()) {
    return InvalidArgument("get-dimension-size: dimension ", dimension, " of ", Str(operand),
                           " exceeds the int32 range.");
  }
  return MakeScalar(S32);
}

absl::StatusOr<Shape> ShapeInference::InferSetDimensionSizeShape(const Shape& operand,
                                                                 const Shape& size,
                                                                 int64_t dimension) {
  if (auto s = ExpectArray(operand, "operand of set-dimension-size"); !s.ok()) return s;
  if (dimension < 0 || dimension >= operand.rank()) {
    return InvalidArgument("set-dimension-size: dimension ", dimension, " is out of bounds for ",
                           Str(operand), ".");
  }
  if (!size.IsArray() || size.rank() != 0 || size.element_type() != S32) {
    return InvalidArgument("set-dimension-size: the size must be an s32 scalar; got ", Str(size),
                           ".");
  }
  if (operand.dimensions(dimension) > std::numeric_limits<int32_t>::max()) {
    return InvalidArgument("set-dimension-size: dimension ", dimension, " of ", Str(operand),
                           " exceeds the int32 range.");
  }
  Shape result = operand;
  result.set_dynamic_dimension(dimension, true);
  return result;
}

absl::StatusOr<Shape> ShapeInference::InferTopKShape(const Shape& operand, int64_t k) {
  if (auto s = ExpectArray(operand, "operand of topk"); !s.ok()) return s;
  if (operand.rank() < 1) {
    return InvalidArgument("topk: the operand must have rank >= 1; got ", Str(operand), ".");
  }
  if (k < 0) return InvalidArgument("topk: k must be non-negative; got ", k, ".");
  int64_t last = operand.rank() - 1;
  if (!operand.is_unbounded_dynamic_dimension(last) && operand.dimensions(last) < k) {
    return InvalidArgument("topk: k=", k, " is larger than the last dimension of ", Str(operand),
                           ".");
  }
  std::vector<int64_t> dims = operand.dimensions();
  dims[last] = k;
  std::vector<bool> dynamic = operand.dynamic_dimensions();
  dynamic[last] = false;
  return ShapeUtil::MakeTupleShape(
      {MakeArray(operand.element_type(), dims, dynamic), MakeArray(S32, dims, dynamic)});
}

absl::StatusOr<Shape> ShapeInference::InferIotaShape(const Shape& shape, int64_t iota_dimension) {
  if (!shape.IsArray())
    return InvalidArgument("iota: the result must be an array; got ", Str(shape), ".");
  if (shape.rank() == 0) return InvalidArgument("iota: the result must not be a scalar.");
  if (iota_dimension < 0 || iota_dimension >= shape.rank()) {
    return InvalidArgument("iota: iota_dimension=", iota_dimension, " is out of range for ",
                           Str(shape), ".");
  }
  if (!IsIntegral(shape) && !IsFloat(shape) && !IsComplex(shape)) {
    return InvalidArgument(
        "iota: the element type must be integral, floating point or complex; "
        "got ",
        Str(shape.element_type()), ".");
  }
  return shape;
}

}  // namespace axle
