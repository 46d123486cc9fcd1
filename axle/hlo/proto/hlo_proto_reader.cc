// XLA's HloModuleProto to HLO modules (see hlo_proto.h):
// HloModule::CreateFromProto and ReadHloModuleProtoFile.
//
// The proto becomes HLO text that the parser reads (so it checks everything
// text is checked for); array constants, metadata and frontend attributes
// are then set on the instructions. Each attribute field goes back to its
// `key=value` by the table the writer uses too (hlo_proto_internal.h) or by a
// function below; a field set that neither reads is an Unimplemented error
// naming it.
#include <algorithm>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "axle/base/status_macros.h"
#include "axle/core/literal_text.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/proto/hlo_proto.h"
#include "axle/hlo/proto/hlo_proto_internal.h"
#include "axle/hlo/text/hlo_parser.h"

namespace axle {
namespace {

namespace pb = ::google::protobuf;
using namespace hlo_proto_internal;  // NOLINT(google-build-using-namespace)

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
                                         "rng_algorithm"};
  for (const char* handled : kHandled) {
    if (name == handled) return true;
  }
  return IsAttributeFieldPath(name);
}

// The text of one field of AttributeFields() (`key=value`), or "" when unset.
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
  for (const AttributeField& field : AttributeFields()) {
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

}  // namespace axle
