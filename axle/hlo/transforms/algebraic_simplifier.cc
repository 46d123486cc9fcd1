//===- algebraic_simplifier.cc - Local algebraic rewrites ------------------===//
//
// One visitor per sweep: every instruction of every (non-fused) computation,
// operands first, goes through the rule for its opcode. A rule returns the
// instruction that replaces it (an existing one or a new one) or nullptr.
// Sweeps repeat until nothing changes, so chains collapse.
//
//===----------------------------------------------------------------------===//
#include "axle/hlo/transforms/algebraic_simplifier.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <optional>
#include <vector>

#include "axle/base/status_macros.h"
#include "axle/core/shape_util.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/transforms/hlo_creation_utils.h"

namespace axle {
namespace {

namespace pu = primitive_util;

// The literal behind a constant, or behind a broadcast of a constant; nullptr
// for anything else (and for elided constants, whose values are unknown).
const Literal* ConstantValue(const HloInstruction* instruction) {
  if (instruction->opcode() == HloOpcode::kBroadcast) instruction = instruction->operand(0);
  const auto* constant = dyn_cast<HloConstantInstruction>(instruction);
  if (constant == nullptr || constant->attrs().elided || !constant->shape().IsArray()) {
    return nullptr;
  }
  return &constant->literal();
}

// Every element equals `value`. For floats, `positive_zero_only` rejects -0.
bool IsAll(const HloInstruction* instruction, int64_t value, bool positive_zero_only = false) {
  const Literal* literal = ConstantValue(instruction);
  if (literal == nullptr) return false;
  PrimitiveType type = literal->shape().element_type();
  int64_t n = literal->element_count();
  for (int64_t i = 0; i < n; ++i) {
    if (type == PRED || pu::IsIntegralType(type)) {
      if (pu::IsUnsignedIntegralType(type)) {
        std::optional<uint64_t> v = literal->GetIntegralAsU64(i);
        if (!v || value < 0 || *v != static_cast<uint64_t>(value)) return false;
      } else {
        std::optional<int64_t> v = literal->GetIntegralAsS64(i);
        if (!v || *v != value) return false;
      }
    } else if (pu::IsComplexType(type)) {
      if (literal->GetAsComplex128(i) != complex128(static_cast<double>(value), 0)) return false;
    } else if (pu::IsFloatingPointType(type)) {
      double v = literal->GetAsDouble(i);
      if (v != static_cast<double>(value)) return false;
      if (value == 0 && positive_zero_only && std::signbit(v)) return false;
    } else {
      return false;
    }
  }
  return true;
}

bool IsIntegralOrPred(PrimitiveType type) { return type == PRED || pu::IsIntegralType(type); }

// Converting A to B keeps every value exactly (so convert(convert(x, B), C)
// equals convert(x, C) for every C).
bool IsLosslessConversion(PrimitiveType from, PrimitiveType to) {
  if (from == to) return true;
  if (pu::IsComplexType(to)) {
    if (pu::IsComplexType(from)) {
      return IsLosslessConversion(pu::ComplexComponentType(from), pu::ComplexComponentType(to));
    }
    return IsLosslessConversion(from, pu::ComplexComponentType(to));
  }
  if (pu::IsComplexType(from) || to == PRED) return false;
  int to_bits = pu::BitWidth(to);
  if (from == PRED) {
    return pu::IsUnsignedIntegralType(to) || (pu::IsSignedIntegralType(to) && to_bits >= 2) ||
           to == F16 || to == BF16 || to == F32 || to == F64;
  }
  if (pu::IsIntegralType(from)) {
    bool from_signed = pu::IsSignedIntegralType(from);
    int from_bits = pu::BitWidth(from);
    if (pu::IsIntegralType(to)) {
      if (pu::IsUnsignedIntegralType(to)) return !from_signed && to_bits >= from_bits;
      return from_signed ? to_bits >= from_bits : to_bits > from_bits;
    }
    // Integers into floats: every value needs to fit in the significand.
    int magnitude_bits = from_signed ? from_bits - 1 : from_bits;
    return pu::IsFloatingPointType(to) && magnitude_bits <= pu::SignificandWidth(to) &&
           (to == F16 || to == BF16 || to == F32 || to == F64 || magnitude_bits <= 3);
  }
  if (pu::IsFloatingPointType(from)) {
    // Only widening into the IEEE types, which hold every narrower float
    // (infinities and NaN included).
    if (to == F64) return from != F64;
    if (to == F32) return from == F16 || from == BF16 || pu::IsF8Type(from);
    if (to == F16) return pu::IsF8Type(from) && pu::ExponentWidth(from) <= 5 && from != F8E5M2FNUZ;
    return false;
  }
  return false;
}

class Simplifier {
 public:
  explicit Simplifier(HloComputation* computation) : computation_(computation) {}

  absl::StatusOr<bool> Run() {
    // Replaced instructions stay (without users) until the sweep is over, so
    // the post order list holds no dangling pointers; then they go, with the
    // operands only they used.
    std::vector<HloInstruction*> replaced;
    for (HloInstruction* instruction : computation_->MakeInstructionPostOrder()) {
      if (instruction->user_count() == 0 && !instruction->IsRoot()) continue;
      if (instruction->HasSideEffect() || !instruction->control_predecessors().empty() ||
          !instruction->control_successors().empty() || instruction->shape().is_dynamic()) {
        continue;
      }
      HloInstruction* replacement = Simplify(instruction);
      if (replacement == nullptr || replacement == instruction) continue;
      if (!SameShapeAndLayout(replacement->shape(), instruction->shape())) {
        // Only same-shaped replacements are taken (layouts included); a new
        // instruction that came out differently is dropped again.
        if (replacement->user_count() == 0) {
          AXLE_RETURN_IF_ERROR(computation_->RemoveInstructionAndUnusedOperands(replacement));
        }
        continue;
      }
      AXLE_RETURN_IF_ERROR(instruction->ReplaceAllUsesWith(replacement));
      replaced.push_back(instruction);
    }
    for (HloInstruction* instruction : replaced) {
      AXLE_RETURN_IF_ERROR(computation_->RemoveInstructionAndUnusedOperands(instruction));
    }
    return !replaced.empty();
  }

 private:
  HloInstruction* Simplify(HloInstruction* instruction);
  HloInstruction* SimplifyArithmetic(HloInstruction* instruction);
  HloInstruction* SimplifyConvert(HloInstruction* instruction);
  HloInstruction* SimplifyDataMovement(HloInstruction* instruction);
  HloInstruction* SimplifyIndexing(HloInstruction* instruction);
  HloInstruction* SimplifyReduce(HloInstruction* instruction);

  HloInstruction* Filled(const HloInstruction* like, int64_t value) {
    Literal scalar = LiteralUtil::Zero(like->shape().element_type());
    if (value != 0) scalar.SetIntegral(0, value);
    return MakeFilledArray(computation_, scalar, like->shape());
  }

  HloComputation* computation_;
};

HloInstruction* Simplifier::Simplify(HloInstruction* instruction) {
  if (!instruction->shape().IsArray()) return nullptr;
  for (const HloInstruction* operand : instruction->operands()) {
    if (operand->shape().is_dynamic()) return nullptr;
  }
  switch (instruction->opcode()) {
    case HloOpcode::kAdd:
    case HloOpcode::kSubtract:
    case HloOpcode::kMultiply:
    case HloOpcode::kDivide:
    case HloOpcode::kNegate:
    case HloOpcode::kNot:
    case HloOpcode::kMaximum:
    case HloOpcode::kMinimum:
    case HloOpcode::kAnd:
    case HloOpcode::kOr:
    case HloOpcode::kPower:
    case HloOpcode::kSelect:
    case HloOpcode::kCompare:
      return SimplifyArithmetic(instruction);
    case HloOpcode::kConvert:
      return SimplifyConvert(instruction);
    case HloOpcode::kReshape:
    case HloOpcode::kTranspose:
    case HloOpcode::kBroadcast:
    case HloOpcode::kSlice:
    case HloOpcode::kReverse:
    case HloOpcode::kPad:
    case HloOpcode::kConcatenate:
    case HloOpcode::kCopy:
    case HloOpcode::kBitcast:
      return SimplifyDataMovement(instruction);
    case HloOpcode::kDynamicSlice:
    case HloOpcode::kDynamicUpdateSlice:
    case HloOpcode::kIota:
      return SimplifyIndexing(instruction);
    case HloOpcode::kReduce:
      return SimplifyReduce(instruction);
    default:
      return nullptr;
  }
}

HloInstruction* Simplifier::SimplifyArithmetic(HloInstruction* instruction) {
  PrimitiveType type = instruction->shape().element_type();
  HloInstruction* lhs = instruction->mutable_operand(0);
  HloInstruction* rhs =
      instruction->operand_count() > 1 ? instruction->mutable_operand(1) : nullptr;
  switch (instruction->opcode()) {
    case HloOpcode::kAdd:
      if (IsAll(rhs, 0)) return lhs;
      if (IsAll(lhs, 0)) return rhs;
      return nullptr;
    case HloOpcode::kSubtract:
      // x - (+0) is x for every float, -0 included; x - (-0) is not.
      return IsAll(rhs, 0, /*positive_zero_only=*/true) ? lhs : nullptr;
    case HloOpcode::kMultiply:
      if (IsAll(rhs, 1)) return lhs;
      if (IsAll(lhs, 1)) return rhs;
      if (IsIntegralOrPred(type) && (IsAll(rhs, 0) || IsAll(lhs, 0))) return Filled(instruction, 0);
      return nullptr;
    case HloOpcode::kDivide:
      return IsAll(rhs, 1) ? lhs : nullptr;
    case HloOpcode::kNegate:
    case HloOpcode::kNot:
      if (lhs->opcode() == instruction->opcode()) return lhs->mutable_operand(0);
      return nullptr;
    case HloOpcode::kMaximum:
    case HloOpcode::kMinimum:
      return lhs == rhs ? lhs : nullptr;
    case HloOpcode::kAnd:
      if (lhs == rhs) return lhs;
      if (type == PRED && IsAll(rhs, 1)) return lhs;
      if (type == PRED && IsAll(lhs, 1)) return rhs;
      return nullptr;
    case HloOpcode::kOr:
      if (lhs == rhs) return lhs;
      if (type == PRED && IsAll(rhs, 0)) return lhs;
      if (type == PRED && IsAll(lhs, 0)) return rhs;
      return nullptr;
    case HloOpcode::kPower:
      // Semantics: x^0 = 1 for every x (NaN included), x^1 = x.
      if (IsAll(rhs, 0)) return Filled(instruction, 1);
      if (IsAll(rhs, 1)) return lhs;
      if (IsAll(rhs, 2) && !pu::IsComplexType(type) && type != PRED) {
        return MakeBinary(HloOpcode::kMultiply, lhs, lhs, instruction->shape());
      }
      return nullptr;
    case HloOpcode::kSelect: {
      HloInstruction* on_true = instruction->mutable_operand(1);
      HloInstruction* on_false = instruction->mutable_operand(2);
      if (on_true == on_false) return on_true;
      if (IsAll(lhs, 1)) return on_true;
      if (IsAll(lhs, 0)) return on_false;
      return nullptr;
    }
    case HloOpcode::kCompare: {
      if (lhs != rhs || !IsIntegralOrPred(lhs->shape().element_type())) return nullptr;
      switch (cast<HloCompareInstruction>(instruction)->direction()) {
        case ComparisonDirection::kEq:
        case ComparisonDirection::kGe:
        case ComparisonDirection::kLe:
          return Filled(instruction, 1);
        default:
          return Filled(instruction, 0);
      }
    }
    default:
      return nullptr;
  }
}

HloInstruction* Simplifier::SimplifyConvert(HloInstruction* instruction) {
  HloInstruction* operand = instruction->mutable_operand(0);
  PrimitiveType to = instruction->shape().element_type();
  if (operand->shape().element_type() == to) return operand;
  if (operand->opcode() != HloOpcode::kConvert) return nullptr;
  HloInstruction* source = operand->mutable_operand(0);
  if (!IsLosslessConversion(source->shape().element_type(), operand->shape().element_type())) {
    return nullptr;
  }
  if (source->shape().element_type() == to) return source;
  return computation_->AddInstruction(
      HloInstruction::Create(HloOpcode::kConvert, instruction->shape(), {source}));
}

HloInstruction* Simplifier::SimplifyDataMovement(HloInstruction* instruction) {
  HloInstruction* operand = instruction->mutable_operand(0);
  const Shape& shape = instruction->shape();
  bool same_dimensions = operand->shape().IsArray() &&
                         operand->shape().dimensions() == shape.dimensions() &&
                         operand->shape().element_type() == shape.element_type();
  bool operand_is_scalar_broadcast =
      operand->opcode() == HloOpcode::kBroadcast && operand->operand(0)->shape().rank() == 0;
  switch (instruction->opcode()) {
    case HloOpcode::kReshape:
      if (same_dimensions) return operand;
      if (operand->opcode() == HloOpcode::kReshape)
        return MakeReshape(operand->mutable_operand(0), shape);
      if (operand_is_scalar_broadcast) return MakeBroadcast(operand->mutable_operand(0), shape, {});
      return nullptr;
    case HloOpcode::kTranspose: {
      const std::vector<int64_t>& permutation =
          cast<HloDimensionsInstruction>(instruction)->dimensions();
      if (IsIdentityPermutation(permutation)) return operand;
      if (operand_is_scalar_broadcast) return MakeBroadcast(operand->mutable_operand(0), shape, {});
      if (operand->opcode() != HloOpcode::kTranspose) return nullptr;
      std::vector<int64_t> composed =
          ComposePermutations(cast<HloDimensionsInstruction>(operand)->dimensions(), permutation);
      if (IsIdentityPermutation(composed)) return operand->mutable_operand(0);
      HloInstruction* merged = MakeTranspose(operand->mutable_operand(0), composed);
      *merged->mutable_shape() = shape;
      return merged;
    }
    case HloOpcode::kBroadcast: {
      const std::vector<int64_t>& dims = cast<HloDimensionsInstruction>(instruction)->dimensions();
      if (same_dimensions && IsIdentityPermutation(dims)) return operand;
      if (operand->opcode() != HloOpcode::kBroadcast) return nullptr;
      std::vector<int64_t> merged;
      for (int64_t d : cast<HloDimensionsInstruction>(operand)->dimensions())
        merged.push_back(dims[d]);
      return MakeBroadcast(operand->mutable_operand(0), shape, merged);
    }
    case HloOpcode::kSlice:
    case HloOpcode::kCopy:
      return same_dimensions ? operand : nullptr;
    case HloOpcode::kReverse:
      for (int64_t d : cast<HloDimensionsInstruction>(instruction)->dimensions()) {
        if (shape.dimensions(d) > 1) return nullptr;
      }
      return operand;
    case HloOpcode::kPad:
      for (const auto& dim : cast<HloPadInstruction>(instruction)->padding_config().dimensions()) {
        if (dim.edge_padding_low() != 0 || dim.edge_padding_high() != 0 ||
            dim.interior_padding() != 0) {
          return nullptr;
        }
      }
      return operand;
    case HloOpcode::kConcatenate:
      return instruction->operand_count() == 1 ? operand : nullptr;
    case HloOpcode::kBitcast:
      // Bitcasts reinterpret the physical buffer, so two compose into one.
      if (SameShapeAndLayout(operand->shape(), shape)) return operand;
      if (operand->opcode() == HloOpcode::kBitcast) {
        HloInstruction* source = operand->mutable_operand(0);
        if (SameShapeAndLayout(source->shape(), shape)) return source;
        return MakeBitcast(source, shape);
      }
      return nullptr;
    default:
      return nullptr;
  }
}

// The start index operand as an int64 clamped into [0, limit].
std::optional<int64_t> ClampedConstantIndex(const HloInstruction* index, int64_t limit) {
  const Literal* literal = ConstantValue(index);
  if (literal == nullptr || index->shape().rank() != 0) return std::nullopt;
  PrimitiveType type = literal->shape().element_type();
  if (pu::IsUnsignedIntegralType(type)) {
    std::optional<uint64_t> v = literal->GetIntegralAsU64(0);
    if (!v) return std::nullopt;
    return *v > static_cast<uint64_t>(limit) ? limit : static_cast<int64_t>(*v);
  }
  std::optional<int64_t> v = literal->GetIntegralAsS64(0);
  if (!v) return std::nullopt;
  return std::clamp<int64_t>(*v, 0, limit);
}

HloInstruction* Simplifier::SimplifyIndexing(HloInstruction* instruction) {
  const Shape& shape = instruction->shape();
  switch (instruction->opcode()) {
    case HloOpcode::kDynamicSlice: {
      HloInstruction* operand = instruction->mutable_operand(0);
      int64_t rank = operand->shape().rank();
      if (instruction->operand_count() != rank + 1) return nullptr;  // the old vector-index form
      std::vector<int64_t> starts, limits, strides(rank, 1);
      for (int64_t d = 0; d < rank; ++d) {
        std::optional<int64_t> start = ClampedConstantIndex(
            instruction->operand(d + 1), operand->shape().dimensions(d) - shape.dimensions(d));
        if (!start) return nullptr;
        starts.push_back(*start);
        limits.push_back(*start + shape.dimensions(d));
      }
      return MakeSlice(operand, shape, starts, limits, strides);
    }
    case HloOpcode::kDynamicUpdateSlice: {
      HloInstruction* update = instruction->mutable_operand(1);
      return update->shape().dimensions() == shape.dimensions() ? update : nullptr;
    }
    case HloOpcode::kIota: {
      int64_t dimension = cast<HloIotaInstruction>(instruction)->iota_dimension();
      if (shape.rank() == 0 || shape.dimensions(dimension) != 1) return nullptr;
      return Filled(instruction, 0);
    }
    default:
      return nullptr;
  }
}

// Whether `init` is the identity of the reducer `computation`, a single
// commutative binary op of its two scalar parameters.
bool IsReducerIdentity(const HloComputation& computation, const HloInstruction* init) {
  const HloInstruction* root = computation.root_instruction();
  if (computation.num_parameters() != 2 || computation.instruction_count() != 3 ||
      root->operand_count() != 2 || root->operand(0) == root->operand(1) ||
      root->operand(0)->opcode() != HloOpcode::kParameter ||
      root->operand(1)->opcode() != HloOpcode::kParameter) {
    return false;
  }
  const Literal* literal = ConstantValue(init);
  if (literal == nullptr || init->shape().rank() != 0) return false;
  PrimitiveType type = init->shape().element_type();
  bool is_float = pu::IsFloatingPointType(type);
  switch (root->opcode()) {
    case HloOpcode::kAdd:
      return IsAll(init, 0);
    case HloOpcode::kMultiply:
      return IsAll(init, 1);
    case HloOpcode::kOr:
      return type == PRED && IsAll(init, 0);
    case HloOpcode::kAnd:
      return type == PRED && IsAll(init, 1);
    case HloOpcode::kMaximum:
      if (is_float) return std::isinf(literal->GetAsDouble(0)) && literal->GetAsDouble(0) < 0;
      return IsIntegralOrPred(type) && *literal == LiteralUtil::MinValue(type);
    case HloOpcode::kMinimum:
      if (is_float) return std::isinf(literal->GetAsDouble(0)) && literal->GetAsDouble(0) > 0;
      return IsIntegralOrPred(type) && *literal == LiteralUtil::MaxValue(type);
    default:
      return false;
  }
}

HloInstruction* Simplifier::SimplifyReduce(HloInstruction* instruction) {
  if (instruction->operand_count() != 2) return nullptr;
  HloInstruction* input = instruction->mutable_operand(0);
  if (input->shape().num_elements() != instruction->shape().num_elements() ||
      input->shape().element_type() != instruction->shape().element_type() ||
      !IsReducerIdentity(*instruction->to_apply(), instruction->operand(1))) {
    return nullptr;
  }
  if (input->shape().dimensions() == instruction->shape().dimensions()) return input;
  return MakeReshape(input, instruction->shape());
}

}  // namespace

absl::StatusOr<bool> AlgebraicSimplifier::Run(HloModule* module) {
  bool changed = false;
  constexpr int kMaxSweeps = 16;
  for (int sweep = 0; sweep < kMaxSweeps; ++sweep) {
    bool changed_this_sweep = false;
    for (HloComputation* computation : module->MakeComputationPostOrder()) {
      if (computation->IsFusionComputation()) continue;
      AXLE_ASSIGN_OR_RETURN(bool c, Simplifier(computation).Run());
      changed_this_sweep |= c;
    }
    if (!changed_this_sweep) break;
    changed = true;
  }
  return changed;
}

}  // namespace axle
