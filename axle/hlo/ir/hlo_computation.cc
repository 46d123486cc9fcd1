#include "axle/hlo/ir/hlo_computation.h"

#include <algorithm>
#include <functional>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/ir/hlo_module.h"
#include "axle/hlo/ir/hlo_replace_uses.h"

namespace axle {

HloComputation::HloComputation(std::string name) : name_(std::move(name)) {}

HloComputation::~HloComputation() = default;

bool HloComputation::IsEntryComputation() const {
  return parent_ != nullptr && parent_->entry_computation() == this;
}

HloInstruction* HloComputation::AddInstruction(std::unique_ptr<HloInstruction> instruction) {
  HloInstruction* raw = instruction.get();
  raw->set_parent(this);
  if (auto* parameter = dyn_cast<HloParameterInstruction>(raw)) {
    int64_t number = parameter->parameter_number();
    if (number >= static_cast<int64_t>(parameters_.size())) parameters_.resize(number + 1, nullptr);
    parameters_[number] = raw;
  }
  if (parent_ != nullptr) {
    if (raw->unique_id() < 0) raw->SetUniqueId(parent_->NewUniqueInstructionId());
    if (raw->name().empty()) {
      raw->SetName(parent_->GetUniqueName(HloOpcodeString(raw->opcode())));
    }
  }
  instructions_.push_back(std::move(instruction));
  return raw;
}

absl::Status HloComputation::RemoveInstruction(HloInstruction* instruction) {
  if (instruction->user_count() != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot remove ", instruction->name(), ": it still has users"));
  }
  if (instruction == root_) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot remove ", instruction->name(), ": it is the root"));
  }
  if (instruction->opcode() == HloOpcode::kParameter) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot remove parameter ", instruction->name()));
  }
  instruction->RemoveAllOperands();
  instruction->DropAllControlDeps();
  auto it = std::find_if(instructions_.begin(), instructions_.end(),
                         [&](const auto& p) { return p.get() == instruction; });
  if (it == instructions_.end()) {
    return absl::NotFoundError(absl::StrCat(instruction->name(), " is not in ", name_));
  }
  instructions_.erase(it);
  return absl::OkStatus();
}

absl::Status HloComputation::RemoveInstructionAndUnusedOperands(HloInstruction* instruction) {
  std::vector<HloInstruction*> worklist = {instruction};
  absl::flat_hash_set<HloInstruction*> removed;
  while (!worklist.empty()) {
    HloInstruction* item = worklist.back();
    worklist.pop_back();
    if (removed.contains(item) || item->user_count() != 0 || item == root_ ||
        item->opcode() == HloOpcode::kParameter || (item != instruction && item->HasSideEffect()) ||
        !item->control_successors().empty()) {
      continue;
    }
    std::vector<HloInstruction*> operands = item->operands();
    absl::Status status = RemoveInstruction(item);
    if (!status.ok()) return status;
    removed.insert(item);
    for (HloInstruction* operand : operands) worklist.push_back(operand);
  }
  return absl::OkStatus();
}

absl::Status HloComputation::ReplaceInstruction(HloInstruction* old_instruction,
                                                HloInstruction* new_instruction) {
  absl::Status status = ReplaceUsesAndControl(old_instruction, new_instruction);
  if (!status.ok()) return status;
  return RemoveInstructionAndUnusedOperands(old_instruction);
}

std::vector<HloInstruction*> HloComputation::instructions() const {
  std::vector<HloInstruction*> out;
  out.reserve(instructions_.size());
  for (const auto& instruction : instructions_) out.push_back(instruction.get());
  return out;
}

std::vector<HloInstruction*> HloComputation::MakeInstructionPostOrder() const {
  // Iterative DFS from every instruction in insertion order, so unreachable
  // instructions are kept and the order is deterministic.
  std::vector<HloInstruction*> order;
  order.reserve(instructions_.size());
  absl::flat_hash_map<const HloInstruction*, int> state;  // 1 visiting, 2 done
  for (const auto& start : instructions_) {
    if (state[start.get()] != 0) continue;
    std::vector<std::pair<HloInstruction*, size_t>> stack = {{start.get(), 0}};
    state[start.get()] = 1;
    while (!stack.empty()) {
      auto& [node, next] = stack.back();
      size_t n_operands = node->operands().size();
      size_t n_total = n_operands + node->control_predecessors().size();
      if (next < n_total) {
        HloInstruction* dep = next < n_operands ? node->operands()[next]
                                                : node->control_predecessors()[next - n_operands];
        ++next;
        if (state[dep] == 0 && dep->parent() == this) {
          state[dep] = 1;
          stack.push_back({dep, 0});
        }
        continue;
      }
      state[node] = 2;
      order.push_back(node);
      stack.pop_back();
    }
  }
  return order;
}

std::vector<HloComputation*> HloComputation::MakeEmbeddedComputationsList() const {
  std::vector<HloComputation*> order;
  absl::flat_hash_set<const HloComputation*> visited;
  // Recursive on computations: call depth is bounded by the module's nesting.
  std::function<void(const HloComputation*)> visit = [&](const HloComputation* computation) {
    for (HloInstruction* instruction : computation->MakeInstructionPostOrder()) {
      for (HloComputation* callee : instruction->called_computations()) {
        if (callee == nullptr || !visited.insert(callee).second) continue;
        visit(callee);
        order.push_back(callee);
      }
    }
  };
  visited.insert(this);
  visit(this);
  return order;
}

}  // namespace axle
