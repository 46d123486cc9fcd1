#include "axle/hlo/ir/hlo_instruction.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "axle/base/logging.h"
#include "axle/core/shape_util.h"
#include "axle/hlo/ir/hlo_computation.h"
#include "axle/hlo/ir/hlo_instruction_subclasses.h"
#include "axle/hlo/ir/hlo_instructions.h"

namespace axle {

HloInstruction::HloInstruction(HloOpcode opcode, const Shape& shape)
    : opcode_(opcode), shape_(shape) {}

HloInstruction::~HloInstruction() = default;

namespace {

// Whether `instruction`'s opcode is one whose attributes live in a subclass
// of hlo_instructions.h.
bool NeedsSubclass(const HloInstruction* instruction) {
  return IsOfAnyHloSubclass(instruction, HloInstructionSubclasses());
}

}  // namespace

std::unique_ptr<HloInstruction> HloInstruction::Create(HloOpcode opcode, const Shape& shape,
                                                       absl::Span<HloInstruction* const> operands) {
  std::unique_ptr<HloInstruction> instruction(new HloInstruction(opcode, shape));
  CHECK(!NeedsSubclass(instruction.get()))
      << HloOpcodeString(opcode)
      << " has attributes: create it through its subclass (hlo_instructions.h)";
  for (HloInstruction* operand : operands) instruction->AppendOperand(operand);
  return instruction;
}

bool HloInstruction::IsRoot() const {
  return parent_ != nullptr && parent_->root_instruction() == this;
}

void HloInstruction::AppendOperand(HloInstruction* operand) {
  operands_.push_back(operand);
  if (std::find(operand->users_.begin(), operand->users_.end(), this) == operand->users_.end()) {
    operand->users_.push_back(this);
  }
}

void HloInstruction::RemoveUser(HloInstruction* user) {
  auto it = std::find(users_.begin(), users_.end(), user);
  if (it != users_.end()) users_.erase(it);
}

bool HloInstruction::IsUserOf(const HloInstruction* operand) const {
  return std::find(operands_.begin(), operands_.end(), operand) != operands_.end();
}

absl::Status HloInstruction::ReplaceOperandWith(int64_t i, HloInstruction* new_operand) {
  if (i < 0 || i >= operand_count()) {
    return absl::InvalidArgumentError(
        absl::StrCat("operand index ", i, " out of range for ", name_));
  }
  HloInstruction* old_operand = operands_[i];
  if (old_operand == new_operand) return absl::OkStatus();
  operands_[i] = new_operand;
  if (!IsUserOf(old_operand)) old_operand->RemoveUser(this);
  if (std::find(new_operand->users_.begin(), new_operand->users_.end(), this) ==
      new_operand->users_.end()) {
    new_operand->users_.push_back(this);
  }
  return absl::OkStatus();
}

absl::Status HloInstruction::ReplaceUseWith(HloInstruction* user, HloInstruction* new_producer) {
  for (int64_t i = 0; i < user->operand_count(); ++i) {
    if (user->operands_[i] == this) {
      absl::Status status = user->ReplaceOperandWith(i, new_producer);
      if (!status.ok()) return status;
    }
  }
  return absl::OkStatus();
}

absl::Status HloInstruction::ReplaceAllUsesWith(HloInstruction* new_producer) {
  if (new_producer == this) return absl::OkStatus();
  if (!ShapeUtil::CompatibleIgnoringFpPrecision(shape_, new_producer->shape_)) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot replace ", name_, " (", shape_.ToString(), ") with ",
                     new_producer->name_, " (", new_producer->shape_.ToString(), ")"));
  }
  std::vector<HloInstruction*> users = users_;
  for (HloInstruction* user : users) {
    absl::Status status = ReplaceUseWith(user, new_producer);
    if (!status.ok()) return status;
  }
  if (parent_ != nullptr && parent_->root_instruction() == this) {
    parent_->set_root_instruction(new_producer);
  }
  return absl::OkStatus();
}

void HloInstruction::RemoveAllOperands() {
  for (HloInstruction* operand : operands_) operand->RemoveUser(this);
  operands_.clear();
}

void HloInstruction::AddControlDependencyTo(HloInstruction* successor) {
  if (std::find(control_successors_.begin(), control_successors_.end(), successor) !=
      control_successors_.end()) {
    return;
  }
  control_successors_.push_back(successor);
  successor->control_predecessors_.push_back(this);
}

void HloInstruction::RemoveControlDependencyTo(HloInstruction* successor) {
  auto it = std::find(control_successors_.begin(), control_successors_.end(), successor);
  if (it == control_successors_.end()) return;
  control_successors_.erase(it);
  auto& preds = successor->control_predecessors_;
  preds.erase(std::find(preds.begin(), preds.end(), this));
}

void HloInstruction::DropAllControlDeps() {
  for (HloInstruction* pred : control_predecessors_) {
    auto& succs = pred->control_successors_;
    succs.erase(std::find(succs.begin(), succs.end(), this));
  }
  for (HloInstruction* succ : control_successors_) {
    auto& preds = succ->control_predecessors_;
    preds.erase(std::find(preds.begin(), preds.end(), this));
  }
  control_predecessors_.clear();
  control_successors_.clear();
}

HloComputation* HloInstruction::to_apply() const {
  CHECK(called_computations_.size() == 1)
      << name_ << " (" << HloOpcodeString(opcode_) << ") has no single called computation";
  return called_computations_[0];
}

void HloInstruction::set_to_apply(HloComputation* computation) {
  called_computations_.assign(1, computation);
}

HloComputation* HloInstruction::while_condition() const {
  CHECK(opcode_ == HloOpcode::kWhile && called_computations_.size() == 2);
  return called_computations_[0];
}

HloComputation* HloInstruction::while_body() const {
  CHECK(opcode_ == HloOpcode::kWhile && called_computations_.size() == 2);
  return called_computations_[1];
}

const std::vector<HloComputation*>& HloInstruction::branch_computations() const {
  CHECK(opcode_ == HloOpcode::kConditional);
  return called_computations_;
}

HloComputation* HloInstruction::select() const {
  CHECK(opcode_ == HloOpcode::kSelectAndScatter && called_computations_.size() == 2);
  return called_computations_[0];
}

HloComputation* HloInstruction::scatter() const {
  CHECK(opcode_ == HloOpcode::kSelectAndScatter && called_computations_.size() == 2);
  return called_computations_[1];
}

const RawAttribute* HloInstruction::FindRawAttribute(absl::string_view name) const {
  for (const RawAttribute& attr : raw_attributes_) {
    if (attr.name == name) return &attr;
  }
  return nullptr;
}

bool HloInstruction::HasSideEffect() const {
  if (HloOpcodeHasSideEffect(opcode_)) return true;
  if (const auto* custom_call = dyn_cast<HloCustomCallInstruction>(this)) {
    return custom_call->custom_call_has_side_effect();
  }
  return false;
}

std::unique_ptr<HloInstruction> HloInstruction::CloneImpl(
    const Shape& shape, absl::Span<HloInstruction* const> operands) const {
  return Create(opcode_, shape, operands);
}

std::unique_ptr<HloInstruction> HloInstruction::CloneWithNewOperands(
    const Shape& shape, absl::Span<HloInstruction* const> operands) const {
  std::unique_ptr<HloInstruction> clone = CloneImpl(shape, operands);
  clone->name_ = name_;
  clone->called_computations_ = called_computations_;
  clone->metadata_ = metadata_;
  clone->sharding_ = sharding_;
  clone->frontend_attributes_ = frontend_attributes_;
  clone->backend_config_ = backend_config_;
  clone->raw_attributes_ = raw_attributes_;
  return clone;
}

std::vector<ReplicaGroup> IotaReplicaGroupList::Expand() const {
  // The device ids 0..N-1 laid out as reshape_dims, transposed by
  // transpose_perm, then read in row-major order into num_groups groups.
  int64_t total = 1;
  for (int64_t d : reshape_dims) total *= d;
  std::vector<int64_t> perm = transpose_perm;
  if (perm.empty()) {
    for (size_t i = 0; i < reshape_dims.size(); ++i) perm.push_back(static_cast<int64_t>(i));
  }
  std::vector<int64_t> transposed_dims;
  transposed_dims.reserve(perm.size());
  for (int64_t p : perm) transposed_dims.push_back(reshape_dims[p]);
  std::vector<int64_t> source_strides = ShapeUtil::RowMajorStrides(reshape_dims);
  std::vector<int64_t> ids;
  ids.reserve(total);
  ShapeUtil::ForEachIndex(transposed_dims, [&](absl::Span<const int64_t> index) {
    int64_t id = 0;
    for (size_t i = 0; i < perm.size(); ++i) id += index[i] * source_strides[perm[i]];
    ids.push_back(id);
    return true;
  });
  std::vector<ReplicaGroup> groups(num_groups);
  for (int64_t g = 0; g < num_groups; ++g) {
    for (int64_t j = 0; j < group_size && g * group_size + j < static_cast<int64_t>(ids.size());
         ++j) {
      groups[g].add_replica_ids(ids[g * group_size + j]);
    }
  }
  return groups;
}

}  // namespace axle

namespace axle {

std::string IotaReplicaGroupList::ToString() const {
  std::string out =
      absl::StrCat("[", num_groups, ",", group_size, "]<=[", absl::StrJoin(reshape_dims, ","), "]");
  if (!transpose_perm.empty()) absl::StrAppend(&out, "T(", absl::StrJoin(transpose_perm, ","), ")");
  return out;
}

}  // namespace axle
