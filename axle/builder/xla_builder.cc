// XlaBuilder itself: op bookkeeping, error recording, embedded computations,
// Build() and aliasing; parameters, constants and the shared helpers of
// xla_builder_internal.h. The op families live in xla_builder_*.cc.
#include "axle/builder/xla_builder.h"

#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "axle/base/status_macros.h"
#include "axle/builder/xla_builder_internal.h"
#include "axle/hlo/analysis/hlo_verifier.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/ir/hlo_module.h"
#include "axle/hlo/shape_inference/shape_inference.h"
#include "axle/hlo/text/hlo_printer.h"

namespace axle {

namespace {

// Instruction names that print and parse back as HLO text.
std::string SanitizeName(absl::string_view name) {
  std::string out;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-' || c == '.';
    out += ok ? c : '_';
  }
  // Prepending builds a new string: GCC 12 misreads out.insert(0, "p") under
  // -fsanitize=address as an overlapping memcpy (-Wrestrict).
  if (out.empty() || (out[0] >= '0' && out[0] <= '9')) out = "p" + out;
  return out;
}

// Copies `source` (whose called computations are mapped by `callees`) into a
// new computation named `name`, renaming every instruction with `rename`.
template <typename Rename>
std::unique_ptr<HloComputation> CopyComputation(
    const HloComputation& source, std::string name,
    const absl::flat_hash_map<const HloComputation*, HloComputation*>& callees, Rename&& rename) {
  auto copy = std::make_unique<HloComputation>(std::move(name));
  copy->SetExecutionThread(source.execution_thread());
  absl::flat_hash_map<const HloInstruction*, HloInstruction*> map;
  std::vector<HloInstruction*> order = source.MakeInstructionPostOrder();
  for (HloInstruction* instruction : order) {
    std::vector<HloInstruction*> operands;
    for (HloInstruction* operand : instruction->operands()) operands.push_back(map.at(operand));
    std::unique_ptr<HloInstruction> clone =
        instruction->CloneWithNewOperands(instruction->shape(), operands);
    for (int64_t i = 0; i < static_cast<int64_t>(clone->called_computations().size()); ++i) {
      HloComputation* callee = clone->called_computations()[i];
      if (callee != nullptr) clone->set_called_computation(i, callees.at(callee));
    }
    clone->SetName(rename(instruction->name()));
    map[instruction] = copy->AddInstruction(std::move(clone));
  }
  for (HloInstruction* instruction : order) {
    for (HloInstruction* successor : instruction->control_successors()) {
      map.at(instruction)->AddControlDependencyTo(map.at(successor));
    }
  }
  copy->set_root_instruction(map.at(source.root_instruction()));
  return copy;
}

}  // namespace

XlaBuilder::XlaBuilder(const std::string& computation_name)
    : name_(SanitizeName(computation_name)), body_(std::make_unique<HloComputation>(name_)) {
  used_names_.insert(name_);
}

XlaBuilder::~XlaBuilder() = default;

std::unique_ptr<XlaBuilder> XlaBuilder::CreateSubBuilder(const std::string& computation_name) {
  auto sub = std::make_unique<XlaBuilder>(computation_name);
  sub->parent_builder_ = this;
  return sub;
}

std::string XlaBuilder::UniqueName(absl::string_view prefix) {
  std::string base(prefix);
  if (used_names_.insert(base).second) return base;
  int64_t& next = name_suffixes_[base];
  while (true) {
    std::string candidate = absl::StrCat(base, ".", ++next);
    if (used_names_.insert(candidate).second) return candidate;
  }
}

// --- Errors -------------------------------------------------------------------

XlaOp XlaBuilder::ReportError(const absl::Status& error) {
  if (first_error_.ok() && !error.ok()) first_error_ = error;
  return XlaOp(-1, this);
}

XlaOp XlaBuilder::ReportErrorOrReturn(const absl::StatusOr<XlaOp>& op) {
  if (!first_error_.ok()) return XlaOp(-1, this);
  if (!op.ok()) return ReportError(op.status());
  return *op;
}

XlaOp XlaBuilder::ReportErrorOrReturn(absl::FunctionRef<absl::StatusOr<XlaOp>()> op_creator) {
  if (!first_error_.ok()) return XlaOp(-1, this);
  return ReportErrorOrReturn(op_creator());
}

XlaOp XlaBuilder::ReportErrorOrReturn(absl::string_view op_name,
                                      absl::FunctionRef<absl::StatusOr<XlaOp>()> op_creator) {
  if (!first_error_.ok()) return XlaOp(-1, this);
  absl::StatusOr<XlaOp> op = op_creator();
  if (op.ok()) return *op;
  return ReportError(
      absl::Status(op.status().code(), absl::StrCat(op_name, ": ", op.status().message())));
}

// --- Looking up ops -------------------------------------------------------------

absl::Status XlaBuilder::CheckOpBuilder(XlaOp op) const {
  if (op.builder_ == nullptr) {
    return absl::InvalidArgumentError("an uninitialized XlaOp was used as an operand");
  }
  if (op.builder_ != this) {
    return absl::InvalidArgumentError(
        absl::StrCat("XlaOp with handle ", op.handle_, " is built by builder '",
                     op.builder_->name(), "', but is trying to use it in builder '", name_, "'"));
  }
  return absl::OkStatus();
}

absl::StatusOr<HloInstruction*> XlaBuilder::LookUpInstruction(XlaOp op) const {
  AXLE_RETURN_IF_ERROR(CheckOpBuilder(op));
  if (op.handle_ < 0 || op.handle_ >= static_cast<int64_t>(ops_.size())) {
    return absl::InvalidArgumentError(absl::StrCat("invalid XlaOp (handle ", op.handle_,
                                                   "): an op that failed was used as an operand"));
  }
  return ops_[op.handle_];
}

absl::StatusOr<std::vector<HloInstruction*>> XlaBuilder::LookUpInstructions(
    absl::Span<const XlaOp> ops) const {
  std::vector<HloInstruction*> out;
  out.reserve(ops.size());
  for (XlaOp op : ops) {
    AXLE_ASSIGN_OR_RETURN(HloInstruction * instruction, LookUpInstruction(op));
    out.push_back(instruction);
  }
  return out;
}

absl::StatusOr<Shape> XlaBuilder::GetShape(XlaOp op) const {
  AXLE_ASSIGN_OR_RETURN(const Shape* shape, GetShapePtr(op));
  return *shape;
}

absl::StatusOr<const Shape*> XlaBuilder::GetShapePtr(XlaOp op) const {
  AXLE_ASSIGN_OR_RETURN(HloInstruction * instruction, LookUpInstruction(op));
  return &instruction->shape();
}

absl::StatusOr<std::vector<Shape>> XlaBuilder::GetOperandShapes(
    absl::Span<const XlaOp> operands) const {
  std::vector<Shape> shapes;
  for (XlaOp op : operands) {
    AXLE_ASSIGN_OR_RETURN(const Shape* shape, GetShapePtr(op));
    shapes.push_back(*shape);
  }
  return shapes;
}

std::string XlaBuilder::OpToString(XlaOp op) const {
  absl::StatusOr<HloInstruction*> instruction = LookUpInstruction(op);
  if (!instruction.ok()) return std::string(instruction.status().message());
  return (*instruction)->ToString();
}

absl::StatusOr<bool> XlaBuilder::IsConstant(XlaOp operand) const {
  AXLE_RETURN_IF_ERROR(first_error_);
  AXLE_ASSIGN_OR_RETURN(HloInstruction * root, LookUpInstruction(operand));
  std::vector<const HloInstruction*> stack = {root};
  absl::flat_hash_set<const HloInstruction*> seen = {root};
  while (!stack.empty()) {
    const HloInstruction* instruction = stack.back();
    stack.pop_back();
    HloOpcode opcode = instruction->opcode();
    if (opcode == HloOpcode::kParameter || instruction->HasSideEffect() ||
        opcode == HloOpcode::kRng || opcode == HloOpcode::kRngBitGenerator ||
        opcode == HloOpcode::kCustomCall || opcode == HloOpcode::kAfterAll) {
      return false;
    }
    for (const HloInstruction* op : instruction->operands()) {
      if (seen.insert(op).second) stack.push_back(op);
    }
  }
  return true;
}

absl::Status XlaBuilder::SetInstructionFrontendAttribute(XlaOp op, std::string attribute,
                                                         std::string value) {
  AXLE_ASSIGN_OR_RETURN(HloInstruction * instruction, LookUpInstruction(op));
  (*instruction->mutable_frontend_attributes())[std::move(attribute)] = std::move(value);
  return absl::OkStatus();
}

absl::Status XlaBuilder::SetInstructionSharding(XlaOp op,
                                                const std::optional<HloSharding>& sharding) {
  AXLE_ASSIGN_OR_RETURN(HloInstruction * instruction, LookUpInstruction(op));
  if (sharding.has_value()) {
    instruction->set_sharding(*sharding);
  } else {
    instruction->clear_sharding();
  }
  return absl::OkStatus();
}

// --- Adding instructions and computations -------------------------------------

XlaOp XlaBuilder::AddInstruction(std::unique_ptr<HloInstruction> instruction) {
  if (instruction->name().empty()) {
    instruction->SetName(UniqueName(HloOpcodeString(instruction->opcode())));
  }
  if (one_shot_metadata_.has_value()) {
    instruction->set_metadata(*one_shot_metadata_);
    one_shot_metadata_.reset();
  } else {
    instruction->set_metadata(metadata_);
  }
  if (sharding_.has_value()) instruction->set_sharding(*sharding_);
  if (!frontend_attributes_.empty()) instruction->set_frontend_attributes(frontend_attributes_);
  HloInstruction* added = body_->AddInstruction(std::move(instruction));
  ops_.push_back(added);
  return XlaOp(static_cast<int64_t>(ops_.size()) - 1, this);
}

absl::StatusOr<HloComputation*> XlaBuilder::AddSubComputation(const XlaComputation& computation) {
  if (computation.IsNull()) {
    return absl::InvalidArgumentError(
        "the computation is null (was it built, and did its Build() succeed?)");
  }
  if (auto it = embedded_by_id_.find(computation.unique_id()); it != embedded_by_id_.end()) {
    return it->second;
  }
  const HloModule& module = computation.module();
  absl::flat_hash_map<const HloComputation*, HloComputation*> callees;
  for (HloComputation* source : module.MakeComputationPostOrder()) {
    if (source->root_instruction() == nullptr) continue;
    auto copy = CopyComputation(*source, UniqueName(source->name()), callees,
                                [this](const std::string& name) { return UniqueName(name); });
    callees[source] = copy.get();
    embedded_.push_back(std::move(copy));
  }
  HloComputation* entry = callees.at(module.entry_computation());
  embedded_by_id_[computation.unique_id()] = entry;
  return entry;
}

// --- Parameters and constants ----------------------------------------------------

XlaOp XlaBuilder::Parameter(int64_t parameter_number, const Shape& shape, const std::string& name,
                            const std::vector<bool>& replicated_at_leaf_buffers) {
  return ReportErrorOrReturn("Parameter", [&]() -> absl::StatusOr<XlaOp> {
    if (parameter_number < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("parameter number ", parameter_number, " is negative"));
    }
    if (parameter_number >= (int64_t{1} << 17)) {
      return absl::InvalidArgumentError(
          absl::StrCat("parameter number ", parameter_number, " is too large"));
    }
    if (parameters_.contains(parameter_number)) {
      return absl::InvalidArgumentError(
          absl::StrCat("parameter ", parameter_number, " already registered (as '",
                       parameters_.at(parameter_number)->name(), "')"));
    }
    AXLE_ASSIGN_OR_RETURN(Shape validated, builder_internal::ValidatedShape(shape));
    if (!replicated_at_leaf_buffers.empty() &&
        static_cast<int64_t>(replicated_at_leaf_buffers.size()) !=
            ShapeUtil::GetLeafCount(validated)) {
      return absl::InvalidArgumentError(
          absl::StrCat("parameter ", parameter_number, ": ", replicated_at_leaf_buffers.size(),
                       " replication flags for ", ShapeUtil::GetLeafCount(validated),
                       " leaf buffers of ", ShapeUtil::HumanString(validated)));
    }
    auto parameter = std::make_unique<HloParameterInstruction>(HloOpcode::kParameter, validated,
                                                               absl::Span<HloInstruction* const>{});
    parameter->mutable_attrs()->parameter_number = parameter_number;
    if (!replicated_at_leaf_buffers.empty()) {
      parameter->mutable_attrs()->parameter_replication = replicated_at_leaf_buffers;
    }
    parameter->SetName(UniqueName(SanitizeName(name.empty() ? "parameter" : name)));
    XlaOp op = AddInstruction(std::move(parameter));
    parameters_[parameter_number] = ops_[op.handle_];
    return op;
  });
}

XlaOp Parameter(XlaBuilder* builder, int64_t parameter_number, const Shape& shape,
                const std::string& name) {
  if (builder == nullptr) return XlaOp();
  return builder->Parameter(parameter_number, shape, name, {});
}

XlaOp Parameter(XlaBuilder* builder, int64_t parameter_number, const Shape& shape,
                const std::string& name, const std::vector<bool>& replicated_at_leaf_buffers) {
  if (builder == nullptr) return XlaOp();
  return builder->Parameter(parameter_number, shape, name, replicated_at_leaf_buffers);
}

XlaOp ConstantLiteral(XlaBuilder* builder, const Literal& literal) {
  return builder_internal::RunOp(builder, "ConstantLiteral", [&]() -> absl::StatusOr<XlaOp> {
    AXLE_ASSIGN_OR_RETURN(Shape shape, builder_internal::ValidatedShape(literal.shape()));
    auto constant = std::make_unique<HloConstantInstruction>(HloOpcode::kConstant, shape,
                                                             absl::Span<HloInstruction* const>{});
    constant->mutable_attrs()->literal = literal;
    return builder->AddInstruction(std::move(constant));
  });
}

namespace {
XlaOp ScalarConstant(XlaBuilder* builder, PrimitiveType type, absl::string_view op_name,
                     Literal (*make)(PrimitiveType)) {
  return builder_internal::RunOp(builder, op_name, [&]() -> absl::StatusOr<XlaOp> {
    if (!primitive_util::IsArrayType(type) || type == PRIMITIVE_TYPE_INVALID) {
      return absl::InvalidArgumentError(
          absl::StrCat("expected an array element type; got ",
                       primitive_util::LowercasePrimitiveTypeName(type)));
    }
    return ConstantLiteral(builder, make(type));
  });
}
}  // namespace

XlaOp Zero(XlaBuilder* builder, PrimitiveType type) {
  return ScalarConstant(builder, type, "Zero", &LiteralUtil::Zero);
}
XlaOp One(XlaBuilder* builder, PrimitiveType type) {
  return ScalarConstant(builder, type, "One", &LiteralUtil::One);
}
XlaOp MinValue(XlaBuilder* builder, PrimitiveType type) {
  return ScalarConstant(builder, type, "MinValue", &LiteralUtil::MinValue);
}
XlaOp MaxValue(XlaBuilder* builder, PrimitiveType type) {
  return ScalarConstant(builder, type, "MaxValue", &LiteralUtil::MaxValue);
}
XlaOp Zeros(XlaBuilder* builder, const Shape& shape) {
  return builder_internal::RunOp(builder, "Zeros", [&]() -> absl::StatusOr<XlaOp> {
    AXLE_ASSIGN_OR_RETURN(Shape validated, builder_internal::ValidatedShape(shape));
    if (!validated.IsArray()) {
      return absl::InvalidArgumentError(
          absl::StrCat("expected an array shape; got ", ShapeUtil::HumanString(validated)));
    }
    return Broadcast(Zero(builder, validated.element_type()), validated.dimensions());
  });
}

// --- Building -----------------------------------------------------------------------

absl::StatusOr<ProgramShape> XlaBuilder::GetProgramShape() const {
  AXLE_RETURN_IF_ERROR(first_error_);
  if (ops_.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("builder '", name_, "' has no ops"));
  }
  return GetProgramShape(
      XlaOp(static_cast<int64_t>(ops_.size()) - 1, const_cast<XlaBuilder*>(this)));
}

absl::StatusOr<ProgramShape> XlaBuilder::GetProgramShape(XlaOp root) const {
  AXLE_RETURN_IF_ERROR(first_error_);
  AXLE_ASSIGN_OR_RETURN(HloInstruction * root_instruction, LookUpInstruction(root));
  ProgramShape program_shape;
  int64_t expected = 0;
  for (const auto& [number, parameter] : parameters_) {
    if (number != expected) {
      return absl::InvalidArgumentError(
          absl::StrCat("builder '", name_, "': parameter numbers must be 0..N-1, but parameter ",
                       expected, " is missing (next is ", number, ")"));
    }
    ++expected;
    program_shape.mutable_parameters()->push_back(parameter->shape());
    program_shape.mutable_parameter_names()->push_back(parameter->name());
  }
  *program_shape.mutable_result() = root_instruction->shape();
  return program_shape;
}

absl::StatusOr<XlaComputation> XlaBuilder::Build(bool remove_dynamic_dimensions) {
  AXLE_RETURN_IF_ERROR(first_error_);
  if (ops_.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("Build: builder '", name_, "' has no ops (a computation needs a root)"));
  }
  return BuildImpl(static_cast<int64_t>(ops_.size()) - 1);
}

absl::StatusOr<XlaComputation> XlaBuilder::Build(XlaOp root, bool remove_dynamic_dimensions) {
  AXLE_RETURN_IF_ERROR(first_error_);
  absl::StatusOr<HloInstruction*> instruction = LookUpInstruction(root);
  if (!instruction.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("Build: bad root: ", instruction.status().message()));
  }
  return BuildImpl(root.handle_);
}

XlaComputation XlaBuilder::BuildAndNoteError() {
  absl::StatusOr<XlaComputation> computation = Build();
  if (computation.ok()) return *std::move(computation);
  if (parent_builder_ != nullptr) {
    parent_builder_->ReportError(absl::Status(
        computation.status().code(),
        absl::StrCat("error from sub-builder '", name_, "': ", computation.status().message())));
  }
  return XlaComputation();
}

absl::StatusOr<XlaComputation> XlaBuilder::BuildImpl(int64_t root_handle) {
  // Parameters numbered densely from 0.
  AXLE_RETURN_IF_ERROR(GetProgramShape(XlaOp(root_handle, this)).status());

  auto module = std::make_unique<HloModule>(name_);
  absl::flat_hash_map<const HloComputation*, HloComputation*> callees;
  auto keep_name = [](const std::string& name) { return name; };
  for (const auto& computation : embedded_) {
    auto copy = CopyComputation(*computation, computation->name(), callees, keep_name);
    callees[computation.get()] = module->AddEmbeddedComputation(std::move(copy));
  }
  // The entry: every op in order (ops are added after their operands), so
  // ops not reachable from the root are kept, as in XLA.
  auto entry = std::make_unique<HloComputation>(name_);
  absl::flat_hash_map<const HloInstruction*, HloInstruction*> map;
  for (HloInstruction* op : ops_) {
    std::vector<HloInstruction*> operands;
    for (HloInstruction* operand : op->operands()) operands.push_back(map.at(operand));
    std::unique_ptr<HloInstruction> clone = op->CloneWithNewOperands(op->shape(), operands);
    for (int64_t i = 0; i < static_cast<int64_t>(clone->called_computations().size()); ++i) {
      clone->set_called_computation(i, callees.at(clone->called_computations()[i]));
    }
    map[op] = entry->AddInstruction(std::move(clone));
  }
  entry->set_root_instruction(map.at(ops_[root_handle]));
  HloComputation* added_entry = module->AddEntryComputation(std::move(entry));
  module->RemoveUnusedComputations();

  AXLE_RETURN_IF_ERROR(CheckAliases(*added_entry));
  for (const InputOutputAlias& alias : input_output_aliases_) {
    absl::Status status = module->input_output_alias_config().SetUpAlias(
        alias.output_index, alias.param_number, alias.param_index, alias.kind);
    if (!status.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("SetUpAlias: ", status.message()));
    }
  }
  for (const auto& [number, index] : buffer_donors_) {
    AXLE_RETURN_IF_ERROR(module->buffer_donor_config().AddBufferDonor(number, index));
  }

  absl::Status verified = VerifyHloModule(*module);
  if (!verified.ok()) {
    return absl::InternalError(absl::StrCat(
        "Build: builder '", name_, "' made a module that does not verify: ", verified.message()));
  }
  return XlaComputation(std::move(module));
}

// The checks of XLA's HloInputOutputAliasConfig::Verify and
// HloBufferDonorConfig::Verify, in the builder's terms.
absl::Status XlaBuilder::CheckAliases(const HloComputation& entry) const {
  const Shape& result = entry.root_instruction()->shape();
  auto parameter_subshape = [&](absl::string_view what, int64_t number,
                                const ShapeIndex& index) -> absl::StatusOr<const Shape*> {
    if (number < 0 || number >= entry.num_parameters()) {
      return absl::InvalidArgumentError(absl::StrCat(
          what, ": parameter ", number, " does not exist (the computation has ",
          entry.num_parameters(), " parameter", entry.num_parameters() == 1 ? "" : "s", ")"));
    }
    const Shape& shape = entry.parameter_instruction(number)->shape();
    if (!ShapeUtil::IndexIsValid(shape, index)) {
      return absl::InvalidArgumentError(absl::StrCat(what, ": index ", ShapeIndexToString(index),
                                                     " does not exist in parameter ", number,
                                                     " of shape ", ShapeUtil::HumanString(shape)));
    }
    return &ShapeUtil::GetSubshape(shape, index);
  };
  std::set<std::pair<int64_t, ShapeIndex>> aliased_parameters;
  std::set<ShapeIndex> aliased_outputs;
  for (const InputOutputAlias& alias : input_output_aliases_) {
    if (!ShapeUtil::IndexIsValid(result, alias.output_index)) {
      return absl::InvalidArgumentError(
          absl::StrCat("SetUpAlias: output index ", ShapeIndexToString(alias.output_index),
                       " does not exist in the result shape ", ShapeUtil::HumanString(result)));
    }
    AXLE_ASSIGN_OR_RETURN(const Shape* parameter,
                          parameter_subshape("SetUpAlias", alias.param_number, alias.param_index));
    const Shape& output = ShapeUtil::GetSubshape(result, alias.output_index);
    if (!output.IsArray() || !parameter->IsArray() || !ShapeUtil::Compatible(output, *parameter)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "SetUpAlias: output ", ShapeIndexToString(alias.output_index), " of shape ",
          ShapeUtil::HumanString(output), " cannot alias parameter ", alias.param_number, " at ",
          ShapeIndexToString(alias.param_index), " of shape ", ShapeUtil::HumanString(*parameter),
          ": aliased buffers must be arrays of the same shape"));
    }
    if (!aliased_outputs.insert(alias.output_index).second) {
      return absl::InvalidArgumentError(absl::StrCat("SetUpAlias: output ",
                                                     ShapeIndexToString(alias.output_index),
                                                     " is aliased more than once"));
    }
    if (!aliased_parameters.insert({alias.param_number, alias.param_index}).second) {
      return absl::InvalidArgumentError(absl::StrCat("SetUpAlias: parameter ", alias.param_number,
                                                     " at ", ShapeIndexToString(alias.param_index),
                                                     " is aliased with more than one output"));
    }
  }
  for (const auto& [number, index] : buffer_donors_) {
    AXLE_ASSIGN_OR_RETURN(const Shape* parameter,
                          parameter_subshape("AddBufferDonor", number, index));
    if (!parameter->IsArray()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "AddBufferDonor: parameter ", number, " at ", ShapeIndexToString(index), " has shape ",
          ShapeUtil::HumanString(*parameter), "; only array buffers can be donated"));
    }
    if (aliased_parameters.contains({number, index})) {
      return absl::InvalidArgumentError(
          absl::StrCat("AddBufferDonor: parameter ", number, " at ", ShapeIndexToString(index),
                       " is a buffer donor and is also aliased with an output by SetUpAlias"));
    }
  }
  return absl::OkStatus();
}

// --- Convolution dimension numbers -----------------------------------------------------

ConvolutionDimensionNumbers XlaBuilder::CreateDefaultConvDimensionNumbers(int num_spatial_dims) {
  ConvolutionDimensionNumbers dnums;
  dnums.set_input_batch_dimension(kConvBatchDimension);
  dnums.set_input_feature_dimension(kConvFeatureDimension);
  dnums.set_output_batch_dimension(kConvBatchDimension);
  dnums.set_output_feature_dimension(kConvFeatureDimension);
  dnums.set_kernel_output_feature_dimension(kConvKernelOutputDimension);
  dnums.set_kernel_input_feature_dimension(kConvKernelInputDimension);
  for (int i = 0; i < num_spatial_dims; ++i) {
    dnums.add_input_spatial_dimensions(i + kConvFirstSpatialDimension);
    dnums.add_kernel_spatial_dimensions(i + kConvKernelFirstSpatialDimension);
    dnums.add_output_spatial_dimensions(i + kConvFirstSpatialDimension);
  }
  return dnums;
}

absl::Status XlaBuilder::Validate(const ConvolutionDimensionNumbers& dnum) {
  auto distinct = [](absl::string_view what, const std::vector<int64_t>& dims) -> absl::Status {
    std::vector<int64_t> sorted = dims;
    std::sort(sorted.begin(), sorted.end());
    if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) {
      return absl::InvalidArgumentError(absl::StrCat("convolution dimension numbers: the ", what,
                                                     " dimensions {", absl::StrJoin(dims, ","),
                                                     "} are not distinct"));
    }
    for (int64_t d : dims) {
      if (d < 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("convolution dimension numbers: negative ", what, " dimension ", d));
      }
    }
    return absl::OkStatus();
  };
  auto with = [](int64_t a, int64_t b, const std::vector<int64_t>& spatial) {
    std::vector<int64_t> all = {a, b};
    all.insert(all.end(), spatial.begin(), spatial.end());
    return all;
  };
  if (dnum.input_spatial_dimensions_size() != dnum.kernel_spatial_dimensions_size() ||
      dnum.input_spatial_dimensions_size() != dnum.output_spatial_dimensions_size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "convolution dimension numbers: input, kernel and output have ",
        dnum.input_spatial_dimensions_size(), ", ", dnum.kernel_spatial_dimensions_size(), " and ",
        dnum.output_spatial_dimensions_size(), " spatial dimensions; they must match"));
  }
  AXLE_RETURN_IF_ERROR(
      distinct("input", with(dnum.input_batch_dimension(), dnum.input_feature_dimension(),
                             dnum.input_spatial_dimensions())));
  AXLE_RETURN_IF_ERROR(distinct(
      "kernel", with(dnum.kernel_output_feature_dimension(), dnum.kernel_input_feature_dimension(),
                     dnum.kernel_spatial_dimensions())));
  return distinct("output", with(dnum.output_batch_dimension(), dnum.output_feature_dimension(),
                                 dnum.output_spatial_dimensions()));
}

// --- Helpers shared by the op families ------------------------------------------------

namespace builder_internal {

XlaBuilder* BuilderOf(absl::Span<const XlaOp> operands) {
  for (XlaOp op : operands) {
    if (op.builder() != nullptr) return op.builder();
  }
  return nullptr;
}

absl::StatusOr<std::vector<const Shape*>> OperandShapes(XlaBuilder* builder,
                                                        absl::Span<const XlaOp> operands) {
  std::vector<const Shape*> shapes;
  shapes.reserve(operands.size());
  for (XlaOp op : operands) {
    AXLE_ASSIGN_OR_RETURN(const Shape* shape, builder->GetShapePtr(op));
    shapes.push_back(shape);
  }
  return shapes;
}

absl::StatusOr<XlaOp> Emit(XlaBuilder* builder, HloOpcode opcode, const Shape& shape,
                           absl::Span<const XlaOp> operands) {
  AXLE_ASSIGN_OR_RETURN(std::vector<HloInstruction*> instructions,
                        builder->LookUpInstructions(operands));
  return builder->AddInstruction(HloInstruction::Create(opcode, shape, instructions));
}

absl::StatusOr<Shape> ValidatedShape(const Shape& shape) {
  absl::Status status = absl::OkStatus();
  ShapeUtil::ForEachSubshape(shape, [&](const Shape& subshape, const ShapeIndex&) {
    if (!status.ok()) return;
    if (subshape.element_type() == PRIMITIVE_TYPE_INVALID) {
      status = absl::InvalidArgumentError("shape has an invalid element type");
      return;
    }
    if (!subshape.IsArray()) return;
    int64_t elements = 1;
    for (int64_t i = 0; i < subshape.rank(); ++i) {
      int64_t size = subshape.dimensions(i);
      if (size == Shape::kUnboundedSize) continue;
      if (size < 0) {
        status = absl::InvalidArgumentError(absl::StrCat("shape ", ShapeUtil::HumanString(shape),
                                                         " has a negative dimension size"));
        return;
      }
      if (size > 0 && elements > (int64_t{1} << 50) / size) {
        status = absl::InvalidArgumentError(
            absl::StrCat("shape ", ShapeUtil::HumanString(shape), " is too large"));
        return;
      }
      elements *= std::max<int64_t>(size, 1);
    }
    if (subshape.has_layout()) {
      std::vector<int64_t> minor_to_major = subshape.layout().minor_to_major();
      std::sort(minor_to_major.begin(), minor_to_major.end());
      bool permutation = static_cast<int64_t>(minor_to_major.size()) == subshape.rank();
      for (int64_t i = 0; permutation && i < subshape.rank(); ++i) {
        permutation = minor_to_major[i] == i;
      }
      if (!permutation) {
        status = absl::InvalidArgumentError(
            absl::StrCat("shape ", ShapeUtil::HumanStringWithLayout(subshape),
                         " has a layout that is not a permutation of its dimensions"));
      }
    }
  });
  AXLE_RETURN_IF_ERROR(status);
  Shape out = shape;
  ShapeUtil::SetToDefaultLayoutIfMissing(&out);
  return out;
}

absl::StatusOr<XlaOp> InDimBroadcast(XlaBuilder* builder, const Shape& shape, XlaOp operand,
                                     absl::Span<const int64_t> broadcast_dimensions) {
  AXLE_ASSIGN_OR_RETURN(const Shape* operand_shape, builder->GetShapePtr(operand));
  AXLE_RETURN_IF_ERROR(
      ShapeInference::InferBroadcastShape(*operand_shape, shape, broadcast_dimensions).status());
  Shape result = shape;
  ShapeUtil::SetToDefaultLayoutIfMissing(&result);
  return Emit<HloDimensionsInstruction>(
      builder, HloOpcode::kBroadcast, result, {operand}, [&](HloDimensionsInstruction* b) {
        b->mutable_attrs()->dimensions.assign(broadcast_dimensions.begin(),
                                              broadcast_dimensions.end());
      });
}

absl::StatusOr<XlaOp> AddBroadcastSequence(XlaBuilder* builder, const Shape& output_shape,
                                           XlaOp operand) {
  AXLE_ASSIGN_OR_RETURN(const Shape* operand_shape, builder->GetShapePtr(operand));
  Shape broadcast_shape = ShapeUtil::ChangeElementType(output_shape, operand_shape->element_type());
  if (operand_shape->IsScalar()) {
    for (int64_t i = 0; i < broadcast_shape.rank(); ++i) {
      broadcast_shape.set_dynamic_dimension(i, false);
    }
    return InDimBroadcast(builder, broadcast_shape, operand, {});
  }
  if (operand_shape->rank() != output_shape.rank()) {
    return absl::InternalError(absl::StrCat("cannot broadcast ",
                                            ShapeUtil::HumanString(*operand_shape), " to ",
                                            ShapeUtil::HumanString(output_shape)));
  }
  std::vector<int64_t> broadcast_dimensions;
  std::vector<int64_t> reshaped_dimensions;
  for (int64_t i = 0; i < operand_shape->rank(); ++i) {
    if (operand_shape->dimensions(i) == output_shape.dimensions(i)) {
      broadcast_dimensions.push_back(i);
      reshaped_dimensions.push_back(operand_shape->dimensions(i));
    } else if (operand_shape->dimensions(i) != 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "an operand to be broadcast must have dimensions of size 1 where they differ from the "
          "output's; got ",
          ShapeUtil::HumanString(*operand_shape), " and ", ShapeUtil::HumanString(output_shape)));
    }
  }
  Shape reshaped_shape = ShapeUtil::MakeShape(operand_shape->element_type(), reshaped_dimensions);
  AXLE_ASSIGN_OR_RETURN(XlaOp reshaped,
                        Emit<HloReshapeInstruction>(builder, HloOpcode::kReshape, reshaped_shape,
                                                    {operand}, [](HloReshapeInstruction*) {}));
  return InDimBroadcast(builder, broadcast_shape, reshaped, broadcast_dimensions);
}

absl::StatusOr<Window> MakeWindow(absl::Span<const int64_t> window_dimensions,
                                  absl::Span<const int64_t> window_strides,
                                  absl::Span<const std::pair<int64_t, int64_t>> padding,
                                  absl::Span<const int64_t> lhs_dilation,
                                  absl::Span<const int64_t> rhs_dilation,
                                  const std::optional<std::vector<bool>>& window_reversal) {
  const size_t n = window_dimensions.size();
  auto check = [n](absl::string_view what, size_t size) -> absl::Status {
    if (size != n) {
      return absl::InvalidArgumentError(
          absl::StrCat("window has ", n, " dimensions but ", size, " ", what, " were given"));
    }
    return absl::OkStatus();
  };
  AXLE_RETURN_IF_ERROR(check("strides", window_strides.size()));
  AXLE_RETURN_IF_ERROR(check("padding pairs", padding.size()));
  if (!lhs_dilation.empty()) AXLE_RETURN_IF_ERROR(check("lhs dilations", lhs_dilation.size()));
  if (!rhs_dilation.empty()) AXLE_RETURN_IF_ERROR(check("rhs dilations", rhs_dilation.size()));
  if (window_reversal.has_value()) {
    AXLE_RETURN_IF_ERROR(check("window reversals", window_reversal->size()));
  }
  Window window;
  for (size_t i = 0; i < n; ++i) {
    WindowDimension* dim = window.add_dimensions();
    dim->set_size(window_dimensions[i]);
    dim->set_stride(window_strides[i]);
    dim->set_padding_low(padding[i].first);
    dim->set_padding_high(padding[i].second);
    dim->set_base_dilation(lhs_dilation.empty() ? 1 : lhs_dilation[i]);
    dim->set_window_dilation(rhs_dilation.empty() ? 1 : rhs_dilation[i]);
    dim->set_window_reversal(window_reversal.has_value() && (*window_reversal)[i]);
  }
  return window;
}

}  // namespace builder_internal
}  // namespace axle
