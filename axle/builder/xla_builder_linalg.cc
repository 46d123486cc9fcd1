// Linear algebra and numerics: dot, convolution, fft, cholesky, triangular
// solve, batch norm, random numbers.
#include "absl/strings/str_cat.h"
#include "axle/base/status_macros.h"
#include "axle/builder/xla_builder.h"
#include "axle/builder/xla_builder_internal.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/shape_inference/shape_inference.h"

namespace axle {

using builder_internal::BuilderOf;
using builder_internal::Emit;
using builder_internal::RunOp;

// --- Dot ---------------------------------------------------------------------------

XlaOp Dot(XlaOp lhs, XlaOp rhs, const PrecisionConfig* precision_config,
          std::optional<PrimitiveType> preferred_element_type) {
  XlaBuilder* b = BuilderOf({lhs, rhs});
  return RunOp(b, "Dot", [&]() -> absl::StatusOr<XlaOp> {
    AXLE_ASSIGN_OR_RETURN(const Shape* lhs_shape, b->GetShapePtr(lhs));
    if (!lhs_shape->IsArray()) {
      return absl::InvalidArgumentError(
          absl::StrCat("expected an array lhs; got ", ShapeUtil::HumanString(*lhs_shape)));
    }
    DotDimensionNumbers dimension_numbers;
    dimension_numbers.add_lhs_contracting_dimensions(lhs_shape->rank() <= 1 ? 0 : 1);
    dimension_numbers.add_rhs_contracting_dimensions(0);
    return DotGeneral(lhs, rhs, dimension_numbers, precision_config, preferred_element_type);
  });
}

XlaOp DotGeneral(XlaOp lhs, XlaOp rhs, const DotDimensionNumbers& dimension_numbers,
                 const PrecisionConfig* precision_config,
                 std::optional<PrimitiveType> preferred_element_type) {
  XlaBuilder* b = BuilderOf({lhs, rhs});
  return RunOp(b, "DotGeneral", [&]() -> absl::StatusOr<XlaOp> {
    AXLE_ASSIGN_OR_RETURN(const Shape* lhs_shape, b->GetShapePtr(lhs));
    AXLE_ASSIGN_OR_RETURN(const Shape* rhs_shape, b->GetShapePtr(rhs));
    AXLE_ASSIGN_OR_RETURN(Shape result,
                          ShapeInference::InferDotOpShape(*lhs_shape, *rhs_shape, dimension_numbers,
                                                          preferred_element_type));
    return Emit<HloDotInstruction>(b, HloOpcode::kDot, result, {lhs, rhs},
                                   [&](HloDotInstruction* instruction) {
                                     DotAttrs* attrs = instruction->mutable_attrs();
                                     attrs->dot_dimension_numbers = dimension_numbers;
                                     if (precision_config != nullptr) {
                                       attrs->precision_config = *precision_config;
                                     }
                                   });
  });
}

// --- Convolution --------------------------------------------------------------------

XlaOp ConvGeneralDilated(XlaOp lhs, XlaOp rhs, absl::Span<const int64_t> window_strides,
                         absl::Span<const std::pair<int64_t, int64_t>> padding,
                         absl::Span<const int64_t> lhs_dilation,
                         absl::Span<const int64_t> rhs_dilation,
                         const ConvolutionDimensionNumbers& dimension_numbers,
                         int64_t feature_group_count, int64_t batch_group_count,
                         const PrecisionConfig* precision_config,
                         std::optional<PrimitiveType> preferred_element_type,
                         std::optional<std::vector<bool>> window_reversal) {
  XlaBuilder* b = BuilderOf({lhs, rhs});
  return RunOp(b, "ConvGeneralDilated", [&]() -> absl::StatusOr<XlaOp> {
    AXLE_ASSIGN_OR_RETURN(const Shape* lhs_shape, b->GetShapePtr(lhs));
    AXLE_ASSIGN_OR_RETURN(const Shape* rhs_shape, b->GetShapePtr(rhs));
    AXLE_RETURN_IF_ERROR(XlaBuilder::Validate(dimension_numbers));
    const int64_t num_spatial = dimension_numbers.input_spatial_dimensions_size();
    for (const Shape* shape : {lhs_shape, rhs_shape}) {
      if (!shape->IsArray() || shape->rank() != num_spatial + 2) {
        return absl::InvalidArgumentError(absl::StrCat("the dimension numbers have ", num_spatial,
                                                       " spatial dimensions, so lhs and rhs must "
                                                       "be arrays of rank ",
                                                       num_spatial + 2, "; got ",
                                                       ShapeUtil::HumanString(*lhs_shape), " and ",
                                                       ShapeUtil::HumanString(*rhs_shape)));
      }
    }
    std::vector<int64_t> window_dimensions;
    for (int64_t d : dimension_numbers.kernel_spatial_dimensions()) {
      if (d >= rhs_shape->rank()) {
        return absl::InvalidArgumentError(absl::StrCat("kernel spatial dimension ", d,
                                                       " is out of range for rhs ",
                                                       ShapeUtil::HumanString(*rhs_shape)));
      }
      window_dimensions.push_back(rhs_shape->dimensions(d));
    }
    AXLE_ASSIGN_OR_RETURN(
        Window window, builder_internal::MakeWindow(window_dimensions, window_strides, padding,
                                                    lhs_dilation, rhs_dilation, window_reversal));
    AXLE_ASSIGN_OR_RETURN(
        Shape result, ShapeInference::InferConvolveShape(
                          *lhs_shape, *rhs_shape, feature_group_count, batch_group_count, window,
                          dimension_numbers, preferred_element_type));
    return Emit<HloConvolutionInstruction>(b, HloOpcode::kConvolution, result, {lhs, rhs},
                                           [&](HloConvolutionInstruction* instruction) {
                                             ConvolutionAttrs* attrs = instruction->mutable_attrs();
                                             attrs->window = window;
                                             attrs->convolution_dimension_numbers =
                                                 dimension_numbers;
                                             attrs->feature_group_count = feature_group_count;
                                             attrs->batch_group_count = batch_group_count;
                                             if (precision_config != nullptr)
                                               attrs->precision_config = *precision_config;
                                           });
  });
}

XlaOp ConvGeneral(XlaOp lhs, XlaOp rhs, absl::Span<const int64_t> window_strides,
                  absl::Span<const std::pair<int64_t, int64_t>> padding,
                  const ConvolutionDimensionNumbers& dimension_numbers, int64_t feature_group_count,
                  int64_t batch_group_count, const PrecisionConfig* precision_config,
                  std::optional<PrimitiveType> preferred_element_type) {
  return ConvGeneralDilated(lhs, rhs, window_strides, padding, {}, {}, dimension_numbers,
                            feature_group_count, batch_group_count, precision_config,
                            preferred_element_type);
}

XlaOp ConvWithGeneralDimensions(XlaOp lhs, XlaOp rhs, absl::Span<const int64_t> window_strides,
                                Padding padding,
                                const ConvolutionDimensionNumbers& dimension_numbers,
                                int64_t feature_group_count, int64_t batch_group_count,
                                const PrecisionConfig* precision_config,
                                std::optional<PrimitiveType> preferred_element_type) {
  XlaBuilder* b = BuilderOf({lhs, rhs});
  return RunOp(b, "ConvWithGeneralDimensions", [&]() -> absl::StatusOr<XlaOp> {
    AXLE_ASSIGN_OR_RETURN(const Shape* lhs_shape, b->GetShapePtr(lhs));
    AXLE_ASSIGN_OR_RETURN(const Shape* rhs_shape, b->GetShapePtr(rhs));
    AXLE_RETURN_IF_ERROR(XlaBuilder::Validate(dimension_numbers));
    std::vector<int64_t> base_area, window_area;
    for (int64_t i = 0; i < dimension_numbers.input_spatial_dimensions_size(); ++i) {
      int64_t in = dimension_numbers.input_spatial_dimensions(i);
      int64_t kernel = dimension_numbers.kernel_spatial_dimensions(i);
      if (!lhs_shape->IsArray() || !rhs_shape->IsArray() || in >= lhs_shape->rank() ||
          kernel >= rhs_shape->rank()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "the dimension numbers do not fit lhs ", ShapeUtil::HumanString(*lhs_shape),
            " and rhs ", ShapeUtil::HumanString(*rhs_shape)));
      }
      base_area.push_back(lhs_shape->dimensions(in));
      window_area.push_back(rhs_shape->dimensions(kernel));
    }
    AXLE_RETURN_IF_ERROR(ValidatePaddingValues(base_area, window_area, window_strides));
    return ConvGeneral(lhs, rhs, window_strides,
                       MakePadding(base_area, window_area, window_strides, padding),
                       dimension_numbers, feature_group_count, batch_group_count, precision_config,
                       preferred_element_type);
  });
}

XlaOp Conv(XlaOp lhs, XlaOp rhs, absl::Span<const int64_t> window_strides, Padding padding,
           int64_t feature_group_count, int64_t batch_group_count,
           const PrecisionConfig* precision_config,
           std::optional<PrimitiveType> preferred_element_type) {
  return ConvWithGeneralDimensions(
      lhs, rhs, window_strides, padding,
      XlaBuilder::CreateDefaultConvDimensionNumbers(static_cast<int>(window_strides.size())),
      feature_group_count, batch_group_count, precision_config, preferred_element_type);
}

XlaOp ConvWithGeneralPadding(XlaOp lhs, XlaOp rhs, absl::Span<const int64_t> window_strides,
                             absl::Span<const std::pair<int64_t, int64_t>> padding,
                             int64_t feature_group_count, int64_t batch_group_count,
                             const PrecisionConfig* precision_config,
                             std::optional<PrimitiveType> preferred_element_type) {
  return ConvGeneral(
      lhs, rhs, window_strides, padding,
      XlaBuilder::CreateDefaultConvDimensionNumbers(static_cast<int>(window_strides.size())),
      feature_group_count, batch_group_count, precision_config, preferred_element_type);
}

// --- FFT and factorizations ----------------------------------------------------------

XlaOp Fft(XlaOp operand, FftType fft_type, absl::Span<const int64_t> fft_length) {
  XlaBuilder* b = operand.builder();
  return RunOp(b, "Fft", [&]() -> absl::StatusOr<XlaOp> {
    AXLE_ASSIGN_OR_RETURN(const Shape* shape, b->GetShapePtr(operand));
    AXLE_ASSIGN_OR_RETURN(Shape result,
                          ShapeInference::InferFftShape(*shape, fft_type, fft_length));
    return Emit<HloFftInstruction>(
        b, HloOpcode::kFft, result, {operand}, [&](HloFftInstruction* instruction) {
          instruction->mutable_attrs()->fft_type = fft_type;
          instruction->mutable_attrs()->fft_length.assign(fft_length.begin(), fft_length.end());
        });
  });
}

XlaOp Cholesky(XlaOp a, bool lower) {
  XlaBuilder* b = a.builder();
  return RunOp(b, "Cholesky", [&]() -> absl::StatusOr<XlaOp> {
    AXLE_ASSIGN_OR_RETURN(const Shape* shape, b->GetShapePtr(a));
    AXLE_ASSIGN_OR_RETURN(Shape result, ShapeInference::InferCholeskyShape(*shape));
    return Emit<HloCholeskyInstruction>(b, HloOpcode::kCholesky, result, {a},
                                        [&](HloCholeskyInstruction* instruction) {
                                          instruction->mutable_attrs()->options.set_lower(lower);
                                        });
  });
}

XlaOp TriangularSolve(XlaOp a, XlaOp b_op, bool left_side, bool lower, bool unit_diagonal,
                      TriangularSolveOptions::Transpose transpose_a) {
  XlaBuilder* b = BuilderOf({a, b_op});
  return RunOp(b, "TriangularSolve", [&]() -> absl::StatusOr<XlaOp> {
    AXLE_ASSIGN_OR_RETURN(const Shape* a_shape, b->GetShapePtr(a));
    AXLE_ASSIGN_OR_RETURN(const Shape* b_shape, b->GetShapePtr(b_op));
    TriangularSolveOptions options;
    options.set_left_side(left_side);
    options.set_lower(lower);
    options.set_unit_diagonal(unit_diagonal);
    options.set_transpose_a(transpose_a);
    AXLE_ASSIGN_OR_RETURN(Shape result,
                          ShapeInference::InferTriangularSolveShape(*a_shape, *b_shape, options));
    return Emit<HloTriangularSolveInstruction>(b, HloOpcode::kTriangularSolve, result, {a, b_op},
                                               [&](HloTriangularSolveInstruction* instruction) {
                                                 instruction->mutable_attrs()->options = options;
                                               });
  });
}

// --- Batch norm ------------------------------------------------------------------------

namespace {
absl::StatusOr<XlaOp> EmitBatchNorm(XlaBuilder* b, HloOpcode opcode, const Shape& shape,
                                    absl::Span<const XlaOp> operands, float epsilon,
                                    int64_t feature_index) {
  return Emit<HloBatchNormInstruction>(
      b, opcode, shape, operands, [&](HloBatchNormInstruction* instruction) {
        instruction->mutable_attrs()->epsilon = epsilon;
        instruction->mutable_attrs()->feature_index = feature_index;
      });
}
}  // namespace

XlaOp BatchNormTraining(XlaOp operand, XlaOp scale, XlaOp offset, float epsilon,
                        int64_t feature_index) {
  XlaBuilder* b = BuilderOf({operand, scale, offset});
  return RunOp(b, "BatchNormTraining", [&]() -> absl::StatusOr<XlaOp> {
    AXLE_ASSIGN_OR_RETURN(auto shapes,
                          builder_internal::OperandShapes(b, {operand, scale, offset}));
    AXLE_ASSIGN_OR_RETURN(Shape result, ShapeInference::InferBatchNormTrainingShape(
                                            *shapes[0], *shapes[1], *shapes[2], feature_index));
    return EmitBatchNorm(b, HloOpcode::kBatchNormTraining, result, {operand, scale, offset},
                         epsilon, feature_index);
  });
}

XlaOp BatchNormInference(XlaOp operand, XlaOp scale, XlaOp offset, XlaOp mean, XlaOp variance,
                         float epsilon, int64_t feature_index) {
  XlaBuilder* b = BuilderOf({operand, scale, offset, mean, variance});
  return RunOp(b, "BatchNormInference", [&]() -> absl::StatusOr<XlaOp> {
    std::vector<XlaOp> operands = {operand, scale, offset, mean, variance};
    AXLE_ASSIGN_OR_RETURN(auto shapes, builder_internal::OperandShapes(b, operands));
    AXLE_ASSIGN_OR_RETURN(Shape result, ShapeInference::InferBatchNormInferenceShape(
                                            *shapes[0], *shapes[1], *shapes[2], *shapes[3],
                                            *shapes[4], feature_index));
    return EmitBatchNorm(b, HloOpcode::kBatchNormInference, result, operands, epsilon,
                         feature_index);
  });
}

XlaOp BatchNormGrad(XlaOp operand, XlaOp scale, XlaOp batch_mean, XlaOp batch_var,
                    XlaOp grad_output, float epsilon, int64_t feature_index) {
  XlaBuilder* b = BuilderOf({operand, scale, batch_mean, batch_var, grad_output});
  return RunOp(b, "BatchNormGrad", [&]() -> absl::StatusOr<XlaOp> {
    std::vector<XlaOp> operands = {operand, scale, batch_mean, batch_var, grad_output};
    AXLE_ASSIGN_OR_RETURN(auto shapes, builder_internal::OperandShapes(b, operands));
    AXLE_ASSIGN_OR_RETURN(Shape result, ShapeInference::InferBatchNormGradShape(
                                            *shapes[0], *shapes[1], *shapes[2], *shapes[3],
                                            *shapes[4], feature_index));
    return EmitBatchNorm(b, HloOpcode::kBatchNormGrad, result, operands, epsilon, feature_index);
  });
}

// --- Random numbers --------------------------------------------------------------------

namespace {
XlaOp RngOp(RandomDistribution distribution, XlaOp a, XlaOp b_op, const Shape& shape,
            absl::string_view op_name) {
  XlaBuilder* b = BuilderOf({a, b_op});
  return RunOp(b, op_name, [&]() -> absl::StatusOr<XlaOp> {
    AXLE_ASSIGN_OR_RETURN(const Shape* a_shape, b->GetShapePtr(a));
    AXLE_ASSIGN_OR_RETURN(const Shape* b_shape, b->GetShapePtr(b_op));
    AXLE_ASSIGN_OR_RETURN(Shape validated, builder_internal::ValidatedShape(shape));
    AXLE_ASSIGN_OR_RETURN(
        Shape result, ShapeInference::InferRngShape(*a_shape, *b_shape, distribution, validated));
    return Emit<HloRngInstruction>(b, HloOpcode::kRng, result, {a, b_op},
                                   [&](HloRngInstruction* instruction) {
                                     instruction->mutable_attrs()->distribution = distribution;
                                   });
  });
}
}  // namespace

XlaOp RngNormal(XlaOp mu, XlaOp sigma, const Shape& shape) {
  return RngOp(RNG_NORMAL, mu, sigma, shape, "RngNormal");
}

XlaOp RngUniform(XlaOp a, XlaOp b, const Shape& shape) {
  return RngOp(RNG_UNIFORM, a, b, shape, "RngUniform");
}

XlaOp RngBitGenerator(RandomAlgorithm algorithm, XlaOp initial_state, const Shape& shape) {
  XlaBuilder* b = initial_state.builder();
  return RunOp(b, "RngBitGenerator", [&]() -> absl::StatusOr<XlaOp> {
    AXLE_ASSIGN_OR_RETURN(const Shape* state_shape, b->GetShapePtr(initial_state));
    AXLE_ASSIGN_OR_RETURN(Shape validated, builder_internal::ValidatedShape(shape));
    AXLE_ASSIGN_OR_RETURN(Shape result,
                          ShapeInference::InferRngBitGeneratorShape(*state_shape, validated));
    return Emit<HloRngBitGeneratorInstruction>(
        b, HloOpcode::kRngBitGenerator, result, {initial_state},
        [&](HloRngBitGeneratorInstruction* instruction) {
          instruction->mutable_attrs()->algorithm = algorithm;
        });
  });
}

}  // namespace axle
