//===- program_builder.cc - HLO entry computation -> CpuProgram ------------===//
#include "axle/cpu/runtime/program_builder.h"

#include <algorithm>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "axle/base/alignment.h"
#include "axle/base/status_macros.h"
#include "axle/cpu/loop_kernel_plan.h"
#include "axle/cpu/runtime/concat_in_place.h"
#include "axle/cpu/runtime/dynamic_update_slice_thunk.h"
#include "axle/cpu/runtime/feed_thunk.h"
#include "axle/cpu/runtime/scatter_thunk.h"
#include "axle/cpu/runtime/thunk_emitters.h"
#include "axle/hlo/analysis/elementwise_access.h"
#include "axle/hlo/analysis/in_place_sharing.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/ir/hlo_opcode_families.h"
#include "axle/hlo/transforms/hlo_creation_utils.h"

namespace axle::cpu {

absl::Status Unsupported(const HloInstruction& instruction, absl::string_view why) {
  // "cpu platform: <why> (instruction %name, opcode)", as a pass says it.
  return PassUnimplemented("cpu platform", instruction, why);
}

namespace {

// Whether the fused computation of `fusion` has an `opcode` instruction.
bool FusionContains(const HloInstruction& fusion, HloOpcode opcode) {
  for (const HloInstruction* fused :
       cast<HloFusionInstruction>(&fusion)->fused_instructions_computation()->instructions()) {
    if (fused->opcode() == opcode) return true;
  }
  return false;
}

// What the in-place rules see of `sequence`: each thunk's uses and pairs.
std::vector<std::optional<InPlaceStep>> InPlaceSteps(
    const std::vector<std::unique_ptr<Thunk>>& sequence) {
  std::vector<std::optional<InPlaceStep>> steps;
  steps.reserve(sequence.size());
  for (const std::unique_ptr<Thunk>& thunk : sequence) {
    std::optional<Thunk::BufferUses> uses = thunk->buffer_uses();
    if (!uses.has_value()) {
      steps.emplace_back();
      continue;
    }
    steps.push_back(InPlaceStep{StepUses{std::move(uses->reads), std::move(uses->writes)},
                                thunk->in_place_pairs()});
  }
  return steps;
}

}  // namespace

// One case per opcode and no default: a new opcode is a compile error here
// (-Werror=switch, axle/cpu/runtime/CMakeLists.txt) until it is given a
// thunk or left to plumbing or loop fusion.
ThunkEmitter FindThunkEmitter(const HloInstruction& instruction) {
  switch (instruction.opcode()) {
    // Collectives the one-device lowering left: those of a module of several
    // devices (single_device_collectives.h); a -done is its -start's.
    // clang-format off
    AXLE_HLO_COLLECTIVE_OPCODES(AXLE_HLO_OPCODE_CASE)
      return HloOpcodeIsAsyncDone(instruction.opcode()) ? nullptr : EmitCollectiveThunk;
    // clang-format on
    case HloOpcode::kDot:
      return EmitDotThunk;
    case HloOpcode::kWhile:
      return EmitWhileThunk;
    case HloOpcode::kConditional:
      return EmitConditionalThunk;
    case HloOpcode::kCall:
      return EmitCallThunk;
    case HloOpcode::kCustomCall:
      return EmitCustomCallThunk;
    case HloOpcode::kConvolution:
      return EmitConvolutionThunk;
    case HloOpcode::kSort:
      return EmitSortThunk;
    case HloOpcode::kScatter:
      return EmitScatterThunk;
    case HloOpcode::kSelectAndScatter:
      return EmitSelectAndScatterThunk;
    case HloOpcode::kRngBitGenerator:
      return EmitRngBitGeneratorThunk;
    case HloOpcode::kRng:
      return EmitRngThunk;
    case HloOpcode::kRngGetAndUpdateState:
      return EmitRngGetAndUpdateStateThunk;
    case HloOpcode::kTopK:
      return EmitTopKThunk;
    case HloOpcode::kDynamicUpdateSlice:
      return DynamicUpdateSliceRunsAsThunk(instruction) ? EmitDynamicUpdateSliceThunk : nullptr;
    case HloOpcode::kFft:
      return EmitFftThunk;
    case HloOpcode::kCholesky:
    case HloOpcode::kTriangularSolve:
    case HloOpcode::kRaggedDot:
    case HloOpcode::kScaledDot:
      return EmitInterpreterKernelThunk;
    case HloOpcode::kReplicaId:
    case HloOpcode::kPartitionId:
      return EmitDeviceIdThunk;
    case HloOpcode::kInfeed:
      return EmitInfeedThunk;
    case HloOpcode::kOutfeed:
      return EmitOutfeedThunk;
    case HloOpcode::kFusion:
      if (cast<HloFusionInstruction>(&instruction)->fusion_kind() != FusionKind::kOutput) {
        return nullptr;
      }
      if (FusionContains(instruction, HloOpcode::kDot)) return EmitDotThunk;
      if (FusionContains(instruction, HloOpcode::kConvolution)) return EmitConvolutionThunk;
      return nullptr;
    // Plumbing (EmitComputation).
    case HloOpcode::kParameter:
    case HloOpcode::kConstant:
    case HloOpcode::kTuple:
    case HloOpcode::kGetTupleElement:
    case HloOpcode::kBitcast:
    case HloOpcode::kAddDependency:
    case HloOpcode::kOptimizationBarrier:
    case HloOpcode::kDomain:
    case HloOpcode::kAfterAll:
    // Neither: rewritten before codegen (batch-norm expansion, scan to
    // while) or not supported on this platform; the loop emitter or
    // EmitComputation rejects them, naming the op.
    case HloOpcode::kAsyncStart:
    case HloOpcode::kAsyncUpdate:
    case HloOpcode::kAsyncDone:
    case HloOpcode::kBatchNormGrad:
    case HloOpcode::kBatchNormInference:
    case HloOpcode::kBatchNormTraining:
    case HloOpcode::kCopyStart:
    case HloOpcode::kCopyDone:
    case HloOpcode::kRecv:
    case HloOpcode::kRecvDone:
    case HloOpcode::kSend:
    case HloOpcode::kSendDone:
    case HloOpcode::kScan:
      // Loop fusions (WrapInLoopFusions): the elemental emitter computes them
      // (ElementalIrEmitter::EmitElement).
      AXLE_HLO_UNARY_ELEMENTWISE_OPCODES(AXLE_HLO_OPCODE_CASE)
      AXLE_HLO_BINARY_ELEMENTWISE_OPCODES(AXLE_HLO_OPCODE_CASE)
      AXLE_HLO_LOOP_FUSED_OPCODES(AXLE_HLO_OPCODE_CASE)
      return nullptr;
  }
  return nullptr;  // not an HloOpcode
}

absl::StatusOr<CpuProgram> ProgramBuilder::Build(const HloModule& module) {
  const HloComputation& entry = *module.entry_computation();
  entry_ = &entry;
  kernels_ = std::make_unique<LoopKernelModule>(module.name(), options_, precompiled_);
  AXLE_RETURN_IF_ERROR(EmitComputation(entry));
  const HloInstruction* root = entry.root_instruction();
  for (const auto& [index, shape] : ArrayLeaves(root->shape())) {
    auto it = values_.find({root, index});
    if (it == values_.end()) return Unsupported(*root, "a result leaf without a value");
    program_.result_leaves.emplace_back(index, it->second);
  }
  std::vector<int64_t> results;
  for (const auto& [index, value] : program_.result_leaves) results.push_back(value);
  ShareInPlaceOperands(InPlaceSteps(program_.thunks), program_.values, program_.temporary_sizes,
                       results, /*destinations=*/nullptr, /*nested=*/false);
  AXLE_RETURN_IF_ERROR(kernels_->Compile());
  return std::move(program_);
}

absl::StatusOr<std::vector<std::unique_ptr<Thunk>>> ProgramBuilder::BuildSequence(
    const HloComputation& computation) {
  std::vector<std::unique_ptr<Thunk>> sequence;
  std::vector<std::unique_ptr<Thunk>>* outer = sequence_;
  sequence_ = &sequence;
  absl::Status status = EmitComputation(computation);
  sequence_ = outer;
  AXLE_RETURN_IF_ERROR(status);
  return sequence;
}

void ProgramBuilder::BindParameter(const HloComputation& computation, int64_t number,
                                   const HloInstruction* source) {
  Forward(source, {}, computation.parameter_instruction(number), {});
}

absl::Status ProgramBuilder::EmitComputation(const HloComputation& computation) {
  for (const HloInstruction* instruction : computation.MakeInstructionPostOrder()) {
    if (std::optional<std::vector<ForwardedLeaf>> leaves = ForwardedLeaves(*instruction)) {
      for (const ForwardedLeaf& leaf : *leaves) {
        Forward(leaf.operand, leaf.operand_index, instruction, leaf.index);
      }
      continue;
    }
    const size_t first_thunk = sequence_->size();
    if (ThunkEmitter emitter = FindThunkEmitter(*instruction)) {
      AXLE_RETURN_IF_ERROR(emitter(*instruction, *this));
      ReportInPlacePairs(*instruction, first_thunk);
      continue;
    }
    switch (instruction->opcode()) {
      case HloOpcode::kParameter:
        // A nested computation's parameters are bound by its caller.
        if (&computation != entry_) break;
        [[fallthrough]];
      case HloOpcode::kConstant:
        // A value per array leaf (a tuple constant has several).
        for (auto& [index, slot] : SourceSlots(*instruction, program_.constants)) {
          Define(instruction, index, std::move(slot));
        }
        break;
      // Plumbing, forwarded above (ForwardedLeaves), and after-all (a token:
      // no buffer).
      case HloOpcode::kAddDependency:
      case HloOpcode::kAfterAll:
      case HloOpcode::kBitcast:
      case HloOpcode::kDomain:
      case HloOpcode::kGetTupleElement:
      case HloOpcode::kOptimizationBarrier:
      case HloOpcode::kTuple:
        break;
      case HloOpcode::kFusion:
        // A scalar broadcast its scatter fills in itself (scatter_thunk.h).
        if (ScatterFillsOperand(*instruction) != nullptr) {
          ReportValueInUser(*instruction, ValueInUser{instruction->users().front(), false});
          break;
        }
        // A concatenation its convolutions write in place (concat_in_place.h).
        if (ConcatFilledByOperands(*instruction)) break;
        AXLE_RETURN_IF_ERROR(AddLoopKernelThunk(*instruction));
        break;
        // Everything else: ops with a thunk emitter that declined this one
      // (FindThunkEmitter), and ops PrepareModule should have put in a loop
      // fusion or rewritten. One case each, no default (-Werror=switch).
      case HloOpcode::kAsyncDone:
      case HloOpcode::kAsyncStart:
      case HloOpcode::kAsyncUpdate:
      case HloOpcode::kBatchNormGrad:
      case HloOpcode::kBatchNormInference:
      case HloOpcode::kBatchNormTraining:
      case HloOpcode::kCall:
      case HloOpcode::kCholesky:
      case HloOpcode::kConditional:
      case HloOpcode::kConvolution:
      case HloOpcode::kCopyDone:
      case HloOpcode::kCopyStart:
      case HloOpcode::kCustomCall:
      case HloOpcode::kDot:
      case HloOpcode::kDynamicUpdateSlice:
      case HloOpcode::kFft:
      case HloOpcode::kInfeed:
      case HloOpcode::kOutfeed:
      case HloOpcode::kPartitionId:
      case HloOpcode::kRaggedDot:
      case HloOpcode::kRecv:
      case HloOpcode::kRecvDone:
      case HloOpcode::kReplicaId:
      case HloOpcode::kRng:
      case HloOpcode::kRngBitGenerator:
      case HloOpcode::kRngGetAndUpdateState:
      case HloOpcode::kScaledDot:
      case HloOpcode::kScan:
      case HloOpcode::kScatter:
      case HloOpcode::kSelectAndScatter:
      case HloOpcode::kSend:
      case HloOpcode::kSendDone:
      case HloOpcode::kSort:
      case HloOpcode::kTopK:
      case HloOpcode::kTriangularSolve:
      case HloOpcode::kWhile:
        AXLE_HLO_UNARY_ELEMENTWISE_OPCODES(AXLE_HLO_OPCODE_CASE)
        AXLE_HLO_BINARY_ELEMENTWISE_OPCODES(AXLE_HLO_OPCODE_CASE)
        AXLE_HLO_COLLECTIVE_OPCODES(AXLE_HLO_OPCODE_CASE)
        AXLE_HLO_LOOP_FUSED_OPCODES(AXLE_HLO_OPCODE_CASE)
        return Unsupported(*instruction, "this op is not supported yet");
    }
    ReportInPlacePairs(*instruction, first_thunk);
  }
  return absl::OkStatus();
}

void ProgramBuilder::ReportInPlacePairs(const HloInstruction& instruction, size_t first_thunk) {
  axle::ReportInPlacePairs(instruction, absl::MakeConstSpan(*sequence_).subspan(first_thunk),
                           program_.values, values_, program_.in_place);
}

namespace {

// Elements of the float transcendental and dividing ops of a fused
// computation, each costing tens of cycles per vector: what makes a kernel
// of a few KiB worth splitting inside a loop (KernelThunk).
int64_t ExpensiveElements(const HloComputation& computation) {
  int64_t elements = 0;
  for (const HloInstruction* instruction : computation.instructions()) {
    switch (instruction->opcode()) {
      case HloOpcode::kExp:
      case HloOpcode::kExpm1:
      case HloOpcode::kLog:
      case HloOpcode::kLog1p:
      case HloOpcode::kLogistic:
      case HloOpcode::kTanh:
      case HloOpcode::kErf:
      case HloOpcode::kSin:
      case HloOpcode::kCos:
      case HloOpcode::kTan:
      case HloOpcode::kAtan2:
      case HloOpcode::kPower:
      case HloOpcode::kSqrt:
      case HloOpcode::kRsqrt:
      case HloOpcode::kCbrt:
      case HloOpcode::kDivide:
      case HloOpcode::kRemainder:
        if (instruction->shape().IsArray() &&
            primitive_util::IsFloatingPointType(instruction->shape().element_type())) {
          elements += ShapeUtil::ElementsIn(instruction->shape());
        }
        break;
      default:
        break;
    }
  }
  return elements;
}

}  // namespace

absl::Status ProgramBuilder::AddLoopKernelThunk(const HloInstruction& instruction) {
  std::vector<int64_t> operand_values;
  for (const HloInstruction* operand : instruction.operands()) {
    auto it = values_.find({operand, {}});
    if (it == values_.end()) {
      return Unsupported(instruction, "a fusion operand that is not an array");
    }
    operand_values.push_back(it->second);
  }
  std::vector<int64_t> output_values = DefineTemporaries(&instruction);
  const auto* fusion = cast<HloFusionInstruction>(&instruction);
  AXLE_ASSIGN_OR_RETURN(
      std::unique_ptr<CompiledKernel> kernel,
      kernels_->AddKernel(*fusion->fused_instructions_computation(), UniqueName("kernel")));
  // Outputs that may take over an operand's memory (in_place_sharing.h decides
  // whether they do); not an operand the kernel reads twice over.
  std::vector<std::pair<int64_t, int64_t>> in_place;
  for (const auto& [parameter, output] :
       InPlaceOutputCandidates(*fusion->fused_instructions_computation())) {
    const int64_t operand = operand_values[parameter];
    if (std::count(operand_values.begin(), operand_values.end(), operand) == 1) {
      in_place.emplace_back(operand, output_values[output]);
    }
  }
  auto thunk = std::make_unique<KernelThunk>(instruction.name(), std::move(kernel),
                                             std::move(operand_values), std::move(output_values),
                                             std::move(in_place));
  // A column reduction's every range of columns reads every input row
  // (loop_kernel_plan.h: IsColumnReduction): one range per thread, whole
  // cache lines of the output each (of every output, for sibling column
  // reductions in one kernel: ColumnReductions).
  const HloInstruction* root = fusion->fused_instructions_computation()->root_instruction();
  std::vector<const HloInstruction*> outputs = {root};
  if (root->opcode() == HloOpcode::kTuple) {
    outputs.assign(root->operands().begin(), root->operands().end());
  }
  if (std::vector<const HloInstruction*> columns = ColumnReductions(outputs); !columns.empty()) {
    int64_t bytes = kBufferAlignment;
    for (const HloInstruction* reduce : columns) {
      bytes = std::min<int64_t>(
          bytes, std::max<int64_t>(1, primitive_util::ByteWidth(reduce->shape().element_type())));
    }
    thunk->SplitOncePerThread(std::max<int64_t>(1, kBufferAlignment / bytes));
  }
  // A side-by-side reduction ranged over the lanes it folds together: one
  // range per thread, whole vectors each (a range of a few elements would
  // fold them one by one).
  if (const HloInstruction* reduce = SideBySideReduction(outputs);
      reduce != nullptr && RangeDimension(outputs) == reduce->shape().tuple_shapes(0).rank() - 1) {
    thunk->SplitOncePerThread(SideBySideVectorLanes(*reduce));
  }
  thunk->SetExpensiveElements(ExpensiveElements(*fusion->fused_instructions_computation()));
  AddThunk(std::move(thunk));
  return absl::OkStatus();
}

absl::StatusOr<int64_t> ProgramBuilder::ValueOf(const HloInstruction* instruction,
                                                const ShapeIndex& index) const {
  auto it = values_.find({instruction, index});
  if (it == values_.end()) {
    return Unsupported(*instruction,
                       absl::StrCat("no array value at index {", absl::StrJoin(index, ","), "}"));
  }
  return it->second;
}

absl::StatusOr<std::vector<int64_t>> ProgramBuilder::OperandValues(
    const HloInstruction& instruction) const {
  std::vector<int64_t> values;
  values.reserve(instruction.operand_count());
  for (const HloInstruction* operand : instruction.operands()) {
    AXLE_ASSIGN_OR_RETURN(values.emplace_back(), ValueOf(operand));
  }
  return values;
}

std::vector<std::pair<ShapeIndex, int64_t>> ProgramBuilder::LeavesOf(
    const HloInstruction* instruction) const {
  std::vector<std::pair<ShapeIndex, int64_t>> leaves;
  for (auto it = values_.lower_bound({instruction, {}});
       it != values_.end() && it->first.first == instruction; ++it) {
    leaves.emplace_back(it->first.second, it->second);
  }
  return leaves;
}

// "%name" or "%name{1,0}" for a tuple leaf (dumps, profiles).
static std::string ValueName(const HloInstruction& instruction, const ShapeIndex& index) {
  std::string name = absl::StrCat("%", instruction.name());
  if (!index.empty()) absl::StrAppend(&name, "{", absl::StrJoin(index, ","), "}");
  return name;
}

int64_t ProgramBuilder::DefineTemporary(const HloInstruction* instruction, const ShapeIndex& index,
                                        const Shape& shape) {
  int64_t id = NewTemporary(shape);
  program_.values[id].name = ValueName(*instruction, index);
  program_.values[id].instruction = instruction;
  program_.values[id].index = index;
  values_[{instruction, index}] = id;
  return id;
}

int64_t ProgramBuilder::SharedResult(const HloInstruction* instruction, int64_t writers) {
  auto it = shared_results_.find(instruction);
  if (it == shared_results_.end()) {
    const int64_t value = DefineTemporary(instruction, {}, instruction->shape());
    it = shared_results_.emplace(instruction, std::make_pair(value, writers)).first;
  }
  const int64_t value = it->second.first;
  if (--it->second.second <= 0) shared_results_.erase(it);
  return value;
}

int64_t ProgramBuilder::NewTemporary(const Shape& shape) {
  ValueSlot slot;
  slot.kind = ValueSlot::Kind::kTemporary;
  slot.temporary = static_cast<int64_t>(program_.temporary_sizes.size());
  slot.size_bytes = ShapeUtil::ByteSizeOfElements(shape);
  program_.temporary_sizes.push_back(slot.size_bytes);
  int64_t id = static_cast<int64_t>(program_.values.size());
  program_.values.push_back(std::move(slot));
  return id;
}

void ProgramBuilder::ShareNestedInPlace(const std::vector<std::unique_ptr<Thunk>>& sequence,
                                        std::vector<int64_t>& sources,
                                        const std::vector<int64_t>& destinations) {
  const std::vector<std::optional<InPlaceStep>> steps = InPlaceSteps(sequence);
  ShareInPlaceOperands(steps, program_.values, program_.temporary_sizes, sources, &destinations,
                       /*nested=*/true);
  WriteRootsInPlace(steps, program_.values, program_.temporary_sizes, sources, destinations);
}

std::vector<int64_t> ProgramBuilder::DefineTemporaries(const HloInstruction* instruction) {
  std::vector<int64_t> values;
  for (const auto& [index, shape] : ArrayLeaves(instruction->shape())) {
    values.push_back(DefineTemporary(instruction, index, shape));
  }
  return values;
}

int64_t ProgramBuilder::DefineScratch(int64_t size_bytes) {
  ValueSlot slot;
  slot.kind = ValueSlot::Kind::kTemporary;
  slot.temporary = static_cast<int64_t>(program_.temporary_sizes.size());
  slot.size_bytes = size_bytes;
  program_.temporary_sizes.push_back(size_bytes);
  program_.values.push_back(std::move(slot));
  return static_cast<int64_t>(program_.values.size()) - 1;
}

const Literal* ProgramBuilder::ConstantOf(int64_t value) const {
  const ValueSlot& s = program_.values[value];
  return s.kind == ValueSlot::Kind::kConstant ? &program_.constants[s.constant] : nullptr;
}

std::vector<const Literal*> ProgramBuilder::ConstantsOf(absl::Span<const int64_t> values) const {
  std::vector<const Literal*> constants;
  constants.reserve(values.size());
  for (int64_t value : values) constants.push_back(ConstantOf(value));
  return constants;
}

std::string ProgramBuilder::UniqueName(absl::string_view prefix) {
  return absl::StrCat(prefix, "_", next_name_++);
}

int64_t ProgramBuilder::Define(const HloInstruction* instruction, const ShapeIndex& index,
                               ValueSlot slot) {
  int64_t id = static_cast<int64_t>(program_.values.size());
  slot.name = ValueName(*instruction, index);
  slot.instruction = instruction;
  slot.index = index;
  program_.values.push_back(std::move(slot));
  values_[{instruction, index}] = id;
  return id;
}

void ProgramBuilder::Forward(const HloInstruction* from, const ShapeIndex& from_index,
                             const HloInstruction* to, const ShapeIndex& to_index) {
  for (const auto& [index, id] : LeavesOf(from)) {
    if (index.size() < from_index.size() ||
        !std::equal(from_index.begin(), from_index.end(), index.begin())) {
      continue;
    }
    ShapeIndex target = to_index;
    target.insert(target.end(), index.begin() + from_index.size(), index.end());
    values_[{to, target}] = id;
  }
}

}  // namespace axle::cpu
