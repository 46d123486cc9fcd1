// The attribute-field table of hlo_proto's writer and reader (see
// hlo_proto_internal.h).
#include "axle/hlo/proto/hlo_proto_internal.h"

#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace axle::hlo_proto_internal {

absl::Status Unimplemented(absl::string_view what) {
  return absl::UnimplementedError(absl::StrCat("HloModuleProto: ", what, " is not supported yet"));
}

absl::Status Invalid(absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("HloModuleProto: ", what));
}

namespace {

// The attributes that are one proto field each.
constexpr AttributeField kAttributes[] = {
    {"dimensions", "dimensions", ValueKind::kIntList},
    {"index", "tuple_index", ValueKind::kInt},
    {"exponent_bits", "exponent_bits", ValueKind::kInt},
    {"mantissa_bits", "mantissa_bits", ValueKind::kInt},
    {"dynamic_slice_sizes", "dynamic_slice_sizes", ValueKind::kIntList},
    {"epsilon", "epsilon", ValueKind::kFloat},
    {"feature_index", "feature_index", ValueKind::kInt},
    {"channel_id", "channel_id", ValueKind::kInt},
    {"custom_call_target", "custom_call_target", ValueKind::kQuoted},
    {"backend_config", "backend_config", ValueKind::kQuoted},
    {"fft_length", "fft_length", ValueKind::kIntList},
    {"direction", "comparison_direction", ValueKind::kIdent},
    {"type", "comparison_type", ValueKind::kIdent},
    {"slice_sizes", "gather_slice_sizes", ValueKind::kIntList},
    {"use_global_device_ids", "use_global_device_ids", ValueKind::kBool},
    {"is_stable", "is_stable", ValueKind::kBool},
    {"constrain_layout", "constrain_layout", ValueKind::kBool},
    {"custom_call_has_side_effect", "custom_call_has_side_effect", ValueKind::kBool},
    {"indices_are_sorted", "indices_are_sorted", ValueKind::kBool},
    {"unique_indices", "unique_indices", ValueKind::kBool},
    {"feature_group_count", "feature_group_count", ValueKind::kInt},
    {"batch_group_count", "batch_group_count", ValueKind::kInt},
    {"k", "k", ValueKind::kInt},
    {"largest", "largest", ValueKind::kBool},
    {"kind", "fusion_kind", ValueKind::kIdent},
    {"delta", "delta", ValueKind::kInt},
    {"lhs_contracting_dims", "dot_dimension_numbers.lhs_contracting_dimensions",
     ValueKind::kIntList},
    {"rhs_contracting_dims", "dot_dimension_numbers.rhs_contracting_dimensions",
     ValueKind::kIntList},
    {"lhs_batch_dims", "dot_dimension_numbers.lhs_batch_dimensions", ValueKind::kIntList},
    {"rhs_batch_dims", "dot_dimension_numbers.rhs_batch_dimensions", ValueKind::kIntList},
    {"offset_dims", "gather_dimension_numbers.offset_dims", ValueKind::kIntList},
    {"collapsed_slice_dims", "gather_dimension_numbers.collapsed_slice_dims", ValueKind::kIntList},
    {"start_index_map", "gather_dimension_numbers.start_index_map", ValueKind::kIntList},
    {"operand_batching_dims", "gather_dimension_numbers.operand_batching_dims",
     ValueKind::kIntList},
    {"start_indices_batching_dims", "gather_dimension_numbers.start_indices_batching_dims",
     ValueKind::kIntList},
    {"update_window_dims", "scatter_dimension_numbers.update_window_dims", ValueKind::kIntList},
    {"inserted_window_dims", "scatter_dimension_numbers.inserted_window_dims", ValueKind::kIntList},
    {"scatter_dims_to_operand_dims", "scatter_dimension_numbers.scatter_dims_to_operand_dims",
     ValueKind::kIntList},
    {"input_batching_dims", "scatter_dimension_numbers.input_batching_dims", ValueKind::kIntList},
    {"scatter_indices_batching_dims", "scatter_dimension_numbers.scatter_indices_batching_dims",
     ValueKind::kIntList},
};

}  // namespace

absl::Span<const AttributeField> AttributeFields() { return kAttributes; }

bool IsAttributeFieldPath(absl::string_view name) {
  for (const AttributeField& field : kAttributes) {
    const absl::string_view path = field.path;
    if (path.substr(0, path.find('.')) == name) return true;
  }
  return false;
}

}  // namespace axle::hlo_proto_internal
