//===- reshape_mover.cc - Sink reshapes and transposes past elementwise ops ===//
#include "axle/hlo/transforms/reshape_mover.h"

#include <algorithm>
#include <vector>

#include "axle/base/status_macros.h"
#include "axle/core/shape_util.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/transforms/hlo_creation_utils.h"

namespace axle {
namespace {

bool IsRearrangement(const HloInstruction* instruction) {
  return instruction->opcode() == HloOpcode::kReshape ||
         instruction->opcode() == HloOpcode::kTranspose;
}

bool HasDefaultLayout(const HloInstruction* instruction) {
  return instruction->shape().IsArray() && ShapeUtil::HasDescendingLayout(instruction->shape());
}

// Two rearrangements move elements the same way (element types may differ).
bool SameRearrangement(const HloInstruction* a, const HloInstruction* b) {
  if (a->opcode() != b->opcode() ||
      a->operand(0)->shape().dimensions() != b->operand(0)->shape().dimensions() ||
      a->shape().dimensions() != b->shape().dimensions()) {
    return false;
  }
  return a->opcode() != HloOpcode::kTranspose ||
         cast<HloDimensionsInstruction>(a)->dimensions() ==
             cast<HloDimensionsInstruction>(b)->dimensions();
}

bool IsScalarBroadcast(const HloInstruction* instruction) {
  return instruction->opcode() == HloOpcode::kBroadcast &&
         instruction->operand(0)->shape().rank() == 0;
}

// For a broadcast operand of an elementwise op whose other operands are
// transposes by `permutation`: the broadcast dimensions the same broadcast
// has into the transposes' input shape (operand dim k lands on result dim
// D[k], which is input dim permutation[D[k]]). Empty unless they come out
// in increasing order, i.e. the broadcast's operand need not be transposed
// itself (a per-channel scale or bias keeps its one dimension).
std::vector<int64_t> BroadcastDimsBeforeTranspose(const HloInstruction* broadcast,
                                                  const std::vector<int64_t>& permutation) {
  std::vector<int64_t> dims;
  for (int64_t d : cast<HloDimensionsInstruction>(broadcast)->dimensions()) {
    dims.push_back(permutation[d]);
  }
  if (dims.empty() || !std::is_sorted(dims.begin(), dims.end()) ||
      std::adjacent_find(dims.begin(), dims.end()) != dims.end()) {
    return {};
  }
  return dims;
}

// A broadcast operand that moves along with transposes by the permutation
// of `pattern`: a scalar one, or one whose dimensions keep their order.
bool BroadcastMovesWith(const HloInstruction* operand, const HloInstruction* pattern) {
  if (IsScalarBroadcast(operand)) return true;
  if (operand->opcode() != HloOpcode::kBroadcast || pattern->opcode() != HloOpcode::kTranspose ||
      !HasDefaultLayout(operand->operand(0))) {
    return false;
  }
  return !BroadcastDimsBeforeTranspose(operand,
                                       cast<HloDimensionsInstruction>(pattern)->dimensions())
              .empty();
}

// A rearrangement worth moving: of a computed value, not of a constant or a
// broadcast (which are cheap to rearrange where they are).
bool IsNontrivialRearrangement(const HloInstruction* instruction) {
  if (!IsRearrangement(instruction)) return false;
  HloOpcode source = instruction->operand(0)->opcode();
  return source != HloOpcode::kConstant && source != HloOpcode::kBroadcast;
}

// The rearrangement all operands of `instruction` share, or nullptr when the
// instruction is not a candidate.
const HloInstruction* SharedRearrangement(const HloInstruction* instruction) {
  if (!instruction->IsElementwise() || instruction->operand_count() == 0 ||
      instruction->HasSideEffect() || !HasDefaultLayout(instruction) ||
      !instruction->control_predecessors().empty() || !instruction->control_successors().empty() ||
      instruction->shape().is_dynamic()) {
    return nullptr;
  }
  const HloInstruction* pattern = nullptr;
  for (const HloInstruction* operand : instruction->operands()) {
    if (IsNontrivialRearrangement(operand)) {
      pattern = operand;
      break;
    }
  }
  if (pattern == nullptr) return nullptr;
  for (const HloInstruction* operand : instruction->operands()) {
    if (operand->shape().dimensions() != instruction->shape().dimensions() ||
        !HasDefaultLayout(operand)) {
      return nullptr;
    }
    if (BroadcastMovesWith(operand, pattern)) continue;
    if (!IsRearrangement(operand) || !SameRearrangement(operand, pattern) ||
        !HasDefaultLayout(operand->operand(0)) || operand->operand(0)->shape().is_dynamic()) {
      return nullptr;
    }
  }
  return pattern;
}

absl::StatusOr<bool> SinkRearrangement(HloInstruction* instruction, const HloInstruction* pattern) {
  HloComputation* computation = instruction->parent();
  const std::vector<int64_t>& input_dims = pattern->operand(0)->shape().dimensions();
  std::vector<HloInstruction*> operands;
  for (HloInstruction* operand : instruction->operands()) {
    if (operand->opcode() == HloOpcode::kBroadcast) {  // one BroadcastMovesWith accepted
      Shape shape =
          ShapeUtil::MakeShapeWithDescendingLayout(operand->shape().element_type(), input_dims);
      std::vector<int64_t> dims;
      if (!IsScalarBroadcast(operand)) {
        dims = BroadcastDimsBeforeTranspose(operand,
                                            cast<HloDimensionsInstruction>(pattern)->dimensions());
      }
      operands.push_back(MakeBroadcast(operand->mutable_operand(0), shape, dims));
    } else {
      operands.push_back(operand->mutable_operand(0));
    }
  }
  Shape shape =
      ShapeUtil::MakeShapeWithDescendingLayout(instruction->shape().element_type(), input_dims);
  HloInstruction* moved =
      computation->AddInstruction(instruction->CloneWithNewOperands(shape, operands));
  HloInstruction* rearranged;
  if (pattern->opcode() == HloOpcode::kReshape) {
    rearranged = MakeReshape(moved, instruction->shape());
  } else {
    rearranged = MakeTranspose(moved, cast<HloDimensionsInstruction>(pattern)->dimensions());
    *rearranged->mutable_shape() = instruction->shape();
  }
  AXLE_RETURN_IF_ERROR(computation->ReplaceInstruction(instruction, rearranged));
  return true;
}

// A reduce or reduce-window (`opcode`) of one array whose operand is a
// transpose of a computed value: the transpose it reads, or nullptr.
HloInstruction* TransposedInput(HloInstruction* instruction, HloOpcode opcode) {
  if (instruction->opcode() != opcode || instruction->operand_count() != 2 ||
      !HasDefaultLayout(instruction) || !instruction->control_predecessors().empty() ||
      !instruction->control_successors().empty() || instruction->shape().is_dynamic()) {
    return nullptr;
  }
  HloInstruction* transpose = instruction->mutable_operand(0);
  if (transpose->opcode() != HloOpcode::kTranspose || !IsNontrivialRearrangement(transpose) ||
      !HasDefaultLayout(transpose) || !HasDefaultLayout(transpose->operand(0)) ||
      transpose->operand(0)->shape().is_dynamic()) {
    return nullptr;
  }
  return transpose;
}

// reduce-window(transpose(x, p)) -> transpose(reduce-window'(x), p), where
// reduce-window' has the window dimension of result dim i at x's dim p[i].
absl::Status SinkTransposeBelowWindow(HloInstruction* instruction, HloInstruction* transpose) {
  HloComputation* computation = instruction->parent();
  const std::vector<int64_t>& permutation = cast<HloDimensionsInstruction>(transpose)->dimensions();
  const Window& window = cast<HloWindowInstruction>(instruction)->window();
  const int64_t rank = static_cast<int64_t>(permutation.size());
  Window moved_window = window;
  std::vector<int64_t> dims(rank);
  for (int64_t i = 0; i < rank; ++i) {
    moved_window.set_dimensions(permutation[i], window.dimensions(i));
    dims[permutation[i]] = instruction->shape().dimensions(i);
  }
  Shape shape = ShapeUtil::MakeShapeWithDescendingLayout(instruction->shape().element_type(), dims);
  HloInstruction* moved = computation->AddInstruction(instruction->CloneWithNewOperands(
      shape, {transpose->mutable_operand(0), instruction->mutable_operand(1)}));
  cast<HloWindowInstruction>(moved)->mutable_attrs()->window = moved_window;
  HloInstruction* rearranged = MakeTranspose(moved, permutation);
  *rearranged->mutable_shape() = instruction->shape();
  return computation->ReplaceInstruction(instruction, rearranged);
}

// reduce(transpose(x, p), dims D) -> reduce'(x, dims p(D)), transposed when
// the kept dims come out of x in another order than the result has them
// (a global pool over a channels-last value: no transpose at all).
absl::Status FoldTransposeIntoReduce(HloInstruction* instruction, HloInstruction* transpose) {
  HloComputation* computation = instruction->parent();
  const std::vector<int64_t>& permutation = cast<HloDimensionsInstruction>(transpose)->dimensions();
  const std::vector<int64_t>& reduced = cast<HloDimensionsInstruction>(instruction)->dimensions();
  const int64_t rank = static_cast<int64_t>(permutation.size());
  std::vector<bool> is_reduced(rank, false);
  std::vector<int64_t> moved_dims;
  for (int64_t d : reduced) {
    is_reduced[d] = true;
    moved_dims.push_back(permutation[d]);
  }
  std::sort(moved_dims.begin(), moved_dims.end());
  // The result's dims as dims of x, in the result's order, and sorted (the
  // new reduce's order).
  std::vector<int64_t> kept;
  for (int64_t i = 0; i < rank; ++i) {
    if (!is_reduced[i]) kept.push_back(permutation[i]);
  }
  std::vector<int64_t> sorted = kept;
  std::sort(sorted.begin(), sorted.end());
  std::vector<int64_t> moved_shape_dims;
  moved_shape_dims.reserve(sorted.size());
  for (int64_t d : sorted) moved_shape_dims.push_back(transpose->operand(0)->shape().dimensions(d));
  Shape shape = ShapeUtil::MakeShapeWithDescendingLayout(instruction->shape().element_type(),
                                                         moved_shape_dims);
  HloInstruction* moved = computation->AddInstruction(instruction->CloneWithNewOperands(
      shape, {transpose->mutable_operand(0), instruction->mutable_operand(1)}));
  cast<HloDimensionsInstruction>(moved)->mutable_attrs()->dimensions = moved_dims;
  HloInstruction* result = moved;
  if (kept != sorted) {
    // Result dim j is x's dim kept[j], at position rank_of(kept[j]) in sorted.
    std::vector<int64_t> order;
    order.reserve(kept.size());
    for (int64_t d : kept) {
      order.push_back(std::lower_bound(sorted.begin(), sorted.end(), d) - sorted.begin());
    }
    result = MakeTranspose(moved, order);
    *result->mutable_shape() = instruction->shape();
  }
  return computation->ReplaceInstruction(instruction, result);
}

// A concatenate whose operands are all transposes by one permutation, at
// least one of a computed value: that permutation, or nullptr.
const std::vector<int64_t>* SharedConcatTranspose(const HloInstruction* instruction) {
  if (instruction->opcode() != HloOpcode::kConcatenate || !HasDefaultLayout(instruction) ||
      !instruction->control_predecessors().empty() || !instruction->control_successors().empty() ||
      instruction->shape().is_dynamic()) {
    return nullptr;
  }
  const std::vector<int64_t>* permutation = nullptr;
  bool computed = false;
  for (const HloInstruction* operand : instruction->operands()) {
    if (operand->opcode() != HloOpcode::kTranspose || !HasDefaultLayout(operand) ||
        !HasDefaultLayout(operand->operand(0)) || operand->operand(0)->shape().is_dynamic()) {
      return nullptr;
    }
    const std::vector<int64_t>& dims = cast<HloDimensionsInstruction>(operand)->dimensions();
    if (permutation != nullptr && *permutation != dims) return nullptr;
    permutation = &dims;
    computed |= IsNontrivialRearrangement(operand);
  }
  return computed ? permutation : nullptr;
}

// concatenate(transpose(x_i, p)) along d -> transpose(concatenate(x_i)
// along p[d], p): a channel concat of channels-last values (ONNX Concat
// between convolutions) stays channels-last.
absl::Status SinkTransposeBelowConcat(HloInstruction* instruction,
                                      const std::vector<int64_t>& permutation) {
  HloComputation* computation = instruction->parent();
  const int64_t dim = cast<HloDimensionsInstruction>(instruction)->dimensions(0);
  std::vector<HloInstruction*> operands;
  std::vector<int64_t> dims = instruction->operand(0)->operand(0)->shape().dimensions();
  dims[permutation[dim]] = 0;
  for (HloInstruction* operand : instruction->operands()) {
    operands.push_back(operand->mutable_operand(0));
    dims[permutation[dim]] += operand->operand(0)->shape().dimensions(permutation[dim]);
  }
  Shape shape = ShapeUtil::MakeShapeWithDescendingLayout(instruction->shape().element_type(), dims);
  const std::vector<int64_t> moved_dims = {permutation[dim]};
  HloInstruction* moved =
      computation->AddInstruction(instruction->CloneWithNewOperands(shape, operands));
  cast<HloDimensionsInstruction>(moved)->mutable_attrs()->dimensions = moved_dims;
  HloInstruction* rearranged = MakeTranspose(moved, permutation);
  *rearranged->mutable_shape() = instruction->shape();
  return computation->ReplaceInstruction(instruction, rearranged);
}

}  // namespace

absl::StatusOr<bool> ReshapeMover::Run(HloModule* module) {
  bool changed = false;
  constexpr int kMaxSweeps = 32;
  for (int sweep = 0; sweep < kMaxSweeps; ++sweep) {
    bool changed_this_sweep = false;
    for (HloComputation* computation : module->MakeComputationPostOrder()) {
      if (computation->IsFusionComputation()) continue;
      // Replacing an instruction removes only it and operands it alone used,
      // which come earlier in the post order; later entries stay valid.
      for (HloInstruction* instruction : computation->MakeInstructionPostOrder()) {
        if (HloInstruction* transpose = TransposedInput(instruction, HloOpcode::kReduce)) {
          AXLE_RETURN_IF_ERROR(FoldTransposeIntoReduce(instruction, transpose));
          changed_this_sweep = true;
          continue;
        }
        if (HloInstruction* transpose = TransposedInput(instruction, HloOpcode::kReduceWindow)) {
          AXLE_RETURN_IF_ERROR(SinkTransposeBelowWindow(instruction, transpose));
          changed_this_sweep = true;
          continue;
        }
        if (const std::vector<int64_t>* permutation = SharedConcatTranspose(instruction)) {
          const std::vector<int64_t> copy = *permutation;
          AXLE_RETURN_IF_ERROR(SinkTransposeBelowConcat(instruction, copy));
          changed_this_sweep = true;
          continue;
        }
        const HloInstruction* pattern = SharedRearrangement(instruction);
        if (pattern == nullptr) continue;
        AXLE_ASSIGN_OR_RETURN(bool moved, SinkRearrangement(instruction, pattern));
        changed_this_sweep |= moved;
      }
    }
    if (!changed_this_sweep) break;
    changed = true;
  }
  return changed;
}

}  // namespace axle
