#include "axle/hlo/ir/hlo_module.h"

#include <functional>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "axle/hlo/ir/hlo_instructions.h"

namespace axle {

HloModule::HloModule(std::string name, HloModuleConfig config)
    : name_(std::move(name)), config_(std::move(config)) {}

HloModule::~HloModule() = default;

HloComputation* HloModule::AddEntryComputation(std::unique_ptr<HloComputation> computation) {
  entry_ = AddEmbeddedComputation(std::move(computation));
  return entry_;
}

HloComputation* HloModule::AddEmbeddedComputation(std::unique_ptr<HloComputation> computation) {
  HloComputation* raw = computation.get();
  raw->set_parent(this);
  if (raw->unique_id() < 0) raw->SetUniqueId(NewUniqueInstructionId());
  for (HloInstruction* instruction : raw->instructions()) {
    if (instruction->unique_id() < 0) instruction->SetUniqueId(NewUniqueInstructionId());
    if (instruction->name().empty()) {
      instruction->SetName(GetUniqueName(HloOpcodeString(instruction->opcode())));
    } else {
      ReserveName(instruction->name());
    }
  }
  ReserveName(raw->name());
  computations_.push_back(std::move(computation));
  return raw;
}

absl::Status HloModule::RemoveEmbeddedComputation(HloComputation* computation) {
  if (computation == entry_) {
    return absl::FailedPreconditionError("cannot remove the entry computation");
  }
  for (auto it = computations_.begin(); it != computations_.end(); ++it) {
    if (it->get() == computation) {
      computations_.erase(it);
      return absl::OkStatus();
    }
  }
  return absl::NotFoundError(absl::StrCat("computation ", computation->name(), " not in module"));
}

void HloModule::RemoveUnusedComputations() {
  if (entry_ == nullptr) return;
  absl::flat_hash_set<HloComputation*> live = {entry_};
  for (HloComputation* c : entry_->MakeEmbeddedComputationsList()) live.insert(c);
  std::vector<std::unique_ptr<HloComputation>> kept;
  for (auto& c : computations_) {
    if (live.contains(c.get())) kept.push_back(std::move(c));
  }
  computations_ = std::move(kept);
}

std::vector<HloComputation*> HloModule::computations() const {
  std::vector<HloComputation*> out;
  for (const auto& c : computations_) out.push_back(c.get());
  return out;
}

std::vector<HloComputation*> HloModule::MakeComputationPostOrder() const {
  std::vector<HloComputation*> order;
  absl::flat_hash_set<HloComputation*> added;
  absl::flat_hash_set<HloComputation*> reachable;
  if (entry_ != nullptr) {
    for (HloComputation* c : entry_->MakeEmbeddedComputationsList()) reachable.insert(c);
    reachable.insert(entry_);
  }
  // Unreachable computations (and their callees) first, in insertion order.
  // A callee always comes before its callers, also when an unreachable
  // computation calls one the entry reaches too.
  for (const auto& c : computations_) {
    if (reachable.contains(c.get()) || added.contains(c.get())) continue;
    for (HloComputation* callee : c->MakeEmbeddedComputationsList()) {
      if (added.insert(callee).second) order.push_back(callee);
    }
    if (added.insert(c.get()).second) order.push_back(c.get());
  }
  if (entry_ != nullptr) {
    for (HloComputation* c : entry_->MakeEmbeddedComputationsList()) {
      if (added.insert(c).second) order.push_back(c);
    }
    order.push_back(entry_);
  }
  return order;
}

HloComputation* HloModule::GetComputationWithName(absl::string_view name) const {
  for (const auto& c : computations_) {
    if (c->name() == name) return c.get();
  }
  return nullptr;
}

int64_t HloModule::instruction_count() const {
  int64_t n = 0;
  for (const auto& c : computations_) n += c->instruction_count();
  return n;
}

ProgramShape HloModule::entry_computation_program_shape() const {
  ProgramShape shape;
  if (entry_ == nullptr) return shape;
  for (HloInstruction* p : entry_->parameter_instructions()) {
    shape.mutable_parameters()->push_back(p->shape());
    shape.mutable_parameter_names()->push_back(p->name());
  }
  *shape.mutable_result() = entry_->root_instruction()->shape();
  return shape;
}

std::string HloModule::GetUniqueName(absl::string_view prefix) {
  std::string base(prefix);
  if (!used_names_.contains(base)) {
    used_names_.insert(base);
    return base;
  }
  int64_t& next = next_suffix_.try_emplace(base, 1).first->second;
  for (;; ++next) {
    std::string candidate = absl::StrCat(base, ".", next);
    if (used_names_.insert(candidate).second) {
      ++next;
      return candidate;
    }
  }
}

std::unique_ptr<HloModule> HloModule::Clone(std::string suffix) const {
  auto clone = std::make_unique<HloModule>(
      suffix.empty() ? name_ : absl::StrCat(name_, "-", suffix), config_);
  absl::flat_hash_map<const HloComputation*, HloComputation*> computation_map;
  for (HloComputation* computation : MakeComputationPostOrder()) {
    auto new_computation = std::make_unique<HloComputation>(computation->name());
    new_computation->SetExecutionThread(computation->execution_thread());
    absl::flat_hash_map<const HloInstruction*, HloInstruction*> map;
    std::vector<HloInstruction*> order = computation->MakeInstructionPostOrder();
    for (HloInstruction* instruction : order) {
      std::vector<HloInstruction*> operands;
      for (HloInstruction* operand : instruction->operands()) operands.push_back(map.at(operand));
      std::unique_ptr<HloInstruction> copy =
          instruction->CloneWithNewOperands(instruction->shape(), operands);
      for (int64_t i = 0; i < static_cast<int64_t>(copy->called_computations().size()); ++i) {
        HloComputation* callee = copy->called_computations()[i];
        if (callee != nullptr) copy->set_called_computation(i, computation_map.at(callee));
      }
      map[instruction] = new_computation->AddInstruction(std::move(copy));
    }
    for (HloInstruction* instruction : order) {
      for (HloInstruction* successor : instruction->control_successors()) {
        map.at(instruction)->AddControlDependencyTo(map.at(successor));
      }
    }
    new_computation->set_root_instruction(map.at(computation->root_instruction()));
    HloComputation* added = computation == entry_
                                ? clone->AddEntryComputation(std::move(new_computation))
                                : clone->AddEmbeddedComputation(std::move(new_computation));
    computation_map[computation] = added;
  }
  // Re-link fused computations to their fusion instructions.
  for (HloComputation* computation : clone->computations()) {
    for (HloInstruction* instruction : computation->instructions()) {
      if (instruction->opcode() == HloOpcode::kFusion &&
          !instruction->called_computations().empty()) {
        instruction->called_computations()[0]->SetFusionInstruction(instruction);
      }
    }
  }
  return clone;
}

}  // namespace axle
