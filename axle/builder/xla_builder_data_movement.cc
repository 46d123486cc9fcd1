// Ops that move data without computing on it: iota, broadcasts, reshapes,
// transposes, slices, concatenation, padding, tuples, gather, dynamic sizes.
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "axle/base/status_macros.h"
#include "axle/builder/xla_builder.h"
#include "axle/builder/xla_builder_internal.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/shape_inference/shape_inference.h"

namespace axle {

using builder_internal::AddBroadcastSequence;
using builder_internal::BuilderOf;
using builder_internal::Emit;
using builder_internal::InDimBroadcast;
using builder_internal::OperandShapes;
using builder_internal::RunOp;

namespace {

// An op with a `dimensions={...}` attribute.
absl::StatusOr<XlaOp> EmitWithDimensions(XlaBuilder* b, HloOpcode opcode, const Shape& shape,
                                         absl::Span<const XlaOp> operands,
                                         absl::Span<const int64_t> dimensions) {
  return Emit<HloDimensionsInstruction>(
      b, opcode, shape, operands, [&](HloDimensionsInstruction* instruction) {
        instruction->mutable_attrs()->dimensions.assign(dimensions.begin(), dimensions.end());
      });
}

absl::StatusOr<XlaOp> EmitReshape(XlaBuilder* b, XlaOp operand, absl::Span<const int64_t> sizes,
                                  int64_t inferred_dimension) {
  AXLE_ASSIGN_OR_RETURN(const Shape* shape, b->GetShapePtr(operand));
  AXLE_ASSIGN_OR_RETURN(Shape result,
                        ShapeInference::InferReshapeShape(*shape, sizes, inferred_dimension));
  // Element counts that wrap (2^80 elements is 0 in int64) pass the
  // inference's comparison: the size bound catches them.
  AXLE_RETURN_IF_ERROR(builder_internal::ValidatedShape(result).status());
  return Emit<HloReshapeInstruction>(
      b, HloOpcode::kReshape, result, {operand}, [&](HloReshapeInstruction* instruction) {
        instruction->mutable_attrs()->inferred_dimension = inferred_dimension;
      });
}

absl::Status CheckDimension(const Shape& shape, int64_t dimension, absl::string_view what) {
  if (!shape.IsArray()) {
    return absl::InvalidArgumentError(
        absl::StrCat("expected an array operand; got ", ShapeUtil::HumanString(shape)));
  }
  if (dimension < 0 || dimension >= shape.rank()) {
    return absl::InvalidArgumentError(absl::StrCat(what, " ", dimension,
                                                   " is out of range for an operand of shape ",
                                                   ShapeUtil::HumanString(shape)));
  }
  return absl::OkStatus();
}

}  // namespace

// --- Iota and broadcasts ------------------------------------------------------------

XlaOp Iota(XlaBuilder* builder, const Shape& shape, int64_t iota_dimension) {
  return RunOp(builder, "Iota", [&]() -> absl::StatusOr<XlaOp> {
    AXLE_ASSIGN_OR_RETURN(Shape validated, builder_internal::ValidatedShape(shape));
    AXLE_ASSIGN_OR_RETURN(Shape result, ShapeInference::InferIotaShape(validated, iota_dimension));
    return Emit<HloIotaInstruction>(builder, HloOpcode::kIota, result, {},
                                    [&](HloIotaInstruction* instruction) {
                                      instruction->mutable_attrs()->iota_dimension = iota_dimension;
                                    });
  });
}

XlaOp Iota(XlaBuilder* builder, PrimitiveType type, int64_t size) {
  if (builder == nullptr) return XlaOp();
  if (!primitive_util::IsArrayType(type) || type == PRIMITIVE_TYPE_INVALID) {
    return builder->ReportError(
        absl::InvalidArgumentError(absl::StrCat("Iota: expected an array element type; got ",
                                                primitive_util::LowercasePrimitiveTypeName(type))));
  }
  return Iota(builder, ShapeUtil::MakeShape(type, {size}), 0);
}

XlaOp Broadcast(XlaOp operand, absl::Span<const int64_t> broadcast_sizes) {
  XlaBuilder* b = operand.builder();
  return RunOp(b, "Broadcast", [&]() -> absl::StatusOr<XlaOp> {
    AXLE_ASSIGN_OR_RETURN(const Shape* shape, b->GetShapePtr(operand));
    AXLE_ASSIGN_OR_RETURN(Shape result,
                          ShapeInference::InferBroadcastShape(*shape, broadcast_sizes));
    AXLE_RETURN_IF_ERROR(builder_internal::ValidatedShape(result).status());
    // The operand's dimensions become the minor ones of the result.
    std::vector<int64_t> dimensions;
    for (int64_t i = 0; i < shape->rank(); ++i) {
      dimensions.push_back(static_cast<int64_t>(broadcast_sizes.size()) + i);
    }
    return EmitWithDimensions(b, HloOpcode::kBroadcast, result, {operand}, dimensions);
  });
}

XlaOp BroadcastInDim(XlaOp operand, absl::Span<const int64_t> out_dim_size,
                     absl::Span<const int64_t> broadcast_dimensions) {
  XlaBuilder* b = operand.builder();
  return RunOp(b, "BroadcastInDim", [&]() -> absl::StatusOr<XlaOp> {
    AXLE_ASSIGN_OR_RETURN(const Shape* shape, b->GetShapePtr(operand));
    if (!shape->IsArray()) {
      return absl::InvalidArgumentError(
          absl::StrCat("expected an array operand; got ", ShapeUtil::HumanString(*shape)));
    }
    AXLE_ASSIGN_OR_RETURN(Shape output, builder_internal::ValidatedShape(ShapeUtil::MakeShape(
                                            shape->element_type(), out_dim_size)));
    AXLE_RETURN_IF_ERROR(
        ShapeInference::InferBroadcastShape(*shape, output, broadcast_dimensions).status());
    // First a broadcast that keeps the operand's sizes (1 where it is 1),
    // then, if any dimension is degenerate, XLA's broadcast sequence.
    Shape in_dim_shape = output;
    for (int64_t i = 0; i < shape->rank(); ++i) {
      in_dim_shape.set_dimensions(broadcast_dimensions[i], shape->dimensions(i));
      in_dim_shape.set_dynamic_dimension(broadcast_dimensions[i], shape->is_dynamic_dimension(i));
    }
    AXLE_ASSIGN_OR_RETURN(XlaOp in_dim,
                          InDimBroadcast(b, in_dim_shape, operand, broadcast_dimensions));
    if (ShapeUtil::Equal(in_dim_shape, output)) return in_dim;
    return AddBroadcastSequence(b, output, in_dim);
  });
}

// --- Reshapes, transposes, reversals -------------------------------------------------

XlaOp Reshape(XlaOp operand, absl::Span<const int64_t> dimensions) {
  XlaBuilder* b = operand.builder();
  return RunOp(b, "Reshape", [&]() { return EmitReshape(b, operand, dimensions, -1); });
}

XlaOp Reshape(const Shape& shape, XlaOp operand) {
  XlaBuilder* b = operand.builder();
  return RunOp(b, "Reshape", [&]() -> absl::StatusOr<XlaOp> {
    AXLE_ASSIGN_OR_RETURN(Shape validated, builder_internal::ValidatedShape(shape));
    AXLE_ASSIGN_OR_RETURN(const Shape* operand_shape, b->GetShapePtr(operand));
    if (!validated.IsArray()) {
      return absl::InvalidArgumentError(
          absl::StrCat("expected an array shape; got ", ShapeUtil::HumanString(validated)));
    }
    AXLE_ASSIGN_OR_RETURN(
        Shape inferred, ShapeInference::InferReshapeShape(*operand_shape, validated.dimensions()));
    if (inferred.element_type() != validated.element_type()) {
      return absl::InvalidArgumentError(
          absl::StrCat("cannot reshape ", ShapeUtil::HumanString(*operand_shape), " to ",
                       ShapeUtil::HumanString(validated), ": the element types differ"));
    }
    return Emit<HloReshapeInstruction>(b, HloOpcode::kReshape, validated, {operand},
                                       [](HloReshapeInstruction*) {});
  });
}

XlaOp ReshapeWithInferredDimension(XlaOp operand, absl::Span<const int64_t> new_sizes,
                                   int64_t inferred_dimension) {
  XlaBuilder* b = operand.builder();
  return RunOp(b, "ReshapeWithInferredDimension",
               [&]() { return EmitReshape(b, operand, new_sizes, inferred_dimension); });
}

XlaOp Collapse(XlaOp operand, absl::Span<const int64_t> dimensions) {
  XlaBuilder* b = operand.builder();
  return RunOp(b, "Collapse", [&]() -> absl::StatusOr<XlaOp> {
    AXLE_ASSIGN_OR_RETURN(const Shape* shape, b->GetShapePtr(operand));
    if (dimensions.size() <= 1) return operand;  // collapsing one dimension changes nothing
    for (size_t i = 0; i < dimensions.size(); ++i) {
      AXLE_RETURN_IF_ERROR(CheckDimension(*shape, dimensions[i], "dimension"));
      if (i > 0 && dimensions[i] != dimensions[i - 1] + 1) {
        return absl::InvalidArgumentError(absl::StrCat(
            "dimensions {", absl::StrJoin(dimensions, ","), "} must be consecutive and in order"));
      }
    }
    std::vector<int64_t> sizes;
    for (int64_t i = 0; i < shape->rank(); ++i) {
      if (i <= dimensions.front() || i > dimensions.back()) {
        sizes.push_back(shape->dimensions(i));
      } else {
        sizes.back() *= shape->dimensions(i);
      }
    }
    return EmitReshape(b, operand, sizes, -1);
  });
}

XlaOp Transpose(XlaOp operand, absl::Span<const int64_t> permutation) {
  XlaBuilder* b = operand.builder();
  return RunOp(b, "Transpose", [&]() -> absl::StatusOr<XlaOp> {
    AXLE_ASSIGN_OR_RETURN(const Shape* shape, b->GetShapePtr(operand));
    AXLE_ASSIGN_OR_RETURN(Shape result, ShapeInference::InferTransposeShape(*shape, permutation));
    return EmitWithDimensions(b, HloOpcode::kTranspose, result, {operand}, permutation);
  });
}

XlaOp Rev(XlaOp operand, absl::Span<const int64_t> dimensions) {
  XlaBuilder* b = operand.builder();
  return RunOp(b, "Rev", [&]() -> absl::StatusOr<XlaOp> {
    AXLE_ASSIGN_OR_RETURN(const Shape* shape, b->GetShapePtr(operand));
    AXLE_ASSIGN_OR_RETURN(Shape result, ShapeInference::InferReverseShape(*shape, dimensions));
    return EmitWithDimensions(b, HloOpcode::kReverse, result, {operand}, dimensions);
  });
}

// --- Slices and concatenation ---------------------------------------------------------

XlaOp Slice(XlaOp operand, absl::Span<const int64_t> start_indices,
            absl::Span<const int64_t> limit_indices, absl::Span<const int64_t> strides) {
  XlaBuilder* b = operand.builder();
  return RunOp(b, "Slice", [&]() -> absl::StatusOr<XlaOp> {
    AXLE_ASSIGN_OR_RETURN(const Shape* shape, b->GetShapePtr(operand));
    AXLE_ASSIGN_OR_RETURN(Shape result, ShapeInference::InferSliceShape(*shape, start_indices,
                                                                        limit_indices, strides));
    return Emit<HloSliceInstruction>(
        b, HloOpcode::kSlice, result, {operand}, [&](HloSliceInstruction* instruction) {
          SliceAttrs* attrs = instruction->mutable_attrs();
          attrs->starts.assign(start_indices.begin(), start_indices.end());
          attrs->limits.assign(limit_indices.begin(), limit_indices.end());
          attrs->strides.assign(strides.begin(), strides.end());
        });
  });
}

XlaOp SliceInDim(XlaOp operand, int64_t start_index, int64_t limit_index, int64_t stride,
                 int64_t dimno) {
  XlaBuilder* b = operand.builder();
  return RunOp(b, "SliceInDim", [&]() -> absl::StatusOr<XlaOp> {
    AXLE_ASSIGN_OR_RETURN(const Shape* shape, b->GetShapePtr(operand));
    AXLE_RETURN_IF_ERROR(CheckDimension(*shape, dimno, "dimno"));
    std::vector<int64_t> starts(shape->rank(), 0);
    std::vector<int64_t> limits = shape->dimensions();
    std::vector<int64_t> strides(shape->rank(), 1);
    starts[dimno] = start_index;
    limits[dimno] = limit_index;
    strides[dimno] = stride;
    return Slice(operand, starts, limits, strides);
  });
}

XlaOp DynamicSlice(XlaOp operand, absl::Span<const XlaOp> start_indices,
                   absl::Span<const int64_t> slice_sizes) {
  XlaBuilder* b = operand.builder();
  return RunOp(b, "DynamicSlice", [&]() -> absl::StatusOr<XlaOp> {
    AXLE_ASSIGN_OR_RETURN(const Shape* shape, b->GetShapePtr(operand));
    AXLE_ASSIGN_OR_RETURN(std::vector<Shape> index_shapes, b->GetOperandShapes(start_indices));
    AXLE_ASSIGN_OR_RETURN(
        Shape result, ShapeInference::InferDynamicSliceShape(*shape, index_shapes, slice_sizes));
    std::vector<XlaOp> operands = {operand};
    operands.insert(operands.end(), start_indices.begin(), start_indices.end());
    return Emit<HloDynamicSliceInstruction>(
        b, HloOpcode::kDynamicSlice, result, operands,
        [&](HloDynamicSliceInstruction* instruction) {
          instruction->mutable_attrs()->dynamic_slice_sizes.assign(slice_sizes.begin(),
                                                                   slice_sizes.end());
        });
  });
}

XlaOp DynamicUpdateSlice(XlaOp operand, XlaOp update, absl::Span<const XlaOp> start_indices) {
  XlaBuilder* b = BuilderOf({operand, update});
  return RunOp(b, "DynamicUpdateSlice", [&]() -> absl::StatusOr<XlaOp> {
    AXLE_ASSIGN_OR_RETURN(const Shape* shape, b->GetShapePtr(operand));
    AXLE_ASSIGN_OR_RETURN(const Shape* update_shape, b->GetShapePtr(update));
    AXLE_ASSIGN_OR_RETURN(std::vector<Shape> index_shapes, b->GetOperandShapes(start_indices));
    AXLE_ASSIGN_OR_RETURN(Shape result, ShapeInference::InferDynamicUpdateSliceShape(
                                            *shape, *update_shape, index_shapes));
    std::vector<XlaOp> operands = {operand, update};
    operands.insert(operands.end(), start_indices.begin(), start_indices.end());
    return Emit(b, HloOpcode::kDynamicUpdateSlice, result, operands);
  });
}

XlaOp ConcatInDim(XlaBuilder* builder, absl::Span<const XlaOp> operands, int64_t dimension) {
  return RunOp(builder, "ConcatInDim", [&]() -> absl::StatusOr<XlaOp> {
    if (operands.empty()) {
      return absl::InvalidArgumentError("expected at least one operand");
    }
    AXLE_ASSIGN_OR_RETURN(std::vector<const Shape*> shapes, OperandShapes(builder, operands));
    AXLE_ASSIGN_OR_RETURN(Shape result, ShapeInference::InferConcatOpShape(shapes, dimension));
    return EmitWithDimensions(builder, HloOpcode::kConcatenate, result, operands, {dimension});
  });
}

XlaOp Pad(XlaOp operand, XlaOp padding_value, const PaddingConfig& padding_config) {
  XlaBuilder* b = BuilderOf({operand, padding_value});
  return RunOp(b, "Pad", [&]() -> absl::StatusOr<XlaOp> {
    AXLE_ASSIGN_OR_RETURN(const Shape* shape, b->GetShapePtr(operand));
    AXLE_ASSIGN_OR_RETURN(const Shape* value_shape, b->GetShapePtr(padding_value));
    AXLE_ASSIGN_OR_RETURN(Shape result,
                          ShapeInference::InferPadShape(*shape, *value_shape, padding_config));
    return Emit<HloPadInstruction>(b, HloOpcode::kPad, result, {operand, padding_value},
                                   [&](HloPadInstruction* instruction) {
                                     instruction->mutable_attrs()->padding_config = padding_config;
                                   });
  });
}

XlaOp PadInDim(XlaOp operand, XlaOp padding_value, int64_t dimno, int64_t pad_lo, int64_t pad_hi) {
  XlaBuilder* b = BuilderOf({operand, padding_value});
  return RunOp(b, "PadInDim", [&]() -> absl::StatusOr<XlaOp> {
    AXLE_ASSIGN_OR_RETURN(const Shape* shape, b->GetShapePtr(operand));
    AXLE_RETURN_IF_ERROR(CheckDimension(*shape, dimno, "dimno"));
    PaddingConfig config;
    for (int64_t i = 0; i < shape->rank(); ++i) {
      PaddingConfig::PaddingConfigDimension* dim = config.add_dimensions();
      if (i == dimno) {
        dim->set_edge_padding_low(pad_lo);
        dim->set_edge_padding_high(pad_hi);
      }
    }
    return Pad(operand, padding_value, config);
  });
}

// --- Tuples ---------------------------------------------------------------------------

XlaOp Tuple(XlaBuilder* builder, absl::Span<const XlaOp> elements) {
  return RunOp(builder, "Tuple", [&]() -> absl::StatusOr<XlaOp> {
    AXLE_ASSIGN_OR_RETURN(std::vector<const Shape*> shapes, OperandShapes(builder, elements));
    AXLE_ASSIGN_OR_RETURN(Shape result,
                          ShapeInference::InferVariadicOpShape(HloOpcode::kTuple, shapes));
    return Emit(builder, HloOpcode::kTuple, result, elements);
  });
}

XlaOp GetTupleElement(XlaOp tuple_data, int64_t index) {
  XlaBuilder* b = tuple_data.builder();
  return RunOp(b, "GetTupleElement", [&]() -> absl::StatusOr<XlaOp> {
    AXLE_ASSIGN_OR_RETURN(const Shape* shape, b->GetShapePtr(tuple_data));
    AXLE_ASSIGN_OR_RETURN(Shape result, ShapeInference::InferGetTupleElementShape(*shape, index));
    return Emit<HloGetTupleElementInstruction>(b, HloOpcode::kGetTupleElement, result, {tuple_data},
                                               [&](HloGetTupleElementInstruction* instruction) {
                                                 instruction->mutable_attrs()->tuple_index = index;
                                               });
  });
}

// --- Gather -----------------------------------------------------------------------------

XlaOp Gather(XlaOp input, XlaOp start_indices, const GatherDimensionNumbers& dimension_numbers,
             absl::Span<const int64_t> slice_sizes, bool indices_are_sorted) {
  XlaBuilder* b = BuilderOf({input, start_indices});
  return RunOp(b, "Gather", [&]() -> absl::StatusOr<XlaOp> {
    AXLE_ASSIGN_OR_RETURN(const Shape* shape, b->GetShapePtr(input));
    AXLE_ASSIGN_OR_RETURN(const Shape* indices_shape, b->GetShapePtr(start_indices));
    AXLE_ASSIGN_OR_RETURN(
        Shape result,
        ShapeInference::InferGatherShape(*shape, *indices_shape, dimension_numbers, slice_sizes));
    return Emit<HloGatherInstruction>(b, HloOpcode::kGather, result, {input, start_indices},
                                      [&](HloGatherInstruction* instruction) {
                                        GatherAttrs* attrs = instruction->mutable_attrs();
                                        attrs->gather_dimension_numbers = dimension_numbers;
                                        attrs->slice_sizes.assign(slice_sizes.begin(),
                                                                  slice_sizes.end());
                                        attrs->indices_are_sorted = indices_are_sorted;
                                      });
  });
}

// --- Dynamic sizes ----------------------------------------------------------------------

XlaOp GetDimensionSize(XlaOp operand, int64_t dimension) {
  XlaBuilder* b = operand.builder();
  return RunOp(b, "GetDimensionSize", [&]() -> absl::StatusOr<XlaOp> {
    AXLE_ASSIGN_OR_RETURN(const Shape* shape, b->GetShapePtr(operand));
    AXLE_ASSIGN_OR_RETURN(Shape result,
                          ShapeInference::InferGetDimensionSizeShape(*shape, dimension));
    return EmitWithDimensions(b, HloOpcode::kGetDimensionSize, result, {operand}, {dimension});
  });
}

XlaOp SetDimensionSize(XlaOp operand, XlaOp val, int64_t dimension) {
  XlaBuilder* b = BuilderOf({operand, val});
  return RunOp(b, "SetDimensionSize", [&]() -> absl::StatusOr<XlaOp> {
    AXLE_ASSIGN_OR_RETURN(const Shape* shape, b->GetShapePtr(operand));
    AXLE_ASSIGN_OR_RETURN(const Shape* val_shape, b->GetShapePtr(val));
    AXLE_ASSIGN_OR_RETURN(
        Shape result, ShapeInference::InferSetDimensionSizeShape(*shape, *val_shape, dimension));
    return EmitWithDimensions(b, HloOpcode::kSetDimensionSize, result, {operand, val}, {dimension});
  });
}

}  // namespace axle
