//===- sort_key_order.cc - sort comparators that order by a native key ----===//
#include "axle/cpu/runtime/sort_key_order.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <optional>
#include <type_traits>

#include "axle/cpu/runtime/integer_element.h"
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

// Flips a key of `bits` significant bits for a descending order.
uint64_t Flip(uint64_t key, int bits) {
  const uint64_t mask = bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
  return ~key & mask;
}

}  // namespace

template <typename Float, typename Bits>
void SortKeyOrder::FloatKeys(const char* data, int64_t count, int64_t stride,
                             uint64_t* keys) const {
  constexpr int kBits = sizeof(Bits) * 8;
  constexpr Bits kSign = Bits{1} << (kBits - 1);
  for (int64_t k = 0; k < count; ++k) {
    Float x;
    std::memcpy(&x, data + k * stride * static_cast<int64_t>(sizeof(Float)), sizeof(Float));
    for (const Replacement& step : replacements_) {
      if (step.nan ? std::isnan(x) : x == static_cast<Float>(step.value)) {
        x = static_cast<Float>(step.replacement);
        break;
      }
    }
    // The total order: negative values (sign set) reversed below the
    // positive ones, -NaN lowest and +NaN highest.
    const Bits bits = std::bit_cast<Bits>(x);
    const uint64_t key =
        (bits & kSign) ? static_cast<Bits>(~bits) : static_cast<Bits>(bits | kSign);
    keys[k] = descending_ ? Flip(key, kBits) : key;
  }
}

template <typename Int>
void SortKeyOrder::IntegerKeys(const char* data, int64_t count, int64_t stride,
                               uint64_t* keys) const {
  constexpr int kBits = sizeof(Int) * 8;
  using Unsigned = std::make_unsigned_t<Int>;
  constexpr Unsigned kBias = std::is_signed_v<Int> ? Unsigned{1} << (kBits - 1) : 0;
  for (int64_t k = 0; k < count; ++k) {
    Int x;
    std::memcpy(&x, data + k * stride * static_cast<int64_t>(sizeof(Int)), sizeof(Int));
    for (const Replacement& step : replacements_) {
      if (!step.nan && static_cast<double>(x) == step.value) {
        x = static_cast<Int>(step.replacement);
        break;
      }
    }
    const uint64_t key = static_cast<Unsigned>(static_cast<Unsigned>(x) ^ kBias);
    keys[k] = descending_ ? Flip(key, kBits) : key;
  }
}

void SortKeyOrder::Keys(const char* data, int64_t count, int64_t stride, uint64_t* keys) const {
  switch (type_) {
    case F32:
      return FloatKeys<float, uint32_t>(data, count, stride, keys);
    case F64:
      return FloatKeys<double, uint64_t>(data, count, stride, keys);
    case S8:
      return IntegerKeys<int8_t>(data, count, stride, keys);
    case S16:
      return IntegerKeys<int16_t>(data, count, stride, keys);
    case S32:
      return IntegerKeys<int32_t>(data, count, stride, keys);
    case S64:
      return IntegerKeys<int64_t>(data, count, stride, keys);
    case U8:
      return IntegerKeys<uint8_t>(data, count, stride, keys);
    case U16:
      return IntegerKeys<uint16_t>(data, count, stride, keys);
    case U32:
      return IntegerKeys<uint32_t>(data, count, stride, keys);
    case U64:
      return IntegerKeys<uint64_t>(data, count, stride, keys);
    default:
      break;
  }
}

std::optional<SortKeyOrder> MatchSortKeyOrder(const HloComputation& comparator) {
  const auto* root = dyn_cast<HloCompareInstruction>(comparator.root_instruction());
  if (root == nullptr || comparator.num_parameters() < 2) return std::nullopt;
  const PrimitiveType type = comparator.parameter_instruction(0)->shape().element_type();
  if (!IsSupportedFloat(type) && !IsByteIntegerType(type)) return std::nullopt;
  if (comparator.parameter_instruction(1)->shape().element_type() != type) return std::nullopt;
  const ComparisonDirection direction = root->direction();
  if (direction != ComparisonDirection::kLt && direction != ComparisonDirection::kGt) {
    return std::nullopt;
  }
  if (!IsTotalOrderFor(root->type(), type)) return std::nullopt;
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
  return SortKeyOrder(type, descending, std::move(lhs_steps));
}

}  // namespace axle::cpu
