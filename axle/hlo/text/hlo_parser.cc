//===- hlo_parser.cc - Modules, computations, instructions ----------------===//
//
// The grammar (XLA's):
//
//   module       ::= 'HloModule' name (',' attribute)* stack_frames? computation+
//                  | computation+                      (no header)
//   computation  ::= 'ENTRY'? name param_list_to_shape? '{' instruction+ '}'
//                    (',' 'execution_thread=' string)?
//   param_list_to_shape ::= '(' (name shape (',' name shape)*)? ')' '->' shape
//   instruction  ::= 'ROOT'? name '=' shape? opcode operands (',' attribute)*
//   operands     ::= '(' (operand (',' operand)*)? ')'
//   operand      ::= shape? name ('#' int)*            (a name, or a tuple element)
//                  | shape? opcode operands            (a nested instruction)
//   shape        ::= type '[' dims ']' layout? | '(' (shape (',' shape)*)? ')'
//                  | 'b(' shape ')'                    (a buffer; hlo_parser_shapes.cc)
//
//===----------------------------------------------------------------------===//
#include "axle/hlo/text/hlo_parser.h"

#include <algorithm>
#include <limits>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "axle/core/shape_util.h"
#include "axle/hlo/text/hlo_parser_internal.h"

namespace axle {
namespace hlo_parser_internal {

// --- Names -------------------------------------------------------------------

std::string NameUniquer::GetUniqueName(absl::string_view name) {
  std::string candidate(name);
  if (used_.insert(candidate).second) return candidate;
  // "root.N" shares the counter of "root".
  std::string root = candidate;
  size_t dot = candidate.rfind('.');
  if (dot != std::string::npos && dot + 1 < candidate.size()) {
    int64_t suffix;
    if (absl::SimpleAtoi(absl::string_view(candidate).substr(dot + 1), &suffix) && suffix >= 0) {
      root = candidate.substr(0, dot);
    }
  }
  int64_t& next = next_suffix_[root];
  while (true) {
    ++next;
    std::string generated = absl::StrCat(root, ".", next);
    if (used_.insert(generated).second) return generated;
  }
}

// --- Tokens and errors -----------------------------------------------------------

HloParserImpl::HloParserImpl(absl::string_view text, absl::string_view filename)
    : lexer_(text), filename_(filename) {}

TokKind HloParserImpl::Lex() {
  last_end_ = lexer_.token_end();
  return lexer_.Lex();
}

bool HloParserImpl::Error(size_t offset, absl::string_view message) {
  auto [line, column] = lexer_.LineAndColumn(offset);
  std::string source_line(lexer_.LineAt(offset));
  errors_.push_back(absl::StrCat(filename_, ":", line, ":", column, ": error: ", message, "\n",
                                 source_line, "\n", std::string(column - 1, ' '), "^"));
  return false;
}

void HloParserImpl::Note(size_t offset, absl::string_view message) {
  auto [line, column] = lexer_.LineAndColumn(offset);
  errors_.push_back(absl::StrCat(filename_, ":", line, ":", column, ": note: ", message, "\n",
                                 lexer_.LineAt(offset), "\n", std::string(column - 1, ' '), "^"));
}

bool HloParserImpl::TokenError(absl::string_view message) {
  if (kind() == TokKind::kError && !lexer_.error_message().empty()) {
    return Error(lexer_.token_start(), absl::StrCat(lexer_.error_message(), " (", message, ")"));
  }
  return Error(lexer_.token_start(), message);
}

bool HloParserImpl::ParseToken(TokKind kind, absl::string_view message) {
  if (this->kind() != kind) return TokenError(message);
  Lex();
  return true;
}

bool HloParserImpl::EatIfPresent(TokKind kind) {
  if (this->kind() != kind) return false;
  Lex();
  return true;
}

bool HloParserImpl::CheckDepth() {
  if (depth_ > kMaxDepth) return TokenError("nesting is too deep");
  return true;
}

absl::Status HloParserImpl::ErrorStatus() const {
  if (errors_.empty()) return absl::InvalidArgumentError(absl::StrCat(filename_, ": parse error"));
  // The first error says what went wrong; later entries are notes or the
  // enclosing constructs.
  std::string message = errors_[0];
  for (size_t i = 1; i < errors_.size() && i < 4; ++i) absl::StrAppend(&message, "\n", errors_[i]);
  return absl::InvalidArgumentError(message);
}

bool HloParserImpl::ParseName(std::string* name) {
  if (kind() == TokKind::kPrimitiveType) {
    // A name spelled like a type (`s1`, `f32`): where a name is expected,
    // it is one, as in XLA.
    *name = std::string(lexer_.token_text());
    Lex();
    return true;
  }
  if (kind() != TokKind::kIdent && kind() != TokKind::kName) return TokenError("expects name");
  *name = lexer_.str_val();
  Lex();
  return true;
}

// --- Module ----------------------------------------------------------------------

absl::Status HloParserImpl::ParseModule(HloModule* module) {
  Lex();
  if (!ParseHloModule(module)) return ErrorStatus();
  return absl::OkStatus();
}

bool HloParserImpl::ParseHloModule(HloModule* module) {
  HloModuleConfig config = module->config();
  std::string name;
  if (kind() == TokKind::kw_HloModule) {
    Lex();
    if (!ParseName(&name) || !ParseModuleHeader(&config, &name)) return false;
  } else if (kind() != TokKind::kw_ENTRY && lexer_.LookAhead() != TokKind::kLbrace &&
             lexer_.LookAhead() != TokKind::kLparen) {
    return TokenError("expects 'HloModule' or a computation");
  }
  if (kind() == TokKind::kw_FileNames && !ParseStackFrameIndex(&config.stack_frame_index)) {
    return false;
  }
  do {
    if (!ParseComputation()) return false;
  } while (kind() != TokKind::kEof);
  return FinishModule(module, config, name);
}

bool HloParserImpl::ParseModuleHeader(HloModuleConfig* config, std::string* name) {
  std::optional<bool> is_scheduled;
  std::optional<int64_t> replica_count, num_partitions;
  AttrMap attrs;
  attrs["is_scheduled"] = BoolAttr(false, &is_scheduled);
  attrs["replica_count"] = Int64Attr(false, &replica_count);
  attrs["num_partitions"] = Int64Attr(false, &num_partitions);
  attrs["input_output_alias"] = {
      false, [&] {
        // { {output}: (param, {index}(, may-alias|must-alias)?), ... }
        const char* format =
            "Expected format: <output_shape_index>: (<input_param>, <input_param_shape_index>)";
        if (!ParseToken(TokKind::kLbrace, "Expects '{' at the start of aliasing description")) {
          return false;
        }
        while (kind() != TokKind::kRbrace) {
          size_t offset = lexer_.token_start();
          ShapeIndex output, param_index;
          int64_t param;
          if (!ParseShapeIndex(&output) || !ParseToken(TokKind::kColon, format)) return false;
          auto alias_kind = HloInputOutputAliasConfig::AliasKind::kMayAlias;
          if (kind() == TokKind::kInt) {
            // The short form of XLA's aliasing guide, `{ {}: 0 }`: the whole
            // parameter, may-alias.
            if (!ParseInt64(&param)) return false;
            absl::Status status =
                config->input_output_alias.SetUpAlias(output, param, param_index, alias_kind);
            if (!status.ok()) return Error(offset, status.message());
            if (!EatIfPresent(TokKind::kComma)) break;
            continue;
          }
          if (!ParseToken(TokKind::kLparen, format) || !ParseInt64(&param) ||
              !ParseToken(TokKind::kComma, format) || !ParseShapeIndex(&param_index)) {
            return false;
          }
          if (EatIfPresent(TokKind::kComma)) {
            if (kind() == TokKind::kIdent && lexer_.str_val() == "must-alias") {
              alias_kind = HloInputOutputAliasConfig::AliasKind::kMustAlias;
            } else if (kind() != TokKind::kIdent || lexer_.str_val() != "may-alias") {
              return TokenError("Unexpected aliasing kind; expected may-alias or must-alias");
            }
            Lex();
          }
          if (!ParseToken(TokKind::kRparen, format)) return false;
          absl::Status status =
              config->input_output_alias.SetUpAlias(output, param, param_index, alias_kind);
          if (!status.ok()) return Error(offset, status.message());
          if (!EatIfPresent(TokKind::kComma)) break;
        }
        return ParseToken(TokKind::kRbrace, "Expects '}' at the end of aliasing description");
      }};
  attrs["buffer_donor"] = {
      false, [&] {
        const char* format = "Expected format: (<input_param>, <input_param_shape_index>)";
        if (!ParseToken(TokKind::kLbrace, "Expects '{' at the start of buffer donor description")) {
          return false;
        }
        while (kind() != TokKind::kRbrace) {
          size_t offset = lexer_.token_start();
          int64_t param;
          ShapeIndex index;
          if (!ParseToken(TokKind::kLparen, format) || !ParseInt64(&param) ||
              !ParseToken(TokKind::kComma, format) || !ParseShapeIndex(&index) ||
              !ParseToken(TokKind::kRparen, format)) {
            return false;
          }
          absl::Status status = config->buffer_donor.AddBufferDonor(param, index);
          if (!status.ok()) return Error(offset, status.message());
          if (!EatIfPresent(TokKind::kComma)) break;
        }
        return ParseToken(TokKind::kRbrace, "Expects '}' at the end of buffer donor description");
      }};
  attrs["entry_computation_layout"] = {
      false, [&] {
        ProgramShape program_shape;
        if (!ParseToken(TokKind::kLbrace, "Expects '{' at the start of the computation layout") ||
            !ParseToken(TokKind::kLparen, "Expects ( before parameter shape list")) {
          return false;
        }
        while (kind() != TokKind::kRparen) {
          if (!ParseShape(program_shape.add_parameters())) return false;
          if (kind() == TokKind::kRparen) break;
          if (!ParseToken(TokKind::kComma, "Expects , between parameter shapes")) return false;
        }
        if (!ParseToken(TokKind::kRparen, "Expects ) at end of parameter shape list") ||
            !ParseToken(TokKind::kArrow, "Expects -> before result shape") ||
            !ParseShape(program_shape.mutable_result()) ||
            !ParseToken(TokKind::kRbrace, "Expects '}' at the end of computation layouts")) {
          return false;
        }
        config->entry_computation_layout = std::move(program_shape);
        return true;
      }};
  attrs["frontend_attributes"] = {
      false, [&] { return ParseFrontendAttributes(&config->frontend_attributes); }};
  attrs["alias_passthrough_params"] = Raw("alias_passthrough_params", false, [&] {
    bool ignored;
    return ParseBool(&ignored);
  });
  for (const char* spmd : {"allow_spmd_sharding_propagation_to_parameters",
                           "allow_spmd_sharding_propagation_to_output"}) {
    attrs[spmd] = Raw(spmd, false, [&] {
      std::vector<bool> ignored;
      return ParseBoolListOrBool(&ignored);
    });
  }
  attrs["origin_recovery_table"] =
      Raw("origin_recovery_table", false, [&] { return ParseOriginalValueRecoveryTable(); });
  attrs["debug_attributes"] =
      Raw("debug_attributes", false, [&] { return ParseDebugAttributes(); });
  pending_raw_.clear();
  if (!ParseAttributes(attrs)) return false;
  config->is_scheduled = is_scheduled.value_or(false);
  config->replica_count = replica_count.value_or(1);
  config->num_partitions = num_partitions.value_or(1);
  config->raw_attributes = std::move(pending_raw_);
  pending_raw_.clear();
  return true;
}

bool HloParserImpl::ParseStackFrameIndex(std::string* raw) {
  // FileNames (int string)* FunctionNames (int string)* FileLocations
  // (int {sub-attributes})* StackFrames (int {sub-attributes})*
  size_t start = lexer_.token_start();
  Lex();
  auto parse_strings = [&]() {
    while (EatIfPresent(TokKind::kInt)) {
      std::string ignored;
      if (!ParseString(&ignored)) return false;
    }
    return true;
  };
  auto parse_records = [&](std::vector<const char*> fields) {
    while (EatIfPresent(TokKind::kInt)) {
      std::vector<std::optional<int64_t>> values(fields.size());
      AttrMap attrs;
      for (size_t i = 0; i < fields.size(); ++i) attrs[fields[i]] = Int32Attr(false, &values[i]);
      if (!ParseSubAttributes(attrs)) return false;
    }
    return true;
  };
  if (!parse_strings() || !ParseToken(TokKind::kw_FunctionNames, "expects 'FunctionNames'") ||
      !parse_strings() || !ParseToken(TokKind::kw_FileLocations, "expects 'FileLocations'") ||
      !parse_records(
          {"file_name_id", "function_name_id", "line", "end_line", "column", "end_column"}) ||
      !ParseToken(TokKind::kw_StackFrames, "expects 'StackFrames'") ||
      !parse_records({"file_location_id", "parent_frame_id"})) {
    return false;
  }
  *raw = std::string(lexer_.text().substr(start, last_end_ - start));
  return true;
}

bool HloParserImpl::ParseComputation() {
  size_t entry_offset = lexer_.token_start();
  bool is_entry = EatIfPresent(TokKind::kw_ENTRY);
  size_t name_offset = lexer_.token_start();
  std::string name;
  if (!ParseName(&name)) return false;
  std::optional<Shape> signature_result;
  size_t signature_offset = 0;
  if (kind() == TokKind::kLparen) {
    signature_result.emplace();
    if (!ParseParamListToShape(&*signature_result, &signature_offset)) return false;
  }
  HloComputation* computation = nullptr;
  if (!ParseInstructionList(&computation, name, name_offset)) return false;
  if (signature_result.has_value() &&
      !ShapeUtil::Compatible(computation->root_instruction()->shape(), *signature_result)) {
    return Error(
        signature_offset,
        absl::StrCat("Shape of computation ", name, ", ", ShapeUtil::HumanString(*signature_result),
                     ", is not compatible with that of its root instruction ",
                     computation->root_instruction()->name(), ", ",
                     ShapeUtil::HumanString(computation->root_instruction()->shape())));
  }
  std::optional<std::string> execution_thread;
  AttrMap attrs;
  attrs["execution_thread"] = StringAttr(false, &execution_thread);
  if (!ParseAttributes(attrs)) return false;
  if (execution_thread.has_value()) computation->SetExecutionThread(*execution_thread);
  if (is_entry) {
    if (entry_ != nullptr) return Error(entry_offset, "expects only one ENTRY");
    entry_ = computation;
  }
  auto [it, inserted] = computation_pool_.insert({name, {computation, name_offset}});
  if (!inserted) {
    Error(name_offset, absl::StrCat("computation already exists: ", name));
    Note(it->second.second, "computation previously defined here");
    return false;
  }
  return true;
}

bool HloParserImpl::ParseParamListToShape(Shape* shape, size_t* shape_offset) {
  auto param = [&]() {
    std::string name;
    Shape param_shape;
    return ParseName(&name) && ParseShape(&param_shape);
  };
  if (!ParseList(TokKind::kLparen, TokKind::kRparen, TokKind::kComma, param) ||
      !ParseToken(TokKind::kArrow, "expects '->'")) {
    return false;
  }
  *shape_offset = lexer_.token_start();
  return ParseShape(shape);
}

HloComputation* HloParserImpl::AdoptComputation(std::unique_ptr<HloComputation> computation,
                                                bool generated_name) {
  // Computations are kept in the order they are finished (nested ones before
  // the computation holding them), as XLA's parser does.
  HloComputation* raw = computation.get();
  computations_.push_back(std::move(computation));
  if (generated_name) unnamed_computations_.insert(raw);
  return raw;
}

bool HloParserImpl::ParseInstructionList(HloComputation** computation, const std::string& name,
                                         size_t name_offset) {
  DepthGuard guard(this);
  if (!CheckDepth()) return false;
  if (!ParseToken(TokKind::kLbrace, "expects '{' at the beginning of instruction list")) {
    return false;
  }
  auto owned = std::make_unique<HloComputation>(name);
  HloComputation* built = owned.get();
  scopes_.emplace_back();
  scope().computation = built;
  std::string root_name;
  size_t root_offset = 0;
  bool ok = true;
  do {
    if (!ParseInstruction(&root_name, &root_offset)) {
      ok = false;
      break;
    }
  } while (kind() != TokKind::kRbrace);
  if (ok) ok = ParseToken(TokKind::kRbrace, "expects '}' at the end of instruction list");
  if (ok) {
    HloInstruction* root = nullptr;
    if (!root_name.empty()) {
      root = scope().names.at(root_name).first;
    } else {
      std::vector<HloInstruction*> all = built->instructions();
      root = all.back();
    }
    built->set_root_instruction(root);
    for (int64_t i = 0; i < built->num_parameters(); ++i) {
      if (built->parameter_instruction(i) == nullptr) {
        ok = Error(name_offset, absl::StrCat("computation ", name, " has no parameter ", i,
                                             " but has parameter ", built->num_parameters() - 1,
                                             ": parameter numbers must be dense"));
        break;
      }
    }
  }
  scopes_.pop_back();
  if (!ok) return false;
  // A nested computation (`to_apply={...}`) is named "_" like XLA's.
  *computation = AdoptComputation(std::move(owned), /*generated_name=*/name == "_");
  return true;
}

bool HloParserImpl::ParseInstruction(std::string* root_name, size_t* root_offset) {
  size_t maybe_root_offset = lexer_.token_start();
  bool is_root = EatIfPresent(TokKind::kw_ROOT);
  size_t name_offset = lexer_.token_start();
  std::string name;
  if (kind() == TokKind::kAttributeName) {
    // `x=f32[] ...`: the lexer took "x=" for an attribute name.
    name = lexer_.str_val();
    Lex();
  } else if (!ParseName(&name) || !ParseToken(TokKind::kEqual, "expects '=' in instruction")) {
    return false;
  }
  if (is_root) {
    if (!root_name->empty()) {
      Error(maybe_root_offset, "one computation should have only one ROOT");
      Note(*root_offset, "previous ROOT is here");
      return false;
    }
    *root_name = name;
    *root_offset = maybe_root_offset;
  }
  return ParseInstructionRhs(name, name_offset, /*allow_attributes=*/true);
}

namespace {

// Opcodes whose result shape may be left out of the text (XLA's
// CanInferShape).
bool CanInferShape(HloOpcode opcode) {
  if (HloOpcodeIsCollective(opcode)) return false;
  switch (opcode) {
    case HloOpcode::kAsyncDone:
    case HloOpcode::kAsyncStart:
    case HloOpcode::kAsyncUpdate:
    case HloOpcode::kBitcast:
    case HloOpcode::kBitcastConvert:
    case HloOpcode::kConstant:
    case HloOpcode::kConvert:
    case HloOpcode::kCopyDone:
    case HloOpcode::kCopyStart:
    case HloOpcode::kCustomCall:
    case HloOpcode::kDynamicReshape:
    case HloOpcode::kDynamicSlice:
    case HloOpcode::kDynamicUpdateSlice:
    case HloOpcode::kFusion:
    case HloOpcode::kInfeed:
    case HloOpcode::kIota:
    case HloOpcode::kOutfeed:
    case HloOpcode::kParameter:
    case HloOpcode::kRecv:
    case HloOpcode::kRecvDone:
    case HloOpcode::kReducePrecision:
    case HloOpcode::kReshape:
    case HloOpcode::kRng:
    case HloOpcode::kRngBitGenerator:
    case HloOpcode::kRngGetAndUpdateState:
    case HloOpcode::kSend:
    case HloOpcode::kSendDone:
    case HloOpcode::kSlice:
    case HloOpcode::kStochasticConvert:
      return false;
    default:
      return true;
  }
}

// Opcodes XLA gives a result_accuracy attribute: the one-operand
// transcendental functions.
bool HasResultAccuracy(HloOpcode opcode) {
  return HloOpcodeIsTranscendental(opcode) && HloOpcodeArity(opcode) == 1;
}

// A single (non-tuple) sharding text repeated for every leaf of `shape`, as
// XLA's HloSharding::NormalizeTupleSharding does.
std::string TupleShardingForShape(const std::string& single, const Shape& shape) {
  std::vector<std::string> leaves(ShapeUtil::GetLeafCount(shape), single);
  return absl::StrCat("{", absl::StrJoin(leaves, ", "), "}");
}

bool IsTupleShardingText(absl::string_view text) {
  return text == "{}" || (text.size() >= 2 && text[0] == '{' && text[1] == '{');
}

}  // namespace

bool HloParserImpl::ParseInstructionRhs(const std::string& name, size_t name_offset,
                                        bool allow_attributes) {
  DepthGuard guard(this);
  if (!CheckDepth()) return false;
  std::optional<Shape> shape;
  if (CanBeShape()) {
    shape.emplace();
    if (!ParseShape(&*shape)) return false;
  }
  size_t opcode_offset = lexer_.token_start();
  HloOpcode opcode;
  std::optional<HloOpcode> async_wrapped;
  if (!ParseOpcode(&opcode, &async_wrapped)) return false;
  if (!shape.has_value() && !CanInferShape(opcode)) {
    return Error(opcode_offset,
                 absl::StrCat("cannot infer shape for opcode: ", HloOpcodeString(opcode)));
  }

  GenericAttrs generic;
  AttrMap attrs;
  attrs["sharding"] = {false, [&] {
                         std::string text;
                         if (!ParseSharding(&text)) return false;
                         generic.sharding = HloSharding(std::move(text));
                         return true;
                       }};
  attrs["frontend_attributes"] = {false, [&] {
                                    generic.frontend_attributes.emplace();
                                    return ParseFrontendAttributes(&*generic.frontend_attributes);
                                  }};
  attrs["statistics"] = Raw("statistics", false, [&] { return ParseStatistics(); });
  attrs["parameter_replication"] = {
      false, [&] {
        generic.parameter_replication.emplace();
        return ParseParameterReplication(&*generic.parameter_replication);
      }};
  attrs["control-predecessors"] = {false, [&] {
                                     generic.control_predecessors.emplace();
                                     return ParseInstructionNames(&*generic.control_predecessors);
                                   }};
  attrs["origin"] = Raw("origin", false, [&] { return ParseOriginalValue(); });
  attrs["metadata"] = {false, [&] {
                         generic.metadata.emplace();
                         return ParseMetadata(&*generic.metadata);
                       }};
  attrs["backend_config"] = {false, [&] {
                               std::string value;
                               if (!ParseStringOrJsonDict(&value)) return false;
                               generic.backend_config = std::move(value);
                               return true;
                             }};
  HloOpcode accuracy_opcode = async_wrapped.value_or(opcode);
  if (HasResultAccuracy(accuracy_opcode)) {
    attrs["result_accuracy"] = Raw("result_accuracy", false, [&] { return ParseResultAccuracy(); });
  }

  std::vector<RawAttribute> outer_raw;
  std::swap(outer_raw, pending_raw_);
  last_wrapper_ = nullptr;
  HloInstruction* instruction =
      CreateInstruction(shape, opcode, async_wrapped, attrs, allow_attributes, opcode_offset);
  HloComputation* generated_wrapper = last_wrapper_;
  std::vector<RawAttribute> raw = std::move(pending_raw_);
  pending_raw_ = std::move(outer_raw);
  if (instruction == nullptr) return false;

  for (RawAttribute& attribute : raw) {
    instruction->mutable_raw_attributes()->push_back(std::move(attribute));
  }
  if (generic.sharding.has_value()) {
    const std::string& text = generic.sharding->ToString();
    if (instruction->shape().IsTuple() && !IsTupleShardingText(text)) {
      instruction->set_sharding(HloSharding(TupleShardingForShape(text, instruction->shape())));
    } else {
      instruction->set_sharding(*generic.sharding);
    }
  }
  if (generic.parameter_replication.has_value()) {
    auto* parameter = dyn_cast<HloParameterInstruction>(instruction);
    if (parameter == nullptr) {
      return Error(name_offset, "parameter_replication is only allowed on parameters");
    }
    int64_t leaves = ShapeUtil::GetLeafCount(instruction->shape());
    if (leaves != static_cast<int64_t>(generic.parameter_replication->size())) {
      return Error(name_offset, absl::StrCat("parameter has ", leaves,
                                             " leaf buffers, but parameter_replication has ",
                                             generic.parameter_replication->size(), " elements."));
    }
    parameter->mutable_attrs()->parameter_replication = *generic.parameter_replication;
  }
  if (generic.control_predecessors.has_value()) {
    for (HloInstruction* predecessor : *generic.control_predecessors) {
      predecessor->AddControlDependencyTo(instruction);
    }
  }
  // The async wrapper made from the `op-start` shorthand carries the same
  // generic attributes as its async-start.
  HloInstruction* wrapped = nullptr;
  if (isa<HloAsyncInstruction>(instruction) && generated_wrapper != nullptr &&
      instruction->called_computations()[0] == generated_wrapper) {
    wrapped = generated_wrapper->root_instruction();
  }
  if (generic.metadata.has_value()) {
    instruction->set_metadata(*generic.metadata);
    if (wrapped != nullptr) wrapped->set_metadata(*generic.metadata);
  }
  if (generic.backend_config.has_value()) {
    instruction->set_raw_backend_config_string(*generic.backend_config);
    if (wrapped != nullptr) wrapped->set_raw_backend_config_string(*generic.backend_config);
  }
  if (generic.frontend_attributes.has_value()) {
    instruction->set_frontend_attributes(*generic.frontend_attributes);
    if (wrapped != nullptr) wrapped->set_frontend_attributes(*generic.frontend_attributes);
  }

  last_created_ = instruction;
  if (name.empty()) {
    instruction->SetName(absl::StrCat(HloOpcodeString(instruction->opcode()), ".anon"));
    unnamed_instructions_.push_back({instruction, instruction->name()});
    unnamed_set_.insert(instruction);
    return true;
  }
  instruction->SetName(name);
  auto [it, inserted] = scope().names.insert({name, {instruction, name_offset}});
  if (!inserted) {
    Error(name_offset, absl::StrCat("instruction already exists: ", name));
    Note(it->second.second, "instruction previously defined here");
    return false;
  }
  return true;
}

bool HloParserImpl::ParseOpcode(HloOpcode* opcode, std::optional<HloOpcode>* async_wrapped) {
  if (kind() != TokKind::kIdent) return TokenError("expects opcode");
  const std::string& text = lexer_.str_val();
  if (std::optional<HloOpcode> found = StringToHloOpcode(text)) {
    *opcode = *found;
    Lex();
    return true;
  }
  static constexpr std::pair<absl::string_view, HloOpcode> kAsyncSuffixes[] = {
      {"-start", HloOpcode::kAsyncStart},
      {"-update", HloOpcode::kAsyncUpdate},
      {"-done", HloOpcode::kAsyncDone},
  };
  for (const auto& [suffix, async_opcode] : kAsyncSuffixes) {
    absl::string_view view(text);
    if (view.size() > suffix.size() && view.substr(view.size() - suffix.size()) == suffix) {
      std::optional<HloOpcode> inner =
          StringToHloOpcode(view.substr(0, view.size() - suffix.size()));
      if (!inner.has_value()) {
        return TokenError(absl::StrCat("expects async wrapped opcode but sees: ", text));
      }
      *opcode = async_opcode;
      *async_wrapped = *inner;
      Lex();
      return true;
    }
  }
  return TokenError(absl::StrCat("unknown opcode: ", text));
}

// --- Operands ----------------------------------------------------------------------

bool HloParserImpl::ParseOperands(std::vector<HloInstruction*>* operands) {
  DepthGuard guard(this);
  if (!CheckDepth()) return false;
  if (!ParseToken(TokKind::kLparen, "expects '(' at the beginning of operands")) return false;
  if (kind() != TokKind::kRparen) {
    do {
      if (!ParseOperand(operands)) return false;
    } while (EatIfPresent(TokKind::kComma));
  }
  return ParseToken(TokKind::kRparen, "expects ')' at the end of operands");
}

bool HloParserImpl::ParseOperands(std::vector<HloInstruction*>* operands, int64_t expected) {
  size_t offset = lexer_.token_start();
  if (!ParseOperands(operands)) return false;
  if (static_cast<int64_t>(operands->size()) != expected) {
    return Error(offset, absl::StrCat("expects ", expected, " operands, but has ", operands->size(),
                                      " operands"));
  }
  return true;
}

bool HloParserImpl::ParseOperand(std::vector<HloInstruction*>* operands) {
  Checkpoint start = Save();
  size_t offset = lexer_.token_start();
  std::optional<Shape> declared;
  if (CanBeShape()) {
    declared.emplace();
    if (!ParseShape(&*declared)) return false;
  }
  if (declared.has_value() && (kind() == TokKind::kComma || kind() == TokKind::kRparen) &&
      !create_missing_operands_) {
    // A shape with neither name nor opcode (`add(f32[] %a, f32[], %b)`).
    // XLA's parser records an error for it but goes on without the operand
    // and succeeds (XLA's hlo_module_splitting_test relies on it); so does
    // Axle's. The operand count is still checked: `add(f32[] %a, f32[])`
    // has one operand.
    return true;
  }
  if (kind() == TokKind::kIdent && lexer_.LookAhead() == TokKind::kLparen) {
    // A nested instruction: `add(f32[] parameter(0), ...)`.
    Restore(start);
    if (!ParseInstructionRhs("", offset, /*allow_attributes=*/false)) return false;
    operands->push_back(last_created_);
    return true;
  }
  size_t name_offset = lexer_.token_start();
  std::string name;
  if (!ParseName(&name)) return false;
  auto it = scope().names.find(name);
  if (it == scope().names.end() && create_missing_operands_ && declared.has_value() &&
      scopes_.size() == 1) {
    HloComputation* computation = scope().computation;
    auto parameter = std::make_unique<HloParameterInstruction>(HloOpcode::kParameter, *declared,
                                                               std::vector<HloInstruction*>{});
    parameter->mutable_attrs()->parameter_number = computation->num_parameters();
    HloInstruction* added = Add(std::move(parameter));
    added->SetName(name);
    it = scope().names.insert({name, {added, name_offset}}).first;
  }
  if (it == scope().names.end()) {
    return Error(name_offset, absl::StrCat("instruction does not exist: ", name));
  }
  HloInstruction* operand = it->second.first;
  while (kind() == TokKind::kOctothorp) {
    size_t hash_offset = lexer_.token_start();
    Lex();
    if (!ResolveTupleIndex(&operand, hash_offset)) return false;
  }
  if (declared.has_value() && !ShapeUtil::Compatible(operand->shape(), *declared)) {
    return Error(offset, absl::StrCat("The declared operand shape ",
                                      ShapeUtil::HumanStringWithLayout(*declared),
                                      " is not compatible with the shape of the operand "
                                      "instruction ",
                                      ShapeUtil::HumanStringWithLayout(operand->shape()), "."));
  }
  if (kind() != TokKind::kComma && kind() != TokKind::kRparen) {
    return TokenError("expects ',' or ')' after an operand");
  }
  operands->push_back(operand);
  return true;
}

bool HloParserImpl::ResolveTupleIndex(HloInstruction** instruction, size_t offset) {
  if (kind() != TokKind::kInt) return TokenError("expects a tuple index after '#'");
  int64_t index = lexer_.int64_val();
  HloInstruction* tuple = *instruction;
  const Shape& shape = tuple->shape();
  if (!shape.IsTuple()) {
    return TokenError(absl::StrCat("'#' needs a tuple operand, but ", tuple->name(), " has shape ",
                                   ShapeUtil::HumanString(shape)));
  }
  if (index < 0 || index >= shape.tuple_shapes_size()) {
    return TokenError(absl::StrCat("tuple index ", index, " is out of range for shape ",
                                   ShapeUtil::HumanString(shape)));
  }
  Lex();
  std::string key = absl::StrCat(reinterpret_cast<uintptr_t>(tuple), "/", index);
  HloInstruction*& element = scope().tuple_elements[key];
  if (element == nullptr) {
    auto gte = std::make_unique<HloGetTupleElementInstruction>(HloOpcode::kGetTupleElement,
                                                               shape.tuple_shapes(index),
                                                               std::vector<HloInstruction*>{tuple});
    gte->mutable_attrs()->tuple_index = index;
    element = Add(std::move(gte));
    element->SetName(absl::StrCat(tuple->name(), "_", index));
    unnamed_instructions_.push_back({element, element->name()});
    unnamed_set_.insert(element);
  }
  *instruction = element;
  return true;
}

HloInstruction* HloParserImpl::Add(std::unique_ptr<HloInstruction> instruction) {
  return scope().computation->AddInstruction(std::move(instruction));
}

// --- Finishing the module --------------------------------------------------------------

bool HloParserImpl::FinishModule(HloModule* module, const HloModuleConfig& config,
                                 const std::string& header_name) {
  if (entry_ == nullptr) entry_ = computations_.back().get();

  // Names: the written ones first (a name reused in another computation gets
  // a suffix), then the generated ones.
  NameUniquer computation_names;
  NameUniquer instruction_names;
  for (const auto& computation : computations_) {
    if (!unnamed_computations_.contains(computation.get())) {
      computation->SetName(computation_names.GetUniqueName(computation->name()));
    }
  }
  for (const auto& computation : computations_) {
    if (unnamed_computations_.contains(computation.get())) {
      computation->SetName(computation_names.GetUniqueName(computation->name()));
    }
  }
  for (const auto& computation : computations_) {
    for (HloInstruction* instruction : computation->instructions()) {
      if (!unnamed_set_.contains(instruction)) {
        instruction->SetName(instruction_names.GetUniqueName(instruction->name()));
      }
    }
  }
  for (const auto& [instruction, base] : unnamed_instructions_) {
    instruction->SetName(instruction_names.GetUniqueName(base));
  }

  for (const auto& computation : computations_) {
    for (HloInstruction* instruction : computation->instructions()) {
      if (instruction->opcode() == HloOpcode::kFusion &&
          !instruction->called_computations().empty()) {
        instruction->called_computations()[0]->SetFusionInstruction(instruction);
      }
    }
  }

  const Shape& result_shape = entry_->root_instruction()->shape();
  for (const auto& alias : config.input_output_alias.aliases()) {
    if (!ShapeUtil::IndexIsValid(result_shape, alias.output_index)) {
      return Error(lexer_.text().size(), absl::StrCat("input_output_alias: output index ",
                                                      ShapeIndexToString(alias.output_index),
                                                      " is not valid for the entry result shape ",
                                                      ShapeUtil::HumanString(result_shape)));
    }
  }

  module->set_name(header_name.empty() ? absl::StrCat("module_", entry_->name()) : header_name);
  module->mutable_config() = config;
  for (auto& computation : computations_) {
    if (computation.get() == entry_) {
      module->AddEntryComputation(std::move(computation));
    } else {
      module->AddEmbeddedComputation(std::move(computation));
    }
  }
  computations_.clear();
  return true;
}

// --- Stand-alone pieces -----------------------------------------------------------------

absl::Status HloParserImpl::ParseSingleInstructionModule(HloModule* module) {
  Lex();
  const std::string name = "single_instruction";
  auto owned = std::make_unique<HloComputation>(name);
  scopes_.emplace_back();
  scope().computation = owned.get();
  create_missing_operands_ = true;
  std::string root_name;
  size_t root_offset = 0;
  bool ok = ParseInstruction(&root_name, &root_offset);
  if (ok && kind() != TokKind::kEof) ok = TokenError("extra text after the instruction");
  scopes_.pop_back();
  if (!ok) return ErrorStatus();
  owned->set_root_instruction(last_created_);
  entry_ = AdoptComputation(std::move(owned), /*generated_name=*/false);
  if (!FinishModule(module, module->config(), name)) return ErrorStatus();
  return absl::OkStatus();
}

absl::StatusOr<Shape> HloParserImpl::ParseShapeOnly() {
  Lex();
  Shape shape;
  if (!ParseShape(&shape)) return ErrorStatus();
  if (kind() != TokKind::kEof) {
    TokenError("extra text after the shape");
    return ErrorStatus();
  }
  return shape;
}

absl::StatusOr<Layout> HloParserImpl::ParseLayoutOnly() {
  Lex();
  Layout layout;
  if (!ParseLayout(&layout)) return ErrorStatus();
  if (kind() != TokKind::kEof) {
    TokenError("extra text after the layout");
    return ErrorStatus();
  }
  return layout;
}

absl::StatusOr<HloSharding> HloParserImpl::ParseShardingOnly() {
  Lex();
  std::string text;
  if (!ParseSharding(&text)) return ErrorStatus();
  if (kind() != TokKind::kEof) {
    TokenError("extra text after the sharding");
    return ErrorStatus();
  }
  return HloSharding(std::move(text));
}

}  // namespace hlo_parser_internal

absl::StatusOr<std::unique_ptr<HloModule>> ParseAndReturnUnverifiedModule(
    absl::string_view text, absl::string_view filename) {
  return ParseAndReturnUnverifiedModule(text, HloModuleConfig(), filename);
}

absl::StatusOr<std::unique_ptr<HloModule>> ParseAndReturnUnverifiedModule(
    absl::string_view text, const HloModuleConfig& config, absl::string_view filename) {
  auto module = std::make_unique<HloModule>("_", config);
  hlo_parser_internal::HloParserImpl parser(text, filename);
  absl::Status status = parser.ParseModule(module.get());
  if (!status.ok()) return status;
  return module;
}

absl::StatusOr<std::unique_ptr<HloModule>> ParseSingleInstruction(absl::string_view text) {
  auto module = std::make_unique<HloModule>("_", HloModuleConfig());
  hlo_parser_internal::HloParserImpl parser(text, "<instruction>");
  absl::Status status = parser.ParseSingleInstructionModule(module.get());
  if (!status.ok()) return status;
  return module;
}

absl::StatusOr<Shape> ParseShape(absl::string_view text) {
  return hlo_parser_internal::HloParserImpl(text, "<shape>").ParseShapeOnly();
}

absl::StatusOr<Layout> ParseLayout(absl::string_view text) {
  return hlo_parser_internal::HloParserImpl(text, "<layout>").ParseLayoutOnly();
}

absl::StatusOr<HloSharding> ParseSharding(absl::string_view text) {
  return hlo_parser_internal::HloParserImpl(text, "<sharding>").ParseShardingOnly();
}

}  // namespace axle
