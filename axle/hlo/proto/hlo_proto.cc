// HLO modules as XLA's HloModuleProto (see hlo_proto.h).
//
// Writing: module and computation structure, shapes, literals, metadata and
// frontend attributes come from the IR; an instruction's own attributes
// come from its canonical text (the printer knows every op's attributes),
// each `key=value` mapped to its proto field by kAttributes or by a
// function below. Reading is the inverse: the proto becomes HLO text that
// the parser reads (it checks everything text is checked for), then
// metadata and frontend attributes are set on the instructions. A key or a
// field without a mapping is an Unimplemented error naming it.
#include "axle/hlo/proto/hlo_proto.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "axle/base/status_macros.h"
#include "axle/core/literal_text.h"
#include "axle/core/shape_util.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/text/hlo_parser.h"
#include "axle/hlo/text/hlo_printer.h"

namespace axle {
namespace {

namespace pb = ::google::protobuf;

absl::Status Unimplemented(absl::string_view what) {
  return absl::UnimplementedError(absl::StrCat("HloModuleProto: ", what, " is not supported yet"));
}

absl::Status Invalid(absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("HloModuleProto: ", what));
}

}  // namespace

namespace {

// --- Instruction attributes ---------------------------------------------------

// How an attribute's text value reads: `key={1,2}`, `key=3`, `key=true`,
// `key=NAME`, `key="text"`, `key=1.5`.
enum class ValueKind { kIntList, kInt, kBool, kIdent, kQuoted, kFloat };

struct AttributeField {
  const char* key;   // in HLO text
  const char* path;  // in HloInstructionProto; "message.field" for a field of a sub-message
  ValueKind kind;
};

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

// Attributes the IR gives instead of the text (called computations, control
// predecessors, metadata, frontend attributes).
bool FromTheIr(absl::string_view key) {
  static const char* const kKeys[] = {"calls",
                                      "to_apply",
                                      "condition",
                                      "body",
                                      "select",
                                      "scatter",
                                      "true_computation",
                                      "false_computation",
                                      "branch_computations",
                                      "called_computations",
                                      "control-predecessors",
                                      "metadata",
                                      "frontend_attributes"};
  for (const char* k : kKeys) {
    if (key == k) return true;
  }
  return false;
}

// The proto field at `path` of `message` (creating sub-messages).
std::pair<pb::Message*, const pb::FieldDescriptor*> FieldAt(pb::Message* message,
                                                            absl::string_view path) {
  std::vector<std::string> parts = absl::StrSplit(path, '.');
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    const pb::FieldDescriptor* sub = message->GetDescriptor()->FindFieldByName(parts[i]);
    message = message->GetReflection()->MutableMessage(message, sub);
  }
  return {message, message->GetDescriptor()->FindFieldByName(parts.back())};
}

// Splits `text` at the commas outside brackets and strings.
std::vector<std::string> SplitTopLevel(absl::string_view text, char separator) {
  std::vector<std::string> parts;
  int depth = 0;
  bool quoted = false;
  size_t start = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        quoted = false;
      }
      continue;
    }
    if (c == '"') {
      quoted = true;
    } else if (c == '{' || c == '[' || c == '(') {
      ++depth;
    } else if (c == '}' || c == ']' || c == ')') {
      --depth;
    } else if (c == separator && depth == 0) {
      std::string part(absl::StripAsciiWhitespace(text.substr(start, i - start)));
      if (!part.empty()) parts.push_back(std::move(part));
      start = i + 1;
    }
  }
  std::string last(absl::StripAsciiWhitespace(text.substr(start)));
  if (!last.empty()) parts.push_back(std::move(last));
  return parts;
}

absl::StatusOr<std::vector<int64_t>> ParseIntList(absl::string_view text, absl::string_view what) {
  text = absl::StripAsciiWhitespace(text);
  if (text.size() < 2 || text.front() != '{' || text.back() != '}') {
    return Invalid(absl::StrCat(what, ": expected {integers}, got ", text));
  }
  std::vector<int64_t> values;
  for (const std::string& part : SplitTopLevel(text.substr(1, text.size() - 2), ',')) {
    int64_t value = 0;
    if (!absl::SimpleAtoi(part, &value)) {
      return Invalid(absl::StrCat(what, ": ", part, " is not an integer"));
    }
    values.push_back(value);
  }
  return values;
}

absl::StatusOr<std::string> Unquote(absl::string_view text, absl::string_view what) {
  if (text.size() < 2 || text.front() != '"' || text.back() != '"') {
    return Invalid(absl::StrCat(what, ": expected a quoted string, got ", text));
  }
  std::string out;
  std::string error;
  if (!absl::CUnescape(text.substr(1, text.size() - 2), &out, &error)) {
    return Invalid(absl::StrCat(what, ": ", error));
  }
  return out;
}

absl::Status SetField(pb::Message* root, const AttributeField& field, absl::string_view value) {
  auto [message, descriptor] = FieldAt(root, field.path);
  const pb::Reflection* reflection = message->GetReflection();
  switch (field.kind) {
    case ValueKind::kIntList: {
      AXLE_ASSIGN_OR_RETURN(std::vector<int64_t> values, ParseIntList(value, field.key));
      for (int64_t v : values) reflection->AddInt64(message, descriptor, v);
      return absl::OkStatus();
    }
    case ValueKind::kInt: {
      int64_t v = 0;
      if (!absl::SimpleAtoi(value, &v)) {
        return Invalid(absl::StrCat(field.key, ": ", value, " is not an integer"));
      }
      if (descriptor->cpp_type() == pb::FieldDescriptor::CPPTYPE_INT32) {
        reflection->SetInt32(message, descriptor, static_cast<int32_t>(v));
      } else {
        reflection->SetInt64(message, descriptor, v);
      }
      return absl::OkStatus();
    }
    case ValueKind::kBool:
      reflection->SetBool(message, descriptor, value == "true");
      return absl::OkStatus();
    case ValueKind::kIdent:
      reflection->SetString(message, descriptor, std::string(value));
      return absl::OkStatus();
    case ValueKind::kQuoted: {
      AXLE_ASSIGN_OR_RETURN(std::string text, Unquote(value, field.key));
      reflection->SetString(message, descriptor, std::move(text));
      return absl::OkStatus();
    }
    case ValueKind::kFloat: {
      float v = 0;
      if (!absl::SimpleAtof(value, &v)) {
        return Invalid(absl::StrCat(field.key, ": ", value, " is not a number"));
      }
      reflection->SetFloat(message, descriptor, v);
      return absl::OkStatus();
    }
  }
  return absl::OkStatus();
}

// `{[0:2], [1:5:2]}`.
absl::Status ParseSlice(absl::string_view value, HloInstructionProto* out) {
  if (value.size() < 2 || value.front() != '{' || value.back() != '}') {
    return Invalid(absl::StrCat("slice: ", value));
  }
  for (const std::string& part : SplitTopLevel(value.substr(1, value.size() - 2), ',')) {
    absl::string_view range = part;
    if (range.size() < 2 || range.front() != '[' || range.back() != ']') {
      return Invalid(absl::StrCat("slice: ", part));
    }
    std::vector<std::string> bounds = absl::StrSplit(range.substr(1, range.size() - 2), ':');
    std::vector<int64_t> numbers;
    for (const std::string& bound : bounds) {
      int64_t v = 0;
      if (!absl::SimpleAtoi(bound, &v)) return Invalid(absl::StrCat("slice: ", part));
      numbers.push_back(v);
    }
    if (numbers.size() < 2 || numbers.size() > 3) return Invalid(absl::StrCat("slice: ", part));
    auto* dimension = out->add_slice_dimensions();
    dimension->set_start(numbers[0]);
    dimension->set_limit(numbers[1]);
    dimension->set_stride(numbers.size() == 3 ? numbers[2] : 1);
  }
  return absl::OkStatus();
}

// One operand's labels (`b01f`): where `first` and `second` are, and the
// spatial dimensions in order of their digit.
absl::Status ParseLabels(absl::string_view labels, char first, char second, int64_t* first_out,
                         int64_t* second_out, pb::RepeatedField<int64_t>* spatial) {
  std::vector<int64_t> by_digit(labels.size(), -1);
  int64_t digits = 0;
  bool seen_first = false, seen_second = false;
  for (int64_t i = 0; i < static_cast<int64_t>(labels.size()); ++i) {
    const char c = labels[i];
    if (c == first) {
      *first_out = i;
      seen_first = true;
    } else if (c == second) {
      *second_out = i;
      seen_second = true;
    } else if (c == '?') {
      return Unimplemented(absl::StrCat("dim_labels with '?' ('", labels, "')"));
    } else if (c >= '0' && c <= '9' && c - '0' < static_cast<int>(labels.size())) {
      by_digit[c - '0'] = i;
      ++digits;
    } else {
      return Invalid(absl::StrCat("dim_labels: '", labels, "'"));
    }
  }
  if (!seen_first || !seen_second) return Invalid(absl::StrCat("dim_labels: '", labels, "'"));
  for (int64_t d = 0; d < digits; ++d) {
    if (by_digit[d] < 0) return Invalid(absl::StrCat("dim_labels: '", labels, "'"));
    spatial->Add(by_digit[d]);
  }
  return absl::OkStatus();
}

// `b01f_01io->b01f`.
absl::Status ParseDimLabels(absl::string_view value, proto::ConvolutionDimensionNumbers* out) {
  std::vector<std::string> sides = absl::StrSplit(value, "->");
  if (sides.size() != 2) return Invalid(absl::StrCat("dim_labels: ", value));
  std::vector<std::string> operands = absl::StrSplit(sides[0], '_');
  if (operands.size() != 2) return Invalid(absl::StrCat("dim_labels: ", value));
  int64_t a = 0, b = 0;
  AXLE_RETURN_IF_ERROR(
      ParseLabels(operands[0], 'b', 'f', &a, &b, out->mutable_input_spatial_dimensions()));
  out->set_input_batch_dimension(a);
  out->set_input_feature_dimension(b);
  AXLE_RETURN_IF_ERROR(
      ParseLabels(operands[1], 'i', 'o', &a, &b, out->mutable_kernel_spatial_dimensions()));
  out->set_kernel_input_feature_dimension(a);
  out->set_kernel_output_feature_dimension(b);
  AXLE_RETURN_IF_ERROR(
      ParseLabels(sides[1], 'b', 'f', &a, &b, out->mutable_output_spatial_dimensions()));
  out->set_output_batch_dimension(a);
  out->set_output_feature_dimension(b);
  return absl::OkStatus();
}

// The inverse of ParseLabels; an error when the numbers do not describe
// `2 + spatial` distinct dimensions.
absl::StatusOr<std::string> Labels(char first, int64_t first_at, char second, int64_t second_at,
                                   const pb::RepeatedField<int64_t>& spatial) {
  const int64_t rank = 2 + spatial.size();
  std::string labels(static_cast<size_t>(rank), '?');
  auto put = [&](int64_t at, char c) {
    if (at < 0 || at >= rank || labels[at] != '?') return false;
    labels[at] = c;
    return true;
  };
  bool ok = put(first_at, first) && put(second_at, second);
  for (int i = 0; i < spatial.size() && ok; ++i)
    ok = put(spatial.Get(i), static_cast<char>('0' + i));
  if (!ok || spatial.size() > 10) {
    return Invalid("ConvolutionDimensionNumbers do not name distinct dimensions");
  }
  return labels;
}

absl::StatusOr<std::string> DimLabelsText(const proto::ConvolutionDimensionNumbers& d) {
  AXLE_ASSIGN_OR_RETURN(std::string lhs,
                        Labels('b', d.input_batch_dimension(), 'f', d.input_feature_dimension(),
                               d.input_spatial_dimensions()));
  AXLE_ASSIGN_OR_RETURN(std::string rhs,
                        Labels('i', d.kernel_input_feature_dimension(), 'o',
                               d.kernel_output_feature_dimension(), d.kernel_spatial_dimensions()));
  AXLE_ASSIGN_OR_RETURN(std::string out,
                        Labels('b', d.output_batch_dimension(), 'f', d.output_feature_dimension(),
                               d.output_spatial_dimensions()));
  return absl::StrCat("dim_labels=", lhs, "_", rhs, "->", out);
}

// `0_0x1_1` (low_high[_interior] per dimension).
absl::Status ParsePadding(absl::string_view value, HloInstructionProto* out) {
  for (absl::string_view dimension : absl::StrSplit(value, 'x')) {
    std::vector<std::string> numbers = absl::StrSplit(dimension, '_');
    int64_t v[3] = {0, 0, 0};
    if (numbers.size() < 2 || numbers.size() > 3) return Invalid(absl::StrCat("padding: ", value));
    for (size_t i = 0; i < numbers.size(); ++i) {
      if (!absl::SimpleAtoi(numbers[i], &v[i])) return Invalid(absl::StrCat("padding: ", value));
    }
    auto* d = out->mutable_padding_config()->add_dimensions();
    d->set_edge_padding_low(v[0]);
    d->set_edge_padding_high(v[1]);
    d->set_interior_padding(v[2]);
  }
  return absl::OkStatus();
}

// `{size=3x3 stride=2x2 pad=1_1x1_1 lhs_dilate=1x1 rhs_dilate=1x1 rhs_reversal=0x0}`.
absl::Status ParseWindow(absl::string_view value, HloInstructionProto* out) {
  if (value.size() < 2 || value.front() != '{' || value.back() != '}') {
    return Invalid(absl::StrCat("window: ", value));
  }
  std::map<std::string, std::vector<std::string>> fields;
  for (absl::string_view item :
       absl::StrSplit(value.substr(1, value.size() - 2), ' ', absl::SkipEmpty())) {
    std::vector<std::string> kv = absl::StrSplit(item, absl::MaxSplits('=', 1));
    if (kv.size() != 2) return Invalid(absl::StrCat("window: ", value));
    fields[kv[0]] = absl::StrSplit(kv[1], 'x');
  }
  const size_t rank = fields.count("size") ? fields["size"].size() : 0;
  for (const auto& [key, values] : fields) {
    if (key != "size" && key != "stride" && key != "pad" && key != "lhs_dilate" &&
        key != "rhs_dilate" && key != "rhs_reversal") {
      return Unimplemented(absl::StrCat("the window field '", key, "'"));
    }
    if (values.size() != rank) return Invalid(absl::StrCat("window: ", value));
  }
  auto number = [&](const char* key, size_t i, int64_t fallback) -> absl::StatusOr<int64_t> {
    auto it = fields.find(key);
    if (it == fields.end()) return fallback;
    int64_t v = 0;
    if (!absl::SimpleAtoi(it->second[i], &v)) return Invalid(absl::StrCat("window: ", value));
    return v;
  };
  for (size_t i = 0; i < rank; ++i) {
    auto* d = out->mutable_window()->add_dimensions();
    AXLE_ASSIGN_OR_RETURN(int64_t size, number("size", i, 1));
    AXLE_ASSIGN_OR_RETURN(int64_t stride, number("stride", i, 1));
    AXLE_ASSIGN_OR_RETURN(int64_t lhs, number("lhs_dilate", i, 1));
    AXLE_ASSIGN_OR_RETURN(int64_t rhs, number("rhs_dilate", i, 1));
    AXLE_ASSIGN_OR_RETURN(int64_t reversal, number("rhs_reversal", i, 0));
    d->set_size(size);
    d->set_stride(stride);
    d->set_base_dilation(lhs);
    d->set_window_dilation(rhs);
    d->set_window_reversal(reversal != 0);
    if (fields.count("pad")) {
      std::vector<std::string> pad = absl::StrSplit(fields["pad"][i], '_');
      int64_t low = 0;
      int64_t high = 0;
      if (pad.size() != 2 || !absl::SimpleAtoi(pad[0], &low) || !absl::SimpleAtoi(pad[1], &high)) {
        return Invalid(absl::StrCat("window: ", value));
      }
      d->set_padding_low(low);
      d->set_padding_high(high);
    }
  }
  return absl::OkStatus();
}

// `{{0,1},{2,3}}`.
absl::StatusOr<std::vector<std::vector<int64_t>>> ParseIntLists(absl::string_view value,
                                                                absl::string_view what) {
  if (value.size() < 2 || value.front() != '{' || value.back() != '}') {
    return Invalid(absl::StrCat(what, ": ", value));
  }
  std::vector<std::vector<int64_t>> lists;
  for (const std::string& part : SplitTopLevel(value.substr(1, value.size() - 2), ',')) {
    AXLE_ASSIGN_OR_RETURN(std::vector<int64_t> list, ParseIntList(part, what));
    lists.push_back(std::move(list));
  }
  return lists;
}

constexpr const char* kPrecisions[] = {"default", "high", "highest"};
constexpr const char* kApiVersions[] = {
    "API_VERSION_UNSPECIFIED", "API_VERSION_ORIGINAL", "API_VERSION_STATUS_RETURNING",
    "API_VERSION_STATUS_RETURNING_UNIFIED", "API_VERSION_TYPED_FFI"};
constexpr const char* kDistributions[] = {"rng_invalid", "rng_uniform", "rng_normal"};
constexpr const char* kFftTypes[] = {"FFT", "IFFT", "RFFT", "IRFFT"};
constexpr const char* kRngAlgorithms[] = {"rng_default", "rng_three_fry", "rng_philox"};

template <size_t N>
absl::StatusOr<int> IndexOf(const char* const (&names)[N], absl::string_view name,
                            absl::string_view what) {
  for (size_t i = 0; i < N; ++i) {
    if (absl::EqualsIgnoreCase(names[i], name)) return static_cast<int>(i);
  }
  return Unimplemented(absl::StrCat(what, " '", name, "'"));
}

// `{replicated}`, `{maximal device=N}`, `{manual}` and tuples of them
// (`{{replicated}, {maximal device=0}}`).
absl::Status ParseSharding(absl::string_view value, proto::OpSharding* out) {
  value = absl::StripAsciiWhitespace(value);
  if (value.size() < 2 || value.front() != '{' || value.back() != '}') {
    return Invalid(absl::StrCat("sharding: ", value));
  }
  absl::string_view inner = absl::StripAsciiWhitespace(value.substr(1, value.size() - 2));
  if (!inner.empty() && inner.front() == '{') {
    out->set_type(2);  // TUPLE
    for (const std::string& element : SplitTopLevel(inner, ',')) {
      AXLE_RETURN_IF_ERROR(ParseSharding(element, out->add_tuple_shardings()));
    }
    return absl::OkStatus();
  }
  if (inner == "replicated") {
    out->set_type(0);
    return absl::OkStatus();
  }
  if (inner == "manual") {
    out->set_type(4);
    return absl::OkStatus();
  }
  int64_t device = 0;
  if (absl::ConsumePrefix(&inner, "maximal device=") && absl::SimpleAtoi(inner, &device)) {
    out->set_type(1);
    out->add_tile_assignment_dimensions(1);
    out->add_tile_assignment_devices(device);
    return absl::OkStatus();
  }
  return Unimplemented(absl::StrCat("the sharding '", value, "'"));
}

absl::StatusOr<std::string> ShardingText(const proto::OpSharding& sharding) {
  std::vector<const pb::FieldDescriptor*> set_fields;
  sharding.GetReflection()->ListFields(sharding, &set_fields);
  for (const pb::FieldDescriptor* field : set_fields) {
    if (field->name() != "type" && field->name() != "tuple_shardings" &&
        field->name() != "tile_assignment_dimensions" &&
        field->name() != "tile_assignment_devices") {
      return Unimplemented(absl::StrCat("OpSharding.", field->name()));
    }
  }
  switch (sharding.type()) {
    case 0:
      return std::string("{replicated}");
    case 4:
      return std::string("{manual}");
    case 1:
      if (sharding.tile_assignment_devices_size() != 1) {
        return Invalid("a maximal OpSharding names one device");
      }
      return absl::StrCat("{maximal device=", sharding.tile_assignment_devices(0), "}");
    case 2: {
      std::vector<std::string> elements;
      for (const proto::OpSharding& element : sharding.tuple_shardings()) {
        AXLE_ASSIGN_OR_RETURN(std::string text, ShardingText(element));
        elements.push_back(std::move(text));
      }
      return absl::StrCat("{", absl::StrJoin(elements, ", "), "}");
    }
    default:
      return Unimplemented(absl::StrCat("OpSharding of type ", sharding.type()));
  }
}

// One `key=value` of `instruction`'s text into `out`.
absl::Status AttributeToProto(const HloInstruction& instruction, absl::string_view key,
                              absl::string_view value, HloInstructionProto* out) {
  if (FromTheIr(key)) return absl::OkStatus();
  if (key == "iota_dimension") {
    int64_t v = 0;
    if (!absl::SimpleAtoi(value, &v)) return Invalid(absl::StrCat("iota_dimension: ", value));
    out->add_dimensions(v);
    return absl::OkStatus();
  }
  if (key == "index_vector_dim") {
    int64_t v = 0;
    if (!absl::SimpleAtoi(value, &v)) return Invalid(absl::StrCat("index_vector_dim: ", value));
    if (instruction.opcode() == HloOpcode::kGather) {
      out->mutable_gather_dimension_numbers()->set_index_vector_dim(v);
    } else {
      out->mutable_scatter_dimension_numbers()->set_index_vector_dim(v);
    }
    return absl::OkStatus();
  }
  if (key == "dim_labels")
    return ParseDimLabels(value, out->mutable_convolution_dimension_numbers());
  if (key == "channel_id" && value == "0") {
    // proto3 cannot tell channel id 0 from none (XLA reads both as none).
    return Unimplemented(absl::StrCat("channel_id=0 (instruction %", instruction.name(), ")"));
  }
  if (key == "is_stable" && instruction.opcode() == HloOpcode::kTopK) {
    return Unimplemented(absl::StrCat("is_stable on topk (instruction %", instruction.name(), ")"));
  }
  if (key == "sharding") return ParseSharding(value, out->mutable_sharding());
  if (key == "slice") return ParseSlice(value, out);
  if (key == "padding" && instruction.opcode() == HloOpcode::kPad) return ParsePadding(value, out);
  if (key == "window") return ParseWindow(value, out);
  if (key == "replica_groups" && (value.empty() || value.front() != '{')) {
    return Unimplemented(absl::StrCat("replica_groups in iota or mesh form (instruction %",
                                      instruction.name(), ")"));
  }
  if (key == "slice_sizes" && instruction.opcode() != HloOpcode::kGather) {
    return Unimplemented(absl::StrCat("the attribute 'slice_sizes' of ",
                                      HloOpcodeString(instruction.opcode()), " (instruction %",
                                      instruction.name(), ")"));
  }
  if (key == "replica_groups") {
    AXLE_ASSIGN_OR_RETURN(auto groups, ParseIntLists(value, key));
    for (const auto& group : groups) {
      auto* g = out->add_replica_groups();
      for (int64_t id : group) g->add_replica_ids(id);
    }
    return absl::OkStatus();
  }
  if (key == "source_target_pairs") {
    AXLE_ASSIGN_OR_RETURN(auto pairs, ParseIntLists(value, key));
    for (const auto& pair : pairs) {
      if (pair.size() != 2) return Invalid(absl::StrCat("source_target_pairs: ", value));
      auto* p = out->add_source_target_pairs();
      p->set_source(pair[0]);
      p->set_target(pair[1]);
    }
    return absl::OkStatus();
  }
  if (key == "operand_precision") {
    if (value.size() < 2 || value.front() != '{' || value.back() != '}') {
      return Invalid(absl::StrCat("operand_precision: ", value));
    }
    for (const std::string& name : SplitTopLevel(value.substr(1, value.size() - 2), ',')) {
      AXLE_ASSIGN_OR_RETURN(int precision, IndexOf(kPrecisions, name, "the precision"));
      out->mutable_precision_config()->add_operand_precision(precision);
    }
    return absl::OkStatus();
  }
  if (key == "api_version") {
    AXLE_ASSIGN_OR_RETURN(int version, IndexOf(kApiVersions, value, "the api_version"));
    out->set_custom_call_api_version(version);
    return absl::OkStatus();
  }
  if (key == "distribution") {
    AXLE_ASSIGN_OR_RETURN(int distribution, IndexOf(kDistributions, value, "the distribution"));
    out->set_distribution(distribution);
    return absl::OkStatus();
  }
  if (key == "fft_type") {
    AXLE_ASSIGN_OR_RETURN(int type, IndexOf(kFftTypes, value, "the fft_type"));
    out->set_fft_type(type);
    return absl::OkStatus();
  }
  if (key == "algorithm" && instruction.opcode() == HloOpcode::kRngBitGenerator) {
    AXLE_ASSIGN_OR_RETURN(int algorithm, IndexOf(kRngAlgorithms, value, "the rng algorithm"));
    out->set_rng_algorithm(algorithm);
    return absl::OkStatus();
  }
  if (key == "backend_config" && !value.empty() && value.front() == '{') {
    out->set_backend_config(std::string(value));  // printed unquoted: a JSON dict
    return absl::OkStatus();
  }
  for (const AttributeField& field : kAttributes) {
    if (key == field.key) return SetField(out, field, value);
  }
  return Unimplemented(absl::StrCat("the attribute '", key, "' (instruction %", instruction.name(),
                                    ", ", HloOpcodeString(instruction.opcode()), ")"));
}

// The attributes of `instruction` as its canonical text gives them: what
// follows the operand list.
absl::StatusOr<std::vector<std::string>> AttributeTexts(const HloInstruction& instruction) {
  const HloPrintOptions options = HloPrintOptions::Canonical()
                                      .set_print_metadata(false)
                                      .set_print_operand_index_annotation_interval(0)
                                      .set_print_control_dependencies(false)
                                      .set_print_operand_shape(false)
                                      .set_syntax_sugar_async_ops(false);
  const std::string text = ToString(instruction, options);
  const std::string opcode = absl::StrCat(" ", HloOpcodeString(instruction.opcode()), "(");
  const size_t equals = text.find(" = ");
  const size_t open = text.find(opcode, equals == std::string::npos ? 0 : equals);
  if (open == std::string::npos) {
    return absl::InternalError(absl::StrCat("cannot find the operands of ", text));
  }
  int depth = 0;
  bool quoted = false;
  size_t close = std::string::npos;
  for (size_t i = open + opcode.size() - 1; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        quoted = false;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == '(' || c == '{' || c == '[') {
      ++depth;
    } else if (c == ')' || c == '}' || c == ']') {
      if (--depth == 0) {
        close = i;
        break;
      }
    }
  }
  if (close == std::string::npos) {
    return absl::InternalError(absl::StrCat("unbalanced operands in ", text));
  }
  return SplitTopLevel(absl::string_view(text).substr(close + 1), ',');
}

void MetadataToProto(const OpMetadata& metadata, proto::OpMetadata* out) {
  out->set_op_type(metadata.op_type());
  out->set_op_name(metadata.op_name());
  out->set_source_file(metadata.source_file());
  out->set_source_line(metadata.source_line());
  out->set_source_end_line(metadata.source_end_line());
  out->set_source_column(metadata.source_column());
  out->set_source_end_column(metadata.source_end_column());
  for (int32_t type : metadata.profile_type()) out->add_profile_type(type);
  out->set_deduplicated_name(metadata.deduplicated_name());
  out->set_scheduling_name(metadata.scheduling_name());
  out->set_stack_frame_id(metadata.stack_frame_id());
}

absl::StatusOr<OpMetadata> MetadataFromProto(const proto::OpMetadata& proto) {
  if (!proto.profile_info().empty()) return Unimplemented("OpMetadata.profile_info");
  OpMetadata metadata;
  metadata.set_op_type(proto.op_type());
  metadata.set_op_name(proto.op_name());
  metadata.set_source_file(proto.source_file());
  metadata.set_source_line(proto.source_line());
  metadata.set_source_end_line(proto.source_end_line());
  metadata.set_source_column(proto.source_column());
  metadata.set_source_end_column(proto.source_end_column());
  for (int32_t type : proto.profile_type()) metadata.add_profile_type(type);
  metadata.set_deduplicated_name(proto.deduplicated_name());
  metadata.set_scheduling_name(proto.scheduling_name());
  metadata.set_stack_frame_id(proto.stack_frame_id());
  return metadata;
}

// Computation ids in XLA's order of called computations: a while loop's
// body comes first there (Axle holds the condition first).
std::vector<const HloComputation*> CalledInXlaOrder(const HloInstruction& instruction) {
  std::vector<const HloComputation*> called(instruction.called_computations().begin(),
                                            instruction.called_computations().end());
  if (instruction.opcode() == HloOpcode::kWhile && called.size() == 2) {
    std::swap(called[0], called[1]);
  }
  return called;
}

absl::StatusOr<HloInstructionProto> InstructionToProto(
    const HloInstruction& instruction,
    const absl::flat_hash_map<const HloInstruction*, int64_t>& ids,
    const absl::flat_hash_map<const HloComputation*, int64_t>& computation_ids) {
  HloInstructionProto out;
  out.set_name(instruction.name());
  out.set_opcode(std::string(HloOpcodeString(instruction.opcode())));
  AXLE_ASSIGN_OR_RETURN(*out.mutable_shape(), ShapeToProto(instruction.shape()));
  out.set_id(ids.at(&instruction));
  for (const HloInstruction* operand : instruction.operands()) out.add_operand_ids(ids.at(operand));
  for (const HloInstruction* predecessor : instruction.control_predecessors()) {
    out.add_control_predecessor_ids(ids.at(predecessor));
  }
  for (const HloComputation* called : CalledInXlaOrder(instruction)) {
    out.add_called_computation_ids(computation_ids.at(called));
  }
  if (instruction.metadata().preserve_layout()) return Unimplemented("OpMetadata.preserve_layout");
  MetadataToProto(instruction.metadata(), out.mutable_metadata());
  for (const auto& [key, value] : instruction.frontend_attributes()) {
    (*out.mutable_frontend_attributes()->mutable_map())[key] = value;
  }
  if (const auto* parameter = dyn_cast<HloParameterInstruction>(&instruction)) {
    out.set_parameter_number(parameter->parameter_number());
  }
  if (const auto* constant = dyn_cast<HloConstantInstruction>(&instruction)) {
    if (constant->attrs().elided) {
      return Unimplemented(
          absl::StrCat("a constant whose values the text left out ({...}): %", instruction.name()));
    }
    AXLE_ASSIGN_OR_RETURN(*out.mutable_literal(), LiteralToProto(constant->literal()));
  }
  AXLE_ASSIGN_OR_RETURN(std::vector<std::string> attributes, AttributeTexts(instruction));
  for (const std::string& attribute : attributes) {
    const size_t equals = attribute.find('=');
    if (equals == std::string::npos) {
      return Unimplemented(absl::StrCat("the attribute text '", attribute, "' (instruction %",
                                        instruction.name(), ")"));
    }
    AXLE_RETURN_IF_ERROR(AttributeToProto(instruction, attribute.substr(0, equals),
                                          absl::string_view(attribute).substr(equals + 1), &out));
  }
  return out;
}

// --- From the proto: HLO text ------------------------------------------------

std::string IntList(const pb::RepeatedField<int64_t>& values) {
  return absl::StrCat("{", absl::StrJoin(values, ","), "}");
}

// Fields of HloInstructionProto the text builder reads; any other field set
// is reported.
bool HandledField(absl::string_view name) {
  static const char* const kHandled[] = {"name",
                                         "sharding",
                                         "convolution_dimension_numbers",
                                         "opcode",
                                         "shape",
                                         "metadata",
                                         "literal",
                                         "parameter_number",
                                         "id",
                                         "operand_ids",
                                         "control_predecessor_ids",
                                         "called_computation_ids",
                                         "frontend_attributes",
                                         "slice_dimensions",
                                         "padding_config",
                                         "window",
                                         "replica_groups",
                                         "source_target_pairs",
                                         "precision_config",
                                         "custom_call_api_version",
                                         "distribution",
                                         "fft_type",
                                         "rng_algorithm",
                                         "dot_dimension_numbers",
                                         "gather_dimension_numbers",
                                         "scatter_dimension_numbers",
                                         "tuple_index",
                                         "dimensions"};
  for (const char* handled : kHandled) {
    if (name == handled) return true;
  }
  for (const AttributeField& field : kAttributes) {
    if (name == field.path) return true;
  }
  return false;
}

// The text of one field of kAttributes (`key=value`), or "" when unset.
std::string FieldText(const HloInstructionProto& instruction, const AttributeField& field,
                      bool always) {
  const pb::Message* message = &instruction;
  std::vector<std::string> parts = absl::StrSplit(field.path, '.');
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    const pb::FieldDescriptor* sub = message->GetDescriptor()->FindFieldByName(parts[i]);
    if (!message->GetReflection()->HasField(*message, sub) && !always) return "";
    message = &message->GetReflection()->GetMessage(*message, sub);
  }
  const pb::FieldDescriptor* descriptor = message->GetDescriptor()->FindFieldByName(parts.back());
  const pb::Reflection* reflection = message->GetReflection();
  if (descriptor->is_repeated()) {
    if (reflection->FieldSize(*message, descriptor) == 0 && !always) return "";
    const int size = reflection->FieldSize(*message, descriptor);
    std::vector<int64_t> values;
    values.reserve(size);
    for (int i = 0; i < size; ++i) {
      values.push_back(reflection->GetRepeatedInt64(*message, descriptor, i));
    }
    return absl::StrCat(field.key, "={", absl::StrJoin(values, ","), "}");
  }
  if (!reflection->HasField(*message, descriptor) && !always) return "";
  switch (field.kind) {
    case ValueKind::kInt:
      return absl::StrCat(field.key, "=",
                          descriptor->cpp_type() == pb::FieldDescriptor::CPPTYPE_INT32
                              ? reflection->GetInt32(*message, descriptor)
                              : reflection->GetInt64(*message, descriptor));
    case ValueKind::kBool:
      return absl::StrCat(field.key, "=",
                          reflection->GetBool(*message, descriptor) ? "true" : "false");
    case ValueKind::kIdent:
      return absl::StrCat(field.key, "=", reflection->GetString(*message, descriptor));
    case ValueKind::kQuoted:
      return absl::StrCat(field.key, "=\"",
                          absl::CEscape(reflection->GetString(*message, descriptor)), "\"");
    case ValueKind::kFloat:
      return absl::StrCat(field.key, "=", reflection->GetFloat(*message, descriptor));
    case ValueKind::kIntList:
      return "";
  }
  return "";
}

// Attributes the parser needs even at their default value, by opcode.
bool AlwaysWritten(absl::string_view opcode, absl::string_view key) {
  static const std::map<std::string, std::vector<std::string>> kAlways = {
      {"broadcast", {"dimensions"}},
      {"transpose", {"dimensions"}},
      {"reduce", {"dimensions"}},
      {"reverse", {"dimensions"}},
      {"concatenate", {"dimensions"}},
      {"sort", {"dimensions"}},
      {"get-tuple-element", {"index"}},
      {"reduce-precision", {"exponent_bits", "mantissa_bits"}},
      {"batch-norm-training", {"epsilon", "feature_index"}},
      {"batch-norm-inference", {"epsilon", "feature_index"}},
      {"batch-norm-grad", {"epsilon", "feature_index"}},
      {"gather", {"offset_dims", "collapsed_slice_dims", "start_index_map", "slice_sizes"}},
      {"scatter", {"update_window_dims", "inserted_window_dims", "scatter_dims_to_operand_dims"}},
      {"topk", {"k", "largest"}},
  };
  auto it = kAlways.find(std::string(opcode));
  if (it == kAlways.end()) return false;
  return std::find(it->second.begin(), it->second.end(), key) != it->second.end();
}

struct TextContext {
  absl::flat_hash_map<int64_t, const HloInstructionProto*> instructions;
  absl::flat_hash_map<int64_t, std::string> computation_names;
  // Array constants, written `{...}` in the text (printing and parsing
  // large literals as text is slow) and set on the module afterwards.
  absl::flat_hash_map<std::string, Literal> constants;
};

absl::StatusOr<std::string> ComputationName(const TextContext& context, int64_t id,
                                            absl::string_view where) {
  auto it = context.computation_names.find(id);
  if (it == context.computation_names.end()) {
    return Invalid(absl::StrCat(where, " calls computation id ", id, ", which does not exist"));
  }
  return absl::StrCat("%", it->second);
}

// `instruction` as one line of HLO text.
absl::StatusOr<std::string> InstructionText(const HloInstructionProto& instruction, bool root,
                                            TextContext& context) {
  const std::string where = absl::StrCat("instruction %", instruction.name());
  std::vector<const pb::FieldDescriptor*> set_fields;
  instruction.GetReflection()->ListFields(instruction, &set_fields);
  for (const pb::FieldDescriptor* field : set_fields) {
    if (!HandledField(field->name())) {
      return Unimplemented(absl::StrCat("HloInstructionProto.", field->name(), " (", where, ", ",
                                        instruction.opcode(), ")"));
    }
  }
  const std::string& opcode = instruction.opcode();
  if (!StringToHloOpcode(opcode).has_value()) {
    return Invalid(absl::StrCat(where, ": unknown opcode '", opcode, "'"));
  }
  AXLE_ASSIGN_OR_RETURN(Shape shape, ShapeFromProto(instruction.shape()));
  std::string operands;
  if (opcode == "parameter") {
    operands = absl::StrCat(instruction.parameter_number());
  } else if (opcode == "constant") {
    AXLE_ASSIGN_OR_RETURN(Literal literal, LiteralFromProto(instruction.literal()));
    if (literal.shape().IsArray() && literal.shape().rank() > 0) {
      operands = "{...}";
      context.constants[instruction.name()] = std::move(literal);
    } else {
      operands = LiteralValueToHloText(literal, /*print_large=*/true);
    }
  } else {
    std::vector<std::string> names;
    for (int64_t id : instruction.operand_ids()) {
      auto it = context.instructions.find(id);
      if (it == context.instructions.end()) {
        return Invalid(absl::StrCat(where, ": operand id ", id, " is no earlier instruction"));
      }
      names.push_back(absl::StrCat("%", it->second->name()));
    }
    operands = absl::StrJoin(names, ", ");
  }
  std::vector<std::string> attributes;
  // Called computations, in XLA's order.
  std::vector<std::string> called;
  for (int64_t id : instruction.called_computation_ids()) {
    AXLE_ASSIGN_OR_RETURN(std::string name, ComputationName(context, id, where));
    called.push_back(std::move(name));
  }
  if (!called.empty()) {
    auto expect = [&](size_t n) -> absl::Status {
      if (called.size() == n) return absl::OkStatus();
      return Invalid(absl::StrCat(where, ": ", opcode, " calls ", called.size(),
                                  " computations; expected ", n));
    };
    if (opcode == "fusion" || opcode == "async-start" || opcode == "async-update" ||
        opcode == "async-done") {
      AXLE_RETURN_IF_ERROR(expect(1));
      attributes.push_back(absl::StrCat("calls=", called[0]));
    } else if (opcode == "while") {
      AXLE_RETURN_IF_ERROR(expect(2));
      attributes.push_back(absl::StrCat("condition=", called[1]));
      attributes.push_back(absl::StrCat("body=", called[0]));
    } else if (opcode == "select-and-scatter") {
      AXLE_RETURN_IF_ERROR(expect(2));
      attributes.push_back(absl::StrCat("select=", called[0]));
      attributes.push_back(absl::StrCat("scatter=", called[1]));
    } else if (opcode == "conditional") {
      const HloInstructionProto* selector = nullptr;
      if (instruction.operand_ids_size() > 0) {
        auto it = context.instructions.find(instruction.operand_ids(0));
        if (it != context.instructions.end()) selector = it->second;
      }
      if (called.size() == 2 && selector != nullptr && selector->shape().element_type() == PRED) {
        attributes.push_back(absl::StrCat("true_computation=", called[0]));
        attributes.push_back(absl::StrCat("false_computation=", called[1]));
      } else {
        attributes.push_back(
            absl::StrCat("branch_computations={", absl::StrJoin(called, ", "), "}"));
      }
    } else if (opcode == "custom-call") {
      attributes.push_back(absl::StrCat("called_computations={", absl::StrJoin(called, ", "), "}"));
    } else {
      AXLE_RETURN_IF_ERROR(expect(1));
      attributes.push_back(absl::StrCat("to_apply=", called[0]));
    }
  }
  if (opcode == "iota") {
    if (instruction.dimensions_size() != 1) {
      return Invalid(absl::StrCat(where, ": iota needs one entry in dimensions"));
    }
    attributes.push_back(absl::StrCat("iota_dimension=", instruction.dimensions(0)));
  }
  for (const AttributeField& field : kAttributes) {
    if (opcode == "iota" && absl::string_view(field.key) == "dimensions") continue;
    const bool always = AlwaysWritten(opcode, field.key);
    std::string text = FieldText(instruction, field, always);
    if (!text.empty()) attributes.push_back(std::move(text));
  }
  if (opcode == "gather" || opcode == "scatter") {
    attributes.push_back(absl::StrCat(
        "index_vector_dim=", opcode == "gather"
                                 ? instruction.gather_dimension_numbers().index_vector_dim()
                                 : instruction.scatter_dimension_numbers().index_vector_dim()));
  }
  if (instruction.has_convolution_dimension_numbers()) {
    AXLE_ASSIGN_OR_RETURN(std::string labels,
                          DimLabelsText(instruction.convolution_dimension_numbers()));
    attributes.push_back(std::move(labels));
  }
  if (instruction.slice_dimensions_size() > 0 || opcode == "slice") {
    std::vector<std::string> ranges;
    for (const auto& d : instruction.slice_dimensions()) {
      ranges.push_back(absl::StrCat("[", d.start(), ":", d.limit(), ":", d.stride(), "]"));
    }
    attributes.push_back(absl::StrCat("slice={", absl::StrJoin(ranges, ", "), "}"));
  }
  if (instruction.has_padding_config()) {
    std::vector<std::string> dims;
    for (const auto& d : instruction.padding_config().dimensions()) {
      dims.push_back(absl::StrCat(d.edge_padding_low(), "_", d.edge_padding_high(), "_",
                                  d.interior_padding()));
    }
    attributes.push_back(absl::StrCat("padding=", absl::StrJoin(dims, "x")));
  }
  if (instruction.has_window() && instruction.window().dimensions_size() > 0) {
    std::vector<std::string> size, stride, pad, lhs, rhs, reversal;
    for (const auto& d : instruction.window().dimensions()) {
      size.push_back(absl::StrCat(d.size()));
      stride.push_back(absl::StrCat(d.stride() == 0 ? 1 : d.stride()));
      pad.push_back(absl::StrCat(d.padding_low(), "_", d.padding_high()));
      lhs.push_back(absl::StrCat(d.base_dilation() == 0 ? 1 : d.base_dilation()));
      rhs.push_back(absl::StrCat(d.window_dilation() == 0 ? 1 : d.window_dilation()));
      reversal.push_back(d.window_reversal() ? "1" : "0");
    }
    attributes.push_back(absl::StrCat(
        "window={size=", absl::StrJoin(size, "x"), " stride=", absl::StrJoin(stride, "x"),
        " pad=", absl::StrJoin(pad, "x"), " lhs_dilate=", absl::StrJoin(lhs, "x"), " rhs_dilate=",
        absl::StrJoin(rhs, "x"), " rhs_reversal=", absl::StrJoin(reversal, "x"), "}"));
  }
  if (instruction.replica_groups_size() > 0) {
    std::vector<std::string> groups;
    for (const auto& g : instruction.replica_groups()) groups.push_back(IntList(g.replica_ids()));
    attributes.push_back(absl::StrCat("replica_groups={", absl::StrJoin(groups, ","), "}"));
  }
  if (instruction.source_target_pairs_size() > 0) {
    std::vector<std::string> pairs;
    for (const auto& p : instruction.source_target_pairs()) {
      pairs.push_back(absl::StrCat("{", p.source(), ",", p.target(), "}"));
    }
    attributes.push_back(absl::StrCat("source_target_pairs={", absl::StrJoin(pairs, ","), "}"));
  }
  if (instruction.has_precision_config()) {
    if (instruction.precision_config().algorithm() != 0) {
      return Unimplemented(absl::StrCat("PrecisionConfig.algorithm (", where, ")"));
    }
    std::vector<std::string> names;
    for (int precision : instruction.precision_config().operand_precision()) {
      if (precision < 0 || precision > 2) {
        return Invalid(absl::StrCat(where, ": operand_precision ", precision));
      }
      names.push_back(kPrecisions[precision]);
    }
    if (!names.empty()) {
      attributes.push_back(absl::StrCat("operand_precision={", absl::StrJoin(names, ","), "}"));
    }
  }
  auto named = [&](auto& names, int value, const char* key) -> absl::Status {
    if (value < 0 || value >= static_cast<int>(std::size(names))) {
      return Invalid(absl::StrCat(where, ": ", key, " ", value));
    }
    attributes.push_back(absl::StrCat(key, "=", names[value]));
    return absl::OkStatus();
  };
  if (instruction.custom_call_api_version() != 0) {
    AXLE_RETURN_IF_ERROR(named(kApiVersions, instruction.custom_call_api_version(), "api_version"));
  }
  if (instruction.distribution() != 0) {
    AXLE_RETURN_IF_ERROR(named(kDistributions, instruction.distribution(), "distribution"));
  }
  if (opcode == "fft") AXLE_RETURN_IF_ERROR(named(kFftTypes, instruction.fft_type(), "fft_type"));
  if (opcode == "rng-bit-generator") {
    AXLE_RETURN_IF_ERROR(named(kRngAlgorithms, instruction.rng_algorithm(), "algorithm"));
  }
  if (instruction.has_sharding()) {
    AXLE_ASSIGN_OR_RETURN(std::string sharding, ShardingText(instruction.sharding()));
    attributes.push_back(absl::StrCat("sharding=", sharding));
  }
  if (instruction.control_predecessor_ids_size() > 0) {
    std::vector<std::string> names;
    for (int64_t id : instruction.control_predecessor_ids()) {
      auto it = context.instructions.find(id);
      if (it == context.instructions.end()) {
        return Invalid(
            absl::StrCat(where, ": control predecessor id ", id, " is no earlier instruction"));
      }
      names.push_back(absl::StrCat("%", it->second->name()));
    }
    attributes.push_back(absl::StrCat("control-predecessors={", absl::StrJoin(names, ", "), "}"));
  }
  std::string line = absl::StrCat(root ? "ROOT " : "", "%", instruction.name(), " = ",
                                  shape.ToString(true), " ", opcode, "(", operands, ")");
  for (const std::string& attribute : attributes) absl::StrAppend(&line, ", ", attribute);
  return line;
}

absl::StatusOr<std::string> ModuleText(const HloModuleProto& proto,
                                       absl::flat_hash_map<std::string, Literal>* constants) {
  std::vector<const pb::FieldDescriptor*> set_fields;
  proto.GetReflection()->ListFields(proto, &set_fields);
  for (const pb::FieldDescriptor* field : set_fields) {
    static const char* const kHandled[] = {"name",
                                           "entry_computation_name",
                                           "entry_computation_id",
                                           "computations",
                                           "host_program_shape",
                                           "id",
                                           "schedule",
                                           "input_output_alias",
                                           "buffer_donor",
                                           "frontend_attributes"};
    if (std::find_if(std::begin(kHandled), std::end(kHandled), [&](const char* name) {
          return field->name() == name;
        }) == std::end(kHandled)) {
      return Unimplemented(absl::StrCat("HloModuleProto.", field->name()));
    }
  }
  if (proto.computations_size() == 0) return Invalid("the module has no computations");
  TextContext context;
  for (const HloComputationProto& computation : proto.computations()) {
    if (!context.computation_names.emplace(computation.id(), computation.name()).second) {
      return Invalid(absl::StrCat("computation id ", computation.id(), " is used twice"));
    }
  }
  std::string text =
      absl::StrCat("HloModule ", proto.name().empty() ? "module" : proto.name(), "\n\n");
  bool found_entry = false;
  for (const HloComputationProto& computation : proto.computations()) {
    if (!computation.execution_thread().empty() && computation.execution_thread() != "main") {
      return Unimplemented(absl::StrCat("HloComputationProto.execution_thread (computation %",
                                        computation.name(), ")"));
    }
    const bool entry = computation.id() == proto.entry_computation_id();
    found_entry |= entry;
    absl::StrAppend(&text, entry ? "ENTRY " : "", "%", computation.name(), " {\n");
    bool found_root = false;
    for (const HloInstructionProto& instruction : computation.instructions()) {
      const bool root = instruction.id() == computation.root_id();
      found_root |= root;
      AXLE_ASSIGN_OR_RETURN(std::string line, InstructionText(instruction, root, context));
      absl::StrAppend(&text, "  ", line, "\n");
      context.instructions[instruction.id()] = &instruction;
    }
    if (!found_root) {
      return Invalid(absl::StrCat("computation %", computation.name(), ": root id ",
                                  computation.root_id(), " is none of its instructions"));
    }
    absl::StrAppend(&text, "}\n\n");
  }
  if (!found_entry) {
    return Invalid(absl::StrCat("entry_computation_id ", proto.entry_computation_id(),
                                " is none of the computations"));
  }
  *constants = std::move(context.constants);
  return text;
}

}  // namespace

namespace {

// The instructions of `computation` in the order they were added when that
// order has operands (and control predecessors) first, as for a module
// read from text (so that the module read back prints the same), else in
// post order.
std::vector<HloInstruction*> InstructionOrder(const HloComputation& computation) {
  std::vector<HloInstruction*> order = computation.instructions();
  absl::flat_hash_set<const HloInstruction*> seen;
  for (const HloInstruction* instruction : order) {
    for (const HloInstruction* operand : instruction->operands()) {
      if (!seen.contains(operand)) return computation.MakeInstructionPostOrder();
    }
    for (const HloInstruction* predecessor : instruction->control_predecessors()) {
      if (!seen.contains(predecessor)) return computation.MakeInstructionPostOrder();
    }
    seen.insert(instruction);
  }
  return order;
}

// The same for the computations of `module`: callees first.
std::vector<HloComputation*> ComputationOrder(const HloModule& module) {
  std::vector<HloComputation*> order = module.computations();
  absl::flat_hash_set<const HloComputation*> seen;
  for (const HloComputation* computation : order) {
    for (const HloInstruction* instruction : computation->instructions()) {
      for (const HloComputation* called : instruction->called_computations()) {
        if (!seen.contains(called)) return module.MakeComputationPostOrder();
      }
    }
    seen.insert(computation);
  }
  return order;
}

}  // namespace

absl::StatusOr<proto::HloModuleProto> HloModule::ToProtoOrError() const {
  HloModuleProto out;
  out.set_name(name());
  absl::flat_hash_map<const HloComputation*, int64_t> computation_ids;
  absl::flat_hash_map<const HloInstruction*, int64_t> ids;
  const std::vector<HloComputation*> order = ComputationOrder(*this);
  int64_t next_id = 0;
  for (const HloComputation* computation : order) {
    computation_ids[computation] = static_cast<int64_t>(computation_ids.size());
    for (const HloInstruction* instruction : InstructionOrder(*computation)) {
      ids[instruction] = next_id++;
    }
  }
  for (const HloComputation* computation : order) {
    if (computation->execution_thread() != "main") {
      return Unimplemented(
          absl::StrCat("the execution thread of computation %", computation->name()));
    }
    HloComputationProto* c = out.add_computations();
    c->set_name(computation->name());
    c->set_id(computation_ids.at(computation));
    c->set_root_id(ids.at(computation->root_instruction()));
    c->set_is_fusion_computation(computation->IsFusionComputation());
    for (const HloInstruction* instruction : InstructionOrder(*computation)) {
      AXLE_ASSIGN_OR_RETURN(*c->add_instructions(),
                            InstructionToProto(*instruction, ids, computation_ids));
    }
    if (config().is_scheduled && !computation->IsFusionComputation()) {
      auto& sequence = (*out.mutable_schedule()->mutable_sequences())[c->id()];
      for (const HloInstructionProto& instruction : c->instructions()) {
        sequence.add_instruction_ids(instruction.id());
      }
    }
  }
  if (entry_computation() == nullptr) return Invalid("the module has no entry computation");
  out.set_entry_computation_name(entry_computation()->name());
  out.set_entry_computation_id(computation_ids.at(entry_computation()));
  const ProgramShape program_shape = config().entry_computation_layout.has_value()
                                         ? *config().entry_computation_layout
                                         : entry_computation_program_shape();
  for (const Shape& parameter : program_shape.parameters()) {
    AXLE_ASSIGN_OR_RETURN(*out.mutable_host_program_shape()->add_parameters(),
                          ShapeToProto(parameter));
  }
  AXLE_ASSIGN_OR_RETURN(*out.mutable_host_program_shape()->mutable_result(),
                        ShapeToProto(program_shape.result()));
  for (const auto& alias : input_output_alias_config().aliases()) {
    auto* entry = out.mutable_input_output_alias()->add_entries();
    for (int64_t i : alias.output_index) entry->add_output_shape_index(i);
    entry->set_parameter_number(alias.parameter_number);
    for (int64_t i : alias.parameter_index) entry->add_parameter_shape_index(i);
    entry->set_kind(alias.must_alias() ? 2 : 1);
  }
  for (const auto& donor : buffer_donor_config().donors()) {
    auto* entry = out.mutable_buffer_donor()->add_entries();
    entry->set_parameter_number(donor.parameter_number);
    for (int64_t i : donor.parameter_index) entry->add_parameter_shape_index(i);
  }
  for (const auto& [key, value] : config().frontend_attributes) {
    (*out.mutable_frontend_attributes()->mutable_map())[key] = value;
  }
  return out;
}

proto::HloModuleProto HloModule::ToProto() const {
  absl::StatusOr<HloModuleProto> proto = ToProtoOrError();
  if (proto.ok()) return *std::move(proto);
  std::cerr << "axle: HloModule::ToProto of " << name() << ": " << proto.status() << "\n";
  return HloModuleProto();
}

absl::StatusOr<std::unique_ptr<HloModule>> HloModule::CreateFromProto(
    const proto::HloModuleProto& proto, const HloModuleConfig& config) {
  absl::flat_hash_map<std::string, Literal> constants;
  AXLE_ASSIGN_OR_RETURN(std::string text, ModuleText(proto, &constants));
  HloModuleConfig start = config;
  start.input_output_alias = {};
  start.buffer_donor = {};
  start.frontend_attributes = {};
  start.is_scheduled = proto.has_schedule();
  AXLE_ASSIGN_OR_RETURN(std::unique_ptr<HloModule> module,
                        ParseAndReturnUnverifiedModule(text, start, "<HloModuleProto>"));
  // The text's header (which has none) reset what `config` gives and the
  // proto does not: the replica and partition counts, the entry layout,
  // header attributes kept verbatim.
  HloModuleConfig& module_config = module->mutable_config();
  module_config.entry_computation_layout = config.entry_computation_layout;
  module_config.replica_count = config.replica_count;
  module_config.num_partitions = config.num_partitions;
  module_config.raw_attributes = config.raw_attributes;
  module_config.stack_frame_index = config.stack_frame_index;
  module_config.is_scheduled = proto.has_schedule();
  for (const auto& entry : proto.input_output_alias().entries()) {
    ShapeIndex output(entry.output_shape_index().begin(), entry.output_shape_index().end());
    ShapeIndex parameter(entry.parameter_shape_index().begin(),
                         entry.parameter_shape_index().end());
    AXLE_RETURN_IF_ERROR(module->input_output_alias_config().SetUpAlias(
        output, entry.parameter_number(), parameter,
        entry.kind() == 2 ? HloInputOutputAliasConfig::kMustAlias
                          : HloInputOutputAliasConfig::kMayAlias));
  }
  for (const auto& entry : proto.buffer_donor().entries()) {
    ShapeIndex index(entry.parameter_shape_index().begin(), entry.parameter_shape_index().end());
    AXLE_RETURN_IF_ERROR(
        module->buffer_donor_config().AddBufferDonor(entry.parameter_number(), index));
  }
  for (const auto& [key, value] : proto.frontend_attributes().map()) {
    module->mutable_config().frontend_attributes[key] = value;
  }
  // Metadata and frontend attributes, by instruction name.
  absl::flat_hash_map<std::string, HloInstruction*> by_name;
  for (HloComputation* computation : module->computations()) {
    for (HloInstruction* instruction : computation->instructions()) {
      by_name[instruction->name()] = instruction;
    }
  }
  for (const HloComputationProto& computation : proto.computations()) {
    for (const HloInstructionProto& instruction : computation.instructions()) {
      auto it = by_name.find(instruction.name());
      if (it == by_name.end()) continue;
      if (auto constant = constants.find(instruction.name()); constant != constants.end()) {
        auto* attrs = cast<HloConstantInstruction>(it->second)->mutable_attrs();
        attrs->literal = std::move(constant->second);
        attrs->elided = false;
      }
      AXLE_ASSIGN_OR_RETURN(OpMetadata metadata, MetadataFromProto(instruction.metadata()));
      it->second->set_metadata(std::move(metadata));
      for (const auto& [key, value] : instruction.frontend_attributes().map()) {
        (*it->second->mutable_frontend_attributes())[key] = value;
      }
    }
  }
  return module;
}

absl::StatusOr<std::unique_ptr<HloModule>> ReadHloModuleProtoFile(const std::string& path,
                                                                  const HloModuleConfig& config) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open ", path));
  HloModuleProto proto;
  if (!proto.ParseFromIstream(&in)) {
    return absl::InvalidArgumentError(absl::StrCat(path, " is not a binary HloModuleProto"));
  }
  absl::StatusOr<std::unique_ptr<HloModule>> module = HloModule::CreateFromProto(proto, config);
  if (!module.ok()) {
    return absl::Status(module.status().code(),
                        absl::StrCat(path, ": ", module.status().message()));
  }
  return module;
}

absl::Status WriteHloModuleProtoFile(const HloModule& module, const std::string& path) {
  AXLE_ASSIGN_OR_RETURN(HloModuleProto proto, module.ToProtoOrError());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out || !proto.SerializeToOstream(&out)) {
    return absl::InternalError(absl::StrCat("cannot write ", path));
  }
  return absl::OkStatus();
}

}  // namespace axle
