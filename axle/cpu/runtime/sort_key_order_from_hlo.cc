//===- sort_key_order_from_hlo.cc - a comparator's native key order ------===//
#include <optional>

#include "axle/cpu/runtime/sort_key_order.h"
#include "axle/hlo/ir/hlo_instructions.h"

namespace axle::cpu {
namespace {

using Replacement = SortKeyOrder::Replacement;

// The value of a scalar constant of a float or integer type as a double
// (exact for every f32 and for integers below 2^53), or nullopt.
std::optional<double> ScalarConstant(const HloInstruction* instruction) {
  const auto* constant = dyn_cast<HloConstantInstruction>(instruction);
  if (constant == nullptr || !constant->shape().IsArray() || constant->shape().rank() != 0) {
    return std::nullopt;
  }
  return constant->literal().GetAsDouble(0);
}

bool IsParameter(const HloInstruction* instruction, int64_t number) {
  const auto* parameter = dyn_cast<HloParameterInstruction>(instruction);
  return parameter != nullptr && parameter->parameter_number() == number;
}

// Matches K(x) (the file comment): the parameter K reads, with K's
// replacements appended outermost first; nullopt if `value` is no such chain.
std::optional<int64_t> MatchKey(const HloInstruction* value, std::vector<Replacement>& out) {
  if (const auto* parameter = dyn_cast<HloParameterInstruction>(value)) {
    return parameter->parameter_number();
  }
  if (value->opcode() != HloOpcode::kSelect) return std::nullopt;
  const auto* condition = dyn_cast<HloCompareInstruction>(value->operand(0));
  std::optional<double> replacement = ScalarConstant(value->operand(1));
  // A total-order compare would tell -0 from +0 and never find x != x.
  if (condition == nullptr || !replacement ||
      condition->type() == ComparisonType::kFloatTotalOrder) {
    return std::nullopt;
  }
  Replacement step;
  step.replacement = *replacement;
  const size_t position = out.size();
  out.push_back(step);
  std::optional<int64_t> parameter = MatchKey(value->operand(2), out);
  if (!parameter) return std::nullopt;
  const HloInstruction* lhs = condition->operand(0);
  const HloInstruction* rhs = condition->operand(1);
  if (condition->direction() == ComparisonDirection::kNe && lhs == rhs &&
      IsParameter(lhs, *parameter)) {
    out[position].nan = true;
    return parameter;
  }
  if (condition->direction() != ComparisonDirection::kEq) return std::nullopt;
  if (IsParameter(rhs, *parameter)) std::swap(lhs, rhs);
  std::optional<double> compared = ScalarConstant(rhs);
  if (!IsParameter(lhs, *parameter) || !compared) return std::nullopt;
  out[position].value = *compared;
  return parameter;
}

bool SameReplacements(const std::vector<Replacement>& a, const std::vector<Replacement>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    auto same = [](double x, double y) {
      return std::bit_cast<uint64_t>(x) == std::bit_cast<uint64_t>(y);
    };
    if (a[i].nan != b[i].nan || !same(a[i].value, b[i].value) ||
        !same(a[i].replacement, b[i].replacement)) {
      return false;
    }
  }
  return true;
}

bool IsSupportedFloat(PrimitiveType type) { return type == F32 || type == F64; }

// Whether `type` orders the operands as `element` needs: floats by the
// total order, integers by their own signedness.
bool IsTotalOrderFor(ComparisonType type, PrimitiveType element) {
  if (IsSupportedFloat(element)) return type == ComparisonType::kFloatTotalOrder;
  if (type == ComparisonType::kDefault) return true;
  return type == (primitive_util::IsSignedIntegralType(element) ? ComparisonType::kSigned
                                                                : ComparisonType::kUnsigned);
}

}  // namespace

std::optional<SortKeyOrder> MatchSortKeyOrder(const HloComputation& comparator) {
  const auto* root = dyn_cast<HloCompareInstruction>(comparator.root_instruction());
  if (root == nullptr || comparator.num_parameters() < 2) return std::nullopt;
  const PrimitiveType type = comparator.parameter_instruction(0)->shape().element_type();
  if (!SortKeyOrder::Supports(type)) return std::nullopt;
  if (comparator.parameter_instruction(1)->shape().element_type() != type) return std::nullopt;
  const ComparisonDirection direction = root->direction();
  if (direction != ComparisonDirection::kLt && direction != ComparisonDirection::kGt) {
    return std::nullopt;
  }
  // A float compare under the partial order orders NaN-free keys only.
  const bool partial = IsSupportedFloat(type) && (root->type() == ComparisonType::kDefault ||
                                                  root->type() == ComparisonType::kFloat);
  if (!partial && !IsTotalOrderFor(root->type(), type)) return std::nullopt;
  // Every instruction of the chain must be a scalar of the key's type
  // (a convert or another type in between is not matched).
  std::vector<Replacement> lhs_steps, rhs_steps;
  std::optional<int64_t> lhs = MatchKey(root->operand(0), lhs_steps);
  std::optional<int64_t> rhs = MatchKey(root->operand(1), rhs_steps);
  if (!lhs || !rhs || !SameReplacements(lhs_steps, rhs_steps)) return std::nullopt;
  bool descending = direction == ComparisonDirection::kGt;
  if (*lhs == 1 && *rhs == 0) {
    descending = !descending;
  } else if (*lhs != 0 || *rhs != 1) {
    return std::nullopt;
  }
  for (const HloInstruction* operand : root->operands()) {
    if (operand->shape().element_type() != type) return std::nullopt;
  }
  // Under the partial order -0 and +0 are equivalent: one key, +0's.
  if (partial) lhs_steps.push_back(Replacement{false, 0.0, 0.0});
  return SortKeyOrder(type, descending, std::move(lhs_steps), /*nan_free_only=*/partial);
}

}  // namespace axle::cpu
