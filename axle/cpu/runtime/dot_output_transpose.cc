// A transposed dot result computed as the dot with its operands swapped
// (see dot_output_transpose.h).
#include "axle/cpu/runtime/dot_output_transpose.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "axle/base/status_macros.h"
#include "axle/core/shape_util.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/transforms/hlo_creation_utils.h"

namespace axle::cpu {
namespace {

// Both sides of the result have at least this many elements.
constexpr int64_t kMinFreeElements = 64;

// A scalar broadcast to any shape: it reads the same after a transpose.
bool IsScalarBroadcast(const HloInstruction& value) {
  return value.opcode() == HloOpcode::kBroadcast && value.operand(0)->shape().IsArray() &&
         value.operand(0)->shape().rank() == 0;
}

// The operand of elementwise `op` that is not a scalar broadcast, when
// exactly one is; -1 otherwise.
int64_t ChainOperand(const HloInstruction& op) {
  int64_t chain = -1;
  for (int64_t i = 0; i < op.operand_count(); ++i) {
    if (IsScalarBroadcast(*op.operand(i))) continue;
    if (chain >= 0) return -1;
    chain = i;
  }
  return chain;
}

// The permutation that maps a dot's result [batch, lhs free, rhs free] to
// the swapped dot's [batch, rhs free, lhs free].
std::vector<int64_t> SwapPermutation(int64_t batch, int64_t lhs_free, int64_t rhs_free) {
  std::vector<int64_t> permutation;
  permutation.reserve(batch + lhs_free + rhs_free);
  for (int64_t d = 0; d < batch; ++d) permutation.push_back(d);
  for (int64_t d = 0; d < rhs_free; ++d) permutation.push_back(batch + lhs_free + d);
  for (int64_t d = 0; d < lhs_free; ++d) permutation.push_back(batch + d);
  return permutation;
}

// Rewrites `transpose` when it transposes a dot as the swapped dot would
// write it; whether it did.
absl::StatusOr<bool> Rewrite(HloComputation* computation, HloInstruction* transpose) {
  // The chain between the transpose and the dot, top down.
  std::vector<std::pair<HloInstruction*, int64_t>> chain;
  HloInstruction* node = transpose->mutable_operand(0);
  while (node->opcode() != HloOpcode::kDot) {
    if (!node->IsElementwise() || node->user_count() != 1 || !node->shape().IsArray()) {
      return false;
    }
    const int64_t operand = ChainOperand(*node);
    if (operand < 0) return false;
    chain.emplace_back(node, operand);
    node = node->mutable_operand(operand);
  }
  auto* dot = cast<HloDotInstruction>(node);
  if (dot->user_count() != 1 || dot->operand_count() != 2 || !dot->shape().IsArray() ||
      !ShapeUtil::HasDescendingLayout(dot->shape()) ||
      !ShapeUtil::HasDescendingLayout(transpose->shape())) {
    return false;
  }
  const DotDimensionNumbers& numbers = dot->dot_dimension_numbers();
  const auto batch = static_cast<int64_t>(numbers.lhs_batch_dimensions().size());
  const int64_t contracting = static_cast<int64_t>(numbers.lhs_contracting_dimensions().size());
  const int64_t lhs_free = dot->operand(0)->shape().rank() - batch - contracting;
  const int64_t rhs_free = dot->operand(1)->shape().rank() - batch - contracting;
  if (lhs_free == 0 || rhs_free == 0) return false;
  // A skinny result (few rows or columns) transposes cheaply, and its dot
  // runs on the small-row kernel only in its own orientation.
  // The result's dims [begin, end) hold this many elements.
  auto elements = [&](int64_t begin, int64_t end) {
    int64_t count = 1;
    for (int64_t d = begin; d < end; ++d) count *= dot->shape().dimensions(d);
    return count;
  };
  if (elements(batch, batch + lhs_free) < kMinFreeElements ||
      elements(batch + lhs_free, batch + lhs_free + rhs_free) < kMinFreeElements) {
    return false;
  }
  const std::vector<int64_t> permutation = SwapPermutation(batch, lhs_free, rhs_free);
  // The transpose as one of the swapped dot's result: identity when it is
  // the swap itself; otherwise taken only when it keeps the swapped
  // result's minor dimension minor (see the header).
  const std::vector<int64_t>& dims = cast<HloDimensionsInstruction>(transpose)->dimensions();
  if (dims.size() != permutation.size() || dims.back() != permutation.back()) return false;
  std::vector<int64_t> inverse(permutation.size());
  for (size_t i = 0; i < permutation.size(); ++i) inverse[permutation[i]] = static_cast<int64_t>(i);
  std::vector<int64_t> residual(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) residual[i] = inverse[dims[i]];

  DotDimensionNumbers swapped = numbers;
  *swapped.mutable_lhs_batch_dimensions() = numbers.rhs_batch_dimensions();
  *swapped.mutable_rhs_batch_dimensions() = numbers.lhs_batch_dimensions();
  *swapped.mutable_lhs_contracting_dimensions() = numbers.rhs_contracting_dimensions();
  *swapped.mutable_rhs_contracting_dimensions() = numbers.lhs_contracting_dimensions();
  std::unique_ptr<HloInstruction> swapped_dot =
      dot->CloneWithNewOperands(ShapeUtil::PermuteDimensions(permutation, dot->shape()),
                                {dot->mutable_operand(1), dot->mutable_operand(0)});
  DotAttrs* attrs = cast<HloDotInstruction>(swapped_dot.get())->mutable_attrs();
  attrs->dot_dimension_numbers = swapped;
  auto& precisions = *attrs->precision_config.mutable_operand_precision();
  std::reverse(precisions.begin(), precisions.end());
  HloInstruction* value = computation->AddInstruction(std::move(swapped_dot));

  // The chain again, bottom up, on the swapped dot's layout of the values.
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    HloInstruction* op = it->first;
    const Shape shape = ShapeUtil::PermuteDimensions(permutation, op->shape());
    std::vector<HloInstruction*> operands;
    operands.reserve(op->operand_count());
    for (int64_t i = 0; i < op->operand_count(); ++i) {
      HloInstruction* operand = op->mutable_operand(i);
      operands.push_back(
          i == it->second
              ? value
              : MakeBroadcast(operand->mutable_operand(0),
                              ShapeUtil::PermuteDimensions(permutation, operand->shape()), {}));
    }
    value = computation->AddInstruction(op->CloneWithNewOperands(shape, operands));
  }
  bool identity = true;
  for (size_t i = 0; i < residual.size(); ++i) identity &= residual[i] == static_cast<int64_t>(i);
  if (!identity) value = MakeTranspose(value, residual);
  AXLE_RETURN_IF_ERROR(computation->ReplaceInstruction(transpose, value));
  return true;
}

}  // namespace

absl::StatusOr<bool> DotOutputTranspose::Run(HloModule* module) {
  bool changed = false;
  for (HloComputation* computation : module->computations()) {
    if (computation->IsFusionComputation()) continue;
    for (HloInstruction* instruction : computation->MakeInstructionPostOrder()) {
      if (instruction->opcode() != HloOpcode::kTranspose) continue;
      AXLE_ASSIGN_OR_RETURN(bool rewritten, Rewrite(computation, instruction));
      changed = changed || rewritten;
    }
  }
  return changed;
}

}  // namespace axle::cpu
