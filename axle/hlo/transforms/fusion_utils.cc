// Building and growing fusion instructions (see fusion_utils.h).
#include "axle/hlo/transforms/fusion_utils.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "axle/base/status_macros.h"
#include "axle/core/shape_util.h"
#include "axle/hlo/ir/hlo_module.h"
#include "axle/hlo/ir/hlo_structural_hash.h"
#include "axle/hlo/transforms/hlo_creation_utils.h"

namespace axle {
namespace {

// Collects the instructions of a new fused computation: clones of outside
// instructions, inlined fused computations, and one parameter per distinct
// outside value read.
class FusedComputationBuilder {
 public:
  // `merge_identical`: a clone equal to one already emitted (same opcode,
  // attributes, shape and operands) is not added; the earlier one stands
  // for it, so two fusions merged into one compute what they share once.
  explicit FusedComputationBuilder(HloModule* module, bool merge_identical = false)
      : module_(module),
        computation_(std::make_unique<HloComputation>(module->GetUniqueName("fused_computation"))),
        merge_identical_(merge_identical) {}

  // The fused value that stands for the outside value `outer`.
  HloInstruction* Parameter(HloInstruction* outer) {
    auto it = parameters_.find(outer);
    if (it != parameters_.end()) return it->second;
    int64_t number = static_cast<int64_t>(outer_operands_.size());
    auto parameter = std::make_unique<HloParameterInstruction>(
        HloOpcode::kParameter, outer->shape(), absl::Span<HloInstruction* const>{});
    parameter->mutable_attrs()->parameter_number = number;
    parameter->SetName(module_->GetUniqueName(absl::StrCat("param_", number)));
    HloInstruction* added = computation_->AddInstruction(std::move(parameter));
    parameters_[outer] = added;
    outer_operands_.push_back(outer);
    return added;
  }

  // A clone of `original` over `operands`. `rename`: the original stays in
  // the module, so the clone needs a name of its own.
  HloInstruction* Clone(const HloInstruction& original, absl::Span<HloInstruction* const> operands,
                        bool rename) {
    std::unique_ptr<HloInstruction> clone =
        original.CloneWithNewOperands(original.shape(), operands);
    if (!merge_identical_ || original.HasSideEffect() || !original.called_computations().empty()) {
      if (rename) clone->SetName(module_->GetUniqueName(original.name()));
      return computation_->AddInstruction(std::move(clone));
    }
    StructuralHasher hasher;
    HashIgnoringOperands(hasher, *clone);
    for (const HloInstruction* operand : operands) {
      hasher.Add(reinterpret_cast<uintptr_t>(operand));
    }
    std::vector<HloInstruction*>& group = emitted_[hasher.Finish()];
    for (HloInstruction* other : group) {
      if (Identical(*other, *clone)) {
        clone->RemoveAllOperands();  // not kept: its operands forget it
        return other;
      }
    }
    if (rename) clone->SetName(module_->GetUniqueName(original.name()));
    HloInstruction* added = computation_->AddInstruction(std::move(clone));
    group.push_back(added);
    return added;
  }

  // Clones `original` (an outside instruction, maybe a fusion) reading
  // `operands` in place of its own operands; returns the value it computes.
  HloInstruction* Emit(const HloInstruction& original, const std::vector<HloInstruction*>& operands,
                       bool rename) {
    return EmitBody(original, operands, rename, /*split_root_tuple=*/false).front();
  }

  // Like Emit, but a fusion whose root is a tuple (a multi-output fusion)
  // gives the tuple's elements, one per output, and no tuple.
  std::vector<HloInstruction*> EmitOutputs(const HloInstruction& original,
                                           const std::vector<HloInstruction*>& operands,
                                           bool rename) {
    return EmitBody(original, operands, rename, /*split_root_tuple=*/true);
  }

  // Installs the fused computation in the module and adds the fusion
  // instruction (not yet used by anything) to `outer`.
  HloFusionInstruction* Finish(HloInstruction* root, FusionKind kind, const Shape& shape,
                               HloComputation* outer) {
    computation_->set_root_instruction(root);
    // Runs where its fusion runs (the verifier requires the caller's thread).
    computation_->SetExecutionThread(outer->execution_thread());
    HloComputation* fused = module_->AddEmbeddedComputation(std::move(computation_));
    auto fusion =
        std::make_unique<HloFusionInstruction>(HloOpcode::kFusion, shape, outer_operands_);
    fusion->mutable_attrs()->kind = kind;
    fusion->SetName(module_->GetUniqueName("fusion"));
    fusion->AppendCalledComputation(fused);
    auto* added = cast<HloFusionInstruction>(outer->AddInstruction(std::move(fusion)));
    fused->SetFusionInstruction(added);
    return added;
  }

  // A tuple of `elements` (fused values): a multi-output fusion's root.
  HloInstruction* Tuple(const std::vector<HloInstruction*>& elements) {
    return MakeTuple(computation_.get(), elements);
  }

  // How many instructions the fused computation holds so far.
  int64_t instruction_count() const { return computation_->instruction_count(); }

 private:
  std::vector<HloInstruction*> EmitBody(const HloInstruction& original,
                                        const std::vector<HloInstruction*>& operands, bool rename,
                                        bool split_root_tuple) {
    const auto* fusion = dyn_cast<HloFusionInstruction>(&original);
    if (fusion == nullptr) return {Clone(original, operands, rename)};
    const HloComputation* fused = fusion->fused_instructions_computation();
    const HloInstruction* root = fused->root_instruction();
    const bool split = split_root_tuple && root->opcode() == HloOpcode::kTuple;
    absl::flat_hash_map<const HloInstruction*, HloInstruction*> map;
    for (int64_t i = 0; i < fused->num_parameters(); ++i) {
      map[fused->parameter_instruction(i)] = operands[i];
    }
    for (HloInstruction* instruction : fused->MakeInstructionPostOrder()) {
      if (instruction->opcode() == HloOpcode::kParameter || (split && instruction == root)) {
        continue;
      }
      std::vector<HloInstruction*> new_operands;
      new_operands.reserve(instruction->operand_count());
      for (HloInstruction* operand : instruction->operands())
        new_operands.push_back(map.at(operand));
      map[instruction] = Clone(*instruction, new_operands, rename);
    }
    if (!split) return {map.at(root)};
    std::vector<HloInstruction*> outputs;
    outputs.reserve(root->operand_count());
    for (const HloInstruction* element : root->operands()) outputs.push_back(map.at(element));
    return outputs;
  }

  HloModule* module_;
  std::unique_ptr<HloComputation> computation_;
  absl::flat_hash_map<HloInstruction*, HloInstruction*> parameters_;
  std::vector<HloInstruction*> outer_operands_;
  bool merge_identical_;
  absl::flat_hash_map<Fingerprint128, std::vector<HloInstruction*>> emitted_;
};

// Replaces `old_instruction` by `fusion` and removes the fused computations
// of fusions that are gone as a result.
absl::Status ReplaceWithFusion(HloInstruction* old_instruction, HloFusionInstruction* fusion,
                               std::vector<HloComputation*> maybe_dead) {
  HloComputation* computation = old_instruction->parent();
  // Which old fusions the replacement removes (RemoveInstructionAndUnusedOperands):
  // old_instruction, and an operand of it nothing else reads.
  std::vector<bool> dies;
  dies.reserve(maybe_dead.size());
  for (HloComputation* fused : maybe_dead) {
    const HloInstruction* old = fused->FusionInstruction();
    dies.push_back(old == old_instruction ||
                   (old->user_count() == 1 && old->users()[0] == old_instruction &&
                    !old->IsRoot() && !old->HasSideEffect() && old->control_successors().empty()));
  }
  AXLE_RETURN_IF_ERROR(computation->ReplaceInstruction(old_instruction, fusion));
  for (size_t i = 0; i < maybe_dead.size(); ++i) {
    if (!dies[i]) continue;  // still in the computation: it keeps its body
    AXLE_RETURN_IF_ERROR(computation->parent()->RemoveEmbeddedComputation(maybe_dead[i]));
  }
  return absl::OkStatus();
}

// A value a fusion instruction produces and the output it is: the fusion
// itself (output 0) when it is array-shaped, else each of its
// get-tuple-element users.
struct OutputValue {
  HloInstruction* value;
  int64_t output;
};

absl::StatusOr<std::vector<OutputValue>> OutputValues(HloInstruction* fusion) {
  if (!fusion->shape().IsTuple()) return std::vector<OutputValue>{{fusion, 0}};
  std::vector<OutputValue> values;
  for (HloInstruction* user : fusion->users()) {
    const auto* element = dyn_cast<HloGetTupleElementInstruction>(user);
    if (element == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat(user->name(), " reads multi-output fusion ", fusion->name(), " as a whole"));
    }
    values.push_back({user, element->tuple_index()});
  }
  return values;
}

// Whether `user` reads its operand `operand_index` at the index it is read
// at itself (XLA: same dimensions, or a transpose, whose index is a
// permutation). Same-shaped ops that move elements (reverse, gather, pad,
// slice, ...) add an index.
bool KeepsIndex(const HloInstruction& user, int64_t operand_index) {
  if (user.opcode() == HloOpcode::kTranspose) return true;
  const Shape& operand_shape = user.operand(operand_index)->shape();
  if (!user.shape().IsArray() || !operand_shape.IsArray() ||
      !ShapeUtil::SameDimensions(user.shape(), operand_shape)) {
    return false;
  }
  switch (user.opcode()) {
    case HloOpcode::kBroadcast:
    case HloOpcode::kReshape:
    case HloOpcode::kBitcast:
    case HloOpcode::kCopy:
      return true;
    case HloOpcode::kDynamicUpdateSlice:
      return operand_index == 0;
    default:
      return user.IsElementwise();
  }
}

// IndexUsageCounts over the graph reached from `roots` (each read once, as
// the outputs of a fused computation are), where `operands_of(node)` gives
// the operands of node that the graph holds (what it leaves out is read
// from outside and gets no count) in operand order, nullptr for the others.
template <typename OperandsFn>
std::vector<std::pair<const HloInstruction*, int64_t>> EvaluateIndexUsage(
    absl::Span<const HloInstruction* const> roots, const OperandsFn& operands_of) {
  // Post order of the graph: operands before users.
  absl::flat_hash_map<const HloInstruction*, int64_t> id;
  std::vector<const HloInstruction*> nodes;
  std::vector<std::vector<const HloInstruction*>> edges;
  std::vector<int64_t> post_order;
  std::vector<std::pair<int64_t, size_t>> stack;
  auto visit = [&](const HloInstruction* node) {
    auto [it, inserted] = id.emplace(node, static_cast<int64_t>(nodes.size()));
    if (!inserted) return;
    nodes.push_back(node);
    edges.push_back(operands_of(node));
    stack.emplace_back(it->second, 0);
  };
  for (const HloInstruction* root : roots) {
    visit(root);
    while (!stack.empty()) {
      auto& [node, next] = stack.back();
      const int64_t current = node;
      if (next == edges[current].size()) {
        post_order.push_back(current);
        stack.pop_back();
        continue;
      }
      const HloInstruction* operand = edges[current][next++];
      if (operand != nullptr) visit(operand);
    }
  }
  // Users first: each node's indexing users are complete when it is
  // reached. -1 stands for the outputs' reader.
  // Sets, mostly of one element: small vectors.
  std::vector<std::vector<int64_t>> indexing_users(nodes.size());
  auto add_user = [](std::vector<int64_t>& users, int64_t user) {
    if (std::find(users.begin(), users.end(), user) == users.end()) users.push_back(user);
  };
  for (const HloInstruction* root : roots) add_user(indexing_users[id.at(root)], -1);
  std::vector<int64_t> counts(nodes.size(), 0);
  std::vector<std::pair<const HloInstruction*, int64_t>> result;
  result.reserve(nodes.size());
  for (auto it = post_order.rbegin(); it != post_order.rend(); ++it) {
    const int64_t node = *it;
    int64_t count = 0;
    for (int64_t user : indexing_users[node]) {
      count = std::min(kIndexUsageSaturation, count + (user < 0 ? 1 : counts[user]));
    }
    counts[node] = count;
    result.emplace_back(nodes[node], count);
    for (size_t i = 0; i < edges[node].size(); ++i) {
      const HloInstruction* operand = edges[node][i];
      if (operand == nullptr) continue;
      std::vector<int64_t>& users = indexing_users[id.at(operand)];
      if (KeepsIndex(*nodes[node], static_cast<int64_t>(i))) {
        for (int64_t user : indexing_users[node]) add_user(users, user);
      } else {
        add_user(users, node);
      }
    }
    indexing_users[node] = {};
  }
  return result;
}

// The operands of `instruction` (in a fused computation) that are not
// parameters; nullptr for parameters.
std::vector<const HloInstruction*> FusedOperands(const HloInstruction* instruction) {
  std::vector<const HloInstruction*> operands;
  operands.reserve(instruction->operand_count());
  for (const HloInstruction* operand : instruction->operands()) {
    operands.push_back(operand->opcode() == HloOpcode::kParameter ? nullptr : operand);
  }
  return operands;
}

}  // namespace

std::vector<HloComputation*> ControlFlowComputations(const HloModule& module) {
  std::vector<HloComputation*> order;
  if (module.entry_computation() == nullptr) return order;
  absl::flat_hash_map<const HloComputation*, bool> seen;
  // Depth-first over call edges; a computation is listed after its callees.
  std::vector<std::pair<HloComputation*, bool>> stack = {{module.entry_computation(), false}};
  while (!stack.empty()) {
    auto [computation, expanded] = stack.back();
    stack.pop_back();
    if (expanded) {
      order.push_back(computation);
      continue;
    }
    if (seen.contains(computation)) continue;
    seen[computation] = true;
    stack.push_back({computation, true});
    for (HloInstruction* instruction : computation->MakeInstructionPostOrder()) {
      HloOpcode op = instruction->opcode();
      if (op != HloOpcode::kWhile && op != HloOpcode::kConditional && op != HloOpcode::kCall) {
        continue;
      }
      for (HloComputation* callee : instruction->called_computations()) {
        if (callee != nullptr && !seen.contains(callee)) stack.push_back({callee, false});
      }
    }
  }
  return order;
}

bool IsExpensiveElementwise(HloOpcode opcode) {
  return HloOpcodeIsTranscendental(opcode) || opcode == HloOpcode::kDivide ||
         opcode == HloOpcode::kRemainder;
}

bool IsCheapToDuplicate(const HloInstruction& instruction) {
  if (const auto* fusion = dyn_cast<HloFusionInstruction>(&instruction)) {
    for (const HloInstruction* fused : fusion->fused_instructions_computation()->instructions()) {
      if (!IsCheapToDuplicate(*fused)) return false;
    }
    return true;
  }
  return !IsExpensiveElementwise(instruction.opcode());
}

absl::StatusOr<HloFusionInstruction*> WrapInFusion(HloInstruction* instruction, FusionKind kind) {
  HloComputation* outer = instruction->parent();
  FusedComputationBuilder builder(outer->parent());
  std::vector<HloInstruction*> operands;
  for (HloInstruction* operand : instruction->operands())
    operands.push_back(builder.Parameter(operand));
  HloInstruction* root = builder.Emit(*instruction, operands, /*rename=*/false);
  HloFusionInstruction* fusion = builder.Finish(root, kind, instruction->shape(), outer);
  std::vector<HloComputation*> maybe_dead;
  if (auto* old = dyn_cast<HloFusionInstruction>(instruction)) {
    maybe_dead.push_back(old->fused_instructions_computation());
  }
  AXLE_RETURN_IF_ERROR(ReplaceWithFusion(instruction, fusion, maybe_dead));
  return fusion;
}

absl::StatusOr<HloFusionInstruction*> FuseProducerIntoConsumer(HloInstruction* producer,
                                                               HloInstruction* consumer,
                                                               FusionKind kind) {
  HloComputation* outer = consumer->parent();
  if (producer->parent() != outer || !consumer->IsUserOf(producer)) {
    return absl::InvalidArgumentError(
        absl::StrCat(producer->name(), " is not an operand of ", consumer->name()));
  }
  // The producer stays when something besides the consumer reads it.
  bool producer_stays = producer->IsRoot() || producer->user_count() != 1;
  FusedComputationBuilder builder(outer->parent());
  std::vector<HloInstruction*> producer_operands;
  for (HloInstruction* operand : producer->operands()) {
    producer_operands.push_back(builder.Parameter(operand));
  }
  HloInstruction* producer_value = builder.Emit(*producer, producer_operands, producer_stays);
  std::vector<HloInstruction*> consumer_operands;
  for (HloInstruction* operand : consumer->operands()) {
    consumer_operands.push_back(operand == producer ? producer_value : builder.Parameter(operand));
  }
  HloInstruction* root = builder.Emit(*consumer, consumer_operands, /*rename=*/false);
  HloFusionInstruction* fusion = builder.Finish(root, kind, consumer->shape(), outer);
  std::vector<HloComputation*> maybe_dead;
  for (HloInstruction* old : {producer, consumer}) {
    if (auto* old_fusion = dyn_cast<HloFusionInstruction>(old)) {
      maybe_dead.push_back(old_fusion->fused_instructions_computation());
    }
  }
  AXLE_RETURN_IF_ERROR(ReplaceWithFusion(consumer, fusion, maybe_dead));
  return fusion;
}

absl::Status FuseProducerIntoFusionInPlace(HloInstruction* producer, HloFusionInstruction* consumer,
                                           HloInstruction* placeholder, FusionGrowth& growth) {
  HloComputation* outer = consumer->parent();
  if (producer->parent() != outer || !consumer->IsUserOf(producer) || producer == placeholder) {
    return absl::InvalidArgumentError(
        absl::StrCat(producer->name(), " is not an operand of ", consumer->name()));
  }
  HloModule* module = outer->parent();
  HloComputation* fused = consumer->fused_instructions_computation();
  std::vector<HloInstruction*>& parameter_order = growth.parameter_order;
  growth.step_starts.push_back(fused->instruction_count());
  // The consumer's slots that read producer, and the live parameter of
  // each other outside value it reads.
  std::vector<int64_t> producer_slots;
  absl::flat_hash_map<const HloInstruction*, HloInstruction*> parameter_of;
  for (int64_t i = 0; i < consumer->operand_count(); ++i) {
    const HloInstruction* operand = consumer->operand(i);
    if (operand == producer) {
      producer_slots.push_back(i);
    } else if (operand != placeholder) {
      parameter_of.emplace(operand, fused->parameter_instruction(i));
    }
  }
  // The order FuseProducerIntoConsumer would give the parameters: the
  // producer's operands first, then the consumer's others.
  if (parameter_order.empty()) {
    for (HloInstruction* operand : consumer->operands()) {
      if (operand != placeholder && std::find(parameter_order.begin(), parameter_order.end(),
                                              operand) == parameter_order.end()) {
        parameter_order.push_back(operand);
      }
    }
  }
  std::vector<HloInstruction*> new_order;
  new_order.reserve(parameter_order.size() + producer->operands().size());
  for (HloInstruction* operand : producer->operands()) {
    if (!growth.copies.contains(operand) &&
        std::find(new_order.begin(), new_order.end(), operand) == new_order.end()) {
      new_order.push_back(operand);
    }
  }
  const size_t from_producer = new_order.size();
  for (HloInstruction* operand : parameter_order) {
    if (operand != producer &&
        std::find(new_order.begin(), new_order.begin() + static_cast<std::ptrdiff_t>(from_producer),
                  operand) == new_order.begin() + static_cast<std::ptrdiff_t>(from_producer)) {
      new_order.push_back(operand);
    }
  }
  parameter_order = std::move(new_order);
  auto parameter = [&](HloInstruction* outer_value) {
    if (auto copy = growth.copies.find(outer_value); copy != growth.copies.end()) {
      return copy->second;
    }
    auto [it, is_new] = parameter_of.emplace(outer_value, nullptr);
    if (is_new) {
      const int64_t number = fused->num_parameters();
      auto added = std::make_unique<HloParameterInstruction>(
          HloOpcode::kParameter, outer_value->shape(), absl::Span<HloInstruction* const>{});
      added->mutable_attrs()->parameter_number = number;
      added->SetName(module->GetUniqueName(absl::StrCat("param_", number)));
      it->second = fused->AddInstruction(std::move(added));
      consumer->AppendOperand(outer_value);
    }
    return it->second;
  };
  // The producer stays when something besides the consumer reads it; its
  // copies then need names of their own.
  const bool producer_stays = producer->IsRoot() || producer->user_count() != 1;
  auto clone = [&](const HloInstruction& original, absl::Span<HloInstruction* const> operands) {
    std::unique_ptr<HloInstruction> copy =
        original.CloneWithNewOperands(original.shape(), operands);
    if (producer_stays) copy->SetName(module->GetUniqueName(original.name()));
    return fused->AddInstruction(std::move(copy));
  };
  std::vector<HloInstruction*> producer_operands;
  producer_operands.reserve(producer->operand_count());
  for (HloInstruction* operand : producer->operands()) {
    producer_operands.push_back(parameter(operand));
  }
  HloInstruction* value = nullptr;
  HloComputation* producer_body = nullptr;
  if (auto* producer_fusion = dyn_cast<HloFusionInstruction>(producer)) {
    producer_body = producer_fusion->fused_instructions_computation();
    absl::flat_hash_map<const HloInstruction*, HloInstruction*> map;
    for (int64_t i = 0; i < producer_body->num_parameters(); ++i) {
      map[producer_body->parameter_instruction(i)] = producer_operands[i];
    }
    std::vector<HloInstruction*> operands;
    for (HloInstruction* instruction : producer_body->MakeInstructionPostOrder()) {
      if (instruction->opcode() == HloOpcode::kParameter) continue;
      operands.clear();
      for (HloInstruction* operand : instruction->operands()) operands.push_back(map.at(operand));
      map[instruction] = clone(*instruction, operands);
    }
    value = map.at(producer_body->root_instruction());
  } else {
    value = clone(*producer, producer_operands);
  }
  growth.copies[producer] = value;
  for (int64_t slot : producer_slots) {
    AXLE_RETURN_IF_ERROR(fused->parameter_instruction(slot)->ReplaceAllUsesWith(value));
    AXLE_RETURN_IF_ERROR(consumer->ReplaceOperandWith(slot, placeholder));
  }
  if (producer->user_count() != 0 || producer->IsRoot()) return absl::OkStatus();
  // The producer goes; so do producers fused before whose last reader it
  // was (their copies read by the consumer instead), and so on.
  std::vector<HloInstruction*> dead = {producer};
  while (!dead.empty()) {
    HloInstruction* instruction = dead.back();
    dead.pop_back();
    const std::vector<HloInstruction*> operands = instruction->operands();
    HloComputation* body = nullptr;
    if (auto* fusion = dyn_cast<HloFusionInstruction>(instruction)) {
      body = fusion->fused_instructions_computation();
    }
    growth.copies.erase(instruction);
    if (instruction != producer) growth.removed.push_back(instruction);
    AXLE_RETURN_IF_ERROR(outer->RemoveInstruction(instruction));
    if (body != nullptr) AXLE_RETURN_IF_ERROR(module->RemoveEmbeddedComputation(body));
    for (HloInstruction* operand : operands) {
      if (growth.copies.contains(operand) && operand->user_count() == 0 && !operand->IsRoot() &&
          std::find(dead.begin(), dead.end(), operand) == dead.end()) {
        dead.push_back(operand);
      }
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<HloFusionInstruction*> CompactFusion(HloFusionInstruction* fusion,
                                                    const FusionGrowth& growth) {
  HloComputation* outer = fusion->parent();
  HloComputation* fused = fusion->fused_instructions_computation();
  FusedComputationBuilder builder(outer->parent());
  // The parameters in growth's order first, those read only.
  absl::flat_hash_set<const HloInstruction*> read;
  for (int64_t i = 0; i < fused->num_parameters(); ++i) {
    const HloInstruction* parameter = fused->parameter_instruction(i);
    if (parameter->user_count() > 0 || fused->root_instruction() == parameter) {
      read.insert(fusion->operand(i));
    }
  }
  for (HloInstruction* operand : growth.parameter_order) {
    if (read.contains(operand)) builder.Parameter(operand);
  }
  // The instructions: each step's (the producer's copy, which reads
  // parameters only), the last step's first, then the consumer's own; in
  // post order when that is not an order of operands before users.
  const std::vector<HloInstruction*> listed = fused->instructions();
  std::vector<HloInstruction*> order;
  order.reserve(listed.size());
  int64_t end = static_cast<int64_t>(listed.size());
  for (auto start = growth.step_starts.rbegin(); start != growth.step_starts.rend(); ++start) {
    order.insert(order.end(), listed.begin() + *start, listed.begin() + end);
    end = *start;
  }
  order.insert(order.end(), listed.begin(), listed.begin() + end);
  auto operands_first = [](const std::vector<HloInstruction*>& instructions) {
    absl::flat_hash_set<const HloInstruction*> seen;
    for (const HloInstruction* instruction : instructions) {
      for (const HloInstruction* operand : instruction->operands()) {
        if (operand->opcode() != HloOpcode::kParameter && !seen.contains(operand)) return false;
      }
      seen.insert(instruction);
    }
    return true;
  };
  if (!operands_first(order)) order = fused->MakeInstructionPostOrder();
  absl::flat_hash_map<const HloInstruction*, HloInstruction*> map;
  auto value_of = [&](HloInstruction* instruction) {
    if (instruction->opcode() == HloOpcode::kParameter) {
      const int64_t number = cast<HloParameterInstruction>(instruction)->parameter_number();
      return builder.Parameter(fusion->mutable_operand(number));
    }
    return map.at(instruction);
  };
  std::vector<HloInstruction*> operands;
  for (HloInstruction* instruction : order) {
    if (instruction->opcode() == HloOpcode::kParameter) continue;
    operands.clear();
    for (HloInstruction* operand : instruction->operands()) operands.push_back(value_of(operand));
    map[instruction] = builder.Clone(*instruction, operands, /*rename=*/false);
  }
  HloInstruction* root = value_of(fused->root_instruction());
  HloFusionInstruction* compacted =
      builder.Finish(root, fusion->fusion_kind(), fusion->shape(), outer);
  // Only the old fusion goes: its other operands are compacted's, and the
  // placeholder (if any) stays for its owner to remove.
  AXLE_RETURN_IF_ERROR(fusion->ReplaceAllUsesWith(compacted));
  AXLE_RETURN_IF_ERROR(outer->RemoveInstruction(fusion));
  AXLE_RETURN_IF_ERROR(outer->parent()->RemoveEmbeddedComputation(fused));
  return compacted;
}

absl::flat_hash_map<const HloInstruction*, int64_t> IndexUsageCounts(
    const HloComputation& fused_computation) {
  const HloInstruction* root = fused_computation.root_instruction();
  if (root == nullptr || root->opcode() == HloOpcode::kParameter) return {};
  absl::flat_hash_map<const HloInstruction*, int64_t> counts;
  for (const auto& [instruction, count] : EvaluateIndexUsage({root}, FusedOperands)) {
    counts.emplace(instruction, count);
  }
  return counts;
}

int64_t MaxIndexUsageCount(const HloComputation& fused_computation) {
  int64_t max_count = 0;
  for (const auto& [instruction, count] : IndexUsageCounts(fused_computation)) {
    max_count = std::max(max_count, count);
  }
  return max_count;
}

bool ExceedsCodeDuplication(
    const HloInstruction& producer, const HloInstruction& consumer,
    const absl::flat_hash_map<const HloInstruction*, HloInstruction*>& copies) {
  const auto* consumer_fusion = dyn_cast<HloFusionInstruction>(&consumer);
  const auto* producer_fusion = dyn_cast<HloFusionInstruction>(&producer);
  const HloComputation* consumer_fused =
      consumer_fusion != nullptr ? consumer_fusion->fused_instructions_computation() : nullptr;
  const HloComputation* producer_fused =
      producer_fusion != nullptr ? producer_fusion->fused_instructions_computation() : nullptr;
  const HloInstruction* consumer_root =
      consumer_fused != nullptr ? consumer_fused->root_instruction() : &consumer;
  const HloInstruction* producer_root =
      producer_fused != nullptr ? producer_fused->root_instruction() : &producer;
  // An outside value the producer reads: its copy inside consumer, if any.
  auto copy_of = [&](const HloInstruction* outer) -> const HloInstruction* {
    auto it = copies.find(outer);
    return it == copies.end() ? nullptr : it->second;
  };
  // The graph the fusion would hold: consumer's (computation), producer's
  // in place of the parameter that read it, its operands the copies.
  auto operands_of = [&](const HloInstruction* user) {
    std::vector<const HloInstruction*> operands;
    operands.reserve(user->operand_count());
    for (const HloInstruction* operand : user->operands()) {
      const HloInstruction* value = operand;
      if (operand->opcode() == HloOpcode::kParameter && consumer_fused != nullptr &&
          operand->parent() == consumer_fused) {
        value = consumer.operand(cast<HloParameterInstruction>(operand)->parameter_number()) ==
                        &producer
                    ? producer_root
                    : nullptr;
      } else if (operand->opcode() == HloOpcode::kParameter && producer_fused != nullptr &&
                 operand->parent() == producer_fused) {
        value =
            copy_of(producer.operand(cast<HloParameterInstruction>(operand)->parameter_number()));
      } else if (user == &consumer) {
        value = operand == &producer ? producer_root : nullptr;
      } else if (user == &producer) {
        value = copy_of(operand);
      }
      operands.push_back(value);
    }
    return operands;
  };
  // What consumer held before: evaluated only when the result passes the
  // bound (rarely).
  std::optional<absl::flat_hash_map<const HloInstruction*, int64_t>> before;
  for (const auto& [instruction, count] : EvaluateIndexUsage({consumer_root}, operands_of)) {
    if (count <= kAllowedCodeDuplication) continue;
    if (consumer_fused == nullptr) return true;
    if (!before.has_value()) before = IndexUsageCounts(*consumer_fused);
    auto it = before->find(instruction);
    if (it == before->end() || count > it->second) return true;
  }
  return false;
}

absl::StatusOr<HloFusionInstruction*> MergeIntoMultiOutputFusion(HloFusionInstruction* first,
                                                                 HloFusionInstruction* second,
                                                                 int64_t max_instructions) {
  HloComputation* outer = second->parent();
  if (first == second || first->parent() != outer) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot merge ", first->name(), " and ", second->name(), " into one fusion"));
  }
  AXLE_ASSIGN_OR_RETURN(std::vector<OutputValue> first_values, OutputValues(first));
  AXLE_ASSIGN_OR_RETURN(std::vector<OutputValue> second_values, OutputValues(second));
  FusedComputationBuilder builder(outer->parent(), /*merge_identical=*/true);
  std::vector<HloInstruction*> first_operands;
  first_operands.reserve(first->operand_count());
  for (HloInstruction* operand : first->operands()) {
    first_operands.push_back(builder.Parameter(operand));
  }
  std::vector<HloInstruction*> first_outputs =
      builder.EmitOutputs(*first, first_operands, /*rename=*/true);
  std::vector<HloInstruction*> second_operands;
  second_operands.reserve(second->operand_count());
  for (HloInstruction* operand : second->operands()) {
    if (operand == first) {
      second_operands.push_back(first_outputs[0]);
    } else if (const auto* element = dyn_cast<HloGetTupleElementInstruction>(operand);
               element != nullptr && operand->operand(0) == first) {
      second_operands.push_back(first_outputs[element->tuple_index()]);
    } else {
      second_operands.push_back(builder.Parameter(operand));
    }
  }
  std::vector<HloInstruction*> second_outputs =
      builder.EmitOutputs(*second, second_operands, /*rename=*/true);
  if (builder.instruction_count() > max_instructions) return nullptr;

  // The merged fusion's outputs: second's, then those of first's that
  // something besides second reads. `replaced`: each old value and the
  // output that stands for it.
  std::vector<HloInstruction*> outputs;
  std::vector<std::pair<HloInstruction*, int64_t>> replaced;
  replaced.reserve(first_values.size() + second_values.size());
  auto add_output = [&](HloInstruction* fused_value) {
    auto it = std::find(outputs.begin(), outputs.end(), fused_value);
    if (it != outputs.end()) return static_cast<int64_t>(it - outputs.begin());
    outputs.push_back(fused_value);
    return static_cast<int64_t>(outputs.size()) - 1;
  };
  for (const OutputValue& value : second_values) {
    replaced.emplace_back(value.value, add_output(second_outputs[value.output]));
  }
  for (const OutputValue& value : first_values) {
    const bool read_elsewhere =
        value.value->IsRoot() ||
        std::any_of(value.value->users().begin(), value.value->users().end(),
                    [&](const HloInstruction* user) { return user != second; });
    if (read_elsewhere) replaced.emplace_back(value.value, add_output(first_outputs[value.output]));
  }
  if (outputs.empty()) outputs.push_back(second_outputs[0]);
  // Reading first's outputs through slices or pads would emit first's
  // instructions at more indices: not past the bound (unless one of the two
  // fusions is past it already, and no further).
  int64_t merged_max = 0;
  for (const auto& [instruction, count] : EvaluateIndexUsage(
           std::vector<const HloInstruction*>(outputs.begin(), outputs.end()), FusedOperands)) {
    merged_max = std::max(merged_max, count);
  }
  if (merged_max > kAllowedCodeDuplication &&
      merged_max > std::max(MaxIndexUsageCount(*first->fused_instructions_computation()),
                            MaxIndexUsageCount(*second->fused_instructions_computation()))) {
    return nullptr;
  }

  HloInstruction* root = outputs.size() == 1 ? outputs[0] : builder.Tuple(outputs);
  // Two reduction fusions stay one (multi-output) reduction fusion.
  const FusionKind kind =
      first->fusion_kind() == second->fusion_kind() ? first->fusion_kind() : FusionKind::kLoop;
  HloFusionInstruction* fusion = builder.Finish(root, kind, root->shape(), outer);
  std::vector<HloInstruction*> new_values;
  new_values.reserve(outputs.size());
  for (int64_t i = 0; i < static_cast<int64_t>(outputs.size()); ++i) {
    new_values.push_back(outputs.size() == 1 ? fusion : MakeGetTupleElement(fusion, i));
  }
  for (const auto& [old_value, output] : replaced) {
    AXLE_RETURN_IF_ERROR(old_value->ReplaceAllUsesWith(new_values[output]));
  }
  // Nothing reads the old fusions now: remove them, their get-tuple-elements
  // and their fused computations.
  for (HloFusionInstruction* old : {second, first}) {
    HloComputation* fused = old->fused_instructions_computation();
    for (HloInstruction* user : std::vector<HloInstruction*>(old->users())) {
      AXLE_RETURN_IF_ERROR(outer->RemoveInstruction(user));
    }
    AXLE_RETURN_IF_ERROR(outer->RemoveInstruction(old));
    AXLE_RETURN_IF_ERROR(outer->parent()->RemoveEmbeddedComputation(fused));
  }
  return fusion;
}

}  // namespace axle
