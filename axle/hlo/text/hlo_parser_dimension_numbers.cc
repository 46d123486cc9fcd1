//===- hlo_parser_dimension_numbers.cc - dot, convolution, gather, scatter -===//
//
// The ops whose attributes are dimension numbers: dot (ragged and scaled
// too), convolution, gather and scatter. Operands, accepted attributes and
// XLA's checks as in hlo_parser_instructions.cc, which sends these opcodes
// here.
//
//===----------------------------------------------------------------------===//
#include <functional>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "axle/core/shape_util.h"
#include "axle/hlo/text/hlo_parser_internal.h"

namespace axle {
namespace hlo_parser_internal {

using Operands = std::vector<HloInstruction*>;

HloInstruction* HloParserImpl::CreateWithDimensionNumbers(std::optional<Shape> shape,
                                                          HloOpcode opcode, AttrMap& attrs,
                                                          bool allow_attributes,
                                                          size_t opcode_offset,
                                                          const Operands* preset) {
  Operands operands;
  size_t operands_offset = lexer_.token_start();
  // -1: any number of operands.
  auto parse_operands = [&](int64_t expected = -1) {
    return TakeOrParseOperands(preset, expected, opcode_offset, &operands);
  };
  auto parse_attributes = [&]() { return ParseAttributes(attrs, allow_attributes); };
  auto fail = [&](absl::string_view message) -> HloInstruction* {
    Error(operands_offset, message);
    return nullptr;
  };
  auto infer = [&](const std::function<absl::StatusOr<Shape>()>& inference) {
    if (shape.has_value()) return true;
    absl::StatusOr<Shape> inferred = inference();
    if (!inferred.ok()) {
      return Error(opcode_offset,
                   absl::StrCat("failed to infer shape for opcode: ", HloOpcodeString(opcode),
                                ", error: ", inferred.status().message()));
    }
    shape = *std::move(inferred);
    ShapeUtil::SetToDefaultLayoutIfMissing(&*shape);
    return true;
  };
  auto no_inference = [&]() {
    return infer([&]() -> absl::StatusOr<Shape> {
      return InferError("write the result shape: Axle's parser does not infer it");
    });
  };
  auto precision_config = [&](const std::optional<std::vector<PrecisionConfig::Precision>>& list,
                              size_t default_count) {
    PrecisionConfig config;
    if (list.has_value()) {
      *config.mutable_operand_precision() = *list;
    } else {
      config.mutable_operand_precision()->assign(default_count, PrecisionConfig::DEFAULT);
    }
    return config;
  };

  switch (opcode) {
    case HloOpcode::kConvolution: {
      std::optional<Window> window;
      std::optional<ConvolutionDimensionNumbers> dnums;
      std::optional<int64_t> feature_group_count, batch_group_count;
      std::optional<std::vector<PrecisionConfig::Precision>> precision;
      std::optional<int> conv_kind;
      attrs["window"] = WindowAttr(false, &window);
      attrs["dim_labels"] = DimLabelsAttr(true, &dnums);
      attrs["feature_group_count"] = Int64Attr(false, &feature_group_count);
      attrs["batch_group_count"] = Int64Attr(false, &batch_group_count);
      attrs["operand_precision"] = PrecisionListAttr(false, &precision);
      AttrSpec conv_kind_spec = EnumAttr(false, {"fprop", "wgrad", "dgrad", "unset"}, &conv_kind);
      attrs["conv_kind"] = Raw("conv_kind", false, conv_kind_spec.parse);
      attrs["convolution_kind"] = Raw("convolution_kind", false, conv_kind_spec.parse);
      attrs["sparsity_config"] = RawAny("sparsity_config");
      if (!parse_operands(2) || !parse_attributes() || !no_inference()) return nullptr;
      auto conv = std::make_unique<HloConvolutionInstruction>(opcode, *shape, operands);
      ConvolutionAttrs* a = conv->mutable_attrs();
      a->window = window.value_or(Window());
      a->convolution_dimension_numbers = *dnums;
      a->feature_group_count = feature_group_count.value_or(1);
      a->batch_group_count = batch_group_count.value_or(1);
      a->precision_config = precision_config(precision, operands.size());
      return Add(std::move(conv));
    }
    case HloOpcode::kDot:
    case HloOpcode::kRaggedDot:
    case HloOpcode::kScaledDot: {
      std::optional<std::vector<int64_t>> lhs_contracting, rhs_contracting, lhs_batch, rhs_batch,
          lhs_ragged, rhs_group;
      std::optional<std::vector<PrecisionConfig::Precision>> precision;
      std::optional<PrecisionConfig::Algorithm> algorithm;
      attrs["lhs_contracting_dims"] = Int64ListAttr(false, &lhs_contracting);
      attrs["rhs_contracting_dims"] = Int64ListAttr(false, &rhs_contracting);
      attrs["lhs_batch_dims"] = Int64ListAttr(false, &lhs_batch);
      attrs["rhs_batch_dims"] = Int64ListAttr(false, &rhs_batch);
      attrs["operand_precision"] = PrecisionListAttr(false, &precision);
      if (opcode == HloOpcode::kRaggedDot) {
        attrs["lhs_ragged_dims"] = Int64ListAttr(false, &lhs_ragged);
        attrs["rhs_group_dims"] = Int64ListAttr(false, &rhs_group);
      } else {
        attrs["algorithm"] = {false, [&] {
                                PrecisionConfig::Algorithm a;
                                if (!ParseAlgorithm(&a)) return false;
                                algorithm = a;
                                return true;
                              }};
      }
      int64_t expected = opcode == HloOpcode::kDot ? -1 : opcode == HloOpcode::kRaggedDot ? 3 : 4;
      if (!parse_operands(expected) || !parse_attributes()) return nullptr;
      if (operands.size() < 2) return fail("dot needs two operands");
      DotDimensionNumbers dnums;
      if (lhs_contracting) *dnums.mutable_lhs_contracting_dimensions() = *lhs_contracting;
      if (rhs_contracting) *dnums.mutable_rhs_contracting_dimensions() = *rhs_contracting;
      if (lhs_batch) *dnums.mutable_lhs_batch_dimensions() = *lhs_batch;
      if (rhs_batch) *dnums.mutable_rhs_batch_dimensions() = *rhs_batch;
      const Shape& rhs =
          opcode == HloOpcode::kScaledDot ? operands[2]->shape() : operands[1]->shape();
      if (opcode == HloOpcode::kRaggedDot) {
        if (!no_inference()) return nullptr;
      } else if (!infer([&] { return InferDot(operands[0]->shape(), rhs, dnums); })) {
        return nullptr;
      }
      auto dot = std::make_unique<HloDotInstruction>(opcode, *shape, operands);
      DotAttrs* a = dot->mutable_attrs();
      a->dot_dimension_numbers = dnums;
      if (lhs_ragged) a->lhs_ragged_dimensions = *lhs_ragged;
      if (rhs_group) a->rhs_group_dimensions = *rhs_group;
      a->precision_config =
          precision_config(precision, opcode == HloOpcode::kDot ? operands.size() : 2);
      if (algorithm.has_value()) a->precision_config.set_algorithm(*algorithm);
      return Add(std::move(dot));
    }
    case HloOpcode::kGather: {
      std::optional<std::vector<int64_t>> offset_dims, collapsed, start_index_map, slice_sizes,
          operand_batching, indices_batching;
      std::optional<int64_t> index_vector_dim;
      std::optional<bool> sorted;
      attrs["offset_dims"] = Int64ListAttr(true, &offset_dims);
      attrs["collapsed_slice_dims"] = Int64ListAttr(true, &collapsed);
      attrs["start_index_map"] = Int64ListAttr(true, &start_index_map);
      attrs["index_vector_dim"] = Int64Attr(true, &index_vector_dim);
      attrs["slice_sizes"] = Int64ListAttr(true, &slice_sizes);
      attrs["indices_are_sorted"] = BoolAttr(false, &sorted);
      attrs["operand_batching_dims"] = Int64ListAttr(false, &operand_batching);
      attrs["start_indices_batching_dims"] = Int64ListAttr(false, &indices_batching);
      if (!parse_operands(2) || !parse_attributes() || !no_inference()) return nullptr;
      auto gather = std::make_unique<HloGatherInstruction>(opcode, *shape, operands);
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
      attrs["update_window_dims"] = Int64ListAttr(true, &update_window_dims);
      attrs["inserted_window_dims"] = Int64ListAttr(true, &inserted);
      attrs["scatter_dims_to_operand_dims"] = Int64ListAttr(true, &to_operand_dims);
      attrs["index_vector_dim"] = Int64Attr(true, &index_vector_dim);
      attrs["to_apply"] = ComputationAttr(true, &to_apply);
      attrs["indices_are_sorted"] = BoolAttr(false, &sorted);
      attrs["unique_indices"] = BoolAttr(false, &unique);
      attrs["input_batching_dims"] = Int64ListAttr(false, &input_batching);
      attrs["scatter_indices_batching_dims"] = Int64ListAttr(false, &indices_batching);
      if (!parse_operands() || !parse_attributes()) return nullptr;
      if (operands.size() % 2 == 0) {
        return fail(absl::StrCat("expects an odd number of operands, but has ", operands.size(),
                                 " operands"));
      }
      if (!infer([&]() -> absl::StatusOr<Shape> {
            size_t n = operands.size() / 2;
            if (n == 1) return operands[0]->shape();
            std::vector<Shape> shapes;
            for (size_t i = 0; i < n; ++i) shapes.push_back(operands[i]->shape());
            return ShapeUtil::MakeTupleShape(std::move(shapes));
          })) {
        return nullptr;
      }
      auto scatter = std::make_unique<HloScatterInstruction>(opcode, *shape, operands);
      ScatterDimensionNumbers& d = scatter->mutable_attrs()->scatter_dimension_numbers;
      *d.mutable_update_window_dims() = *update_window_dims;
      *d.mutable_inserted_window_dims() = *inserted;
      *d.mutable_scatter_dims_to_operand_dims() = *to_operand_dims;
      d.set_index_vector_dim(*index_vector_dim);
      if (input_batching) *d.mutable_input_batching_dims() = *input_batching;
      if (indices_batching) *d.mutable_scatter_indices_batching_dims() = *indices_batching;
      scatter->mutable_attrs()->indices_are_sorted = sorted.value_or(false);
      scatter->mutable_attrs()->unique_indices = unique.value_or(false);
      scatter->AppendCalledComputation(*to_apply);
      return Add(std::move(scatter));
    }
    default:
      break;
  }
  Error(opcode_offset, absl::StrCat("opcode ", HloOpcodeString(opcode), " is not supported"));
  return nullptr;
}

}  // namespace hlo_parser_internal
}  // namespace axle
