//===- hlo_verifier.cc - Module structure, entry layout, aliasing ----------===//
//
// The module-level half of the verifier: computations and instructions
// belong where they say, names are unique, parameters are numbered densely,
// operand/user and control edges agree, there are no cycles (in a
// computation or in the call graph), then every instruction is checked
// (hlo_verifier_instructions.cc), then the entry computation layout,
// input_output_alias and buffer_donor.
//
//===----------------------------------------------------------------------===//
#include "axle/hlo/analysis/hlo_verifier.h"

#include <algorithm>
#include <functional>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "axle/base/status_macros.h"
#include "axle/core/shape_util.h"
#include "axle/hlo/analysis/hlo_verifier_internal.h"
#include "axle/hlo/ir/hlo_computation.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/ir/hlo_module.h"

namespace axle {

using verifier_internal::InstructionError;
using verifier_internal::ModuleFacts;
using verifier_internal::ShapesMatch;

namespace {

absl::Status Error(const std::string& message) { return absl::InvalidArgumentError(message); }

absl::Status ComputationError(const HloComputation& computation, absl::string_view message) {
  return Error(absl::StrCat("computation ", computation.name(), ": ", message));
}

absl::Status VerifyParameters(const HloComputation& computation) {
  absl::flat_hash_map<int64_t, const HloInstruction*> by_number;
  for (const HloInstruction* instruction : computation.instructions()) {
    const auto* parameter = dyn_cast<HloParameterInstruction>(instruction);
    if (parameter == nullptr) continue;
    const int64_t number = parameter->parameter_number();
    if (number < 0) {
      return InstructionError(*instruction, absl::StrCat("negative parameter number ", number));
    }
    auto [it, inserted] = by_number.emplace(number, instruction);
    if (!inserted) {
      return InstructionError(*instruction, absl::StrCat("parameter number ", number,
                                                         " is also used by %", it->second->name()));
    }
  }
  const int64_t count = static_cast<int64_t>(by_number.size());
  for (int64_t i = 0; i < count; ++i) {
    if (!by_number.contains(i)) {
      return ComputationError(computation,
                              absl::StrCat("has ", count, " parameters but none is numbered ", i,
                                           " (parameter numbers must be 0..", count - 1, ")"));
    }
  }
  if (computation.num_parameters() != count) {
    return ComputationError(computation, absl::StrCat("registers ", computation.num_parameters(),
                                                      " parameters but contains ", count));
  }
  for (int64_t i = 0; i < count; ++i) {
    if (computation.parameter_instruction(i) != by_number[i]) {
      return ComputationError(computation, absl::StrCat("parameter ", i,
                                                        " is registered as a different "
                                                        "instruction than %",
                                                        by_number[i]->name()));
    }
  }
  return absl::OkStatus();
}

// Operands, users and control edges point within the computation and agree
// with each other.
absl::Status VerifyEdges(const HloComputation& computation) {
  for (const HloInstruction* instruction : computation.instructions()) {
    for (int64_t i = 0; i < instruction->operand_count(); ++i) {
      const HloInstruction* operand = instruction->operand(i);
      if (operand == nullptr) {
        return InstructionError(*instruction, absl::StrCat("operand ", i, " is null"));
      }
      if (operand->parent() != &computation) {
        return InstructionError(
            *instruction,
            absl::StrCat("operand ", i, " (%", operand->name(), ") is in computation ",
                         operand->parent() ? operand->parent()->name() : "(none)"));
      }
      const auto& users = operand->users();
      if (std::find(users.begin(), users.end(), instruction) == users.end()) {
        return InstructionError(
            *instruction,
            absl::StrCat("is not recorded as a user of its operand %", operand->name()));
      }
    }
    for (const HloInstruction* user : instruction->users()) {
      if (user == nullptr || !user->IsUserOf(instruction)) {
        return InstructionError(*instruction,
                                absl::StrCat("lists %", user ? user->name() : "(null)",
                                             " as a user, but it is not one of its operands"));
      }
      if (user->parent() != &computation) {
        return InstructionError(
            *instruction, absl::StrCat("has user %", user->name(), " in another computation"));
      }
    }
    for (const HloInstruction* predecessor : instruction->control_predecessors()) {
      if (predecessor == nullptr || predecessor->parent() != &computation) {
        return InstructionError(
            *instruction,
            absl::StrCat("control predecessor %", predecessor ? predecessor->name() : "(null)",
                         " is not in the same computation"));
      }
      const auto& successors = predecessor->control_successors();
      if (std::find(successors.begin(), successors.end(), instruction) == successors.end()) {
        return InstructionError(*instruction,
                                absl::StrCat("control predecessor %", predecessor->name(),
                                             " does not list it as a successor"));
      }
    }
    for (const HloInstruction* successor : instruction->control_successors()) {
      if (successor == nullptr || successor->parent() != &computation) {
        return InstructionError(*instruction, absl::StrCat("control successor %",
                                                           successor ? successor->name() : "(null)",
                                                           " is not in the same computation"));
      }
    }
  }
  return absl::OkStatus();
}

// Depth-first search over operands and control predecessors.
absl::Status VerifyAcyclic(const HloComputation& computation) {
  absl::flat_hash_map<const HloInstruction*, int> state;  // 1: on the stack, 2: done
  for (const HloInstruction* start : computation.instructions()) {
    if (state[start] != 0) continue;
    std::vector<std::pair<const HloInstruction*, size_t>> stack = {{start, 0}};
    state[start] = 1;
    while (!stack.empty()) {
      auto& [node, next] = stack.back();
      const size_t n_operands = node->operands().size();
      if (next < n_operands + node->control_predecessors().size()) {
        const HloInstruction* dep = next < n_operands
                                        ? node->operands()[next]
                                        : node->control_predecessors()[next - n_operands];
        ++next;
        if (dep == nullptr || dep->parent() != &computation) continue;
        int& dep_state = state[dep];
        if (dep_state == 1) {
          return InstructionError(*dep,
                                  absl::StrCat("is part of a cycle (through %", node->name(), ")"));
        }
        if (dep_state == 0) {
          dep_state = 1;
          stack.push_back({dep, 0});
        }
        continue;
      }
      state[node] = 2;
      stack.pop_back();
    }
  }
  return absl::OkStatus();
}

absl::Status VerifyCallGraph(const HloModule& module) {
  absl::flat_hash_set<const HloComputation*> in_module;
  for (const HloComputation* c : module.computations()) in_module.insert(c);
  absl::flat_hash_map<const HloComputation*, int> state;
  std::function<absl::Status(const HloComputation*)> visit =
      [&](const HloComputation* computation) -> absl::Status {
    state[computation] = 1;
    for (const HloInstruction* instruction : computation->instructions()) {
      for (const HloComputation* callee : instruction->called_computations()) {
        if (callee == nullptr) continue;  // reported per instruction
        if (!in_module.contains(callee)) {
          return InstructionError(*instruction, absl::StrCat("calls computation ", callee->name(),
                                                             ", which is not in the module"));
        }
        if (callee == module.entry_computation()) {
          return InstructionError(*instruction, "calls the entry computation");
        }
        int& callee_state = state[callee];
        if (callee_state == 1) {
          return InstructionError(
              *instruction, absl::StrCat("calls computation ", callee->name(), " recursively"));
        }
        if (callee_state == 0) {
          if (auto s = visit(callee); !s.ok()) return s;
        }
      }
    }
    state[computation] = 2;
    return absl::OkStatus();
  };
  for (const HloComputation* computation : module.computations()) {
    if (state[computation] == 0) {
      if (auto s = visit(computation); !s.ok()) return s;
    }
  }
  return absl::OkStatus();
}

// The entry signature to check aliasing against: the entry computation
// layout when the module has one, else the entry computation itself.
ProgramShape GetProgramShape(const HloModule& module) {
  if (module.config().entry_computation_layout.has_value()) {
    return *module.config().entry_computation_layout;
  }
  return module.entry_computation_program_shape();
}

absl::Status VerifyEntryComputationLayout(const HloModule& module,
                                          const HloVerifierOptions& options) {
  if (!module.config().entry_computation_layout.has_value()) return absl::OkStatus();
  const ProgramShape& layout = *module.config().entry_computation_layout;
  const HloComputation* entry = module.entry_computation();
  const Shape& root = entry->root_instruction()->shape();
  if (!ShapesMatch(root, layout.result(), options.layout_sensitive, false)) {
    return Error(absl::StrCat(
        "entry_computation_layout: the result ", layout.result().ToString(options.layout_sensitive),
        " does not match the root of entry computation ", entry->name(), " (%",
        entry->root_instruction()->name(), ": ", root.ToString(options.layout_sensitive), ")"));
  }
  if (static_cast<int64_t>(layout.parameters().size()) != entry->num_parameters()) {
    return Error(absl::StrCat("entry_computation_layout has ", layout.parameters().size(),
                              " parameters but entry computation ", entry->name(), " has ",
                              entry->num_parameters()));
  }
  for (int64_t i = 0; i < entry->num_parameters(); ++i) {
    const HloInstruction* parameter = entry->parameter_instruction(i);
    if (!ShapesMatch(parameter->shape(), layout.parameters()[i], options.layout_sensitive, false)) {
      return Error(absl::StrCat("entry_computation_layout: parameter ", i, " is ",
                                layout.parameters()[i].ToString(options.layout_sensitive), " but %",
                                parameter->name(), " in entry computation ", entry->name(), " is ",
                                parameter->shape().ToString(options.layout_sensitive)));
    }
  }
  // A must-alias pair must agree exactly, layouts included.
  for (const auto& alias : module.input_output_alias_config().aliases()) {
    if (alias.kind != HloInputOutputAliasConfig::AliasKind::kMustAlias) continue;
    if (alias.parameter_number < 0 ||
        alias.parameter_number >= static_cast<int64_t>(layout.parameters().size()) ||
        !ShapeUtil::IndexIsValid(layout.result(), alias.output_index) ||
        !ShapeUtil::IndexIsValid(layout.parameters()[alias.parameter_number],
                                 alias.parameter_index)) {
      continue;  // reported by the alias checks
    }
    const Shape& out = ShapeUtil::GetSubshape(layout.result(), alias.output_index);
    const Shape& in =
        ShapeUtil::GetSubshape(layout.parameters()[alias.parameter_number], alias.parameter_index);
    if (!ShapesMatch(out, in, /*compare_layouts=*/true, false)) {
      return Error(absl::StrCat("input_output_alias: must-alias output ",
                                ShapeIndexToString(alias.output_index), " (", out.ToString(true),
                                ") and parameter ", alias.parameter_number, " at ",
                                ShapeIndexToString(alias.parameter_index), " (", in.ToString(true),
                                ") must have the same shape and layout"));
    }
  }
  return absl::OkStatus();
}

// The leaf at `index` of the entry's parameter `number` (`what` names the
// alias or donor in the error when there is no such parameter or leaf).
absl::StatusOr<Shape> EntryParameterLeaf(const ProgramShape& entry, int64_t number,
                                         const ShapeIndex& index, absl::string_view what) {
  const int64_t num_parameters = static_cast<int64_t>(entry.parameters().size());
  if (number < 0 || number >= num_parameters) {
    return Error(absl::StrCat(what, "parameter ", number,
                              " does not exist (the entry computation has ", num_parameters,
                              " parameters)"));
  }
  const Shape& parameter = entry.parameters()[number];
  if (!ShapeUtil::IndexIsValid(parameter, index)) {
    return Error(absl::StrCat(what, "index ", ShapeIndexToString(index), " is not in parameter ",
                              number, "'s shape ", parameter.ToString(false)));
  }
  return ShapeUtil::GetSubshape(parameter, index);
}

absl::Status VerifyInputOutputAlias(const HloModule& module) {
  const auto& aliases = module.input_output_alias_config().aliases();
  if (aliases.empty()) return absl::OkStatus();
  const ProgramShape entry = GetProgramShape(module);
  std::vector<std::pair<int64_t, ShapeIndex>> seen_parameters;
  std::vector<ShapeIndex> seen_outputs;
  for (const auto& alias : aliases) {
    const std::string what = absl::StrCat(
        "input_output_alias { ", ShapeIndexToString(alias.output_index), ": (",
        alias.parameter_number, ", ", ShapeIndexToString(alias.parameter_index), ") }: ");
    AXLE_ASSIGN_OR_RETURN(const Shape in, EntryParameterLeaf(entry, alias.parameter_number,
                                                             alias.parameter_index, what));
    if (!ShapeUtil::IndexIsValid(entry.result(), alias.output_index)) {
      return Error(absl::StrCat(what, "output index ", ShapeIndexToString(alias.output_index),
                                " is not in the result shape ", entry.result().ToString(false)));
    }
    const Shape& out = ShapeUtil::GetSubshape(entry.result(), alias.output_index);
    if (!in.IsArray() || !out.IsArray()) {
      return Error(absl::StrCat(what, "only arrays can alias; got parameter ", in.ToString(false),
                                " and output ", out.ToString(false)));
    }
    if (ShapeUtil::ByteSizeOfElements(in) != ShapeUtil::ByteSizeOfElements(out)) {
      return Error(absl::StrCat(what, "the parameter (", in.ToString(false), ", ",
                                ShapeUtil::ByteSizeOfElements(in), " bytes) and the output (",
                                out.ToString(false), ", ", ShapeUtil::ByteSizeOfElements(out),
                                " bytes) have different sizes"));
    }
    std::pair<int64_t, ShapeIndex> key = {alias.parameter_number, alias.parameter_index};
    if (std::find(seen_parameters.begin(), seen_parameters.end(), key) != seen_parameters.end()) {
      return Error(absl::StrCat(what, "parameter ", alias.parameter_number, " at ",
                                ShapeIndexToString(alias.parameter_index),
                                " is aliased to more than one output"));
    }
    seen_parameters.push_back(key);
    if (std::find(seen_outputs.begin(), seen_outputs.end(), alias.output_index) !=
        seen_outputs.end()) {
      return Error(absl::StrCat(what, "output ", ShapeIndexToString(alias.output_index),
                                " is aliased more than once"));
    }
    seen_outputs.push_back(alias.output_index);
  }
  return absl::OkStatus();
}

absl::Status VerifyBufferDonors(const HloModule& module) {
  const auto& donors = module.buffer_donor_config().donors();
  if (donors.empty()) return absl::OkStatus();
  const ProgramShape entry = GetProgramShape(module);
  for (const auto& donor : donors) {
    const std::string what = absl::StrCat("buffer_donor (", donor.parameter_number, ", ",
                                          ShapeIndexToString(donor.parameter_index), "): ");
    AXLE_ASSIGN_OR_RETURN(const Shape leaf, EntryParameterLeaf(entry, donor.parameter_number,
                                                               donor.parameter_index, what));
    if (!leaf.IsArray()) {
      return Error(absl::StrCat(what, "only arrays can be donated; got ", leaf.ToString(false)));
    }
    if (module.input_output_alias_config().ParameterHasAlias(donor.parameter_number,
                                                             donor.parameter_index)) {
      return Error(absl::StrCat(what, "the buffer is also in input_output_alias"));
    }
  }
  return absl::OkStatus();
}

absl::Status VerifyLayoutConstrainedAllReduce(const HloModule& module) {
  std::optional<bool> constrained;
  for (const HloComputation* computation : module.computations()) {
    for (const HloInstruction* instruction : computation->instructions()) {
      if (instruction->opcode() != HloOpcode::kAllReduce &&
          instruction->opcode() != HloOpcode::kAllReduceStart) {
        continue;
      }
      bool c = cast<HloCollectiveInstruction>(instruction)->attrs().constrain_layout;
      if (constrained.has_value() && *constrained != c) {
        return InstructionError(*instruction,
                                "the module mixes layout-constrained and "
                                "unconstrained all-reduce instructions");
      }
      constrained = c;
    }
  }
  return absl::OkStatus();
}

}  // namespace

HloVerifier::HloVerifier(bool layout_sensitive, bool allow_mixed_precision) {
  options_.layout_sensitive = layout_sensitive;
  options_.allow_mixed_precision = allow_mixed_precision;
}

absl::StatusOr<bool> HloVerifier::Run(HloModule* module) {
  if (module == nullptr) return absl::InvalidArgumentError("hlo-verifier: null module");
  if (auto s = Verify(*module); !s.ok()) return s;
  return false;
}

absl::Status HloVerifier::Verify(const HloModule& module) const {
  const HloComputation* entry = module.entry_computation();
  if (entry == nullptr)
    return Error(absl::StrCat("module ", module.name(), " has no entry computation"));
  if (entry->IsFusionComputation()) {
    return Error(absl::StrCat("entry computation ", entry->name(), " is a fusion computation"));
  }

  // Ownership and names.
  absl::flat_hash_map<std::string, const HloComputation*> computation_names;
  absl::flat_hash_map<std::string, const HloInstruction*> instruction_names;
  bool entry_found = false;
  for (const HloComputation* computation : module.computations()) {
    if (computation == nullptr) return Error("module contains a null computation");
    if (computation->parent() != &module) {
      return ComputationError(*computation, "its parent is not this module");
    }
    entry_found |= computation == entry;
    if (!computation_names.emplace(computation->name(), computation).second) {
      return ComputationError(*computation, "the computation name is not unique in the module");
    }
    for (const HloInstruction* instruction : computation->instructions()) {
      if (instruction->parent() != computation) {
        return InstructionError(*instruction,
                                absl::StrCat("is owned by computation ", computation->name(),
                                             " but its parent is another computation"));
      }
      auto [it, inserted] = instruction_names.emplace(instruction->name(), instruction);
      if (!inserted) {
        return InstructionError(*instruction,
                                absl::StrCat("the name is not unique in the module (also used "
                                             "in computation ",
                                             it->second->parent()->name(), ")"));
      }
    }
  }
  if (!entry_found) return Error("the entry computation is not owned by the module");

  // Per computation structure.
  for (const HloComputation* computation : module.computations()) {
    const HloInstruction* root = computation->root_instruction();
    if (root == nullptr) return ComputationError(*computation, "has no root instruction");
    if (root->parent() != computation) {
      return ComputationError(*computation,
                              absl::StrCat("its root %", root->name(), " is not in it"));
    }
    if (auto s = VerifyParameters(*computation); !s.ok()) return s;
    if (auto s = VerifyEdges(*computation); !s.ok()) return s;
    if (auto s = VerifyAcyclic(*computation); !s.ok()) return s;
  }
  if (auto s = VerifyCallGraph(module); !s.ok()) return s;

  ModuleFacts facts;
  for (const HloComputation* computation : module.computations()) {
    facts.execution_thread.emplace(computation, computation->execution_thread());
  }
  for (const HloComputation* computation : module.computations()) {
    for (const HloInstruction* instruction : computation->instructions()) {
      const auto* async = dyn_cast<HloAsyncInstruction>(instruction);
      if (async == nullptr) continue;
      // The async thread propagates into the wrapped computation and its
      // callees (the call graph is acyclic, checked above).
      std::vector<const HloComputation*> worklist(instruction->called_computations().begin(),
                                                  instruction->called_computations().end());
      while (!worklist.empty()) {
        const HloComputation* c = worklist.back();
        worklist.pop_back();
        if (c == nullptr) continue;
        facts.async_computations.insert(c);
        facts.execution_thread[c] = async->async_execution_thread();
        for (const HloInstruction* nested : c->instructions()) {
          if (isa<HloAsyncInstruction>(nested)) continue;
          for (const HloComputation* callee : nested->called_computations()) {
            worklist.push_back(callee);
          }
        }
      }
    }
  }

  // Every instruction, operands before users.
  for (const HloComputation* computation : module.MakeComputationPostOrder()) {
    for (const HloInstruction* instruction : computation->MakeInstructionPostOrder()) {
      if (auto s = verifier_internal::VerifyInstruction(*instruction, options_, facts); !s.ok()) {
        return s;
      }
    }
  }

  if (auto s = VerifyEntryComputationLayout(module, options_); !s.ok()) return s;
  if (auto s = VerifyInputOutputAlias(module); !s.ok()) return s;
  if (auto s = VerifyBufferDonors(module); !s.ok()) return s;
  return VerifyLayoutConstrainedAllReduce(module);
}

absl::Status VerifyHloModule(const HloModule& module, const HloVerifierOptions& options) {
  return HloVerifier(options).Verify(module);
}

}  // namespace axle
