//===- cse.cc - Common subexpression elimination ---------------------------===//
#include "axle/hlo/transforms/cse.h"

#include <set>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "axle/base/status_macros.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/text/hlo_printer.h"
#include "axle/hlo/transforms/side_effects.h"

namespace axle {
namespace {

HloPrintOptions KeyOptions(bool operand_names) {
  return HloPrintOptions::ShortParsable()
      .set_print_operand_names(operand_names)
      .set_syntax_sugar_async_ops(false);
}

// The instruction's text without its own name: opcode, result shape with
// layout, attributes, called computations by name, and (when asked) the
// operands by name. Equal text means equal instructions.
std::string InstructionText(const HloInstruction& instruction, bool operand_names) {
  std::string text = ToString(instruction, KeyOptions(operand_names));
  size_t equals = text.find(" = ");
  return equals == std::string::npos ? text : text.substr(equals + 3);
}

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

// A computation's structure: each instruction's text in post order with its
// operands as post-order positions, and the threads it runs on (its own and
// its callers'). Equal fingerprints compute the same function on the same
// threads.
std::string Fingerprint(const HloComputation& computation, const CallerInfo& callers) {
  absl::flat_hash_map<const HloInstruction*, int64_t> position;
  std::set<std::string> threads = callers.threads;
  threads.insert(computation.execution_thread());
  std::string out = absl::StrCat("threads=", absl::StrJoin(threads, ","), "\n");
  for (const HloInstruction* instruction : computation.MakeInstructionPostOrder()) {
    int64_t index = static_cast<int64_t>(position.size());
    position[instruction] = index;
    absl::StrAppend(&out, InstructionText(*instruction, /*operand_names=*/false), " <-");
    for (const HloInstruction* operand : instruction->operands()) {
      absl::StrAppend(&out, " ", position.at(operand));
    }
    for (const HloInstruction* pred : instruction->control_predecessors()) {
      absl::StrAppend(&out, " ctl", position.at(pred));
    }
    if (instruction->IsRoot()) out += " ROOT";
    out += "\n";
  }
  return out;
}

// Makes structurally identical computations one: callers of a duplicate call
// the first of its kind instead, and the duplicate is removed. Fused and
// async-wrapped computations (which belong to one instruction) and the entry
// are left alone.
absl::StatusOr<bool> MergeIdenticalComputations(HloModule* module) {
  absl::flat_hash_map<const HloComputation*, CallerInfo> callers = CollectCallers(*module);
  absl::flat_hash_map<std::string, HloComputation*> first_of_kind;
  absl::flat_hash_map<HloComputation*, HloComputation*> replacement;
  // Callees first: a caller's fingerprint names its callees after they were
  // merged.
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
    auto [it, inserted] = first_of_kind.emplace(Fingerprint(*computation, info), computation);
    if (!inserted) replacement[computation] = it->second;
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
  absl::flat_hash_map<std::string, HloInstruction*> by_text;
  // Constants are compared by value within groups of equal shape.
  absl::flat_hash_map<std::string, std::vector<HloInstruction*>> constants_by_shape;
  for (HloInstruction* instruction : computation->MakeInstructionPostOrder()) {
    if (!IsCandidate(*instruction)) continue;
    HloInstruction* equal = nullptr;
    if (auto* constant = dyn_cast<HloConstantInstruction>(instruction)) {
      if (constant->attrs().elided) continue;  // values unknown
      std::string key = ShapeToHloString(instruction->shape());
      if (instruction->has_sharding())
        absl::StrAppend(&key, " ", instruction->sharding().ToString());
      std::vector<HloInstruction*>& group = constants_by_shape[key];
      for (HloInstruction* other : group) {
        if (cast<HloConstantInstruction>(other)->literal() == constant->literal()) {
          equal = other;
          break;
        }
      }
      if (equal == nullptr) group.push_back(instruction);
    } else {
      auto [it, inserted] = by_text.emplace(InstructionText(*instruction, true), instruction);
      if (!inserted) equal = it->second;
    }
    if (equal == nullptr) continue;
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
