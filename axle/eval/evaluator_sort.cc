//===- evaluator_sort.cc - sort and topk -----------------------------------===//
//
// sort orders the rows along one dimension of several same-shaped operands
// by a comparator computation called on (lhs_0, rhs_0, lhs_1, rhs_1, ...).
// It is always stable (is_stable only allows more), and it is a plain merge
// sort that stays in bounds whatever the comparator returns, so a comparator
// that is not a strict weak order (say LT with NaNs) gives some permutation
// rather than undefined behaviour.
//
// topk returns the k largest (or smallest) elements of each row of the last
// dimension and their s32 indices, in order; ties keep the lower index
// first, and floats compare by total order (NaN above +inf).
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <numeric>

#include "axle/base/status_macros.h"
#include "axle/eval/evaluator_internal.h"
#include "axle/eval/hlo_evaluator.h"

namespace axle::eval_internal {
namespace {

// Stable bottom-up merge sort of `order` by less(a, b); `less` may fail.
template <typename Less>
absl::Status MergeSort(std::vector<int64_t>& order, Less&& less) {
  int64_t n = static_cast<int64_t>(order.size());
  std::vector<int64_t> buffer(n);
  for (int64_t width = 1; width < n; width *= 2) {
    for (int64_t lo = 0; lo < n; lo += 2 * width) {
      int64_t mid = std::min(lo + width, n), hi = std::min(lo + 2 * width, n);
      int64_t i = lo, j = mid, k = lo;
      while (i < mid && j < hi) {
        // Take from the right run only when it is strictly less: stability.
        AXLE_ASSIGN_OR_RETURN(bool right_first, less(order[j], order[i]));
        buffer[k++] = right_first ? order[j++] : order[i++];
      }
      while (i < mid) buffer[k++] = order[i++];
      while (j < hi) buffer[k++] = order[j++];
    }
    order.swap(buffer);
  }
  return absl::OkStatus();
}

// A comparator that is one compare of the two parameters of one operand
// (`compare(p2k, p2k+1)`, the common case) runs that compare directly,
// without evaluating the computation.
const HloInstruction* SimpleComparator(const HloComputation& comparator, int64_t* operand,
                                       bool* swapped) {
  const HloInstruction* root = comparator.root_instruction();
  if (root == nullptr || root->opcode() != HloOpcode::kCompare) return nullptr;
  const HloInstruction* a = root->operand(0);
  const HloInstruction* b = root->operand(1);
  if (a->opcode() != HloOpcode::kParameter || b->opcode() != HloOpcode::kParameter) return nullptr;
  int64_t pa = cast<HloParameterInstruction>(a)->parameter_number();
  int64_t pb = cast<HloParameterInstruction>(b)->parameter_number();
  if (pa / 2 != pb / 2 || pa == pb) return nullptr;
  *operand = pa / 2;
  *swapped = pa > pb;
  return root;
}

}  // namespace

absl::StatusOr<Literal> EvaluateSort(HloEvaluator& evaluator, const HloInstruction& instruction,
                                     absl::Span<const Literal* const> operands) {
  if (operands.empty()) return InvalidInstruction(instruction, "needs operands");
  const Shape& shape = operands[0]->shape();
  int64_t dim = cast<HloSortInstruction>(&instruction)->sort_dimension();
  for (size_t i = 0; i < operands.size(); ++i) {
    AXLE_RETURN_IF_ERROR(ExpectArray(instruction, *operands[i], absl::StrCat("operand ", i)));
    if (!ShapeUtil::SameDimensions(operands[i]->shape(), shape)) {
      return InvalidInstruction(instruction, "operands must have the same dimensions");
    }
  }
  if (dim < 0 || dim >= std::max<int64_t>(shape.rank(), 1) || shape.rank() == 0) {
    return InvalidInstruction(instruction,
                              "the sort dimension must be a dimension of the operands");
  }
  const HloComputation& comparator = *instruction.to_apply();
  int64_t length = shape.dimensions(dim);
  int64_t inner = 1, outer = 1;
  for (int64_t d = dim + 1; d < shape.rank(); ++d) inner *= shape.dimensions(d);
  for (int64_t d = 0; d < dim; ++d) outer *= shape.dimensions(d);

  std::vector<Literal> results;
  for (const Literal* operand : operands) results.push_back(operand->Clone());
  std::vector<int64_t> order(length);
  std::vector<Lanes> args(2 * operands.size());
  bool less = false;
  void* out = &less;
  int64_t key_operand = 0;
  bool swapped = false;
  const HloInstruction* simple = SimpleComparator(comparator, &key_operand, &swapped);
  if (simple != nullptr && key_operand >= static_cast<int64_t>(operands.size())) simple = nullptr;
  auto compare = [&](int64_t base, int64_t a, int64_t b) -> absl::StatusOr<bool> {
    if (simple != nullptr) {
      const Literal& key = *operands[key_operand];
      PrimitiveType type = key.shape().element_type();
      int width = primitive_util::ByteWidth(type);
      const auto* data = static_cast<const uint8_t*>(key.untyped_data());
      Lanes lhs{type, data + (base + a * inner) * width, true};
      Lanes rhs{type, data + (base + b * inner) * width, true};
      Lanes pair[2] = {swapped ? rhs : lhs, swapped ? lhs : rhs};
      AXLE_RETURN_IF_ERROR(EvaluateElementwiseLanes(*simple, pair, PRED, &less, 1));
      return less;
    }
    for (size_t k = 0; k < operands.size(); ++k) {
      int width = primitive_util::ByteWidth(operands[k]->shape().element_type());
      const auto* data = static_cast<const uint8_t*>(operands[k]->untyped_data());
      PrimitiveType type = operands[k]->shape().element_type();
      args[2 * k] = Lanes{type, data + (base + a * inner) * width, true};
      args[2 * k + 1] = Lanes{type, data + (base + b * inner) * width, true};
    }
    AXLE_RETURN_IF_ERROR(evaluator.RunLanewise(comparator, args, absl::MakeConstSpan(&out, 1), 1));
    return less;
  };
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      int64_t base = o * length * inner + i;
      std::iota(order.begin(), order.end(), 0);
      AXLE_RETURN_IF_ERROR(
          MergeSort(order, [&](int64_t a, int64_t b) { return compare(base, a, b); }));
      for (size_t k = 0; k < operands.size(); ++k) {
        int width = primitive_util::ByteWidth(operands[k]->shape().element_type());
        const auto* src = static_cast<const uint8_t*>(operands[k]->untyped_data());
        auto* dst = static_cast<uint8_t*>(results[k].untyped_data());
        for (int64_t p = 0; p < length; ++p) {
          std::memcpy(dst + (base + p * inner) * width, src + (base + order[p] * inner) * width,
                      width);
        }
      }
    }
  }
  if (operands.size() == 1 && !instruction.shape().IsTuple()) return std::move(results[0]);
  return Literal::MakeTuple(std::move(results));
}

absl::StatusOr<Literal> EvaluateTopK(const HloInstruction& instruction, const Literal& operand) {
  AXLE_RETURN_IF_ERROR(ExpectArray(instruction, operand, "the operand"));
  const auto& topk = *cast<HloTopKInstruction>(&instruction);
  const Shape& shape = operand.shape();
  if (shape.rank() < 1) return InvalidInstruction(instruction, "the operand must have rank >= 1");
  int64_t length = shape.dimensions(shape.rank() - 1);
  int64_t k = topk.k();
  if (k < 0 || k > length) {
    return InvalidInstruction(instruction,
                              absl::StrCat("k=", k, " but rows have ", length, " elements"));
  }
  if (primitive_util::IsComplexType(shape.element_type())) {
    return InvalidInstruction(instruction, "complex numbers have no order");
  }
  std::vector<int64_t> out_dims = shape.dimensions();
  out_dims.back() = k;
  Literal values(ShapeUtil::MakeShape(shape.element_type(), out_dims));
  Literal indices(ShapeUtil::MakeShape(S32, out_dims));
  int64_t rows = length == 0 ? 0 : operand.element_count() / length;
  // Keys in total order: floats by their total-order bits, integers by value.
  std::vector<int64_t> int_keys(length);
  bool is_float = primitive_util::IsFloatingPointType(shape.element_type());
  int width = primitive_util::ByteWidth(shape.element_type());
  std::vector<int64_t> order(length);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t j = 0; j < length; ++j) {
      int64_t i = r * length + j;
      if (is_float) {
        double v = operand.GetAsDouble(i);
        // Map to a total order: NaN (either sign) above +inf, as XLA's
        // TopK (NaN > everything) does; -0 below +0.
        if (std::isnan(v)) {
          int_keys[j] = INT64_MAX;
        } else {
          int64_t bits = std::bit_cast<int64_t>(v);
          int_keys[j] = bits < 0 ? bits ^ INT64_MAX : bits;
        }
      } else if (primitive_util::IsUnsignedIntegralType(shape.element_type())) {
        uint64_t u = *operand.GetIntegralAsU64(i);
        int_keys[j] = static_cast<int64_t>(u ^ (uint64_t{1} << 63));
      } else {
        int_keys[j] = *operand.GetIntegralAsS64(i);
      }
    }
    std::iota(order.begin(), order.end(), 0);
    if (topk.largest()) {
      std::stable_sort(order.begin(), order.end(),
                       [&](int64_t a, int64_t b) { return int_keys[a] > int_keys[b]; });
    } else {
      std::stable_sort(order.begin(), order.end(),
                       [&](int64_t a, int64_t b) { return int_keys[a] < int_keys[b]; });
    }
    for (int64_t j = 0; j < k; ++j) {
      std::memcpy(
          static_cast<uint8_t*>(values.untyped_data()) + (r * k + j) * width,
          static_cast<const uint8_t*>(operand.untyped_data()) + (r * length + order[j]) * width,
          width);
      indices.data<int32_t>()[r * k + j] = static_cast<int32_t>(order[j]);
    }
  }
  std::vector<Literal> parts;
  parts.push_back(std::move(values));
  parts.push_back(std::move(indices));
  return Literal::MakeTuple(std::move(parts));
}

}  // namespace axle::eval_internal
