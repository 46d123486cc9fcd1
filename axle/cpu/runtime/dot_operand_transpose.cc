// Dot operands transposed into the order the matmul reads in place (see
// dot_operand_transpose.h).
#include "axle/cpu/runtime/dot_operand_transpose.h"

#include <algorithm>

#include "axle/base/status_macros.h"
#include "axle/core/shape_util.h"
#include "axle/hlo/analysis/dot_dimensions.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/pass/rewrite_each_instruction.h"
#include "axle/hlo/transforms/hlo_creation_utils.h"

namespace axle::cpu {
namespace {

// Dots of at most this many multiply-adds run as the emitted loop, which
// reads any strides (dot_plan.h: kMaxLoopDotMultiplyAdds).
constexpr int64_t kMinMultiplyAdds = int64_t{1} << 17;

// `dims` without those of size one in `shape`.
std::vector<int64_t> NonTrivial(const Shape& shape, absl::Span<const int64_t> dims) {
  std::vector<int64_t> kept;
  for (int64_t d : dims) {
    if (shape.dimensions(d) != 1) kept.push_back(d);
  }
  return kept;
}

std::vector<int64_t> Concat(absl::Span<const int64_t> a, absl::Span<const int64_t> b,
                            absl::Span<const int64_t> c) {
  std::vector<int64_t> all(a.begin(), a.end());
  all.insert(all.end(), b.begin(), b.end());
  all.insert(all.end(), c.begin(), c.end());
  return all;
}

std::vector<int64_t> Iota(int64_t begin, int64_t count) {
  std::vector<int64_t> values(count);
  for (int64_t i = 0; i < count; ++i) values[i] = begin + i;
  return values;
}

bool IsIdentity(absl::Span<const int64_t> permutation) {
  for (size_t i = 0; i < permutation.size(); ++i) {
    if (permutation[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

// Whether an operand transposed for the matmul puts its contracting dims
// after its free dims ([B, M, K] lhs, [B, N, K] rhs) rather than before
// them: whichever group holds the operand's minor non-trivial dimension
// goes last, so that dimension stays minor and the transpose moves whole
// rows (JAX's attention: k as [b, k, h, d] becomes [b, h, k, d], a copy of
// 64-element rows, not [b, h, d, k], a transpose of every element). With
// the minor dimension in neither group (a batch dim) or no non-trivial
// dims, `fallback`: the lhs as [B, M, K], the rhs as [B, K, N].
bool ContractingLast(const Shape& shape, absl::Span<const int64_t> free,
                     absl::Span<const int64_t> contracting, bool fallback) {
  for (int64_t d = shape.rank() - 1; d >= 0; --d) {
    if (shape.dimensions(d) == 1) continue;
    if (std::find(contracting.begin(), contracting.end(), d) != contracting.end()) return true;
    if (std::find(free.begin(), free.end(), d) != free.end()) return false;
    return fallback;
  }
  return fallback;
}

// Transposes `*operand` (unless it is so already) to its batch dims, then
// its free and contracting dims in ContractingLast's order; returns where
// its contracting dims are then.
std::vector<int64_t> TransposeForMatmul(HloInstruction** operand, absl::Span<const int64_t> batch,
                                        absl::Span<const int64_t> free,
                                        absl::Span<const int64_t> contracting, bool fallback) {
  const bool contracting_last = ContractingLast((*operand)->shape(), free, contracting, fallback);
  std::vector<int64_t> permutation =
      contracting_last ? Concat(batch, free, contracting) : Concat(batch, contracting, free);
  if (!IsIdentity(permutation)) *operand = MakeTranspose(*operand, permutation);
  const int64_t first = static_cast<int64_t>(batch.size()) +
                        (contracting_last ? static_cast<int64_t>(free.size()) : 0);
  return Iota(first, static_cast<int64_t>(contracting.size()));
}

// Dots above this many multiply-adds run on oneDNN's matmul, which reads
// either order of each operand at full speed (below it the small-dot
// kernel's tiles want a dense rhs: small_dot_thunk.cc's limit).
constexpr int64_t kMinFoldMultiplyAdds = int64_t{1} << 21;

// An operand `transpose(x)` of `dot` that reads in place as x with its dims
// renumbered: x and its batch and contracting dims (the free dims keep
// their order, so the result's does too); null when it does not.
struct FoldedOperand {
  HloInstruction* value = nullptr;
  std::vector<int64_t> batch, contracting;
};

// The operand `transpose(x, permutation)` of rank `rank` read as x.
FoldedOperand FoldPermutation(HloInstruction* x, absl::Span<const int64_t> permutation,
                              int64_t rank, absl::Span<const int64_t> batch,
                              absl::Span<const int64_t> contracting, bool is_lhs) {
  if (!ShapeUtil::HasDescendingLayout(x->shape())) return {};
  auto map = [&](absl::Span<const int64_t> dims) {
    std::vector<int64_t> mapped;
    mapped.reserve(dims.size());
    for (int64_t d : dims) mapped.push_back(permutation[d]);
    return mapped;
  };
  FoldedOperand folded{x, map(batch), map(contracting)};
  std::vector<int64_t> free = map(DotFreeDimensions(rank, batch, contracting));
  if (!std::is_sorted(free.begin(), free.end())) return {};
  const bool in_place =
      is_lhs ? DotOperandReadsInPlace(x->shape(), folded.batch, free, folded.contracting)
             : DotOperandReadsInPlace(x->shape(), folded.batch, folded.contracting, free);
  return in_place ? folded : FoldedOperand{};
}

// Whether `transpose`'s minor non-trivial dimension is its operand's (it
// copies whole rows).
bool KeepsMinor(const HloInstruction* transpose) {
  const Shape& shape = transpose->shape();
  const std::vector<int64_t>& permutation = cast<HloDimensionsInstruction>(transpose)->dimensions();
  const Shape& from = transpose->operand(0)->shape();
  int64_t from_minor = -1;
  for (int64_t d = from.rank() - 1; d >= 0 && from_minor < 0; --d) {
    if (from.dimensions(d) != 1) from_minor = d;
  }
  for (int64_t d = shape.rank() - 1; d >= 0; --d) {
    if (shape.dimensions(d) != 1) return permutation[d] == from_minor;
  }
  return true;
}

// Of two transposes of one value, the one the other folds into: the one
// that keeps the minor dimension minor (the cheaper copy), else the first.
bool Preferred(const HloInstruction* a, const HloInstruction* b) {
  const bool a_rows = KeepsMinor(a), b_rows = KeepsMinor(b);
  if (a_rows != b_rows) return a_rows;
  return a->unique_id() < b->unique_id();
}

bool HasDotUser(const HloInstruction* instruction) {
  for (const HloInstruction* user : instruction->users()) {
    if (user->opcode() == HloOpcode::kDot) return true;
  }
  return false;
}

FoldedOperand FoldTranspose(HloInstruction* operand, absl::Span<const int64_t> batch,
                            absl::Span<const int64_t> contracting, bool is_lhs) {
  if (operand->opcode() != HloOpcode::kTranspose) return {};
  HloInstruction* x = operand->mutable_operand(0);
  const std::vector<int64_t>& permutation = cast<HloDimensionsInstruction>(operand)->dimensions();
  const int64_t rank = operand->shape().rank();
  FoldedOperand folded = FoldPermutation(x, permutation, rank, batch, contracting, is_lhs);
  if (folded.value != nullptr) return folded;
  // Another transpose of x that a dot reads (so it is computed anyway) and
  // that this operand would fold into: attention's k is recorded both as
  // [b*h, s, d] (the gradient's dot) and as its transpose [b*h, d, s] (the
  // scores' dot), each a copy of the same projection.
  for (HloInstruction* sibling : x->users()) {
    if (sibling == operand || sibling->opcode() != HloOpcode::kTranspose || !HasDotUser(sibling) ||
        !Preferred(sibling, operand)) {
      continue;
    }
    // operand = transpose(sibling, q) with q[i] = inverse(p2)[p1[i]].
    const std::vector<int64_t>& p2 = cast<HloDimensionsInstruction>(sibling)->dimensions();
    std::vector<int64_t> inverse(p2.size());
    for (size_t j = 0; j < p2.size(); ++j) inverse[p2[j]] = static_cast<int64_t>(j);
    std::vector<int64_t> composed(permutation.size());
    for (size_t i = 0; i < permutation.size(); ++i) composed[i] = inverse[permutation[i]];
    folded = FoldPermutation(sibling, composed, rank, batch, contracting, is_lhs);
    if (folded.value != nullptr) return folded;
  }
  return {};
}

// Folds `dot`'s transposed operands that read in place untransposed (a
// Linear layer's `x @ w.t()` and the transposes of its gradients): the
// transpose, a pass over the whole operand on every run, goes unless
// something else reads it. The new dot, or null when none folds.
absl::StatusOr<HloInstruction*> FoldTransposes(HloComputation* computation, HloInstruction* dot) {
  const DotDimensionNumbers& numbers = cast<HloDotInstruction>(dot)->dot_dimension_numbers();
  const Shape& lhs_shape = dot->operand(0)->shape();
  const PrimitiveType type = lhs_shape.element_type();
  if ((type != F32 && type != BF16) || dot->operand(1)->shape().element_type() != type ||
      !ShapeUtil::HasDescendingLayout(dot->shape())) {
    return nullptr;
  }
  int64_t contraction = 1;
  for (int64_t d : numbers.lhs_contracting_dimensions()) contraction *= lhs_shape.dimensions(d);
  if (ShapeUtil::ElementsIn(dot->shape()) * contraction <= kMinFoldMultiplyAdds) return nullptr;
  FoldedOperand lhs = FoldTranspose(dot->mutable_operand(0), numbers.lhs_batch_dimensions(),
                                    numbers.lhs_contracting_dimensions(), /*is_lhs=*/true);
  FoldedOperand rhs = FoldTranspose(dot->mutable_operand(1), numbers.rhs_batch_dimensions(),
                                    numbers.rhs_contracting_dimensions(), /*is_lhs=*/false);
  if (lhs.value == nullptr && rhs.value == nullptr) return nullptr;
  DotDimensionNumbers renumbered = numbers;
  if (lhs.value != nullptr) {
    *renumbered.mutable_lhs_batch_dimensions() = lhs.batch;
    *renumbered.mutable_lhs_contracting_dimensions() = lhs.contracting;
  }
  if (rhs.value != nullptr) {
    *renumbered.mutable_rhs_batch_dimensions() = rhs.batch;
    *renumbered.mutable_rhs_contracting_dimensions() = rhs.contracting;
  }
  std::unique_ptr<HloInstruction> replacement = dot->CloneWithNewOperands(
      dot->shape(), {lhs.value != nullptr ? lhs.value : dot->mutable_operand(0),
                     rhs.value != nullptr ? rhs.value : dot->mutable_operand(1)});
  cast<HloDotInstruction>(replacement.get())->mutable_attrs()->dot_dimension_numbers = renumbered;
  HloInstruction* folded = computation->AddInstruction(std::move(replacement));
  AXLE_RETURN_IF_ERROR(computation->ReplaceInstruction(dot, folded));
  return folded;
}

// Rewrites `dot` when an operand needs it; whether it did.
absl::StatusOr<bool> Rewrite(HloComputation* computation, HloInstruction* dot) {
  const auto* typed = cast<HloDotInstruction>(dot);
  const DotDimensionNumbers& numbers = typed->dot_dimension_numbers();
  HloInstruction* lhs = dot->mutable_operand(0);
  HloInstruction* rhs = dot->mutable_operand(1);
  const Shape& lhs_shape = lhs->shape();
  const Shape& rhs_shape = rhs->shape();
  const PrimitiveType type = lhs_shape.element_type();
  if ((type != F32 && type != BF16) || rhs_shape.element_type() != type ||
      !ShapeUtil::HasDescendingLayout(lhs_shape) || !ShapeUtil::HasDescendingLayout(rhs_shape) ||
      !ShapeUtil::HasDescendingLayout(dot->shape())) {
    return false;
  }
  const std::vector<int64_t>& lhs_batch = numbers.lhs_batch_dimensions();
  const std::vector<int64_t>& rhs_batch = numbers.rhs_batch_dimensions();
  const std::vector<int64_t>& lhs_contracting = numbers.lhs_contracting_dimensions();
  const std::vector<int64_t>& rhs_contracting = numbers.rhs_contracting_dimensions();
  const std::vector<int64_t> lhs_free =
      DotFreeDimensions(lhs_shape.rank(), lhs_batch, lhs_contracting);
  const std::vector<int64_t> rhs_free =
      DotFreeDimensions(rhs_shape.rank(), rhs_batch, rhs_contracting);
  // Multiply-adds: every output element sums the contraction.
  int64_t contraction = 1;
  for (int64_t d : lhs_contracting) contraction *= lhs_shape.dimensions(d);
  if (ShapeUtil::ElementsIn(dot->shape()) * contraction <= kMinMultiplyAdds) return false;
  const bool lhs_in_place = DotOperandReadsInPlace(lhs_shape, lhs_batch, lhs_free, lhs_contracting);
  const bool rhs_in_place = DotOperandReadsInPlace(rhs_shape, rhs_batch, rhs_contracting, rhs_free);
  if (lhs_in_place && rhs_in_place) return false;
  const int64_t batch = static_cast<int64_t>(lhs_batch.size());
  DotDimensionNumbers renumbered = numbers;
  // Each operand keeps its minor dimension minor where it can (see
  // ContractingLast): the transpose then copies whole rows.
  if (!lhs_in_place) {
    *renumbered.mutable_lhs_batch_dimensions() = Iota(0, batch);
    *renumbered.mutable_lhs_contracting_dimensions() =
        TransposeForMatmul(&lhs, lhs_batch, lhs_free, lhs_contracting, /*fallback=*/true);
  }
  if (!rhs_in_place) {
    *renumbered.mutable_rhs_batch_dimensions() = Iota(0, batch);
    *renumbered.mutable_rhs_contracting_dimensions() =
        TransposeForMatmul(&rhs, rhs_batch, rhs_free, rhs_contracting, /*fallback=*/false);
  }
  if (lhs == dot->operand(0) && rhs == dot->operand(1)) return false;
  std::unique_ptr<HloInstruction> replacement = dot->CloneWithNewOperands(dot->shape(), {lhs, rhs});
  cast<HloDotInstruction>(replacement.get())->mutable_attrs()->dot_dimension_numbers = renumbered;
  AXLE_RETURN_IF_ERROR(
      computation->ReplaceInstruction(dot, computation->AddInstruction(std::move(replacement))));
  return true;
}

}  // namespace

bool DotOperandReadsInPlace(const Shape& shape, absl::Span<const int64_t> batch,
                            absl::Span<const int64_t> first, absl::Span<const int64_t> second) {
  // With a descending layout a dim's position is its number: the dims read
  // in place are those whose groups, laid end to end, list the non-trivial
  // dims in ascending order.
  const std::vector<int64_t> b = NonTrivial(shape, batch);
  const std::vector<int64_t> f = NonTrivial(shape, first);
  const std::vector<int64_t> s = NonTrivial(shape, second);
  auto ascending = [](const std::vector<int64_t>& dims) {
    return std::is_sorted(dims.begin(), dims.end()) &&
           std::adjacent_find(dims.begin(), dims.end()) == dims.end();
  };
  return ascending(Concat(b, f, s)) || ascending(Concat(b, s, f));
}

absl::StatusOr<bool> DotOperandTranspose::Run(HloModule* module) {
  return RewriteEachInstruction(
      module, [](HloComputation* computation, HloInstruction* instruction) -> absl::StatusOr<bool> {
        if (instruction->opcode() != HloOpcode::kDot || instruction->operand_count() != 2 ||
            !instruction->shape().IsArray()) {
          return false;
        }
        AXLE_ASSIGN_OR_RETURN(HloInstruction * folded, FoldTransposes(computation, instruction));
        // The folded dot's other operand may still need a transpose.
        AXLE_ASSIGN_OR_RETURN(const bool rewritten,
                              Rewrite(computation, folded != nullptr ? folded : instruction));
        return folded != nullptr || rewritten;
      });
}

}  // namespace axle::cpu
