//===- hlo_printer.cc - HLO modules as XLA's text format -------------------===//
//
// Also defines HloInstruction/HloComputation/HloModule::ToString: the IR
// declares them, the text layer prints.
//
//===----------------------------------------------------------------------===//
#include "axle/hlo/text/hlo_printer.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "axle/core/literal_text.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/text/attribute_text.h"
#include "axle/hlo/text/hlo_print_order.h"

namespace axle {
namespace {

// Raw attributes that XLA prints among the generic attributes rather than
// among the op's own: each is printed where XLA prints it.
constexpr absl::string_view kRawAfterCalledComputations[] = {"is_composite"};
constexpr absl::string_view kRawAfterControlPredecessors[] = {"statistics", "result_accuracy",
                                                              "origin"};
// A custom call's padding_type comes before its custom_call_target.
constexpr absl::string_view kCustomCallPaddingType = "padding_type";

template <size_t N>
bool IsOneOf(absl::string_view name, const absl::string_view (&names)[N]) {
  return std::find(std::begin(names), std::end(names), name) != std::end(names);
}

bool IsGenericRaw(const HloInstruction& instruction, absl::string_view name) {
  return IsOneOf(name, kRawAfterCalledComputations) ||
         IsOneOf(name, kRawAfterControlPredecessors) ||
         (instruction.opcode() == HloOpcode::kCustomCall && name == kCustomCallPaddingType);
}

// "name" of "name=value".
absl::string_view AttributeKey(absl::string_view attribute) {
  return attribute.substr(0, attribute.find('='));
}

std::string RawToString(const RawAttribute& attribute) {
  return absl::StrCat(attribute.name, "=", attribute.value);
}

// The value text of a constant: the literal on one line, or {...} when it is
// large (or a tuple) and large constants are not wanted. One helper so that
// the literal printer can change without touching this file.
std::string ConstantText(const HloConstantInstruction& constant, bool print_large) {
  if (constant.attrs().elided) return "{...}";
  return LiteralValueToHloText(constant.literal(), print_large);
}

// The async-start at the head of the chain `instruction` belongs to (itself
// for an async-start), or null when the chain is broken. Between two async
// ops the state may pass through copies, opt-barriers and a tuple with its
// get-tuple-element, as the parser allows (hlo_parser_async.cc).
const HloAsyncInstruction* AsyncChainStart(const HloInstruction& instruction) {
  const HloInstruction* current = &instruction;
  bool at_async = true;  // `current` must be an async op (not a pass-through)
  for (int64_t steps = 0; current != nullptr && steps < 1 << 20; ++steps) {
    HloOpcode op = current->opcode();
    if (op == HloOpcode::kAsyncStart) return dyn_cast<HloAsyncInstruction>(current);
    if (op == HloOpcode::kAsyncUpdate || op == HloOpcode::kAsyncDone) {
      at_async = false;
      if (current->operand_count() < 1) return nullptr;
      current = current->operand(0);
      continue;
    }
    if (at_async || current->operand_count() != 1) return nullptr;
    if (op == HloOpcode::kCopy || op == HloOpcode::kOptimizationBarrier) {
      current = current->operand(0);
    } else if (const auto* gte = dyn_cast<HloGetTupleElementInstruction>(current);
               gte != nullptr && current->operand(0)->opcode() == HloOpcode::kTuple &&
               gte->tuple_index() >= 0 &&
               gte->tuple_index() < current->operand(0)->operand_count()) {
      current = current->operand(0)->operand(gte->tuple_index());
    } else {
      return nullptr;
    }
  }
  return nullptr;
}

// How many operands the async chain from `start` binds: the start's own and
// those the async-updates continuing it directly bind after the state. Null
// when the chain forks (two updates continue one op).
std::optional<int64_t> ChainBoundOperandCount(const HloAsyncInstruction& start) {
  int64_t count = start.operand_count();
  const HloInstruction* current = &start;
  for (int64_t steps = 0; steps < 1 << 20; ++steps) {
    const HloInstruction* next = nullptr;
    for (const HloInstruction* user : current->users()) {
      if (user->opcode() != HloOpcode::kAsyncUpdate || user->operand(0) != current) continue;
      if (next != nullptr) return std::nullopt;
      next = user;
    }
    if (next == nullptr) return count;
    count += next->operand_count() - 1;
    current = next;
  }
  return std::nullopt;
}

// Whether an async-update continuing `start` (directly or through the ops
// AsyncChainStart looks through) binds operands after the state.
bool ChainUpdatesBindOperands(const HloAsyncInstruction& start) {
  if (start.parent() == nullptr) return false;
  for (const HloInstruction* instruction : start.parent()->instructions()) {
    if (instruction->opcode() == HloOpcode::kAsyncUpdate && instruction->operand_count() > 1 &&
        AsyncChainStart(*instruction) == &start) {
      return true;
    }
  }
  return false;
}

// XLA's HloComputation::CanExpandIntoSingleInstruction: nothing but
// parameters and the root (which is not itself a parameter).
bool IsSingleInstructionComputation(const HloComputation& computation) {
  for (const HloInstruction* instruction : computation.instructions()) {
    if (instruction != computation.root_instruction() &&
        instruction->opcode() != HloOpcode::kParameter) {
      return false;
    }
  }
  return computation.root_instruction() != nullptr &&
         computation.root_instruction()->opcode() != HloOpcode::kParameter;
}

// The computation an async op wraps, or null.
const HloComputation* AsyncWrappedComputation(const HloInstruction& instruction) {
  const HloAsyncInstruction* start = AsyncChainStart(instruction);
  if (start != nullptr && !start->called_computations().empty()) {
    return start->called_computations()[0];
  }
  if (!instruction.called_computations().empty()) return instruction.called_computations()[0];
  return nullptr;
}

class Printer {
 public:
  explicit Printer(const HloPrintOptions& options) : options_(options) {}

  std::string Name(absl::string_view name) const {
    return options_.print_percent() ? absl::StrCat("%", name) : std::string(name);
  }

  std::string ShapeText(const Shape& shape) const {
    return ShapeToHloString(shape, options_.include_layout_in_shapes());
  }

  // The whole instruction line, without indentation and `ROOT `.
  std::string Instruction(const HloInstruction& instruction) const {
    std::string out = absl::StrCat(Name(instruction.name()), " = ");
    if (options_.print_result_shape()) absl::StrAppend(&out, ShapeText(instruction.shape()), " ");
    const HloComputation* sugared = SugaredAsyncComputation(instruction);
    if (sugared != nullptr) {
      absl::string_view suffix = instruction.opcode() == HloOpcode::kAsyncStart    ? "-start"
                                 : instruction.opcode() == HloOpcode::kAsyncUpdate ? "-update"
                                                                                   : "-done";
      absl::StrAppend(&out, HloOpcodeString(sugared->root_instruction()->opcode()), suffix);
    } else {
      absl::StrAppend(&out, HloOpcodeString(instruction.opcode()));
    }
    absl::StrAppend(&out, "(", Operands(instruction), ")");
    std::vector<std::string> attributes;
    ExtraAttributes(instruction, &attributes);
    if (options_.print_metadata() && OpMetadataIsPrinted(instruction.metadata())) {
      attributes.push_back(
          absl::StrCat("metadata={", OpMetadataToString(instruction.metadata()), "}"));
    }
    if (options_.print_backend_config()) {
      std::string config = instruction.raw_backend_config_string();
      if (const auto* custom_call = dyn_cast<HloCustomCallInstruction>(&instruction);
          custom_call != nullptr && config.empty()) {
        // XLA keeps a custom call's opaque string as its backend config.
        config = custom_call->opaque();
      }
      if (!config.empty()) {
        attributes.push_back(absl::StrCat("backend_config=",
                                          LexesAsJsonDict(config) ? config : QuotedString(config)));
      }
    }
    // Each attribute once: the parser may have given a sugared async op and
    // the op it wraps the same generic attributes, and text with an
    // attribute twice does not parse.
    absl::flat_hash_set<absl::string_view> keys;
    for (const std::string& attribute : attributes) {
      if (keys.insert(AttributeKey(attribute)).second) absl::StrAppend(&out, ", ", attribute);
    }
    return out;
  }

  std::string Computation(const HloComputation& computation, bool print_entry_keyword,
                          InstructionOrders& orders) const {
    std::string out = print_entry_keyword && computation.IsEntryComputation() ? "ENTRY " : "";
    absl::StrAppend(&out, Name(computation.name()), " ");
    if (options_.print_program_shape()) {
      std::vector<std::string> parameters;
      for (const HloInstruction* parameter : computation.parameter_instructions()) {
        if (parameter == nullptr) {
          parameters.push_back("(unknown): ()");
          continue;
        }
        parameters.push_back(
            absl::StrCat(parameter->name(), ": ", ShapeToHloString(parameter->shape(), false)));
      }
      const HloInstruction* root = computation.root_instruction();
      absl::StrAppend(&out, "(", absl::StrJoin(parameters, ", "), ") -> ",
                      root == nullptr ? "()" : ShapeToHloString(root->shape(), false), " ");
    }
    out += "{\n";
    for (const HloInstruction* instruction : orders.Of(computation)) {
      absl::StrAppend(&out, "  ", instruction == computation.root_instruction() ? "ROOT " : "",
                      Instruction(*instruction), "\n");
    }
    out += "}";
    if (computation.execution_thread() != "main") {
      absl::StrAppend(&out, ", execution_thread=", QuotedString(computation.execution_thread()));
    }
    return out;
  }

  std::string Module(const HloModule& module) const {
    const HloModuleConfig& config = module.config();
    std::string out = absl::StrCat("HloModule ", module.name());
    if (config.is_scheduled) out += ", is_scheduled=true";
    if (!config.input_output_alias.empty()) {
      absl::StrAppend(&out, ", input_output_alias=", config.input_output_alias.ToString());
    }
    if (!config.buffer_donor.empty()) {
      absl::StrAppend(&out, ", buffer_donor=", config.buffer_donor.ToString());
    }
    auto raw_header = [&](auto selected) {
      for (const RawAttribute& attribute : config.raw_attributes) {
        if (selected(attribute.name)) absl::StrAppend(&out, ", ", RawToString(attribute));
      }
    };
    auto is_passthrough = [](absl::string_view name) { return name == "alias_passthrough_params"; };
    auto is_spmd = [](absl::string_view name) {
      return name == "allow_spmd_sharding_propagation_to_parameters" ||
             name == "allow_spmd_sharding_propagation_to_output";
    };
    raw_header(is_passthrough);
    if (config.entry_computation_layout.has_value()) {
      absl::StrAppend(&out, ", entry_computation_layout={",
                      ProgramShapeToLayoutString(*config.entry_computation_layout), "}");
    } else if (module.entry_computation() != nullptr &&
               module.entry_computation()->root_instruction() != nullptr) {
      absl::StrAppend(&out, ", entry_computation_layout={",
                      ProgramShapeToLayoutString(module.entry_computation_program_shape()), "}");
    }
    raw_header(is_spmd);
    if (config.replica_count != 1) absl::StrAppend(&out, ", replica_count=", config.replica_count);
    if (config.num_partitions != 1) {
      absl::StrAppend(&out, ", num_partitions=", config.num_partitions);
    }
    if (!config.frontend_attributes.empty()) {
      absl::StrAppend(
          &out, ", frontend_attributes=", FrontendAttributesToString(config.frontend_attributes));
    }
    // XLA ends the recovery table with a newline and starts the debug
    // attributes on a line of their own.
    for (const RawAttribute& attribute : config.raw_attributes) {
      if (is_passthrough(attribute.name) || is_spmd(attribute.name)) continue;
      absl::StrAppend(&out, attribute.name == "debug_attributes" ? ",\n" : ", ",
                      RawToString(attribute),
                      attribute.name == "origin_recovery_table" ? "\n" : "");
    }
    // The stack frame index (FileNames ... StackFrames ...), kept verbatim,
    // goes with the metadata that refers to it.
    if (options_.print_metadata() && !config.stack_frame_index.empty()) {
      absl::StrAppend(&out, "\n\n", config.stack_frame_index, "\n");
    }
    out += "\n\n";
    // Wrapped computations of sugared async ops are not printed.
    // (Unless something else still calls them by name.)
    absl::flat_hash_set<const HloComputation*> hidden;
    absl::flat_hash_set<const HloComputation*> named;
    for (const HloComputation* computation : module.computations()) {
      for (const HloInstruction* instruction : computation->instructions()) {
        const HloComputation* wrapped = SugaredAsyncComputation(*instruction);
        if (wrapped != nullptr) {
          hidden.insert(wrapped);
        } else {
          for (const HloComputation* callee : instruction->called_computations())
            named.insert(callee);
        }
      }
    }
    for (const HloComputation* computation : named) hidden.erase(computation);
    InstructionOrders orders(config.is_scheduled);
    for (const HloComputation* computation : XlaComputationPostOrder(module, orders)) {
      if (hidden.contains(computation)) continue;
      absl::StrAppend(&out, Computation(*computation, /*print_entry_keyword=*/true, orders),
                      "\n\n");
    }
    return out;
  }

 private:
  // For an async op printed with XLA's syntax sugar, the wrapped
  // computation; null when the op prints as itself.
  const HloComputation* SugaredAsyncComputation(const HloInstruction& instruction) const {
    if (!options_.syntax_sugar_async_ops()) return nullptr;
    HloOpcode op = instruction.opcode();
    if (op != HloOpcode::kAsyncStart && op != HloOpcode::kAsyncUpdate &&
        op != HloOpcode::kAsyncDone) {
      return nullptr;
    }
    const HloComputation* wrapped = AsyncWrappedComputation(instruction);
    if (wrapped == nullptr || !IsSingleInstructionComputation(*wrapped)) return nullptr;
    // The shorthand stands for `op(params...)` fed by the operands the
    // async-start and its async-updates bind, with placeholder (empty tuple)
    // parameters for those not bound yet, as the parser makes them; anything
    // else (invalid, but parseable) prints in full so that nothing is lost.
    const HloAsyncInstruction* start = AsyncChainStart(instruction);
    if (start == nullptr) return nullptr;
    const HloInstruction* root = wrapped->root_instruction();
    // The shorthand would give the async-start's own output_to_operand_aliasing
    // to the custom-call or fusion it wraps (or print two, one of them lost):
    // such a chain prints in full.
    if ((root->opcode() == HloOpcode::kCustomCall || root->opcode() == HloOpcode::kFusion) &&
        start->FindRawAttribute("output_to_operand_aliasing") != nullptr) {
      return nullptr;
    }
    // The parser gives the wrapped op the async-start's metadata,
    // backend_config and frontend_attributes, no sharding and no raw
    // attributes of its own: a wrapped op with others prints in full.
    if (root->has_sharding() || !root->raw_attributes().empty() ||
        !(root->metadata() == start->metadata()) ||
        root->raw_backend_config_string() != start->raw_backend_config_string() ||
        root->frontend_attributes() != start->frontend_attributes()) {
      return nullptr;
    }
    // The parser makes the shorthand's parameters from the async-start's
    // state, ((async-operands), async-outputs, state): its operands must be
    // those the state lists, with the parameters' shapes.
    const Shape& state = start->shape();
    if (!state.IsTuple() || state.tuple_shapes_size() < 2 || !state.tuple_shapes(0).IsTuple()) {
      return nullptr;
    }
    const Shape& async_operands = state.tuple_shapes(0);
    if (start->operand_count() != async_operands.tuple_shapes_size() ||
        wrapped->num_parameters() < async_operands.tuple_shapes_size()) {
      return nullptr;
    }
    for (int64_t i = 0; i < async_operands.tuple_shapes_size(); ++i) {
      const HloInstruction* parameter = wrapped->parameter_instruction(i);
      if (parameter == nullptr || parameter->shape() != async_operands.tuple_shapes(i)) {
        return nullptr;
      }
    }
    // Late binding prints as such only for ops of a fixed operand count: for
    // a variadic op (a custom-call) the async-start's own attributes could
    // not be told from the op's.
    int64_t needed = AsyncShorthandParameterCount(root->opcode());
    if (needed == 0 && ChainUpdatesBindOperands(*start)) return nullptr;
    std::optional<int64_t> bound = needed > 0 ? ChainBoundOperandCount(*start)
                                              : std::optional<int64_t>(start->operand_count());
    int64_t parameters = wrapped->num_parameters();
    if (!bound.has_value() || root->operand_count() != parameters ||
        parameters != std::max(*bound, needed)) {
      return nullptr;
    }
    for (int64_t i = 0; i < root->operand_count(); ++i) {
      const HloInstruction* parameter = wrapped->parameter_instruction(i);
      if (root->operand(i) != parameter) return nullptr;
      if (i >= *bound && parameter->shape() != Shape::MakeTuple({})) return nullptr;
    }
    return wrapped;
  }

  std::string Operands(const HloInstruction& instruction) const {
    if (const auto* constant = dyn_cast<HloConstantInstruction>(&instruction)) {
      return ConstantText(*constant, options_.print_large_constants());
    }
    if (const auto* parameter = dyn_cast<HloParameterInstruction>(&instruction)) {
      return absl::StrCat(parameter->parameter_number());
    }
    std::string out;
    const int64_t interval = options_.print_operand_index_annotation_interval();
    for (int64_t i = 0; i < instruction.operand_count(); ++i) {
      if (i > 0) {
        out += interval != 0 && i % interval == 0 ? absl::StrCat(", /*index=", i, "*/") : ", ";
      }
      const HloInstruction* operand = instruction.operand(i);
      if (operand == nullptr) {
        out += "null ";
        continue;
      }
      if (options_.print_operand_shape()) {
        out += ShapeText(operand->shape());
        if (options_.print_operand_names()) out += " ";
      }
      if (options_.print_operand_names()) out += Name(operand->name());
    }
    return out;
  }

  // Everything after the operands except metadata and backend_config, in
  // XLA's order (HloInstruction::PrintExtraAttributes).
  void ExtraAttributes(const HloInstruction& instruction, std::vector<std::string>* out) const {
    const HloComputation* sugared = SugaredAsyncComputation(instruction);
    // A raw attribute named like one of the op's typed attributes is text
    // the parser could not type (e.g. replica_groups in mesh form): it
    // prints in the typed attribute's place.
    absl::flat_hash_set<absl::string_view> replaced;
    std::vector<std::string> own;
    OwnAttributes(instruction, &own);
    for (std::string& attribute : own) {
      const RawAttribute* raw = instruction.FindRawAttribute(AttributeKey(attribute));
      if (raw != nullptr && replaced.insert(raw->name).second) {
        out->push_back(RawToString(*raw));
      } else {
        out->push_back(std::move(attribute));
      }
    }
    if (sugared != nullptr && instruction.opcode() == HloOpcode::kAsyncStart) {
      // The wrapped instruction's attributes stand in for the computation.
      ExtraAttributes(*sugared->root_instruction(), out);
    }
    for (const RawAttribute& raw : instruction.raw_attributes()) {
      if (!IsGenericRaw(instruction, raw.name) && !replaced.contains(raw.name)) {
        out->push_back(RawToString(raw));
      }
    }
    CalledComputations(instruction, sugared != nullptr, out);
    for (const RawAttribute& raw : instruction.raw_attributes()) {
      if (IsOneOf(raw.name, kRawAfterCalledComputations)) out->push_back(RawToString(raw));
    }
    if (instruction.has_sharding()) {
      out->push_back(absl::StrCat("sharding=", instruction.sharding().ToString()));
    }
    if (!instruction.frontend_attributes().empty()) {
      out->push_back(absl::StrCat("frontend_attributes=",
                                  FrontendAttributesToString(instruction.frontend_attributes())));
    }
    if (options_.print_control_dependencies() && !instruction.control_predecessors().empty()) {
      std::vector<std::string> names;
      for (const HloInstruction* pred : instruction.control_predecessors()) {
        names.push_back(Name(pred->name()));
      }
      out->push_back(absl::StrCat("control-predecessors={", absl::StrJoin(names, ", "), "}"));
    }
    for (absl::string_view name : kRawAfterControlPredecessors) {
      for (const RawAttribute& raw : instruction.raw_attributes()) {
        if (raw.name == name) out->push_back(RawToString(raw));
      }
    }
  }

  std::string Names(const std::vector<HloComputation*>& computations) const {
    std::vector<std::string> names;
    names.reserve(computations.size());
    for (const HloComputation* computation : computations) {
      names.push_back(computation == nullptr ? "null" : Name(computation->name()));
    }
    return absl::StrJoin(names, ", ");
  }

  // condition=, body=, to_apply=, calls=, ... (XLA prints names only).
  void CalledComputations(const HloInstruction& instruction, bool sugared_async,
                          std::vector<std::string>* out) const {
    const std::vector<HloComputation*>& called = instruction.called_computations();
    auto name_of = [&](size_t i) {
      return i < called.size() && called[i] != nullptr ? Name(called[i]->name())
                                                       : std::string("null");
    };
    switch (instruction.opcode()) {
      case HloOpcode::kWhile:
        out->push_back("condition=" + name_of(0));
        out->push_back("body=" + name_of(1));
        return;
      case HloOpcode::kSelectAndScatter:
        out->push_back("select=" + name_of(0));
        out->push_back("scatter=" + name_of(1));
        return;
      case HloOpcode::kConditional:
        if (instruction.operand_count() > 0 && instruction.operand(0) != nullptr &&
            instruction.operand(0)->shape().element_type() == PRED) {
          out->push_back("true_computation=" + name_of(0));
          out->push_back("false_computation=" + name_of(1));
        } else {
          out->push_back(absl::StrCat("branch_computations={", Names(called), "}"));
        }
        return;
      case HloOpcode::kCall:
      case HloOpcode::kMap:
      case HloOpcode::kReduceWindow:
      case HloOpcode::kReduce:
      case HloOpcode::kAllReduce:
      case HloOpcode::kReduceScatter:
      case HloOpcode::kAllReduceStart:
      case HloOpcode::kScatter:
      case HloOpcode::kSort:
      case HloOpcode::kScan:
        if (!called.empty()) out->push_back("to_apply=" + name_of(0));
        return;
      case HloOpcode::kCustomCall:
        if (!called.empty()) {
          out->push_back(absl::StrCat("called_computations={", Names(called), "}"));
        }
        return;
      case HloOpcode::kAsyncStart:
        if (!sugared_async && !called.empty()) out->push_back("calls=" + name_of(0));
        return;
      case HloOpcode::kAsyncUpdate:
      case HloOpcode::kAsyncDone:
        // Reached from its async-start, an update/done names nothing; when
        // its operand is not one (the chain crosses a loop), it names the
        // computation itself.
        if (AsyncChainStart(instruction) == nullptr && !called.empty()) {
          out->push_back("calls=" + name_of(0));
        }
        return;
      default:
        if (!called.empty()) out->push_back("calls=" + Names(called));
        return;
    }
  }

  // The op's own attributes (XLA's PrintExtraAttributesImpl).
  void OwnAttributes(const HloInstruction& instruction, std::vector<std::string>* out) const {
    auto add = [out](auto&&... pieces) { out->push_back(absl::StrCat(pieces...)); };
    auto add_bool = [&](absl::string_view name, bool value) {
      if (value) add(name, "=true");
    };
    auto add_precision = [out](const PrecisionConfig& config) {
      for (std::string& s : PrecisionConfigToStrings(config)) out->push_back(std::move(s));
    };
    const HloOpcode op = instruction.opcode();

    if (const auto* p = dyn_cast<HloParameterInstruction>(&instruction)) {
      if (p->attrs().parameter_replication.has_value()) {
        add("parameter_replication={",
            absl::StrJoin(*p->attrs().parameter_replication, ",",
                          [](std::string* s, bool b) { absl::StrAppend(s, b ? "true" : "false"); }),
            "}");
      }
    } else if (const auto* gte = dyn_cast<HloGetTupleElementInstruction>(&instruction)) {
      add("index=", gte->tuple_index());
    } else if (const auto* iota = dyn_cast<HloIotaInstruction>(&instruction)) {
      add("iota_dimension=", iota->iota_dimension());
    } else if (const auto* dims = dyn_cast<HloDimensionsInstruction>(&instruction)) {
      add("dimensions=", IntListToString(dims->dimensions()));
    } else if (const auto* sort = dyn_cast<HloSortInstruction>(&instruction)) {
      add("dimensions={", sort->sort_dimension(), "}");
      add_bool("is_stable", sort->is_stable());
    } else if (const auto* reshape = dyn_cast<HloReshapeInstruction>(&instruction)) {
      if (reshape->inferred_dimension() != -1)
        add("inferred_dimension=", reshape->inferred_dimension());
    } else if (const auto* slice = dyn_cast<HloSliceInstruction>(&instruction)) {
      add("slice=",
          SliceToString(slice->slice_starts(), slice->slice_limits(), slice->slice_strides()));
    } else if (const auto* ds = dyn_cast<HloDynamicSliceInstruction>(&instruction)) {
      add("dynamic_slice_sizes=", IntListToString(ds->dynamic_slice_sizes()));
    } else if (const auto* pad = dyn_cast<HloPadInstruction>(&instruction)) {
      add("padding=", PaddingConfigToString(pad->padding_config()));
    } else if (const auto* compare = dyn_cast<HloCompareInstruction>(&instruction)) {
      add("direction=", ComparisonDirectionToString(compare->direction()));
      ComparisonType type = compare->type();
      bool is_default =
          type == ComparisonType::kDefault ||
          (instruction.operand_count() > 0 && instruction.operand(0) != nullptr &&
           type == DefaultComparisonType(instruction.operand(0)->shape().element_type()));
      if (!is_default) add("type=", ComparisonTypeToString(type));
    } else if (const auto* dot = dyn_cast<HloDotInstruction>(&instruction)) {
      add(DotDimensionNumbersToString(dot->dot_dimension_numbers()));
      if (op == HloOpcode::kRaggedDot) {
        if (!dot->attrs().lhs_ragged_dimensions.empty()) {
          add("lhs_ragged_dims=", IntListToString(dot->attrs().lhs_ragged_dimensions));
        }
        if (!dot->attrs().rhs_group_dimensions.empty()) {
          add("rhs_group_dims=", IntListToString(dot->attrs().rhs_group_dimensions));
        }
      }
      add_precision(dot->precision_config());
    } else if (const auto* conv = dyn_cast<HloConvolutionInstruction>(&instruction)) {
      if (conv->window().dimensions_size() != 0)
        add("window={", WindowToString(conv->window()), "}");
      add("dim_labels=",
          ConvolutionDimensionNumbersToString(conv->convolution_dimension_numbers()));
      if (conv->feature_group_count() != 1)
        add("feature_group_count=", conv->feature_group_count());
      if (conv->batch_group_count() != 1) add("batch_group_count=", conv->batch_group_count());
      add_precision(conv->precision_config());
    } else if (const auto* window = dyn_cast<HloWindowInstruction>(&instruction)) {
      if (window->window().dimensions_size() != 0) {
        add("window={", WindowToString(window->window()), "}");
      }
    } else if (const auto* gather = dyn_cast<HloGatherInstruction>(&instruction)) {
      add(GatherDimensionNumbersToString(gather->gather_dimension_numbers()));
      add("slice_sizes=", IntListToString(gather->gather_slice_sizes()));
      add_bool("indices_are_sorted", gather->indices_are_sorted());
    } else if (const auto* scatter = dyn_cast<HloScatterInstruction>(&instruction)) {
      add(ScatterDimensionNumbersToString(scatter->scatter_dimension_numbers()));
      add_bool("indices_are_sorted", scatter->indices_are_sorted());
      add_bool("unique_indices", scatter->unique_indices());
    } else if (const auto* fft = dyn_cast<HloFftInstruction>(&instruction)) {
      add("fft_type=", FftTypeToString(fft->fft_type()));
      add("fft_length=", IntListToString(fft->fft_length()));
    } else if (const auto* rng = dyn_cast<HloRngInstruction>(&instruction)) {
      add("distribution=", RandomDistributionToString(rng->random_distribution()));
    } else if (const auto* bits = dyn_cast<HloRngBitGeneratorInstruction>(&instruction)) {
      add("algorithm=", RandomAlgorithmToString(bits->algorithm()));
    } else if (const auto* ts = dyn_cast<HloTriangularSolveInstruction>(&instruction)) {
      // XLA prints the options message's non-default fields in field order.
      const TriangularSolveOptions& options = ts->triangular_solve_options();
      add_bool("left_side", options.left_side());
      add_bool("lower", options.lower());
      add_bool("unit_diagonal", options.unit_diagonal());
      if (options.transpose_a() != TriangularSolveOptions::TRANSPOSE_INVALID) {
        add("transpose_a=", TriangularSolveTransposeToString(options.transpose_a()));
      }
    } else if (const auto* cholesky = dyn_cast<HloCholeskyInstruction>(&instruction)) {
      add_bool("lower", cholesky->cholesky_options().lower());
    } else if (const auto* rp = dyn_cast<HloReducePrecisionInstruction>(&instruction)) {
      add("exponent_bits=", rp->exponent_bits());
      add("mantissa_bits=", rp->mantissa_bits());
    } else if (const auto* bn = dyn_cast<HloBatchNormInstruction>(&instruction)) {
      add("epsilon=", bn->epsilon());
      add("feature_index=", bn->feature_index());
    } else if (const auto* cc = dyn_cast<HloCustomCallInstruction>(&instruction)) {
      CustomCallAttributes(*cc, out);
    } else if (const auto* fusion = dyn_cast<HloFusionInstruction>(&instruction)) {
      add("kind=", FusionKindToString(fusion->fusion_kind()));
    } else if (const auto* collective = dyn_cast<HloCollectiveInstruction>(&instruction)) {
      CollectiveAttributes(*collective, out);
    } else if (const auto* sr = dyn_cast<HloSendRecvInstruction>(&instruction)) {
      if (sr->channel_id().has_value()) add("channel_id=", *sr->channel_id());
      add_bool("is_host_transfer", sr->is_host_transfer());
    } else if (const auto* feed = dyn_cast<HloFeedInstruction>(&instruction)) {
      const FeedAttrs& attrs = feed->attrs();
      if (op == HloOpcode::kOutfeed) {
        add("outfeed_shape=", attrs.outfeed_shape.has_value()
                                  ? ShapeToHloString(*attrs.outfeed_shape, true)
                              : instruction.operand_count() > 0 && instruction.operand(0) != nullptr
                                  ? ShapeToHloString(instruction.operand(0)->shape(), true)
                                  : std::string("()"));
      }
      if (options_.print_infeed_outfeed_config() && !attrs.config.empty()) {
        add(op == HloOpcode::kOutfeed ? "outfeed_config=" : "infeed_config=",
            QuotedString(attrs.config));
      }
    } else if (const auto* topk = dyn_cast<HloTopKInstruction>(&instruction)) {
      add("k=", topk->k());
      add("largest=", topk->largest() ? "true" : "false");
    } else if (const auto* scan = dyn_cast<HloScanInstruction>(&instruction)) {
      const ScanAttrs& attrs = scan->attrs();
      add("dimensions=", IntListToString(attrs.dimensions));
      add("num_carries=", attrs.num_carries);
      add_bool("is_reverse", attrs.is_reverse);
      if (attrs.is_associative.has_value()) {
        add("is_associative=", *attrs.is_associative ? "true" : "false");
      }
    } else if (const auto* async = dyn_cast<HloAsyncInstruction>(&instruction)) {
      if (op == HloOpcode::kAsyncStart && async->async_execution_thread() != "main") {
        add("async_execution_thread=", QuotedString(async->async_execution_thread()));
      }
    } else if (const auto* copy_start = dyn_cast<HloCopyStartInstruction>(&instruction)) {
      if (copy_start->attrs().cross_program_prefetch_index.has_value()) {
        add("cross_program_prefetch_index=", *copy_start->attrs().cross_program_prefetch_index);
      }
    }
  }

  void CustomCallAttributes(const HloCustomCallInstruction& cc,
                            std::vector<std::string>* out) const {
    const CustomCallAttrs& attrs = cc.attrs();
    auto add = [out](auto&&... pieces) { out->push_back(absl::StrCat(pieces...)); };
    if (attrs.window.has_value()) add("window={", WindowToString(*attrs.window), "}");
    if (attrs.convolution_dimension_numbers.has_value()) {
      add("dim_labels=", ConvolutionDimensionNumbersToString(*attrs.convolution_dimension_numbers));
    }
    if (attrs.feature_group_count != 1) add("feature_group_count=", attrs.feature_group_count);
    if (attrs.batch_group_count != 1) add("batch_group_count=", attrs.batch_group_count);
    for (std::string& s : PrecisionConfigToStrings(attrs.precision_config))
      out->push_back(std::move(s));
    if (const RawAttribute* padding_type = cc.FindRawAttribute(kCustomCallPaddingType)) {
      out->push_back(RawToString(*padding_type));
    }
    add("custom_call_target=", QuotedString(attrs.custom_call_target));
    if (attrs.operand_layout_constraints.has_value()) {
      std::vector<std::string> shapes;
      for (const Shape& shape : *attrs.operand_layout_constraints) {
        shapes.push_back(ShapeToHloString(shape, true));
      }
      add("operand_layout_constraints={", absl::StrJoin(shapes, ", "), "}");
    }
    if (attrs.custom_call_has_side_effect) add("custom_call_has_side_effect=true");
    if (attrs.literal.has_value()) add("literal=", attrs.literal->ToStringWithLayoutOneline());
    if (!attrs.output_to_operand_aliasing.empty()) {
      add("output_to_operand_aliasing=",
          OutputOperandAliasingToString(attrs.output_to_operand_aliasing));
    }
    if (attrs.schedule != SCHEDULE_NONE)
      add("schedule=", CustomCallScheduleToString(attrs.schedule));
    if (attrs.api_version != API_VERSION_ORIGINAL) {
      add("api_version=", CustomCallApiVersionToString(attrs.api_version));
    }
    // XLA has one string for both; Axle prints the opaque separately only
    // when the two differ.
    if (!attrs.opaque.empty() && !cc.raw_backend_config_string().empty() &&
        attrs.opaque != cc.raw_backend_config_string()) {
      add("opaque=", QuotedString(attrs.opaque));
    }
  }

  void CollectiveAttributes(const HloCollectiveInstruction& collective,
                            std::vector<std::string>* out) const {
    const CollectiveAttrs& attrs = collective.attrs();
    auto add = [out](auto&&... pieces) { out->push_back(absl::StrCat(pieces...)); };
    const HloOpcode op = collective.opcode();
    if (op == HloOpcode::kAllReduceDone || op == HloOpcode::kAllGatherDone ||
        op == HloOpcode::kCollectivePermuteDone) {
      return;  // plain instructions in XLA
    }
    if (attrs.channel_id.has_value()) add("channel_id=", *attrs.channel_id);
    if (op == HloOpcode::kCollectivePermute || op == HloOpcode::kCollectivePermuteStart) {
      add("source_target_pairs=", SourceTargetPairsToString(attrs.source_target_pairs));
      return;
    }
    add("replica_groups=", attrs.iota_replica_groups.has_value()
                               ? attrs.iota_replica_groups->ToString()
                               : ReplicaGroupsToString(attrs.replica_groups));
    if (attrs.constrain_layout) add("constrain_layout=true");
    switch (op) {
      case HloOpcode::kAllGather:
      case HloOpcode::kAllGatherStart:
        add("dimensions=", IntListToString(attrs.dimensions));
        if (attrs.use_global_device_ids) add("use_global_device_ids=true");
        break;
      case HloOpcode::kAllReduce:
      case HloOpcode::kAllReduceStart:
        if (attrs.use_global_device_ids) add("use_global_device_ids=true");
        break;
      case HloOpcode::kReduceScatter:
        if (attrs.use_global_device_ids) add("use_global_device_ids=true");
        add("dimensions=", IntListToString(attrs.dimensions));
        break;
      case HloOpcode::kAllToAll:
        if (!attrs.dimensions.empty()) add("dimensions=", IntListToString(attrs.dimensions));
        break;
      default:
        break;
    }
  }

  const HloPrintOptions& options_;
};

}  // namespace

std::string ShapeToHloString(const Shape& shape, bool print_layout) {
  if (!shape.IsTuple()) return shape.ToString(print_layout);
  std::string out = "(";
  for (int64_t i = 0; i < shape.tuple_shapes_size(); ++i) {
    if (i > 0) out += i % 5 == 0 ? absl::StrCat(", /*index=", i, "*/") : ", ";
    out += ShapeToHloString(shape.tuple_shapes(i), print_layout);
  }
  return out + ")";
}

std::string ProgramShapeToLayoutString(const ProgramShape& program_shape) {
  std::string out = "(";
  for (size_t i = 0; i < program_shape.parameters().size(); ++i) {
    if (i > 0) out += i % 5 == 0 ? absl::StrCat(", /*index=", i, "*/") : ", ";
    out += ShapeToHloString(program_shape.parameters()[i], true);
  }
  return absl::StrCat(out, ")->", ShapeToHloString(program_shape.result(), true));
}

std::string ToString(const HloModule& module, const HloPrintOptions& options) {
  return Printer(options).Module(module);
}

std::string ToString(const HloComputation& computation, const HloPrintOptions& options) {
  InstructionOrders orders(computation.parent() != nullptr &&
                           computation.parent()->config().is_scheduled);
  return Printer(options).Computation(computation, /*print_entry_keyword=*/false, orders);
}

std::string ToString(const HloInstruction& instruction, const HloPrintOptions& options) {
  return Printer(options).Instruction(instruction);
}

// An instruction alone is printed as in XLA (HloInstruction::ToString): large
// constants elided, since the line usually goes into a message.
std::string HloInstruction::ToString() const {
  return axle::ToString(*this, HloPrintOptions::Canonical().set_print_large_constants(false));
}

std::string HloComputation::ToString() const {
  return axle::ToString(*this, HloPrintOptions::Canonical());
}

std::string HloModule::ToString() const {
  return axle::ToString(*this, HloPrintOptions::Canonical());
}

std::string HloInstruction::ToString(const HloPrintOptions& options) const {
  return axle::ToString(*this, options);
}
std::string HloComputation::ToString(const HloPrintOptions& options) const {
  return axle::ToString(*this, options);
}
std::string HloModule::ToString(const HloPrintOptions& options) const {
  return axle::ToString(*this, options);
}

}  // namespace axle
