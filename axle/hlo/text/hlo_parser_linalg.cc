//===- hlo_parser_linalg.cc - Dot, convolution, gather, scatter, ... ------===//
//
// CreateLinearAlgebraOp (see hlo_parser_instructions.cc): the ops whose
// attributes are dimension numbers (dot, ragged and scaled too, convolution,
// gather, scatter), and fft, cholesky, triangular-solve and the batch norms.
//
//===----------------------------------------------------------------------===//
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "axle/hlo/shape_inference/shape_inference.h"
#include "axle/hlo/text/hlo_parser_internal.h"

namespace axle {
namespace hlo_parser_internal {

HloInstruction* HloParserImpl::CreateLinearAlgebraOp(NewInstruction& n) {
  switch (n.opcode) {
    case HloOpcode::kFft: {
      std::optional<int> fft_type;
      std::optional<std::vector<int64_t>> fft_length;
      n.attrs["fft_type"] = EnumAttr(true, {"FFT", "IFFT", "RFFT", "IRFFT"}, &fft_type);
      n.attrs["fft_length"] = Int64ListAttr(true, &fft_length);
      if (!ParseOperandsOf(n, 1) || !ParseAttributesOf(n) || !RequireShape(n)) return nullptr;
      auto fft = std::make_unique<HloFftInstruction>(n.opcode, *n.shape, n.operands);
      fft->mutable_attrs()->fft_type = static_cast<FftType>(*fft_type);
      fft->mutable_attrs()->fft_length = *fft_length;
      return Add(std::move(fft));
    }
    case HloOpcode::kTriangularSolve: {
      std::optional<bool> left_side, lower, unit_diagonal;
      std::optional<int> transpose_a;
      n.attrs["left_side"] = BoolAttr(false, &left_side);
      n.attrs["lower"] = BoolAttr(false, &lower);
      n.attrs["unit_diagonal"] = BoolAttr(false, &unit_diagonal);
      n.attrs["transpose_a"] = EnumAttr(
          false, {"TRANSPOSE_INVALID", "NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"}, &transpose_a);
      if (!ParseOperandsOf(n, 2) || !ParseAttributesOf(n)) return nullptr;
      TriangularSolveOptions options;
      options.set_left_side(left_side.value_or(false));
      options.set_lower(lower.value_or(false));
      options.set_unit_diagonal(unit_diagonal.value_or(false));
      options.set_transpose_a(transpose_a.has_value()
                                  ? static_cast<TriangularSolveOptions::Transpose>(*transpose_a)
                                  : TriangularSolveOptions::NO_TRANSPOSE);
      if (!InferShape(n, [&] {
            return ShapeInference::InferTriangularSolveShape(n.operands[0]->shape(),
                                                             n.operands[1]->shape(), options);
          })) {
        return nullptr;
      }
      auto solve = std::make_unique<HloTriangularSolveInstruction>(n.opcode, *n.shape, n.operands);
      solve->mutable_attrs()->options = options;
      return Add(std::move(solve));
    }
    case HloOpcode::kCholesky: {
      std::optional<bool> lower;
      n.attrs["lower"] = BoolAttr(false, &lower);
      if (!ParseOperandsOf(n, 1) || !ParseAttributesOf(n)) return nullptr;
      if (!InferShape(n,
                      [&] { return ShapeInference::InferCholeskyShape(n.operands[0]->shape()); })) {
        return nullptr;
      }
      auto cholesky = std::make_unique<HloCholeskyInstruction>(n.opcode, *n.shape, n.operands);
      cholesky->mutable_attrs()->options.set_lower(lower.value_or(false));
      return Add(std::move(cholesky));
    }
    case HloOpcode::kBatchNormTraining:
    case HloOpcode::kBatchNormInference:
    case HloOpcode::kBatchNormGrad: {
      std::optional<float> epsilon;
      std::optional<int64_t> feature_index;
      n.attrs["epsilon"] = FloatAttr(true, &epsilon);
      n.attrs["feature_index"] = Int64Attr(true, &feature_index);
      if (!ParseOperandsOf(n, n.opcode == HloOpcode::kBatchNormTraining ? 3 : 5) ||
          !ParseAttributesOf(n)) {
        return nullptr;
      }
      if (!InferShape(n, [&]() -> absl::StatusOr<Shape> {
            auto operand = [&](size_t i) -> const Shape& { return n.operands[i]->shape(); };
            if (n.opcode == HloOpcode::kBatchNormTraining) {
              return ShapeInference::InferBatchNormTrainingShape(operand(0), operand(1), operand(2),
                                                                 *feature_index);
            }
            if (n.opcode == HloOpcode::kBatchNormInference) {
              return ShapeInference::InferBatchNormInferenceShape(
                  operand(0), operand(1), operand(2), operand(3), operand(4), *feature_index);
            }
            return ShapeInference::InferBatchNormGradShape(operand(0), operand(1), operand(2),
                                                           operand(3), operand(4), *feature_index);
          })) {
        return nullptr;
      }
      auto bn = std::make_unique<HloBatchNormInstruction>(n.opcode, *n.shape, n.operands);
      bn->mutable_attrs()->epsilon = *epsilon;
      bn->mutable_attrs()->feature_index = *feature_index;
      return Add(std::move(bn));
    }
    case HloOpcode::kConvolution: {
      std::optional<Window> window;
      std::optional<ConvolutionDimensionNumbers> dnums;
      std::optional<int64_t> feature_group_count, batch_group_count;
      std::optional<std::vector<PrecisionConfig::Precision>> precision;
      std::optional<int> conv_kind;
      n.attrs["window"] = WindowAttr(false, &window);
      n.attrs["dim_labels"] = DimLabelsAttr(true, &dnums);
      n.attrs["feature_group_count"] = Int64Attr(false, &feature_group_count);
      n.attrs["batch_group_count"] = Int64Attr(false, &batch_group_count);
      n.attrs["operand_precision"] = PrecisionListAttr(false, &precision);
      AttrSpec conv_kind_spec = EnumAttr(false, {"fprop", "wgrad", "dgrad", "unset"}, &conv_kind);
      n.attrs["conv_kind"] = Raw("conv_kind", false, conv_kind_spec.parse);
      n.attrs["convolution_kind"] = Raw("convolution_kind", false, conv_kind_spec.parse);
      n.attrs["sparsity_config"] = RawAny("sparsity_config");
      if (!ParseOperandsOf(n, 2) || !ParseAttributesOf(n) || !RequireShape(n)) return nullptr;
      auto conv = std::make_unique<HloConvolutionInstruction>(n.opcode, *n.shape, n.operands);
      ConvolutionAttrs* a = conv->mutable_attrs();
      a->window = window.value_or(Window());
      a->convolution_dimension_numbers = *dnums;
      a->feature_group_count = feature_group_count.value_or(1);
      a->batch_group_count = batch_group_count.value_or(1);
      a->precision_config = MakePrecisionConfig(precision, n.operands.size());
      return Add(std::move(conv));
    }
    case HloOpcode::kDot:
    case HloOpcode::kRaggedDot:
    case HloOpcode::kScaledDot: {
      std::optional<std::vector<int64_t>> lhs_contracting, rhs_contracting, lhs_batch, rhs_batch,
          lhs_ragged, rhs_group;
      std::optional<std::vector<PrecisionConfig::Precision>> precision;
      std::optional<PrecisionConfig::Algorithm> algorithm;
      n.attrs["lhs_contracting_dims"] = Int64ListAttr(false, &lhs_contracting);
      n.attrs["rhs_contracting_dims"] = Int64ListAttr(false, &rhs_contracting);
      n.attrs["lhs_batch_dims"] = Int64ListAttr(false, &lhs_batch);
      n.attrs["rhs_batch_dims"] = Int64ListAttr(false, &rhs_batch);
      n.attrs["operand_precision"] = PrecisionListAttr(false, &precision);
      if (n.opcode == HloOpcode::kRaggedDot) {
        n.attrs["lhs_ragged_dims"] = Int64ListAttr(false, &lhs_ragged);
        n.attrs["rhs_group_dims"] = Int64ListAttr(false, &rhs_group);
      } else {
        n.attrs["algorithm"] = {false, [&] {
                                  PrecisionConfig::Algorithm a;
                                  if (!ParseAlgorithm(&a)) return false;
                                  algorithm = a;
                                  return true;
                                }};
      }
      int64_t expected = n.opcode == HloOpcode::kDot         ? -1
                         : n.opcode == HloOpcode::kRaggedDot ? 3
                                                             : 4;
      if (!ParseOperandsOf(n, expected) || !ParseAttributesOf(n)) return nullptr;
      if (n.operands.size() < 2) return FailOperands(n, "dot needs two operands");
      DotDimensionNumbers dnums;
      if (lhs_contracting) *dnums.mutable_lhs_contracting_dimensions() = *lhs_contracting;
      if (rhs_contracting) *dnums.mutable_rhs_contracting_dimensions() = *rhs_contracting;
      if (lhs_batch) *dnums.mutable_lhs_batch_dimensions() = *lhs_batch;
      if (rhs_batch) *dnums.mutable_rhs_batch_dimensions() = *rhs_batch;
      // scaled-dot's operands are (lhs, rhs, lhs_scale, rhs_scale), as XLA's.
      if (n.opcode == HloOpcode::kRaggedDot) {
        if (!RequireShape(n)) return nullptr;
      } else if (!InferShape(n, [&]() -> absl::StatusOr<Shape> {
                   if (n.opcode == HloOpcode::kScaledDot) {
                     if (n.operands.size() != 4) {
                       return absl::InvalidArgumentError("scaled-dot needs four operands");
                     }
                     return ShapeInference::InferScaledDotOpShape(
                         n.operands[0]->shape(), n.operands[1]->shape(), n.operands[2]->shape(),
                         n.operands[3]->shape(), dnums, std::nullopt);
                   }
                   return ShapeInference::InferDotOpShape(
                       n.operands[0]->shape(), n.operands[1]->shape(), dnums, std::nullopt);
                 })) {
        return nullptr;
      }
      auto dot = std::make_unique<HloDotInstruction>(n.opcode, *n.shape, n.operands);
      DotAttrs* a = dot->mutable_attrs();
      a->dot_dimension_numbers = dnums;
      if (lhs_ragged) a->lhs_ragged_dimensions = *lhs_ragged;
      if (rhs_group) a->rhs_group_dimensions = *rhs_group;
      a->precision_config =
          MakePrecisionConfig(precision, n.opcode == HloOpcode::kDot ? n.operands.size() : 2);
      if (algorithm.has_value()) a->precision_config.set_algorithm(*algorithm);
      return Add(std::move(dot));
    }
    case HloOpcode::kGather: {
      std::optional<std::vector<int64_t>> offset_dims, collapsed, start_index_map, slice_sizes,
          operand_batching, indices_batching;
      std::optional<int64_t> index_vector_dim;
      std::optional<bool> sorted;
      n.attrs["offset_dims"] = Int64ListAttr(true, &offset_dims);
      n.attrs["collapsed_slice_dims"] = Int64ListAttr(true, &collapsed);
      n.attrs["start_index_map"] = Int64ListAttr(true, &start_index_map);
      n.attrs["index_vector_dim"] = Int64Attr(true, &index_vector_dim);
      n.attrs["slice_sizes"] = Int64ListAttr(true, &slice_sizes);
      n.attrs["indices_are_sorted"] = BoolAttr(false, &sorted);
      n.attrs["operand_batching_dims"] = Int64ListAttr(false, &operand_batching);
      n.attrs["start_indices_batching_dims"] = Int64ListAttr(false, &indices_batching);
      if (!ParseOperandsOf(n, 2) || !ParseAttributesOf(n) || !RequireShape(n)) return nullptr;
      auto gather = std::make_unique<HloGatherInstruction>(n.opcode, *n.shape, n.operands);
      GatherDimensionNumbers& d = gather->mutable_attrs()->gather_dimension_numbers;
      *d.mutable_offset_dims() = *offset_dims;
      *d.mutable_collapsed_slice_dims() = *collapsed;
      *d.mutable_start_index_map() = *start_index_map;
      d.set_index_vector_dim(*index_vector_dim);
      if (operand_batching) *d.mutable_operand_batching_dims() = *operand_batching;
      if (indices_batching) *d.mutable_start_indices_batching_dims() = *indices_batching;
      gather->mutable_attrs()->slice_sizes = *slice_sizes;
      gather->mutable_attrs()->indices_are_sorted = sorted.value_or(false);
      return Add(std::move(gather));
    }
    case HloOpcode::kScatter: {
      std::optional<std::vector<int64_t>> update_window_dims, inserted, to_operand_dims,
          input_batching, indices_batching;
      std::optional<int64_t> index_vector_dim;
      std::optional<HloComputation*> to_apply;
      std::optional<bool> sorted, unique;
      n.attrs["update_window_dims"] = Int64ListAttr(true, &update_window_dims);
      n.attrs["inserted_window_dims"] = Int64ListAttr(true, &inserted);
      n.attrs["scatter_dims_to_operand_dims"] = Int64ListAttr(true, &to_operand_dims);
      n.attrs["index_vector_dim"] = Int64Attr(true, &index_vector_dim);
      n.attrs["to_apply"] = ComputationAttr(true, &to_apply);
      n.attrs["indices_are_sorted"] = BoolAttr(false, &sorted);
      n.attrs["unique_indices"] = BoolAttr(false, &unique);
      n.attrs["input_batching_dims"] = Int64ListAttr(false, &input_batching);
      n.attrs["scatter_indices_batching_dims"] = Int64ListAttr(false, &indices_batching);
      if (!ParseOperandsOf(n) || !ParseAttributesOf(n)) return nullptr;
      if (n.operands.size() % 2 == 0) {
        return FailOperands(n, absl::StrCat("expects an odd number of operands, but has ",
                                            n.operands.size(), " operands"));
      }
      ScatterDimensionNumbers d;
      *d.mutable_update_window_dims() = *update_window_dims;
      *d.mutable_inserted_window_dims() = *inserted;
      *d.mutable_scatter_dims_to_operand_dims() = *to_operand_dims;
      d.set_index_vector_dim(*index_vector_dim);
      if (input_batching) *d.mutable_input_batching_dims() = *input_batching;
      if (indices_batching) *d.mutable_scatter_indices_batching_dims() = *indices_batching;
      if (!InferShape(n, [&]() -> absl::StatusOr<Shape> {
            absl::StatusOr<ProgramShape> signature =
                ShapeInference::ComputationSignature(**to_apply);
            if (!signature.ok()) return signature.status();
            return ShapeInference::InferScatterShape(
                OperandShapes(n.operands, 0, n.operands.size()), *signature, d);
          })) {
        return nullptr;
      }
      auto scatter = std::make_unique<HloScatterInstruction>(n.opcode, *n.shape, n.operands);
      scatter->mutable_attrs()->scatter_dimension_numbers = d;
      scatter->mutable_attrs()->indices_are_sorted = sorted.value_or(false);
      scatter->mutable_attrs()->unique_indices = unique.value_or(false);
      scatter->AppendCalledComputation(*to_apply);
      return Add(std::move(scatter));
    }
    default:
      return Unsupported(n);
  }
}

}  // namespace hlo_parser_internal
}  // namespace axle
