//===- loop_kernel_plan.cc - What shape of loop nest a loop kernel gets ----===//
//
// See loop_kernel_plan.h.
//
//===----------------------------------------------------------------------===//
#include "axle/cpu/loop_kernel_plan.h"

#include <algorithm>
#include <set>

#include "axle/core/primitive_type.h"
#include "axle/hlo/ir/hlo_instructions.h"

namespace axle::cpu {

std::optional<std::pair<size_t, const HloInstruction*>> TransposedDimension(
    const HloComputation& computation, const RowIndexAnalysis& rows,
    const std::vector<int64_t>& dims) {
  const int64_t rank = static_cast<int64_t>(dims.size());
  if (rank < 2 || dims[rank - 1] < kTransposeTile) return std::nullopt;
  for (const HloInstruction* instruction : computation.instructions()) {
    if (instruction->opcode() != HloOpcode::kTranspose ||
        primitive_util::IsComplexType(instruction->shape().element_type())) {
      continue;
    }
    if (instruction->shape().dimensions() != dims || rows.LoopPrefix(instruction) != rank) {
      continue;
    }
    const std::vector<int64_t>& permutation =
        cast<HloDimensionsInstruction>(instruction)->dimensions();
    for (int64_t a = 0; a + 1 < rank; ++a) {
      if (permutation[a] == rank - 1 && dims[a] >= kTransposeTile) {
        return std::make_pair(static_cast<size_t>(a), instruction);
      }
    }
  }
  return std::nullopt;
}

bool IsColumnReduction(const HloInstruction& root) {
  if (root.opcode() != HloOpcode::kReduce || root.operand_count() != 2 || !root.shape().IsArray() ||
      root.shape().rank() < 1) {
    return false;
  }
  const int64_t rank = root.operand(0)->shape().rank();
  const std::vector<int64_t>& reduced = cast<HloDimensionsInstruction>(&root)->dimensions();
  if (reduced.empty()) return false;
  return std::find(reduced.begin(), reduced.end(), rank - 1) == reduced.end();
}

bool ComputesTranscendentals(const HloInstruction& hlo) {
  std::vector<const HloInstruction*> stack = {&hlo};
  std::set<const HloInstruction*> seen;
  while (!stack.empty()) {
    const HloInstruction* instruction = stack.back();
    stack.pop_back();
    if (!seen.insert(instruction).second) continue;
    switch (instruction->opcode()) {
      case HloOpcode::kExp:
      case HloOpcode::kExpm1:
      case HloOpcode::kLog:
      case HloOpcode::kLog1p:
      case HloOpcode::kLogistic:
      case HloOpcode::kTanh:
      case HloOpcode::kErf:
      case HloOpcode::kPower:
      case HloOpcode::kSin:
      case HloOpcode::kCos:
      case HloOpcode::kTan:
      case HloOpcode::kAtan2:
        return true;
      case HloOpcode::kReduce:
      case HloOpcode::kParameter:
        continue;  // another row value, or memory
      default:
        break;
    }
    for (const HloInstruction* operand : instruction->operands()) stack.push_back(operand);
  }
  return false;
}

const HloInstruction* LastRowReduction(const std::vector<const HloInstruction*>& values,
                                       const std::vector<int64_t>& dims) {
  const HloInstruction* last = nullptr;
  for (const HloInstruction* value : values) {
    if (value->opcode() != HloOpcode::kReduce || value->operand_count() != 2) continue;
    const auto& reduced = cast<HloDimensionsInstruction>(value)->dimensions();
    if (dims.size() < 2 || value->shape().rank() + 1 != static_cast<int64_t>(dims.size()) ||
        value->operand(0)->shape().dimensions() != dims || reduced.size() != 1 ||
        reduced[0] != static_cast<int64_t>(dims.size()) - 1) {
      continue;
    }
    last = value;
  }
  return last;
}

const HloInstruction* SkewableRowReduction(
    const std::vector<std::vector<const HloInstruction*>>& row_values,
    const std::vector<const HloInstruction*>& outputs, const std::vector<int64_t>& dims,
    bool nontemporal, int64_t max_row_bytes,
    const std::function<bool(const HloInstruction*)>& in_row_buffer) {
  if (!nontemporal || outputs.size() != 1 || dims.size() != 2 || !row_values[0].empty() ||
      row_values[1].empty() || !row_values[2].empty()) {
    return nullptr;
  }
  const HloInstruction& output = *outputs[0];
  constexpr int64_t kLineBytes = 64;  // a non-temporal store's alignment
  const int64_t row_bytes = dims[1] * static_cast<int64_t>(sizeof(float));
  if (output.shape().element_type() != F32 || row_bytes % kLineBytes != 0 ||
      row_bytes > max_row_bytes) {
    return nullptr;
  }
  std::set<const HloInstruction*> values(row_values[1].begin(), row_values[1].end());
  for (const HloInstruction* value : values) {
    if (value->shape().element_type() != F32) return nullptr;
  }
  std::vector<const HloInstruction*> stack = {&output};
  std::set<const HloInstruction*> seen;
  while (!stack.empty()) {
    const HloInstruction* instruction = stack.back();
    stack.pop_back();
    if (!seen.insert(instruction).second || values.count(instruction) > 0) continue;
    if (in_row_buffer(instruction)) continue;
    if (instruction->opcode() != HloOpcode::kConstant &&
        instruction->opcode() != HloOpcode::kBroadcast && !instruction->IsElementwise()) {
      return nullptr;  // a parameter, a reduce, a data movement
    }
    for (const HloInstruction* operand : instruction->operands()) stack.push_back(operand);
  }
  return LastRowReduction(row_values[1], dims);
}

}  // namespace axle::cpu
