// Which fused values a loop kernel reads at its index (see elementwise_access.h).
#include "axle/hlo/analysis/elementwise_access.h"

#include <algorithm>
#include <deque>
#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "axle/core/shape_util.h"
#include "axle/hlo/ir/hlo_instructions.h"

namespace axle {

bool IsIndexRemappingOp(HloOpcode opcode) {
  switch (opcode) {
    case HloOpcode::kBroadcast:
    case HloOpcode::kConcatenate:
    case HloOpcode::kDynamicSlice:
    case HloOpcode::kIota:
    case HloOpcode::kPad:
    case HloOpcode::kReshape:
    case HloOpcode::kReverse:
    case HloOpcode::kSlice:
      return true;
    default:
      return false;
  }
}

bool IsPlainLoopOp(const HloInstruction& instruction) {
  if (instruction.HasSideEffect() || !instruction.called_computations().empty()) return false;
  if (!instruction.control_predecessors().empty() || !instruction.control_successors().empty()) {
    return false;
  }
  if (instruction.opcode() == HloOpcode::kTuple) {
    return instruction.parent() != nullptr &&
           &instruction == instruction.parent()->root_instruction();
  }
  if (!instruction.shape().IsArray() || !ShapeUtil::HasDescendingLayout(instruction.shape())) {
    return false;
  }
  if (instruction.IsElementwise() || IsIndexRemappingOp(instruction.opcode())) return true;
  switch (instruction.opcode()) {
    case HloOpcode::kParameter:
    case HloOpcode::kConstant:
      return true;
    case HloOpcode::kBitcast:
      return ShapeUtil::HasDescendingLayout(instruction.operand(0)->shape());
    default:
      return false;
  }
}

bool IsPlainLoopComputation(const HloComputation& fused) {
  const std::vector<HloInstruction*> instructions = fused.instructions();
  return std::all_of(instructions.begin(), instructions.end(),
                     [](const HloInstruction* instruction) { return IsPlainLoopOp(*instruction); });
}

bool ReadOnlyAtOutputIndex(const HloInstruction& instruction) {
  const HloInstruction* root =
      instruction.parent() != nullptr ? instruction.parent()->root_instruction() : nullptr;
  std::vector<const HloInstruction*> worklist = {&instruction};
  absl::flat_hash_set<const HloInstruction*> seen;
  while (!worklist.empty()) {
    const HloInstruction* value = worklist.back();
    worklist.pop_back();
    if (!seen.insert(value).second) continue;
    for (const HloInstruction* user : value->users()) {
      if (user == root && user->opcode() == HloOpcode::kTuple) continue;
      if (!user->IsElementwise() || !user->shape().IsArray() ||
          user->shape().dimensions() != instruction.shape().dimensions()) {
        return false;
      }
      worklist.push_back(user);
    }
  }
  return true;
}

std::vector<std::pair<int64_t, int64_t>> InPlaceOutputCandidates(const HloComputation& fused) {
  std::vector<std::pair<int64_t, int64_t>> pairs;
  const HloInstruction* root = fused.root_instruction();
  if (root == nullptr || !IsPlainLoopComputation(fused)) return pairs;
  std::vector<const HloInstruction*> outputs;
  if (root->opcode() == HloOpcode::kTuple) {
    outputs.assign(root->operands().begin(), root->operands().end());
  } else {
    outputs.push_back(root);
  }
  // (ops from the parameter to the output, parameter, output) for each
  // output computed from a parameter it may share memory with; listed
  // nearest first, so that in an optimizer's multi-output update
  // (v' = m * v + g, w' = w - lr * v') w' meets w before v.
  std::vector<std::tuple<int64_t, int64_t, int64_t>> candidates;
  for (int64_t p = 0; p < fused.num_parameters(); ++p) {
    const HloInstruction* parameter = fused.parameter_instruction(p);
    if (!ReadOnlyAtOutputIndex(*parameter)) continue;
    // The values computed from the parameter, with their distance from it
    // (breadth first).
    absl::flat_hash_map<const HloInstruction*, int64_t> reached;
    std::deque<const HloInstruction*> queue = {parameter};
    reached[parameter] = 0;
    while (!queue.empty()) {
      const HloInstruction* value = queue.front();
      queue.pop_front();
      for (const HloInstruction* user : value->users()) {
        if (reached.try_emplace(user, reached[value] + 1).second) queue.push_back(user);
      }
    }
    for (size_t k = 0; k < outputs.size(); ++k) {
      const HloInstruction* output = outputs[k];
      auto it = reached.find(output);
      if (output == parameter || it == reached.end() ||
          !ShapeUtil::Equal(output->shape(), parameter->shape())) {
        continue;
      }
      // An output listed twice in the root tuple: two buffers, one value.
      if (std::count(outputs.begin(), outputs.end(), output) != 1) continue;
      candidates.emplace_back(it->second, p, static_cast<int64_t>(k));
    }
  }
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const auto& a, const auto& b) { return std::get<0>(a) < std::get<0>(b); });
  for (const auto& [distance, p, k] : candidates) pairs.emplace_back(p, k);
  return pairs;
}

std::vector<std::pair<int64_t, ShapeIndex>> InPlaceOperandPairs(const HloInstruction& instruction) {
  std::vector<std::pair<int64_t, ShapeIndex>> pairs;
  auto once = [&](int64_t number) {
    const HloInstruction* operand = instruction.operand(number);
    return std::count(instruction.operands().begin(), instruction.operands().end(), operand) == 1;
  };
  switch (instruction.opcode()) {
    case HloOpcode::kFusion: {
      const auto* fusion = cast<HloFusionInstruction>(&instruction);
      if (fusion->fusion_kind() != FusionKind::kLoop) break;
      const bool tuple = instruction.shape().IsTuple();
      for (const auto& [parameter, output] :
           InPlaceOutputCandidates(*fusion->fused_instructions_computation())) {
        if (!once(parameter)) continue;
        pairs.emplace_back(parameter, tuple ? ShapeIndex{output} : ShapeIndex{});
      }
      break;
    }
    case HloOpcode::kDynamicUpdateSlice:
      if (once(0)) pairs.emplace_back(0, ShapeIndex{});
      break;
    case HloOpcode::kScatter: {
      const int64_t n = instruction.operand_count() / 2;
      for (int64_t i = 0; i < n; ++i) {
        if (once(i)) pairs.emplace_back(i, n > 1 ? ShapeIndex{i} : ShapeIndex{});
      }
      break;
    }
    default:
      if (!instruction.IsElementwise() || !instruction.shape().IsArray()) break;
      // Every operand is read at the output's index only: one passed
      // twice may be written over as well.
      for (int64_t i = 0; i < instruction.operand_count(); ++i) {
        if (ShapeUtil::Equal(instruction.operand(i)->shape(), instruction.shape())) {
          pairs.emplace_back(i, ShapeIndex{});
        }
      }
      break;
  }
  return pairs;
}

}  // namespace axle
