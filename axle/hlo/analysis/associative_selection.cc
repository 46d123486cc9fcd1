//===- associative_selection.cc - Proving a reducer's fold can be split ---===//
#include "axle/hlo/analysis/associative_selection.h"

#include <array>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "axle/core/primitive_type.h"
#include "axle/hlo/ir/hlo_instructions.h"

namespace axle {
namespace {

// The three inputs of op(op(a, b), c) and op(a, op(b, c)).
constexpr int kInputs = 3;
// More slots than this are not tried (27^5 order types and up).
constexpr int64_t kMaxSlots = 4;
// A float slot's "rank" that stands for NaN.
constexpr int kNaN = -1;

// A value of the symbolic evaluation: input `tag / slots`'s slot
// `tag % slots`, a pred, or a tuple.
struct Value {
  enum class Kind { kTag, kPred, kTuple } kind = Kind::kPred;
  int tag = 0;
  bool pred = false;
  std::vector<Value> elements;
};

Value Tag(int tag) { return Value{Value::Kind::kTag, tag, false, {}}; }
Value Pred(bool pred) { return Value{Value::Kind::kPred, 0, pred, {}}; }

class Evaluator {
 public:
  // `ranks[e][k]`: where input e's slot k stands among the three inputs'
  // slot-k values (equal ranks: equal values), kNaN for a NaN.
  using Ranks = std::array<std::vector<int>, kInputs>;

  Evaluator(const HloComputation& reducer, std::vector<PrimitiveType> types)
      : reducer_(reducer), types_(std::move(types)), order_(reducer.MakeInstructionPostOrder()) {}

  int64_t slots() const { return static_cast<int64_t>(types_.size()); }

  // The reducer on (lhs, rhs): each its result tags, one per slot.
  std::optional<std::vector<int>> Apply(const Ranks& ranks, const std::vector<int>& lhs,
                                        const std::vector<int>& rhs) {
    ranks_ = &ranks;
    values_.clear();
    const int64_t n = slots();
    for (const HloInstruction* instruction : order_) {
      std::optional<Value> value = Evaluate(*instruction, lhs, rhs);
      if (!value.has_value()) return std::nullopt;
      values_[instruction] = *std::move(value);
    }
    const Value& root = values_.at(reducer_.root_instruction());
    std::vector<Value> results;
    if (n == 1 && root.kind == Value::Kind::kTag) {
      results.push_back(root);
    } else if (root.kind == Value::Kind::kTuple) {
      results = root.elements;
    }
    if (static_cast<int64_t>(results.size()) != n) return std::nullopt;
    std::vector<int> tags;
    for (int64_t k = 0; k < n; ++k) {
      if (results[k].kind != Value::Kind::kTag || results[k].tag % n != k) return std::nullopt;
      tags.push_back(results[k].tag);
    }
    return tags;
  }

  // `tag` as the comparison of results sees it: an integer stands for
  // every equal integer (the same bits), named by the first input with it.
  int Canonical(const Ranks& ranks, int tag) const {
    const int n = static_cast<int>(slots());
    const int e = tag / n;
    const int k = tag % n;
    if (primitive_util::IsFloatingPointType(types_[k])) return tag;
    for (int first = 0; first < e; ++first) {
      if (ranks[first][k] == ranks[e][k]) return first * n + k;
    }
    return tag;
  }

 private:
  std::optional<Value> Evaluate(const HloInstruction& instruction, const std::vector<int>& lhs,
                                const std::vector<int>& rhs) {
    auto operand = [&](int64_t i) -> const Value& { return values_.at(instruction.operand(i)); };
    auto both_tags_of_one_slot = [&]() {
      return operand(0).kind == Value::Kind::kTag && operand(1).kind == Value::Kind::kTag &&
             operand(0).tag % slots() == operand(1).tag % slots();
    };
    auto all_preds = [&]() {
      for (int64_t i = 0; i < instruction.operand_count(); ++i) {
        if (operand(i).kind != Value::Kind::kPred) return false;
      }
      return instruction.operand_count() > 0;
    };
    switch (instruction.opcode()) {
      case HloOpcode::kParameter: {
        const int64_t number = cast<HloParameterInstruction>(&instruction)->parameter_number();
        if (number < slots()) return Tag(lhs[number]);
        return Tag(rhs[number - slots()]);
      }
      case HloOpcode::kConstant: {
        const Literal& literal = cast<HloConstantInstruction>(&instruction)->literal();
        if (!instruction.shape().IsArray() || instruction.shape().element_type() != PRED ||
            instruction.shape().rank() != 0) {
          return std::nullopt;
        }
        return Pred(literal.GetAsDouble(0) != 0);
      }
      case HloOpcode::kCompare: {
        if (!both_tags_of_one_slot()) return std::nullopt;
        const auto* compare = cast<HloCompareInstruction>(&instruction);
        const PrimitiveType type = types_[operand(0).tag % slots()];
        const ComparisonType order = compare->type();
        if (order != ComparisonType::kDefault) {
          const ComparisonType own =
              primitive_util::IsFloatingPointType(type)    ? ComparisonType::kFloat
              : primitive_util::IsSignedIntegralType(type) ? ComparisonType::kSigned
                                                           : ComparisonType::kUnsigned;
          if (order != own) return std::nullopt;
        }
        const int x = Rank(operand(0).tag);
        const int y = Rank(operand(1).tag);
        if (x == kNaN || y == kNaN) return Pred(compare->direction() == ComparisonDirection::kNe);
        switch (compare->direction()) {
          case ComparisonDirection::kEq:
            return Pred(x == y);
          case ComparisonDirection::kNe:
            return Pred(x != y);
          case ComparisonDirection::kLt:
            return Pred(x < y);
          case ComparisonDirection::kLe:
            return Pred(x <= y);
          case ComparisonDirection::kGt:
            return Pred(x > y);
          case ComparisonDirection::kGe:
            return Pred(x >= y);
        }
        return std::nullopt;
      }
      case HloOpcode::kMaximum:
      case HloOpcode::kMinimum: {
        if (!both_tags_of_one_slot() ||
            !primitive_util::IsIntegralType(types_[operand(0).tag % slots()])) {
          return std::nullopt;
        }
        const bool first = instruction.opcode() == HloOpcode::kMaximum
                               ? Rank(operand(0).tag) >= Rank(operand(1).tag)
                               : Rank(operand(0).tag) <= Rank(operand(1).tag);
        return operand(first ? 0 : 1);
      }
      case HloOpcode::kSelect:
        if (operand(0).kind != Value::Kind::kPred || operand(1).kind == Value::Kind::kTuple ||
            operand(2).kind == Value::Kind::kTuple) {
          return std::nullopt;
        }
        return operand(operand(0).pred ? 1 : 2);
      case HloOpcode::kNot:
        if (!all_preds()) return std::nullopt;
        return Pred(!operand(0).pred);
      case HloOpcode::kAnd:
      case HloOpcode::kOr:
      case HloOpcode::kXor: {
        if (!all_preds() || instruction.operand_count() != 2) return std::nullopt;
        const bool x = operand(0).pred;
        const bool y = operand(1).pred;
        if (instruction.opcode() == HloOpcode::kAnd) return Pred(x && y);
        if (instruction.opcode() == HloOpcode::kOr) return Pred(x || y);
        return Pred(x != y);
      }
      case HloOpcode::kTuple: {
        Value tuple{Value::Kind::kTuple, 0, false, {}};
        for (int64_t i = 0; i < instruction.operand_count(); ++i) {
          tuple.elements.push_back(operand(i));
        }
        return tuple;
      }
      case HloOpcode::kGetTupleElement: {
        const int64_t index = cast<HloGetTupleElementInstruction>(&instruction)->tuple_index();
        if (operand(0).kind != Value::Kind::kTuple || index < 0 ||
            index >= static_cast<int64_t>(operand(0).elements.size())) {
          return std::nullopt;
        }
        return operand(0).elements[index];
      }
      default:
        return std::nullopt;
    }
  }

  int Rank(int tag) const { return (*ranks_)[tag / slots()][tag % slots()]; }

  const HloComputation& reducer_;
  std::vector<PrimitiveType> types_;
  std::vector<HloInstruction*> order_;
  const Ranks* ranks_ = nullptr;
  absl::flat_hash_map<const HloInstruction*, Value> values_;
};

// The slot types of a reducer of N accumulators and N inputs, all scalars
// of integer or float types, accumulator k and input k of one type; empty
// otherwise.
std::vector<PrimitiveType> SlotTypes(const HloComputation& reducer) {
  const int64_t parameters = reducer.num_parameters();
  if (parameters % 2 != 0 || parameters == 0 || parameters / 2 > kMaxSlots) return {};
  std::vector<PrimitiveType> types;
  for (int64_t k = 0; k < parameters / 2; ++k) {
    const Shape& accumulator = reducer.parameter_instruction(k)->shape();
    const Shape& input = reducer.parameter_instruction(parameters / 2 + k)->shape();
    if (!accumulator.IsArray() || accumulator.rank() != 0 || !input.IsArray() ||
        input.rank() != 0 || accumulator.element_type() != input.element_type()) {
      return {};
    }
    const PrimitiveType type = accumulator.element_type();
    if (type == PRED || primitive_util::IsComplexType(type) ||
        !(primitive_util::IsIntegralType(type) || primitive_util::IsFloatingPointType(type))) {
      return {};
    }
    types.push_back(type);
  }
  return types;
}

}  // namespace

bool IsAssociativeSelection(const HloComputation& reducer) {
  const std::vector<PrimitiveType> types = SlotTypes(reducer);
  if (types.empty() || reducer.root_instruction() == nullptr) return false;
  const int n = static_cast<int>(types.size());
  Evaluator evaluator(reducer, types);
  // Each slot's ranks for the three inputs, as one mixed-radix counter:
  // {NaN, 0, 1, 2} for floats, {0, 1, 2} for integers.
  std::vector<int> lowest(n);
  for (int k = 0; k < n; ++k) lowest[k] = primitive_util::IsFloatingPointType(types[k]) ? kNaN : 0;
  Evaluator::Ranks ranks;
  for (int e = 0; e < kInputs; ++e) ranks[e] = lowest;
  std::vector<int> inputs[kInputs];
  for (int e = 0; e < kInputs; ++e) {
    for (int k = 0; k < n; ++k) inputs[e].push_back(e * n + k);
  }
  while (true) {
    std::optional<std::vector<int>> ab = evaluator.Apply(ranks, inputs[0], inputs[1]);
    std::optional<std::vector<int>> bc = evaluator.Apply(ranks, inputs[1], inputs[2]);
    if (!ab.has_value() || !bc.has_value()) return false;
    std::optional<std::vector<int>> left = evaluator.Apply(ranks, *ab, inputs[2]);
    std::optional<std::vector<int>> right = evaluator.Apply(ranks, inputs[0], *bc);
    if (!left.has_value() || !right.has_value()) return false;
    for (int k = 0; k < n; ++k) {
      if (evaluator.Canonical(ranks, (*left)[k]) != evaluator.Canonical(ranks, (*right)[k])) {
        return false;
      }
    }
    // The next order type.
    bool carried = true;
    for (int e = 0; e < kInputs && carried; ++e) {
      for (int k = 0; k < n && carried; ++k) {
        if (ranks[e][k] < kInputs - 1) {
          ++ranks[e][k];
          carried = false;
        } else {
          ranks[e][k] = lowest[k];
        }
      }
    }
    if (carried) return true;
  }
}

}  // namespace axle
