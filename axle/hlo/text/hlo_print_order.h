//===- hlo_print_order.h - The orders XLA prints HLO text in ---------------===//
//
// The printer lists instructions and computations in the orders XLA's
// printer does, so that Axle's text of a module is XLA's: instructions in
// XLA's post order (or the schedule of a scheduled module), computations
// callees first. Internal to the text layer (hlo_printer.cc).
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_HLO_TEXT_HLO_PRINT_ORDER_H_
#define AXLE_HLO_TEXT_HLO_PRINT_ORDER_H_

#include <vector>

#include "absl/container/node_hash_map.h"
#include "axle/hlo/ir/hlo_computation.h"
#include "axle/hlo/ir/hlo_instruction.h"
#include "axle/hlo/ir/hlo_module.h"

namespace axle {

// XLA's HloComputation::MakeInstructionPostOrder: a DFS from every
// instruction without users, in stored order; operands are visited first
// operand first, control predecessors before operands, and collectives with
// the same channel_id after the earlier ones of their channel.
std::vector<const HloInstruction*> XlaInstructionPostOrder(const HloComputation& computation);

// The order instructions are printed in: XLA's post order, or the stored
// order (the schedule) for the non-fusion computations of a scheduled module.
// Computed once per computation.
class InstructionOrders {
 public:
  explicit InstructionOrders(bool scheduled) : scheduled_(scheduled) {}

  const std::vector<const HloInstruction*>& Of(const HloComputation& computation) {
    auto [it, inserted] = orders_.try_emplace(&computation);
    if (inserted) {
      if (scheduled_ && !computation.IsFusionComputation()) {
        for (const HloInstruction* instruction : computation.instructions()) {
          it->second.push_back(instruction);
        }
      } else {
        it->second = XlaInstructionPostOrder(computation);
      }
    }
    return it->second;
  }

 private:
  bool scheduled_;
  // Node-based: callers keep references while more orders are added.
  absl::node_hash_map<const HloComputation*, std::vector<const HloInstruction*>> orders_;
};

// XLA's HloModule::MakeComputationPostOrder(dfs_postorder=true): for every
// computation nobody calls (in stored order), its embedded computations
// (callees before callers) and then itself.
std::vector<const HloComputation*> XlaComputationPostOrder(const HloModule& module,
                                                           InstructionOrders& orders);

}  // namespace axle

#endif  // AXLE_HLO_TEXT_HLO_PRINT_ORDER_H_
