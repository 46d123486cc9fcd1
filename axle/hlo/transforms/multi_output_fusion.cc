// Loop fusions merged into multi-output kernels (see multi_output_fusion.h).
#include "axle/hlo/transforms/multi_output_fusion.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "axle/base/status_macros.h"
#include "axle/core/shape_util.h"
#include "axle/hlo/analysis/elementwise_access.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/ir/hlo_module.h"
#include "axle/hlo/transforms/fusion_utils.h"

namespace axle {
namespace {

using IterationSpace = MultiOutputFusion::IterationSpace;

// The iteration space of `instruction` when it is a fusion this pass may
// merge; nullopt otherwise.
std::optional<IterationSpace> MergeableSpace(const HloInstruction& instruction,
                                             const MultiOutputFusion::Options& options) {
  const auto* fusion = dyn_cast<HloFusionInstruction>(&instruction);
  if (fusion == nullptr) return std::nullopt;
  const bool reduction = fusion->fusion_kind() == FusionKind::kInput;
  if (fusion->fusion_kind() != FusionKind::kLoop && !(reduction && options.reduction_space)) {
    return std::nullopt;
  }
  if (!fusion->control_predecessors().empty() || !fusion->control_successors().empty()) {
    return std::nullopt;
  }
  std::vector<const Shape*> outputs;
  if (fusion->shape().IsTuple()) {
    for (const Shape& element : fusion->shape().tuple_shapes()) outputs.push_back(&element);
    for (const HloInstruction* user : fusion->users()) {
      if (user->opcode() != HloOpcode::kGetTupleElement) return std::nullopt;
    }
  } else {
    outputs.push_back(&fusion->shape());
  }
  if (outputs.empty()) return std::nullopt;
  for (const Shape* output : outputs) {
    if (!output->IsArray() || output->dimensions() != outputs[0]->dimensions() ||
        !ShapeUtil::HasDescendingLayout(*output) ||
        ShapeUtil::ByteSizeOfElements(*output) >= MultiOutputFusion::kMaxOutputBytes) {
      return std::nullopt;
    }
  }
  const HloComputation& fused = *fusion->fused_instructions_computation();
  if (reduction) {
    const HloInstruction* root = fused.root_instruction();
    std::vector<const HloInstruction*> roots = {root};
    if (root->opcode() == HloOpcode::kTuple) {
      roots.assign(root->operands().begin(), root->operands().end());
    }
    std::optional<IterationSpace> space = options.reduction_space(fused, roots);
    if (space.has_value()) space->reduction = true;  // merged as siblings only
    return space;
  }
  if (!IsPlainLoopComputation(fused)) return std::nullopt;
  return IterationSpace{outputs[0]->dimensions()};
}

// The fusion whose output `value` is: the fusion itself or a fusion read
// through a get-tuple-element.
const HloInstruction* ProducingFusion(const HloInstruction* value) {
  if (value->opcode() == HloOpcode::kGetTupleElement) value = value->operand(0);
  return value->opcode() == HloOpcode::kFusion ? value : nullptr;
}

// Whether `consumer`'s kernel reads the outputs of `producer` it reads only
// at the index it computes.
bool ReadsAtOutputIndex(const HloFusionInstruction& consumer, const HloInstruction& producer) {
  const HloComputation* fused = consumer.fused_instructions_computation();
  for (int64_t i = 0; i < consumer.operand_count(); ++i) {
    if (ProducingFusion(consumer.operand(i)) == &producer &&
        !ReadOnlyAtOutputIndex(*fused->parameter_instruction(i))) {
      return false;
    }
  }
  return true;
}

// Whether a path leads from `from` to `to` other than a direct read of one
// of from's values by `to`. `position`: post order, so nothing after `to`
// can reach it.
bool ReachesIndirectly(const HloInstruction* from, const HloInstruction* to,
                       const absl::flat_hash_map<const HloInstruction*, int64_t>& position) {
  const int64_t limit = position.at(to);
  std::vector<const HloInstruction*> worklist;
  auto push_users = [&](const HloInstruction* instruction) {
    for (const HloInstruction* user : instruction->users()) {
      if (user != to && position.at(user) < limit) worklist.push_back(user);
    }
  };
  push_users(from);
  // The get-tuple-elements of a multi-output `from` are its values: `to`
  // reading them is a direct read.
  for (const HloInstruction* user : from->users()) {
    if (user->opcode() == HloOpcode::kGetTupleElement) push_users(user);
  }
  absl::flat_hash_set<const HloInstruction*> seen;
  while (!worklist.empty()) {
    const HloInstruction* instruction = worklist.back();
    worklist.pop_back();
    if (!seen.insert(instruction).second) continue;
    if (instruction->opcode() == HloOpcode::kGetTupleElement && instruction->operand(0) == from) {
      continue;  // handled above
    }
    for (const HloInstruction* user : instruction->users()) {
      if (user == to) return true;
      if (position.at(user) < limit) worklist.push_back(user);
    }
  }
  return false;
}

// Whether a shared operand is worth reading once for two siblings: an array
// with at least an eighth as many elements as their iteration space (a
// scalar or a small table read by both saves next to nothing).
bool IsWorthSharing(const HloInstruction& operand, const IterationSpace& space) {
  if (!operand.shape().IsArray()) return false;
  int64_t elements = 1;
  for (int64_t dimension : space.dimensions) elements *= dimension;
  return operand.shape().num_elements() * 8 >= elements;
}

std::string PairKey(const HloInstruction& first, const HloInstruction& second) {
  return absl::StrCat(first.name(), "|", second.name());
}

// What FindMerge learns of instructions that stay as they are (keyed by
// name: a merge makes a new fusion of a new name), kept across its calls so
// each call after a merge does not walk every fused computation again
// (threefry's unrolled rounds leave hundreds of fusions).
struct MergeCache {
  absl::flat_hash_map<std::string, std::optional<IterationSpace>> spaces;
  absl::flat_hash_map<std::string, bool> reads_at_output_index;  // PairKey(producer, consumer)
};

// The next two fusions of `computation` to merge, the first being the one
// earlier in post order: producer-consumer pairs first, then siblings.
std::optional<std::pair<HloFusionInstruction*, HloFusionInstruction*>> FindMerge(
    const HloComputation& computation, const absl::flat_hash_set<std::string>& rejected,
    const MultiOutputFusion::Options& options, MergeCache& cache) {
  std::vector<HloInstruction*> order = computation.MakeInstructionPostOrder();
  absl::flat_hash_map<const HloInstruction*, int64_t> position;
  absl::flat_hash_map<const HloInstruction*, IterationSpace> spaces;
  for (int64_t i = 0; i < static_cast<int64_t>(order.size()); ++i) {
    position[order[i]] = i;
    auto [cached, is_new] = cache.spaces.try_emplace(order[i]->name());
    if (is_new) cached->second = MergeableSpace(*order[i], options);
    if (cached->second.has_value()) spaces[order[i]] = *cached->second;
  }
  auto mergeable = [&](const HloInstruction* a, const HloInstruction* b) {
    auto ita = spaces.find(a);
    auto itb = spaces.find(b);
    return a != b && ita != spaces.end() && itb != spaces.end() && ita->second == itb->second &&
           !rejected.contains(PairKey(*a, *b));
  };
  // Producer-consumer pairs of loop fusions (a reduction's output is never
  // read at the index it is computed at by another reduction).
  for (HloInstruction* consumer : order) {
    auto space = spaces.find(consumer);
    if (space == spaces.end() || space->second.reduction) continue;
    for (HloInstruction* operand : consumer->operands()) {
      HloInstruction* producer =
          operand->opcode() == HloOpcode::kGetTupleElement ? operand->mutable_operand(0) : operand;
      if (producer->opcode() != HloOpcode::kFusion || !mergeable(producer, consumer)) continue;
      auto [reads, is_new] = cache.reads_at_output_index.try_emplace(PairKey(*producer, *consumer));
      if (is_new) {
        reads->second = ReadsAtOutputIndex(*cast<HloFusionInstruction>(consumer), *producer);
      }
      if (!reads->second) continue;
      if (ReachesIndirectly(producer, consumer, position)) continue;
      return std::make_pair(cast<HloFusionInstruction>(producer),
                            cast<HloFusionInstruction>(consumer));
    }
  }
  for (HloInstruction* shared : order) {
    std::vector<HloInstruction*> users;
    for (HloInstruction* user : shared->users()) {
      if (spaces.contains(user)) users.push_back(user);
    }
    std::sort(users.begin(), users.end(), [&](const HloInstruction* a, const HloInstruction* b) {
      return position.at(a) < position.at(b);
    });
    for (size_t i = 0; i < users.size(); ++i) {
      if (!IsWorthSharing(*shared, spaces.at(users[i]))) continue;
      for (size_t j = i + 1; j < users.size(); ++j) {
        if (!mergeable(users[i], users[j])) continue;
        // Siblings: neither reads the other, directly or not.
        if (ReachesIndirectly(users[i], users[j], position)) continue;
        bool direct = false;
        for (const HloInstruction* operand : users[j]->operands()) {
          direct |= ProducingFusion(operand) == users[i];
        }
        if (direct) continue;
        return std::make_pair(cast<HloFusionInstruction>(users[i]),
                              cast<HloFusionInstruction>(users[j]));
      }
    }
  }
  return std::nullopt;
}

absl::StatusOr<bool> MergeInComputation(HloComputation* computation,
                                        const MultiOutputFusion::Options& options) {
  bool changed = false;
  absl::flat_hash_set<std::string> rejected;
  MergeCache cache;
  while (std::optional<std::pair<HloFusionInstruction*, HloFusionInstruction*>> pair =
             FindMerge(*computation, rejected, options, cache)) {
    auto [first, second] = *pair;
    std::string key = PairKey(*first, *second);
    AXLE_ASSIGN_OR_RETURN(
        HloFusionInstruction * merged,
        MergeIntoMultiOutputFusion(first, second, MultiOutputFusion::kMaxFusedInstructions));
    if (merged == nullptr) {
      rejected.insert(std::move(key));  // too large together
      continue;
    }
    changed = true;
  }
  return changed;
}

}  // namespace

absl::StatusOr<bool> MultiOutputFusion::Run(HloModule* module) {
  bool changed = false;
  for (HloComputation* computation : ControlFlowComputations(*module)) {
    AXLE_ASSIGN_OR_RETURN(bool computation_changed, MergeInComputation(computation, options_));
    changed |= computation_changed;
  }
  if (changed) module->mutable_config().is_scheduled = false;
  return changed;
}

}  // namespace axle
