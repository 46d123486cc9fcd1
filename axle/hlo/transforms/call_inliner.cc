//===- call_inliner.cc - Inline `call` instructions ------------------------===//
#include "axle/hlo/transforms/call_inliner.h"

#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "axle/base/status_macros.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/ir/hlo_replace_uses.h"
#include "axle/hlo/transforms/side_effects.h"

namespace axle {
namespace {

bool HoldsSingleOwnerComputations(const HloComputation& computation) {
  for (const HloInstruction* instruction : computation.instructions()) {
    HloOpcode opcode = instruction->opcode();
    if (opcode == HloOpcode::kFusion || HloOpcodeIsAsyncStart(opcode) ||
        HloOpcodeIsAsyncDone(opcode) || opcode == HloOpcode::kAsyncUpdate) {
      return true;
    }
  }
  return false;
}

}  // namespace

int64_t CountCallSites(const HloModule& module, const HloComputation& computation) {
  int64_t count = 0;
  for (const HloComputation* caller : module.computations()) {
    for (const HloInstruction* instruction : caller->instructions()) {
      for (const HloComputation* called : instruction->called_computations()) {
        if (called == &computation) ++count;
      }
    }
  }
  return count;
}

bool CanInlineComputation(const HloModule& module, const HloComputation& callee) {
  return !HoldsSingleOwnerComputations(callee) || CountCallSites(module, callee) <= 1;
}

absl::StatusOr<HloInstruction*> InlineComputation(const HloComputation& callee,
                                                  absl::Span<HloInstruction* const> args,
                                                  HloComputation* into) {
  if (static_cast<int64_t>(args.size()) != callee.num_parameters()) {
    return absl::InvalidArgumentError(absl::StrCat("inlining ", callee.name(), ": it takes ",
                                                   callee.num_parameters(), " arguments, got ",
                                                   args.size()));
  }
  HloModule* module = into->parent();
  absl::flat_hash_map<const HloInstruction*, HloInstruction*> map;
  for (int64_t i = 0; i < callee.num_parameters(); ++i) {
    map[callee.parameter_instruction(i)] = args[i];
  }
  std::vector<HloInstruction*> order = callee.MakeInstructionPostOrder();
  for (HloInstruction* instruction : order) {
    if (instruction->opcode() == HloOpcode::kParameter) continue;
    std::vector<HloInstruction*> operands;
    for (HloInstruction* operand : instruction->operands()) operands.push_back(map.at(operand));
    std::unique_ptr<HloInstruction> copy =
        instruction->CloneWithNewOperands(instruction->shape(), operands);
    copy->SetName(module != nullptr ? module->GetUniqueName(instruction->name()) : "");
    HloInstruction* added = into->AddInstruction(std::move(copy));
    if (added->opcode() == HloOpcode::kFusion) {
      added->called_computations().at(0)->SetFusionInstruction(added);
    }
    map[instruction] = added;
  }
  for (HloInstruction* instruction : order) {
    if (instruction->opcode() == HloOpcode::kParameter) continue;
    for (HloInstruction* successor : instruction->control_successors()) {
      if (successor->opcode() == HloOpcode::kParameter) continue;
      map.at(instruction)->AddControlDependencyTo(map.at(successor));
    }
  }
  return map.at(callee.root_instruction());
}

absl::StatusOr<bool> CallInliner::Run(HloModule* module) {
  bool changed = false;
  absl::flat_hash_set<HloComputation*> inlined;
  // Callers after callees: a callee's own calls are already inlined when it
  // is copied.
  for (HloComputation* computation : module->MakeComputationPostOrder()) {
    for (HloInstruction* call : computation->MakeInstructionPostOrder()) {
      if (call->opcode() != HloOpcode::kCall || !call->control_predecessors().empty() ||
          !call->control_successors().empty()) {
        continue;
      }
      HloComputation* callee = call->to_apply();
      if (callee == nullptr || callee == computation ||
          callee->execution_thread() != computation->execution_thread() ||
          !CanInlineComputation(*module, *callee)) {
        continue;
      }
      AXLE_ASSIGN_OR_RETURN(HloInstruction * root,
                            InlineComputation(*callee, call->operands(), computation));
      AXLE_RETURN_IF_ERROR(ReplaceUsesAndControl(call, root));
      // The call may have side effects (its callee's); they now live in the
      // inlined copy, so the call itself goes.
      AXLE_RETURN_IF_ERROR(computation->RemoveInstruction(call));
      inlined.insert(callee);
      changed = true;
    }
  }
  // Inlined computations no instruction calls any more are gone now.
  for (HloComputation* callee : inlined) {
    if (CountCallSites(*module, *callee) == 0 && !callee->IsEntryComputation()) {
      AXLE_RETURN_IF_ERROR(module->RemoveEmbeddedComputation(callee));
    }
  }
  return changed;
}

}  // namespace axle
