//===- hlo_print_order.cc - The orders XLA prints HLO text in --------------===//
#include "axle/hlo/text/hlo_print_order.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "axle/hlo/ir/hlo_instructions.h"

namespace axle {
namespace {

bool IsChannelOrderedCollective(HloOpcode opcode) {
  switch (opcode) {
    case HloOpcode::kAllReduce:
    case HloOpcode::kAllGather:
    case HloOpcode::kAllToAll:
    case HloOpcode::kCollectiveBroadcast:
    case HloOpcode::kCollectivePermute:
    case HloOpcode::kRaggedAllToAll:
    case HloOpcode::kReduceScatter:
      return true;
    default:
      return false;
  }
}

// The called computations in the order XLA stores them: Axle keeps a
// while's condition first, XLA its body.
std::vector<HloComputation*> XlaCalledComputationOrder(const HloInstruction& instruction) {
  std::vector<HloComputation*> called = instruction.called_computations();
  if (instruction.opcode() == HloOpcode::kWhile) std::reverse(called.begin(), called.end());
  return called;
}

// XLA's HloComputation::MakeEmbeddedComputationsList: the computations
// called from `computation`, transitively, callees before callers, found by
// walking instructions. XLA walks them in stored order; walking them in
// printed order instead gives the same result on text XLA printed, and makes
// print(parse(print(m))) == print(m) hold where XLA's does not.
//
// XLA marks a computation visited when it pushes it, so a computation
// pushed as one of several callees (`branch_computations={%x, %y}`) and then
// called by an earlier sibling (%x calls %y) comes after that caller, and
// the text does not parse back. Here a computation counts as visited when it
// is emitted: a callee still waiting on the stack is pushed again and
// emitted before its caller, and its older frame is dropped. The order is
// XLA's wherever XLA's puts every callee first.
std::vector<const HloComputation*> XlaEmbeddedComputations(const HloComputation& computation,
                                                           InstructionOrders& orders) {
  absl::flat_hash_set<const HloComputation*> emitted;
  // The computations whose instructions are being walked: a call back into
  // one of them is a cycle (invalid IR), not followed.
  absl::flat_hash_set<const HloComputation*> walking = {&computation};
  std::vector<const HloComputation*> order;
  struct Frame {
    const HloComputation* computation;
    const std::vector<const HloInstruction*>* instructions;
    size_t next = 0;
    bool begun = false;
  };
  std::vector<Frame> stack;
  auto process = [&](const std::vector<HloComputation*>& callees) {
    for (auto it = callees.rbegin(); it != callees.rend(); ++it) {
      if (*it != nullptr && !emitted.contains(*it) && !walking.contains(*it)) {
        stack.push_back(Frame{*it, &orders.Of(**it)});
      }
    }
  };
  for (const HloInstruction* instruction : orders.Of(computation)) {
    process(XlaCalledComputationOrder(*instruction));
    while (!stack.empty()) {
      Frame& top = stack.back();
      if (!top.begun) {
        if (emitted.contains(top.computation) || walking.contains(top.computation)) {
          stack.pop_back();
          continue;
        }
        top.begun = true;
        walking.insert(top.computation);
      }
      if (top.next == top.instructions->size()) {
        order.push_back(top.computation);
        emitted.insert(top.computation);
        walking.erase(top.computation);
        stack.pop_back();
      } else {
        const HloInstruction* next = (*top.instructions)[top.next++];
        process(XlaCalledComputationOrder(*next));
      }
    }
  }
  return order;
}

}  // namespace

std::vector<const HloInstruction*> XlaInstructionPostOrder(const HloComputation& computation) {
  std::vector<HloInstruction*> instructions = computation.instructions();
  absl::flat_hash_map<const HloInstruction*, std::vector<const HloInstruction*>> channel_deps;
  {
    absl::flat_hash_map<int64_t, std::vector<const HloInstruction*>> channels;
    for (const HloInstruction* instruction : instructions) {
      const auto* collective = dyn_cast<HloCollectiveInstruction>(instruction);
      if (collective == nullptr || !IsChannelOrderedCollective(instruction->opcode()) ||
          !collective->channel_id().has_value()) {
        continue;
      }
      std::vector<const HloInstruction*>& group = channels[*collective->channel_id()];
      channel_deps[instruction] = group;
      group.push_back(instruction);
    }
  }
  enum State { kNew, kVisiting, kVisited };
  absl::flat_hash_map<const HloInstruction*, State> state;
  std::vector<const HloInstruction*> order;
  order.reserve(instructions.size());
  std::vector<const HloInstruction*> stack;
  auto push = [&](const HloInstruction* instruction) {
    if (instruction != nullptr && instruction->parent() == &computation &&
        state[instruction] != kVisited) {
      stack.push_back(instruction);
    }
  };
  auto visit = [&](const HloInstruction* root) {
    push(root);
    while (!stack.empty()) {
      const HloInstruction* current = stack.back();
      State& s = state[current];
      if (s != kNew) {
        stack.pop_back();
        if (s != kVisited) {
          s = kVisited;
          order.push_back(current);
        }
        continue;
      }
      s = kVisiting;
      if (current != root) {
        auto it = channel_deps.find(current);
        if (it != channel_deps.end()) {
          for (const HloInstruction* dep : it->second) push(dep);
        }
      }
      const std::vector<HloInstruction*>& operands = current->operands();
      for (auto it = operands.rbegin(); it != operands.rend(); ++it) push(*it);
      for (const HloInstruction* pred : current->control_predecessors()) push(pred);
    }
  };
  for (const HloInstruction* instruction : instructions) {
    bool has_users =
        std::any_of(instruction->users().begin(), instruction->users().end(),
                    [](const HloInstruction* user) { return user->parent() != nullptr; });
    if (!has_users) visit(instruction);
  }
  // Instructions on a cycle (invalid IR) are still printed.
  for (const HloInstruction* instruction : instructions) {
    if (state[instruction] != kVisited) visit(instruction);
  }
  return order;
}

std::vector<const HloComputation*> XlaComputationPostOrder(const HloModule& module,
                                                           InstructionOrders& orders) {
  std::vector<HloComputation*> computations = module.computations();
  absl::flat_hash_set<const HloComputation*> called;
  for (const HloComputation* computation : computations) {
    for (const HloInstruction* instruction : computation->instructions()) {
      for (const HloComputation* callee : instruction->called_computations()) called.insert(callee);
    }
  }
  absl::flat_hash_set<const HloComputation*> added;
  std::vector<const HloComputation*> order;
  for (const HloComputation* computation : computations) {
    if (called.contains(computation)) continue;
    for (const HloComputation* embedded : XlaEmbeddedComputations(*computation, orders)) {
      if (added.insert(embedded).second) order.push_back(embedded);
    }
    if (added.insert(computation).second) order.push_back(computation);
  }
  // Computations only reachable from a call cycle (invalid IR).
  for (const HloComputation* computation : computations) {
    if (added.insert(computation).second) order.push_back(computation);
  }
  return order;
}

}  // namespace axle
