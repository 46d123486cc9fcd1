//===- cse.cc - Common subexpression elimination ---------------------------===//
#include "axle/hlo/transforms/cse.h"

#include <set>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "axle/base/status_macros.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/ir/hlo_replace_uses.h"
#include "axle/hlo/ir/hlo_structural_hash.h"
#include "axle/hlo/transforms/side_effects.h"

namespace axle {
namespace {

// What the callers of a computation say about it.
struct CallerInfo {
  std::set<std::string> threads;  // the callers' execution threads
  bool single_owner = false;      // called by a fusion or async op
};

absl::flat_hash_map<const HloComputation*, CallerInfo> CollectCallers(const HloModule& module) {
  absl::flat_hash_map<const HloComputation*, CallerInfo> callers;
  for (const HloComputation* caller : module.computations()) {
    for (const HloInstruction* instruction : caller->instructions()) {
      HloOpcode opcode = instruction->opcode();
      bool owns = opcode == HloOpcode::kFusion || HloOpcodeIsAsyncStart(opcode) ||
                  HloOpcodeIsAsyncDone(opcode) || opcode == HloOpcode::kAsyncUpdate;
      for (const HloComputation* called : instruction->called_computations()) {
        CallerInfo& info = callers[called];
        info.threads.insert(caller->execution_thread());
        info.single_owner |= owns;
      }
    }
  }
  return callers;
}

// Groups of structurally identical computations on the same threads (their
// own and their callers').
class ComputationGroups {
 public:
  // The first computation identical to `computation` (itself when new).
  HloComputation* FirstOfKind(HloComputation* computation, const CallerInfo& callers) {
    std::set<std::string> threads = callers.threads;
    threads.insert(computation->execution_thread());
    StructuralHasher hasher;
    hasher.Add(FingerprintComputation(*computation));
    hasher.Add(threads.size());
    for (const std::string& thread : threads) hasher.Add(thread);
    std::vector<HloComputation*>& group = groups_[hasher.Finish()];
    for (HloComputation* other : group) {
      if (ComputationsIdentical(*other, *computation)) return other;
    }
    group.push_back(computation);
    return computation;
  }

 private:
  absl::flat_hash_map<Fingerprint128, std::vector<HloComputation*>> groups_;
};

// Makes structurally identical computations one: callers of a duplicate call
// the first of its kind instead, and the duplicate is removed. Fused and
// async-wrapped computations (which belong to one instruction) and the entry
// are left alone.
absl::StatusOr<bool> MergeIdenticalComputations(HloModule* module) {
  absl::flat_hash_map<const HloComputation*, CallerInfo> callers = CollectCallers(*module);
  ComputationGroups first_of_kind;
  absl::flat_hash_map<HloComputation*, HloComputation*> replacement;
  // Callees first, so that a caller calls merged callees when it is compared.
  for (HloComputation* computation : module->MakeComputationPostOrder()) {
    const CallerInfo& info = callers[computation];
    if (computation->IsEntryComputation() || computation->IsFusionComputation() ||
        info.single_owner) {
      continue;
    }
    // Redirect this computation's own calls to merged callees first.
    for (HloInstruction* instruction : computation->instructions()) {
      for (int64_t i = 0; i < static_cast<int64_t>(instruction->called_computations().size());
           ++i) {
        auto it = replacement.find(instruction->called_computations()[i]);
        if (it != replacement.end()) instruction->set_called_computation(i, it->second);
      }
    }
    HloComputation* first = first_of_kind.FirstOfKind(computation, info);
    if (first != computation) replacement[computation] = first;
  }
  if (replacement.empty()) return false;
  for (HloComputation* caller : module->computations()) {
    for (HloInstruction* instruction : caller->instructions()) {
      for (int64_t i = 0; i < static_cast<int64_t>(instruction->called_computations().size());
           ++i) {
        auto it = replacement.find(instruction->called_computations()[i]);
        if (it != replacement.end()) instruction->set_called_computation(i, it->second);
      }
    }
  }
  for (const auto& [duplicate, kept] : replacement) {
    AXLE_RETURN_IF_ERROR(module->RemoveEmbeddedComputation(duplicate));
  }
  return true;
}

bool IsCandidate(const HloInstruction& instruction) {
  return instruction.control_predecessors().empty() && instruction.control_successors().empty() &&
         IsPureValue(instruction);
}

// Merges equal instructions of one computation, operands before users so
// that users of merged operands become equal in turn.
absl::StatusOr<bool> MergeInstructions(HloComputation* computation) {
  bool changed = false;
  // Candidates by the hash of what Identical (hlo_structural_hash.h) compares.
  absl::flat_hash_map<Fingerprint128, std::vector<HloInstruction*>> by_hash;
  for (HloInstruction* instruction : computation->MakeInstructionPostOrder()) {
    if (!IsCandidate(*instruction)) continue;
    if (auto* constant = dyn_cast<HloConstantInstruction>(instruction);
        constant != nullptr && constant->attrs().elided) {
      continue;  // values unknown
    }
    StructuralHasher hasher;
    HashIgnoringOperands(hasher, *instruction);
    for (const HloInstruction* operand : instruction->operands()) {
      hasher.Add(reinterpret_cast<uintptr_t>(operand));
    }
    for (const HloComputation* called : instruction->called_computations()) {
      hasher.Add(reinterpret_cast<uintptr_t>(called));
    }
    std::vector<HloInstruction*>& group = by_hash[hasher.Finish()];
    HloInstruction* equal = nullptr;
    for (HloInstruction* other : group) {
      if (Identical(*other, *instruction)) {
        equal = other;
        break;
      }
    }
    if (equal == nullptr) {
      group.push_back(instruction);
      continue;
    }
    AXLE_RETURN_IF_ERROR(ReplaceUsesAndControl(instruction, equal));
    changed = true;
  }
  if (changed) AXLE_RETURN_IF_ERROR(RemoveDeadInstructions(computation).status());
  return changed;
}

}  // namespace

absl::StatusOr<bool> HloCSE::Run(HloModule* module) {
  AXLE_ASSIGN_OR_RETURN(bool changed, MergeIdenticalComputations(module));
  for (HloComputation* computation : module->MakeComputationPostOrder()) {
    AXLE_ASSIGN_OR_RETURN(bool merged, MergeInstructions(computation));
    changed |= merged;
  }
  return changed;
}

}  // namespace axle
