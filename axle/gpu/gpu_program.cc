//===- gpu_program.cc - A prepared module as GPU thunks --------------------===//
#include "axle/gpu/gpu_program.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <tuple>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "axle/base/status_macros.h"
#include "axle/gpu/cuda_custom_call.h"
#include "axle/gpu/gpu_thunk_factories.h"
#include "axle/gpu/gpu_thunks.h"
#include "axle/gpu/lu_pivots_thunk.h"
#include "axle/gpu/nccl_collective_thunk.h"
#include "axle/gpu/solver_thunk.h"
#include "axle/hlo/analysis/conditional_branch.h"
#include "axle/hlo/analysis/in_place_sharing.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/ir/hlo_opcode_families.h"
#include "axle/hlo/ir/hlo_structural_hash.h"
#include "axle/hlo/transforms/hlo_creation_utils.h"
#include "axle/hlo/transforms/side_effects.h"

namespace axle::gpu {

absl::Status GpuUnsupported(const HloInstruction& instruction, absl::string_view why) {
  // "CUDA backend: <why> (instruction %name, opcode)", as a pass says it.
  return PassUnimplemented("CUDA backend", instruction, why);
}

namespace {

struct PtxCache {
  std::mutex mu;
  std::map<std::tuple<Fingerprint128, std::string, int, std::string>,
           std::shared_ptr<const PtxKernel>>
      kernels;
  PtxCacheStats stats;
};

PtxCache& GlobalPtxCache() {
  static auto* cache = new PtxCache();
  return *cache;
}

}  // namespace

absl::StatusOr<std::shared_ptr<const PtxKernel>> CompileLoopFusionCached(
    const HloComputation& fused, const PtxOptions& options) {
  const Fingerprint128 fingerprint = FingerprintComputation(fused);
  const auto key =
      std::make_tuple(fingerprint, options.arch, options.block_size, options.libdevice_path);
  PtxCache& cache = GlobalPtxCache();
  {
    std::lock_guard<std::mutex> lock(cache.mu);
    auto it = cache.kernels.find(key);
    if (it != cache.kernels.end()) {
      ++cache.stats.hits;
      return it->second;
    }
  }
  // Compiled outside the lock; a kernel compiled twice at once keeps the
  // first.
  AXLE_ASSIGN_OR_RETURN(
      PtxKernel kernel,
      CompileLoopFusionToPtx(fused, absl::StrCat("axle_kernel_", fingerprint.ToHex()), options));
  auto compiled = std::make_shared<const PtxKernel>(std::move(kernel));
  std::lock_guard<std::mutex> lock(cache.mu);
  ++cache.stats.misses;
  return cache.kernels.try_emplace(key, std::move(compiled)).first->second;
}

PtxCacheStats GetPtxCacheStats() {
  PtxCache& cache = GlobalPtxCache();
  std::lock_guard<std::mutex> lock(cache.mu);
  return cache.stats;
}

namespace {

std::string ValueName(const HloInstruction& instruction, const ShapeIndex& index) {
  std::string name = absl::StrCat("%", instruction.name());
  if (!index.empty()) absl::StrAppend(&name, "{", absl::StrJoin(index, ","), "}");
  return name;
}

class Builder {
 public:
  explicit Builder(const PtxOptions& options) : options_(options) {}

  absl::StatusOr<GpuProgram> Build(const HloModule& module) {
    const HloComputation& entry = *module.entry_computation();
    entry_ = &entry;
    AXLE_RETURN_IF_ERROR(EmitComputation(entry));
    const HloInstruction* root = entry.root_instruction();
    for (const auto& [index, shape] : ArrayLeaves(root->shape())) {
      AXLE_ASSIGN_OR_RETURN(int64_t value, ValueOf(root, index));
      program_.result_leaves.emplace_back(index, value);
    }
    std::vector<int64_t> results;
    for (const auto& [index, value] : program_.result_leaves) results.push_back(value);
    ShareInPlaceOperands(InPlaceSteps(program_.thunks), program_.values, program_.temporary_sizes,
                         results, /*destinations=*/nullptr, /*nested=*/false);
    return std::move(program_);
  }

 private:
  absl::StatusOr<int64_t> ValueOf(const HloInstruction* instruction,
                                  const ShapeIndex& index = {}) const {
    auto it = values_.find({instruction, index});
    if (it == values_.end()) {
      return GpuUnsupported(
          *instruction, absl::StrCat("no array value at index {", absl::StrJoin(index, ","), "}"));
    }
    return it->second;
  }

  // The values of every array leaf of `instruction`'s result, in index order.
  absl::StatusOr<std::vector<int64_t>> LeafValues(const HloInstruction* instruction) const {
    std::vector<int64_t> values;
    for (const auto& [index, shape] : ArrayLeaves(instruction->shape())) {
      AXLE_ASSIGN_OR_RETURN(int64_t value, ValueOf(instruction, index));
      values.push_back(value);
    }
    return values;
  }

  int64_t AddValue(GpuValue value) {
    program_.values.push_back(std::move(value));
    return static_cast<int64_t>(program_.values.size()) - 1;
  }

  int64_t NewTemporary(const Shape& shape) {
    GpuValue value;
    value.kind = GpuValue::Kind::kTemporary;
    value.temporary = static_cast<int64_t>(program_.temporary_sizes.size());
    value.size_bytes = ShapeUtil::ByteSizeOfElements(shape);
    program_.temporary_sizes.push_back(value.size_bytes);
    return AddValue(std::move(value));
  }

  std::vector<int64_t> DefineTemporaries(const HloInstruction* instruction) {
    std::vector<int64_t> ids;
    for (const auto& [index, shape] : ArrayLeaves(instruction->shape())) {
      const int64_t id = NewTemporary(shape);
      GpuValue& value = program_.values[id];
      value.name = ValueName(*instruction, index);
      value.instruction = instruction;
      value.index = index;
      values_[{instruction, index}] = id;
      ids.push_back(id);
    }
    return ids;
  }

  void Define(const HloInstruction* instruction, const ShapeIndex& index, GpuValue value) {
    value.name = ValueName(*instruction, index);
    value.instruction = instruction;
    value.index = index;
    values_[{instruction, index}] = AddValue(std::move(value));
  }

  // Every leaf of `from` under `from_index` is also `to`'s under `to_index`.
  void Forward(const HloInstruction* from, const ShapeIndex& from_index, const HloInstruction* to,
               const ShapeIndex& to_index) {
    std::vector<std::pair<ShapeIndex, int64_t>> leaves;
    for (auto it = values_.lower_bound({from, {}}); it != values_.end() && it->first.first == from;
         ++it) {
      leaves.emplace_back(it->first.second, it->second);
    }
    for (const auto& [index, id] : leaves) {
      if (index.size() < from_index.size() ||
          !std::equal(from_index.begin(), from_index.end(), index.begin())) {
        continue;
      }
      ShapeIndex target = to_index;
      target.insert(target.end(), index.begin() + static_cast<int64_t>(from_index.size()),
                    index.end());
      values_[{to, target}] = id;
    }
  }

  // The operands' array leaves (operand order, pre-order within each),
  // then new temporaries for the result's.
  absl::StatusOr<GpuThunkValues> OperandsAndNewOutputs(const HloInstruction& instruction) {
    GpuThunkValues values;
    for (const HloInstruction* operand : instruction.operands()) {
      AXLE_ASSIGN_OR_RETURN(std::vector<int64_t> leaves, LeafValues(operand));
      values.operands.insert(values.operands.end(), leaves.begin(), leaves.end());
    }
    values.outputs = DefineTemporaries(&instruction);
    return values;
  }

  void AddThunk(std::unique_ptr<GpuThunk> thunk) { sequence_->push_back(std::move(thunk)); }

  absl::StatusOr<GpuThunkSequence> BuildSequence(const HloComputation& computation) {
    GpuThunkSequence sequence;
    GpuThunkSequence* outer = sequence_;
    sequence_ = &sequence;
    absl::Status status = EmitComputation(computation);
    sequence_ = outer;
    AXLE_RETURN_IF_ERROR(status);
    return sequence;
  }

  void BindParameter(const HloComputation& computation, int64_t number,
                     const HloInstruction* source) {
    Forward(source, {}, computation.parameter_instruction(number), {});
  }

  absl::Status EmitComputation(const HloComputation& computation);
  absl::Status EmitFusion(const HloInstruction& instruction);
  absl::Status EmitWhile(const HloInstruction& instruction);
  absl::Status EmitConditional(const HloInstruction& instruction);
  absl::Status EmitCall(const HloInstruction& instruction);
  absl::Status EmitCustomCall(const HloInstruction& instruction);
  absl::Status EmitLibraryOp(const HloInstruction& instruction);
  // Ends `sequence` (the thunks of `computation`) with copies of its root's
  // leaves into `destinations` (a while's state or a conditional's
  // results), after the shared in-place rules (hlo/analysis/
  // in_place_sharing.h) on it, each thunk's in_place_pairs() the CUDA
  // backend's hook: an output takes over its operand's temporary
  // (ShareInPlaceOperands), then a root leaf is computed straight into its
  // destination, in a while body only by a kernel (WriteRootsInPlace).
  // There is no copy for a leaf that ends up in its destination.
  absl::Status StoreRoot(const HloComputation& computation,
                         const std::vector<int64_t>& destinations, GpuThunkSequence& sequence,
                         bool while_body);
  // What the in-place rules see of `sequence`: each thunk's uses and pairs.
  static std::vector<std::optional<InPlaceStep>> InPlaceSteps(const GpuThunkSequence& sequence);
  // Whether `thunk`, in a while body, may compute a root leaf straight into
  // the loop's state (WriteRootsInPlace): only a kernel may.
  static bool MayWriteIntoLoopState(const GpuThunk& thunk);
  // Reports, in the module's terms (GpuProgram::in_place), what the thunks
  // emitted for `instruction` from `first_thunk` on do in place: the pairs
  // they offer (GpuThunk::in_place_pairs) for its outputs, and whether any
  // of them may not write into a loop's state.
  void ReportInPlaceChoices(const HloInstruction& instruction, size_t first_thunk);

  const PtxOptions& options_;
  GpuProgram program_;
  const HloComputation* entry_ = nullptr;
  GpuThunkSequence* sequence_ = &program_.thunks;
  LeafValueTable values_;
  std::set<const PtxKernel*> kernels_seen_;
};

absl::Status Builder::EmitComputation(const HloComputation& computation) {
  for (const HloInstruction* instruction : computation.MakeInstructionPostOrder()) {
    const size_t first_thunk = sequence_->size();
    // One case per opcode and no default: a new opcode is a compile error here
    // (-Werror=switch, axle/gpu/CMakeLists.txt) until it is given a thunk, a
    // library thunk (AXLE_GPU_LIBRARY_OPCODES) or left to loop fusion.
    switch (instruction->opcode()) {
      // clang-format off
      AXLE_GPU_LIBRARY_OPCODES(AXLE_HLO_OPCODE_CASE)
        AXLE_RETURN_IF_ERROR(EmitLibraryOp(*instruction));
        break;
      // clang-format on
      case HloOpcode::kParameter:
        if (&computation != entry_) break;  // a nested computation's: bound by its caller
        [[fallthrough]];
      case HloOpcode::kConstant:
        for (auto& [index, slot] : SourceSlots(*instruction, program_.constants)) {
          Define(instruction, index, std::move(slot));
        }
        break;
      case HloOpcode::kAfterAll:  // a token: no buffer
        break;
      case HloOpcode::kFusion:
        AXLE_RETURN_IF_ERROR(EmitFusion(*instruction));
        break;
      case HloOpcode::kWhile:
        AXLE_RETURN_IF_ERROR(EmitWhile(*instruction));
        break;
      case HloOpcode::kConditional:
        AXLE_RETURN_IF_ERROR(EmitConditional(*instruction));
        break;
      case HloOpcode::kCall:
        AXLE_RETURN_IF_ERROR(EmitCall(*instruction));
        break;
      case HloOpcode::kCustomCall:
        AXLE_RETURN_IF_ERROR(EmitCustomCall(*instruction));
        break;
      case HloOpcode::kReplicaId:
      case HloOpcode::kPartitionId: {
        std::vector<int64_t> outputs = DefineTemporaries(instruction);
        if (outputs.size() != 1) return GpuUnsupported(*instruction, "a non-array result");
        const HloModuleConfig& config = instruction->parent()->parent()->config();
        const DeviceGrid grid{config.replica_count, config.num_partitions};
        if (grid.size() == 1) {
          // One device: replica 0 of partition 0.
          AddThunk(std::make_unique<GpuMemsetThunk>(instruction->name(), outputs[0]));
        } else {
          AddThunk(std::make_unique<GpuDeviceIdThunk>(
              instruction->name(), instruction->opcode() == HloOpcode::kPartitionId, grid,
              outputs[0]));
        }
        break;
      }
      // Plumbing: its leaves are its operands' (ForwardedLeaves).
      case HloOpcode::kAddDependency:
      case HloOpcode::kBitcast:
      case HloOpcode::kDomain:
      case HloOpcode::kGetTupleElement:
      case HloOpcode::kOptimizationBarrier:
      case HloOpcode::kTuple:
        if (std::optional<std::vector<ForwardedLeaf>> leaves = ForwardedLeaves(*instruction)) {
          for (const ForwardedLeaf& leaf : *leaves) {
            Forward(leaf.operand, leaf.operand_index, instruction, leaf.index);
          }
        }
        break;
      case HloOpcode::kAsyncDone:
      case HloOpcode::kAsyncStart:
      case HloOpcode::kAsyncUpdate:
      case HloOpcode::kCopyDone:
      case HloOpcode::kCopyStart:
        AXLE_HLO_COLLECTIVE_OPCODES(AXLE_HLO_OPCODE_CASE)
        if (HloOpcodeIsAsyncStart(instruction->opcode()) ||
            HloOpcodeIsAsyncDone(instruction->opcode())) {
          return GpuUnsupported(*instruction, "asynchronous ops are not supported on CUDA yet");
        }
        if (HloOpcodeIsCollective(instruction->opcode())) {
          // Among several devices (or kept on one): NCCL.
          AXLE_ASSIGN_OR_RETURN(GpuThunkValues values, OperandsAndNewOutputs(*instruction));
          AXLE_ASSIGN_OR_RETURN(std::unique_ptr<NcclCollectiveThunk> thunk,
                                NcclCollectiveThunk::Create(*instruction, std::move(values)));
          AddThunk(std::move(thunk));
          break;
        }
        return GpuUnsupported(*instruction, absl::StrCat(HloOpcodeString(instruction->opcode()),
                                                         " is not supported on CUDA yet"));
      // Everything else: ops the compiler puts in a loop fusion (the
      // elemental emitter computes them) or rewrites before this point, and
      // side-effecting ops CheckSupported rejects.
      case HloOpcode::kBatchNormGrad:
      case HloOpcode::kBatchNormInference:
      case HloOpcode::kBatchNormTraining:
      case HloOpcode::kDynamicUpdateSlice:
      case HloOpcode::kInfeed:
      case HloOpcode::kOutfeed:
      case HloOpcode::kRecv:
      case HloOpcode::kRecvDone:
      case HloOpcode::kScan:
      case HloOpcode::kSend:
      case HloOpcode::kSendDone:
        AXLE_HLO_UNARY_ELEMENTWISE_OPCODES(AXLE_HLO_OPCODE_CASE)
        AXLE_HLO_BINARY_ELEMENTWISE_OPCODES(AXLE_HLO_OPCODE_CASE)
        AXLE_HLO_LOOP_FUSED_OPCODES(AXLE_HLO_OPCODE_CASE)
        return GpuUnsupported(*instruction, absl::StrCat(HloOpcodeString(instruction->opcode()),
                                                         " is not supported on CUDA yet"));
    }
    ReportInPlaceChoices(*instruction, first_thunk);
  }
  return absl::OkStatus();
}

bool Builder::MayWriteIntoLoopState(const GpuThunk& thunk) {
  return dynamic_cast<const GpuKernelThunk*>(&thunk) != nullptr;
}

void Builder::ReportInPlaceChoices(const HloInstruction& instruction, size_t first_thunk) {
  const auto thunks = absl::MakeConstSpan(*sequence_).subspan(first_thunk);
  ReportInPlacePairs(instruction, thunks, program_.values, values_, program_.in_place);
  for (const std::unique_ptr<GpuThunk>& thunk : thunks) {
    if (!MayWriteIntoLoopState(*thunk)) {
      program_.in_place.not_into_loop_state.insert(&instruction);
      break;
    }
  }
}

absl::Status Builder::EmitFusion(const HloInstruction& instruction) {
  const auto* fusion = cast<HloFusionInstruction>(&instruction);
  if (fusion->fusion_kind() == FusionKind::kOutput ||
      fusion->fusion_kind() == FusionKind::kCustom) {
    return GpuUnsupported(instruction, "output and custom fusions are not supported on CUDA yet");
  }
  GpuThunkValues values;
  for (const HloInstruction* operand : instruction.operands()) {
    if (!operand->shape().IsArray()) {
      return GpuUnsupported(instruction, "a fusion operand that is not an array");
    }
    AXLE_ASSIGN_OR_RETURN(int64_t value, ValueOf(operand));
    values.operands.push_back(value);
  }
  values.outputs = DefineTemporaries(&instruction);
  absl::StatusOr<std::shared_ptr<const PtxKernel>> kernel =
      CompileLoopFusionCached(*fusion->fused_instructions_computation(), options_);
  if (!kernel.ok()) {
    return absl::Status(kernel.status().code(),
                        absl::StrCat(kernel.status().message(), " (compiling fusion %",
                                     instruction.name(), " for CUDA)"));
  }
  if ((*kernel)->num_parameters != static_cast<int64_t>(values.operands.size()) ||
      (*kernel)->num_outputs != static_cast<int64_t>(values.outputs.size())) {
    return absl::InternalError(
        absl::StrCat("CUDA backend: the kernel of fusion %", instruction.name(), " takes ",
                     (*kernel)->num_parameters, " parameters and ", (*kernel)->num_outputs,
                     " outputs; the fusion has ", values.operands.size(), " operands and ",
                     values.outputs.size(), " array outputs"));
  }
  if (kernels_seen_.insert(kernel->get()).second) program_.kernels.push_back(*kernel);
  AddThunk(
      std::make_unique<GpuKernelThunk>(instruction.name(), *std::move(kernel), std::move(values)));
  return absl::OkStatus();
}

std::vector<std::optional<InPlaceStep>> Builder::InPlaceSteps(const GpuThunkSequence& sequence) {
  std::vector<std::optional<InPlaceStep>> steps;
  steps.reserve(sequence.size());
  for (const std::unique_ptr<GpuThunk>& thunk : sequence) {
    GpuThunkValues uses = thunk->buffer_uses();
    steps.push_back(InPlaceStep{StepUses{std::move(uses.operands), std::move(uses.outputs)},
                                thunk->in_place_pairs()});
  }
  return steps;
}

absl::Status Builder::StoreRoot(const HloComputation& computation,
                                const std::vector<int64_t>& destinations,
                                GpuThunkSequence& sequence, bool while_body) {
  const HloInstruction& root = *computation.root_instruction();
  AXLE_ASSIGN_OR_RETURN(std::vector<int64_t> sources, LeafValues(&root));
  if (sources.size() != destinations.size()) {
    return GpuUnsupported(root, "a root whose array leaves do not match its caller's result");
  }
  const std::vector<std::optional<InPlaceStep>> steps = InPlaceSteps(sequence);
  std::vector<int64_t> roots = sources;
  ShareInPlaceOperands(steps, program_.values, program_.temporary_sizes, roots, &destinations,
                       /*nested=*/true);
  WriteRootsInPlace(steps, program_.values, program_.temporary_sizes, roots, destinations,
                    [&](size_t i) { return !while_body || MayWriteIntoLoopState(*sequence[i]); });
  std::vector<std::pair<ShapeIndex, Shape>> leaves = ArrayLeaves(root.shape());
  auto same = [&](size_t i) {
    const GpuValue& source = program_.values[sources[i]];
    const GpuValue& destination = program_.values[destinations[i]];
    return sources[i] == destinations[i] || (source.kind == GpuValue::Kind::kTemporary &&
                                             destination.kind == GpuValue::Kind::kTemporary &&
                                             source.temporary == destination.temporary);
  };
  std::vector<std::pair<int64_t, int64_t>> copies = StoreCopies(
      sources, destinations, same, [&](size_t i) { return NewTemporary(leaves[i].second); });
  if (copies.empty()) return absl::OkStatus();
  sequence.push_back(
      std::make_unique<GpuCopyThunk>(absl::StrCat(root.name(), ".copy"), std::move(copies)));
  return absl::OkStatus();
}

absl::Status Builder::EmitWhile(const HloInstruction& instruction) {
  const HloComputation& condition = *instruction.while_condition();
  const HloComputation& body = *instruction.while_body();
  // The state: the while's own temporaries, initialized from the operand.
  std::vector<int64_t> state = DefineTemporaries(&instruction);
  AXLE_ASSIGN_OR_RETURN(std::vector<int64_t> initial, LeafValues(instruction.operand(0)));
  if (initial.size() != state.size()) {
    return GpuUnsupported(instruction, "a while whose operand and result leaves differ");
  }
  std::vector<std::pair<int64_t, int64_t>> init;
  for (size_t i = 0; i < state.size(); ++i) init.emplace_back(initial[i], state[i]);
  // A known trip count: the body alone, that many times (a condition with
  // side effects must still run each time).
  if (std::optional<int64_t> trips = KnownTripCount(instruction);
      trips.has_value() && !ComputationHasSideEffect(condition)) {
    BindParameter(body, 0, &instruction);
    AXLE_ASSIGN_OR_RETURN(GpuThunkSequence body_thunks, BuildSequence(body));
    AXLE_RETURN_IF_ERROR(StoreRoot(body, state, body_thunks, /*while_body=*/true));
    AddThunk(std::make_unique<GpuWhileThunk>(instruction.name(), std::move(init), *trips,
                                             std::move(body_thunks)));
    return absl::OkStatus();
  }
  BindParameter(condition, 0, &instruction);
  AXLE_ASSIGN_OR_RETURN(GpuThunkSequence condition_thunks, BuildSequence(condition));
  if (!ShapeUtil::Equal(condition.root_instruction()->shape(), ShapeUtil::MakeShape(PRED, {}))) {
    return GpuUnsupported(instruction, "a while condition that does not return pred[]");
  }
  AXLE_ASSIGN_OR_RETURN(int64_t predicate, ValueOf(condition.root_instruction()));
  BindParameter(body, 0, &instruction);
  AXLE_ASSIGN_OR_RETURN(GpuThunkSequence body_thunks, BuildSequence(body));
  AXLE_RETURN_IF_ERROR(StoreRoot(body, state, body_thunks, /*while_body=*/true));
  AddThunk(std::make_unique<GpuWhileThunk>(instruction.name(), std::move(init),
                                           std::move(condition_thunks), predicate,
                                           std::move(body_thunks)));
  return absl::OkStatus();
}

absl::Status Builder::EmitConditional(const HloInstruction& instruction) {
  const std::vector<HloComputation*>& branches = instruction.branch_computations();
  const PrimitiveType selector_type = instruction.operand(0)->shape().element_type();
  if (!IsRunnableConditional(instruction)) {
    return GpuUnsupported(instruction, kRunnableConditionalForm);
  }
  AXLE_ASSIGN_OR_RETURN(int64_t selector, ValueOf(instruction.operand(0)));
  std::vector<int64_t> results = DefineTemporaries(&instruction);
  const GpuValue& selector_value = program_.values[selector];
  if (selector_value.kind == GpuValue::Kind::kConstant &&
      instruction.operand(0)->shape().IsScalar()) {
    // Known now: the selected branch alone, nothing read on the host.
    const Literal& literal = program_.constants[selector_value.constant];
    const int64_t count = static_cast<int64_t>(branches.size());
    int64_t index = 0;
    if (selector_type == PRED) {
      index = literal.GetFirstElement<bool>() ? 0 : 1;
    } else {
      const int32_t value = literal.GetFirstElement<int32_t>();
      index = value < 0 || value >= count ? count - 1 : value;
    }
    const HloComputation& branch = *branches[index];
    if (branch.num_parameters() > 0) BindParameter(branch, 0, instruction.operand(index + 1));
    AXLE_ASSIGN_OR_RETURN(GpuThunkSequence thunks, BuildSequence(branch));
    AXLE_RETURN_IF_ERROR(StoreRoot(branch, results, thunks, /*while_body=*/false));
    if (!thunks.empty()) {
      AddThunk(std::make_unique<GpuSequenceThunk>(instruction.name(), std::move(thunks)));
    }
    return absl::OkStatus();
  }
  std::vector<GpuThunkSequence> sequences;
  for (size_t i = 0; i < branches.size(); ++i) {
    const HloComputation& branch = *branches[i];
    if (branch.num_parameters() > 0) BindParameter(branch, 0, instruction.operand(i + 1));
    AXLE_ASSIGN_OR_RETURN(GpuThunkSequence thunks, BuildSequence(branch));
    AXLE_RETURN_IF_ERROR(StoreRoot(branch, results, thunks, /*while_body=*/false));
    sequences.push_back(std::move(thunks));
  }
  AddThunk(std::make_unique<GpuConditionalThunk>(instruction.name(), selector,
                                                 selector_type == PRED, std::move(sequences)));
  return absl::OkStatus();
}

absl::Status Builder::EmitCall(const HloInstruction& instruction) {
  const HloComputation& callee = *instruction.to_apply();
  for (int64_t i = 0; i < instruction.operand_count(); ++i) {
    BindParameter(callee, i, instruction.operand(i));
  }
  AXLE_ASSIGN_OR_RETURN(GpuThunkSequence thunks, BuildSequence(callee));
  if (!thunks.empty()) {
    AddThunk(std::make_unique<GpuSequenceThunk>(instruction.name(), std::move(thunks)));
  }
  Forward(callee.root_instruction(), {}, &instruction, {});
  return absl::OkStatus();
}

absl::Status Builder::EmitCustomCall(const HloInstruction& instruction) {
  const auto& custom_call = *cast<HloCustomCallInstruction>(&instruction);
  const bool lu_pivots = custom_call.custom_call_target() == kLuPivotsToPermutationTarget;
  if (IsSolverCall(custom_call) || lu_pivots) {
    // jaxlib's LAPACK-style targets: cuSOLVER (solver_thunk.h), and LU's
    // pivots as a permutation (lu_pivots_thunk.h).
    AXLE_ASSIGN_OR_RETURN(GpuThunkValues values, OperandsAndNewOutputs(instruction));
    AXLE_ASSIGN_OR_RETURN(std::unique_ptr<GpuThunk> thunk,
                          lu_pivots ? MakeLuPivotsToPermutationThunk(custom_call, std::move(values))
                                    : MakeSolverThunk(custom_call, std::move(values)));
    AddThunk(std::move(thunk));
    return absl::OkStatus();
  }
  absl::StatusOr<CudaCustomCallTarget> target = CudaCustomCallTarget::Resolve(custom_call);
  if (!target.ok()) {
    return absl::Status(target.status().code(),
                        absl::StrCat("CUDA backend: ", target.status().message(), " (instruction %",
                                     instruction.name(), ")"));
  }
  AXLE_ASSIGN_OR_RETURN(GpuThunkValues values, OperandsAndNewOutputs(instruction));
  AddThunk(std::make_unique<GpuCustomCallThunk>(instruction.name(), *std::move(target),
                                                std::move(values)));
  return absl::OkStatus();
}

absl::Status Builder::EmitLibraryOp(const HloInstruction& instruction) {
  AXLE_ASSIGN_OR_RETURN(GpuThunkValues values, OperandsAndNewOutputs(instruction));
  AXLE_ASSIGN_OR_RETURN(std::unique_ptr<GpuThunk> thunk,
                        MakeLibraryThunk(instruction, std::move(values), options_));
  AddThunk(std::move(thunk));
  return absl::OkStatus();
}

void AppendThunks(const GpuProgram& program, const GpuThunkSequence& sequence, int depth,
                  std::string& text) {
  auto names = [&](const std::vector<int64_t>& ids) {
    std::vector<std::string> out;
    out.reserve(ids.size());
    for (int64_t id : ids) {
      const std::string& name = program.values[id].name;
      out.push_back(name.empty() ? absl::StrCat("v", id) : name);
    }
    return absl::StrJoin(out, " ");
  };
  const std::string indent(2 * static_cast<size_t>(depth), ' ');
  for (const std::unique_ptr<GpuThunk>& thunk : sequence) {
    std::string kind = "library";
    if (const auto* kernel = dynamic_cast<const GpuKernelThunk*>(thunk.get())) {
      kind = absl::StrCat("kernel ", kernel->kernel().name, " grid=", kernel->kernel().grid,
                          " block=", kernel->kernel().block);
    } else if (dynamic_cast<const GpuCopyThunk*>(thunk.get()) != nullptr) {
      kind = "copy";
    } else if (dynamic_cast<const GpuMemsetThunk*>(thunk.get()) != nullptr) {
      kind = "memset";
    } else if (dynamic_cast<const GpuCustomCallThunk*>(thunk.get()) != nullptr) {
      kind = "custom-call";
    } else if (dynamic_cast<const GpuSequenceThunk*>(thunk.get()) != nullptr) {
      kind = "call";
    } else if (const auto* loop = dynamic_cast<const GpuWhileThunk*>(thunk.get())) {
      kind = loop->trip_count().has_value() ? absl::StrCat("while trip_count=", *loop->trip_count())
                                            : "while";
    } else if (dynamic_cast<const GpuConditionalThunk*>(thunk.get()) != nullptr) {
      kind = "conditional";
    } else if (const auto* collective = dynamic_cast<const NcclCollectiveThunk*>(thunk.get())) {
      kind = absl::StrCat("nccl ", NcclCollectivePlanToString(collective->plan()));
    } else if (dynamic_cast<const GpuDeviceIdThunk*>(thunk.get()) != nullptr) {
      kind = "device-id";
    }
    const GpuThunkValues uses = thunk->buffer_uses();
    absl::StrAppend(&text, indent, kind, " %", thunk->name(), ": reads ", names(uses.operands),
                    "; writes ", names(uses.outputs), "\n");
    if (const auto* call = dynamic_cast<const GpuSequenceThunk*>(thunk.get())) {
      AppendThunks(program, call->sequence(), depth + 1, text);
    } else if (const auto* loop = dynamic_cast<const GpuWhileThunk*>(thunk.get())) {
      if (!loop->trip_count().has_value()) {
        absl::StrAppend(&text, indent, " condition:\n");
        AppendThunks(program, loop->condition(), depth + 1, text);
      }
      absl::StrAppend(&text, indent, " body:\n");
      AppendThunks(program, loop->body(), depth + 1, text);
    } else if (const auto* conditional = dynamic_cast<const GpuConditionalThunk*>(thunk.get())) {
      for (size_t i = 0; i < conditional->branches().size(); ++i) {
        absl::StrAppend(&text, indent, " branch ", i, ":\n");
        AppendThunks(program, conditional->branches()[i], depth + 1, text);
      }
    }
  }
}

}  // namespace

absl::StatusOr<GpuProgram> BuildGpuProgram(const HloModule& module, const PtxOptions& options) {
  if (module.entry_computation() == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("module '", module.name(), "' has no entry computation"));
  }
  return Builder(options).Build(module);
}

std::optional<int64_t> KnownTripCount(const HloInstruction& loop) {
  if (loop.opcode() != HloOpcode::kWhile) return std::nullopt;
  const absl::string_view config = loop.raw_backend_config_string();
  constexpr absl::string_view kKey = "\"known_trip_count\"";
  size_t at = config.find(kKey);
  if (at == absl::string_view::npos) return std::nullopt;
  // {"n":"7"} (protobuf's JSON writes int64 as a string; a bare number is
  // taken too).
  constexpr absl::string_view kN = "\"n\"";
  const size_t close = config.find('}', at);
  at = config.find(kN, at + kKey.size());
  if (at == absl::string_view::npos || at > close) return std::nullopt;
  at = config.find_first_not_of(" \t\n:\"", at + kN.size());
  if (at == absl::string_view::npos) return std::nullopt;
  const absl::string_view digits =
      config.substr(at).substr(0, config.substr(at).find_first_not_of("0123456789"));
  int64_t trips = 0;
  if (digits.empty() || digits.size() > 18 || !absl::SimpleAtoi(digits, &trips)) {
    return std::nullopt;
  }
  return trips;
}

std::string GpuProgramToString(const GpuProgram& program) {
  std::string text;
  AppendThunks(program, program.thunks, 0, text);
  return text;
}

}  // namespace axle::gpu
