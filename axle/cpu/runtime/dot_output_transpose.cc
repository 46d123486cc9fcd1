// A transposed dot result computed as the dot with its operands swapped
// (see dot_output_transpose.h).
#include "axle/cpu/runtime/dot_output_transpose.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
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

// The swap permutation of `dot` when swapping it pays (see the header):
// two operands, free dimensions on both sides with at least
// kMinFreeElements each, a descending layout.
std::optional<std::vector<int64_t>> SwapPermutationFor(const HloDotInstruction& dot) {
  if (dot.operand_count() != 2 || !dot.shape().IsArray() ||
      !ShapeUtil::HasDescendingLayout(dot.shape())) {
    return std::nullopt;
  }
  const DotDimensionNumbers& numbers = dot.dot_dimension_numbers();
  const auto batch = static_cast<int64_t>(numbers.lhs_batch_dimensions().size());
  const int64_t contracting = static_cast<int64_t>(numbers.lhs_contracting_dimensions().size());
  const int64_t lhs_free = dot.operand(0)->shape().rank() - batch - contracting;
  const int64_t rhs_free = dot.operand(1)->shape().rank() - batch - contracting;
  if (lhs_free == 0 || rhs_free == 0) return std::nullopt;
  // A skinny result (few rows or columns) transposes cheaply, and its dot
  // runs on the small-row kernel only in its own orientation.
  // The result's dims [begin, end) hold this many elements.
  auto elements = [&](int64_t begin, int64_t end) {
    int64_t count = 1;
    for (int64_t d = begin; d < end; ++d) count *= dot.shape().dimensions(d);
    return count;
  };
  if (elements(batch, batch + lhs_free) < kMinFreeElements ||
      elements(batch + lhs_free, batch + lhs_free + rhs_free) < kMinFreeElements) {
    return std::nullopt;
  }
  return SwapPermutation(batch, lhs_free, rhs_free);
}

// `dot` with its operands swapped, whose result is `dot`'s permuted by
// `permutation` (SwapPermutationFor).
HloInstruction* AddSwappedDot(HloComputation* computation, HloDotInstruction* dot,
                              const std::vector<int64_t>& permutation) {
  const DotDimensionNumbers& numbers = dot->dot_dimension_numbers();
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
  return computation->AddInstruction(std::move(swapped_dot));
}

// Elementwise `op` on the swapped orientation: `swapped[i]` for its
// operand i when set, else that operand, a scalar broadcast, broadcast to
// the permuted shape.
HloInstruction* AddSwappedElementwise(HloComputation* computation, HloInstruction* op,
                                      const std::vector<HloInstruction*>& swapped,
                                      const std::vector<int64_t>& permutation) {
  std::vector<HloInstruction*> operands;
  operands.reserve(op->operand_count());
  for (int64_t i = 0; i < op->operand_count(); ++i) {
    HloInstruction* operand = op->mutable_operand(i);
    operands.push_back(
        swapped[i] != nullptr
            ? swapped[i]
            : MakeBroadcast(operand->mutable_operand(0),
                            ShapeUtil::PermuteDimensions(permutation, operand->shape()), {}));
  }
  return computation->AddInstruction(
      op->CloneWithNewOperands(ShapeUtil::PermuteDimensions(permutation, op->shape()), operands));
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
  if (dot->user_count() != 1 || !ShapeUtil::HasDescendingLayout(transpose->shape())) return false;
  const std::optional<std::vector<int64_t>> swap = SwapPermutationFor(*dot);
  if (!swap.has_value()) return false;
  const std::vector<int64_t>& permutation = *swap;
  // The transpose as one of the swapped dot's result: identity when it is
  // the swap itself; otherwise taken only when it keeps the swapped
  // result's minor dimension minor (see the header).
  const std::vector<int64_t>& dims = cast<HloDimensionsInstruction>(transpose)->dimensions();
  if (dims.size() != permutation.size() || dims.back() != permutation.back()) return false;
  std::vector<int64_t> inverse(permutation.size());
  for (size_t i = 0; i < permutation.size(); ++i) inverse[permutation[i]] = static_cast<int64_t>(i);
  std::vector<int64_t> residual(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) residual[i] = inverse[dims[i]];

  HloInstruction* value = AddSwappedDot(computation, dot, permutation);

  // The chain again, bottom up, on the swapped dot's layout of the values.
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    HloInstruction* op = it->first;
    std::vector<HloInstruction*> operands;
    operands.reserve(op->operand_count());
    for (int64_t i = 0; i < op->operand_count(); ++i) {
      operands.push_back(i == it->second ? value : nullptr);
    }
    value = AddSwappedElementwise(computation, op, operands, permutation);
  }
  bool identity = true;
  for (size_t i = 0; i < residual.size(); ++i) identity &= residual[i] == static_cast<int64_t>(i);
  if (!identity) value = MakeTranspose(value, residual);
  AXLE_RETURN_IF_ERROR(computation->ReplaceInstruction(transpose, value));
  return true;
}

// Rewrites the values computed from `dot` when every one of them is used
// only by elementwise ops over such values and scalar broadcasts, and in
// the end only by transposes of the swap permutation: the whole region then
// runs on the swapped dot's orientation and the transposes go. (The
// algebraic simplifier sinks a transpose below elementwise ops, so that
// Adam's `m * b1 + transpose(g) * (1 - b1)`, `v * b2 + transpose(g) *
// transpose(g) * (1 - b2)` and the gradient itself, a result, leave the
// dot with several users.) `order` is the computation's post order.
absl::StatusOr<bool> RewriteRegion(HloComputation* computation, HloDotInstruction* dot,
                                   const std::vector<HloInstruction*>& order) {
  if (dot->user_count() < 2) return false;  // one user: Rewrite's case
  const std::optional<std::vector<int64_t>> swap = SwapPermutationFor(*dot);
  if (!swap.has_value()) return false;
  const std::vector<int64_t>& permutation = *swap;
  absl::flat_hash_set<const HloInstruction*> region = {dot};
  std::vector<HloInstruction*> members = {dot}, transposes;
  // In post order, an elementwise op joins once every operand it has is in
  // the region or a scalar broadcast.
  for (HloInstruction* instruction : order) {
    bool reads_region = false, reads_other = false;
    for (const HloInstruction* operand : instruction->operands()) {
      if (region.contains(operand)) {
        reads_region = true;
      } else if (!IsScalarBroadcast(*operand)) {
        reads_other = true;
      }
    }
    if (!reads_region) continue;
    if (instruction->opcode() == HloOpcode::kTranspose &&
        cast<HloDimensionsInstruction>(instruction)->dimensions() == permutation &&
        ShapeUtil::HasDescendingLayout(instruction->shape())) {
      transposes.push_back(instruction);
      continue;
    }
    if (reads_other || !instruction->IsElementwise() || !instruction->shape().IsArray() ||
        instruction->HasSideEffect()) {
      return false;  // a user needs the dot's own orientation
    }
    region.insert(instruction);
    members.push_back(instruction);
  }
  for (const HloInstruction* member : members) {
    if (member == computation->root_instruction()) return false;
    for (const HloInstruction* user : member->users()) {
      if (!region.contains(user) && user->opcode() != HloOpcode::kTranspose) return false;
    }
  }
  if (transposes.empty()) return false;
  absl::flat_hash_map<const HloInstruction*, HloInstruction*> swapped;
  swapped[dot] = AddSwappedDot(computation, dot, permutation);
  for (size_t i = 1; i < members.size(); ++i) {
    HloInstruction* op = members[i];
    std::vector<HloInstruction*> operands(op->operand_count(), nullptr);
    for (int64_t j = 0; j < op->operand_count(); ++j) {
      auto it = swapped.find(op->operand(j));
      if (it != swapped.end()) operands[j] = it->second;
    }
    swapped[op] = AddSwappedElementwise(computation, op, operands, permutation);
  }
  for (HloInstruction* transpose : transposes) {
    AXLE_RETURN_IF_ERROR(
        computation->ReplaceInstruction(transpose, swapped.at(transpose->operand(0))));
  }
  // The last replacement removed the old region, unused by then, with the
  // scalar broadcasts only it read (ReplaceInstruction).
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
    // Each region rewrite changes the order: start again until none is left.
    for (bool rewritten = true; rewritten;) {
      rewritten = false;
      const std::vector<HloInstruction*> order = computation->MakeInstructionPostOrder();
      for (HloInstruction* instruction : order) {
        if (instruction->opcode() != HloOpcode::kDot) continue;
        AXLE_ASSIGN_OR_RETURN(
            rewritten, RewriteRegion(computation, cast<HloDotInstruction>(instruction), order));
        if (rewritten) break;
      }
      changed = changed || rewritten;
    }
  }
  return changed;
}

}  // namespace axle::cpu
