// HLO modules to XLA's HloModuleProto (see hlo_proto.h): HloModule::ToProto,
// HloModule::ToProtoOrError and WriteHloModuleProtoFile.
//
// Module and computation structure, shapes, literals, metadata and frontend
// attributes come from the IR; an instruction's own attributes come from its
// canonical text (the printer knows every op's attributes), each
// `key=value` mapped to its proto field by the shared table
// (hlo_proto_internal.h) or by a function below. A key without a mapping is an
// Unimplemented error naming it. The reader (hlo_proto_reader.cc) is the
// inverse.
#include <algorithm>
#include <fstream>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "axle/base/status_macros.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/proto/hlo_proto.h"
#include "axle/hlo/proto/hlo_proto_internal.h"
#include "axle/hlo/text/attribute_text.h"
#include "axle/hlo/text/hlo_printer.h"

namespace axle {
namespace {

namespace pb = ::google::protobuf;
using namespace hlo_proto_internal;  // NOLINT(google-build-using-namespace)

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

// The first position of `text` from `from` on, outside strings ("..." with
// \-escapes), where `stop(c, depth)` holds: `c` the character there, `depth`
// the brackets open once it is read (a closing bracket has closed). npos when
// there is none.
template <typename Stop>
size_t ScanOutsideStrings(absl::string_view text, size_t from, Stop stop) {
  int depth = 0;
  bool quoted = false;
  for (size_t i = from; i < text.size(); ++i) {
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
      continue;
    }
    if (c == '{' || c == '[' || c == '(') {
      ++depth;
    } else if (c == '}' || c == ']' || c == ')') {
      --depth;
    }
    if (stop(c, depth)) return i;
  }
  return absl::string_view::npos;
}

// Splits `text` at the separators outside brackets and strings.
std::vector<std::string> SplitTopLevel(absl::string_view text, char separator) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    const size_t end = ScanOutsideStrings(
        text, start, [&](char c, int depth) { return c == separator && depth == 0; });
    std::string part(absl::StripAsciiWhitespace(
        text.substr(start, end == absl::string_view::npos ? end : end - start)));
    if (!part.empty()) parts.push_back(std::move(part));
    if (end == absl::string_view::npos) return parts;
    start = end + 1;
  }
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

// `{{0,1},{2,3}}` (attribute_text's reader, with this file's error prefix).
absl::StatusOr<std::vector<std::vector<int64_t>>> ParseIntLists(absl::string_view value,
                                                                absl::string_view what) {
  absl::StatusOr<std::vector<std::vector<int64_t>>> lists = ParseInt64ListList(value, what);
  if (!lists.ok()) return Invalid(lists.status().message());
  return lists;
}

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
  for (const AttributeField& field : AttributeFields()) {
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
  // The bracket that closes the operand list.
  const size_t close = ScanOutsideStrings(text, open + opcode.size() - 1, [](char c, int depth) {
    return depth == 0 && (c == ')' || c == '}' || c == ']');
  });
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

// Whether every node of `order` comes after the nodes `for_each_dependency`
// names for it.
template <typename Node, typename ForEachDependency>
bool DependenciesFirst(const std::vector<Node*>& order, ForEachDependency for_each_dependency) {
  absl::flat_hash_set<const Node*> seen;
  for (const Node* node : order) {
    bool ready = true;
    for_each_dependency(
        *node, [&](const Node* dependency) { ready = ready && seen.contains(dependency); });
    if (!ready) return false;
    seen.insert(node);
  }
  return true;
}

// The instructions of `computation` in the order they were added when that
// order has operands (and control predecessors) first, as for a module
// read from text (so that the module read back prints the same), else in
// post order.
std::vector<HloInstruction*> InstructionOrder(const HloComputation& computation) {
  std::vector<HloInstruction*> order = computation.instructions();
  const bool added_in_order =
      DependenciesFirst(order, [](const HloInstruction& instruction, const auto& visit) {
        for (const HloInstruction* operand : instruction.operands()) visit(operand);
        for (const HloInstruction* predecessor : instruction.control_predecessors()) {
          visit(predecessor);
        }
      });
  return added_in_order ? order : computation.MakeInstructionPostOrder();
}

// The same for the computations of `module`: callees first.
std::vector<HloComputation*> ComputationOrder(const HloModule& module) {
  std::vector<HloComputation*> order = module.computations();
  const bool added_in_order =
      DependenciesFirst(order, [](const HloComputation& computation, const auto& visit) {
        for (const HloInstruction* instruction : computation.instructions()) {
          for (const HloComputation* called : instruction->called_computations()) visit(called);
        }
      });
  return added_in_order ? order : module.MakeComputationPostOrder();
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

absl::Status WriteHloModuleProtoFile(const HloModule& module, const std::string& path) {
  AXLE_ASSIGN_OR_RETURN(HloModuleProto proto, module.ToProtoOrError());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out || !proto.SerializeToOstream(&out)) {
    return absl::InternalError(absl::StrCat("cannot write ", path));
  }
  return absl::OkStatus();
}

}  // namespace axle
