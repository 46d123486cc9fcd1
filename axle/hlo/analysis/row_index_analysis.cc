// Loop prefixes of fused instructions (see row_index_analysis.h).
#include "axle/hlo/analysis/row_index_analysis.h"

#include <algorithm>
#include <vector>

#include "axle/core/shape_util.h"
#include "axle/hlo/ir/hlo_instructions.h"

namespace axle {

bool IsRowBroadcast(const HloInstruction& broadcast) {
  if (broadcast.opcode() != HloOpcode::kBroadcast) return false;
  const std::vector<int64_t>& dims = cast<HloDimensionsInstruction>(&broadcast)->dimensions();
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

bool IsRowReduce(const HloInstruction& reduce) {
  if (reduce.opcode() != HloOpcode::kReduce || !reduce.shape().IsArray()) return false;
  const int64_t kept = reduce.shape().rank();
  for (int64_t d : cast<HloDimensionsInstruction>(&reduce)->dimensions()) {
    if (d < kept) return false;
  }
  return true;
}

int64_t OperandLoopPrefix(const HloInstruction& user, int64_t operand_index, int64_t user_prefix) {
  const HloInstruction* operand = user.operand(operand_index);
  if (!operand->shape().IsArray()) return 0;
  const int64_t rank = operand->shape().rank();
  if (user.IsElementwise()) {
    return user.shape().IsArray() && ShapeUtil::SameDimensions(operand->shape(), user.shape())
               ? user_prefix
               : 0;
  }
  switch (user.opcode()) {
    case HloOpcode::kBroadcast:
      return IsRowBroadcast(user) ? std::min(user_prefix, rank) : 0;
    case HloOpcode::kReduce:
      // Inputs come first, then as many init values.
      if (!IsRowReduce(user) || operand_index >= user.operand_count() / 2) return 0;
      return std::min(user_prefix, user.shape().rank());
    default:
      return 0;
  }
}

RowIndexAnalysis::RowIndexAnalysis(const HloComputation& computation,
                                   std::optional<int64_t> root_prefix)
    : computation_(computation) {
  const HloInstruction* root = computation.root_instruction();
  const Shape& kernel_shape = root->opcode() == HloOpcode::kTuple && root->operand_count() > 0
                                  ? root->operand(0)->shape()
                                  : root->shape();
  kernel_rank_ = root_prefix.value_or(kernel_shape.IsArray() ? kernel_shape.rank() : 0);
  std::vector<HloInstruction*> order = computation.MakeInstructionPostOrder();
  // Users before operands.
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const HloInstruction* instruction = *it;
    if (instruction->opcode() == HloOpcode::kTuple && instruction == root) continue;
    std::optional<int64_t> prefix;
    auto meet = [&](int64_t value) {
      prefix = prefix.has_value() ? std::min(*prefix, value) : value;
    };
    if (instruction == root) {
      meet(root_prefix.value_or(instruction->shape().IsArray() ? instruction->shape().rank() : 0));
    }
    for (const HloInstruction* user : instruction->users()) {
      if (user == root && user->opcode() == HloOpcode::kTuple) {
        meet(
            root_prefix.value_or(instruction->shape().IsArray() ? instruction->shape().rank() : 0));
        continue;
      }
      const int64_t user_prefix = LoopPrefix(user);
      for (int64_t i = 0; i < user->operand_count(); ++i) {
        if (user->operand(i) == instruction) meet(OperandLoopPrefix(*user, i, user_prefix));
      }
    }
    prefix_[instruction] = prefix.value_or(0);
  }
}

int64_t RowIndexAnalysis::LoopPrefix(const HloInstruction* instruction) const {
  auto it = prefix_.find(instruction);
  return it == prefix_.end() ? 0 : it->second;
}

bool RowIndexAnalysis::IsHoistableRowValue(const HloInstruction* instruction) const {
  if (instruction == computation_.root_instruction() || !instruction->shape().IsArray()) {
    return false;
  }
  const int64_t rank = instruction->shape().rank();
  if (rank < 1 || LoopPrefix(instruction) != rank) return false;
  if (instruction->opcode() == HloOpcode::kReduce) return true;
  if (instruction->opcode() == HloOpcode::kParameter ||
      instruction->opcode() == HloOpcode::kConstant || instruction->users().empty()) {
    return false;
  }
  return std::all_of(instruction->users().begin(), instruction->users().end(),
                     [](const HloInstruction* user) { return IsRowBroadcast(*user); });
}

bool RowIndexAnalysis::IsRowMaterializable(const HloInstruction* instruction) const {
  if (!instruction->shape().IsArray() || instruction->shape().rank() != kernel_rank_ ||
      kernel_rank_ < 2) {
    return false;
  }
  switch (instruction->opcode()) {
    case HloOpcode::kParameter:
    case HloOpcode::kConstant:
    case HloOpcode::kBroadcast:
    case HloOpcode::kIota:
      return false;  // as cheap to read again as to load
    default:
      break;
  }
  bool by_reduce = false;
  bool by_kernel = instruction == computation_.root_instruction();
  for (const HloInstruction* user : instruction->users()) {
    if (user->opcode() == HloOpcode::kReduce && IsHoistableRowValue(user)) {
      for (int64_t i = 0; i < user->operand_count() / 2; ++i) {
        by_reduce |= user->operand(i) == instruction;
      }
      for (int64_t i = user->operand_count() / 2; i < user->operand_count(); ++i) {
        if (user->operand(i) == instruction) return false;
      }
      continue;
    }
    if (user == computation_.root_instruction() && user->opcode() == HloOpcode::kTuple) {
      by_kernel = true;
      continue;
    }
    for (int64_t i = 0; i < user->operand_count(); ++i) {
      if (user->operand(i) != instruction) continue;
      if (OperandLoopPrefix(*user, i, LoopPrefix(user)) != kernel_rank_) return false;
      by_kernel = true;
    }
  }
  return by_reduce && by_kernel;
}

bool RowIndexAnalysis::ReducesAreHoistable() const {
  for (const HloInstruction* instruction : computation_.instructions()) {
    if (instruction->opcode() != HloOpcode::kReduce) continue;
    if (instruction == computation_.root_instruction()) continue;
    if (!IsHoistableRowValue(instruction)) return false;
  }
  return true;
}

}  // namespace axle
