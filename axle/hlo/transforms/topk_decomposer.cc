//===- topk_decomposer.cc - topk as a sort and two slices ------------------===//
#include "axle/hlo/transforms/topk_decomposer.h"

#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "axle/base/status_macros.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/pass/rewrite_each_instruction.h"
#include "axle/hlo/transforms/hlo_creation_utils.h"

namespace axle {
namespace {

constexpr absl::string_view kPass = "topk-decomposer";

HloInstruction* AddCompare(HloComputation* computation, HloInstruction* lhs, HloInstruction* rhs,
                           ComparisonDirection direction,
                           ComparisonType type = ComparisonType::kDefault) {
  HloInstruction* operands[] = {lhs, rhs};
  auto compare = std::make_unique<HloCompareInstruction>(HloOpcode::kCompare,
                                                         ShapeUtil::MakeShape(PRED, {}), operands);
  compare->mutable_attrs()->direction = direction;
  compare->mutable_attrs()->type = type;
  return computation->AddInstruction(std::move(compare));
}

HloInstruction* AddLogical(HloComputation* computation, HloOpcode opcode,
                           const std::vector<HloInstruction*>& operands) {
  return computation->AddInstruction(
      HloInstruction::Create(opcode, ShapeUtil::MakeShape(PRED, {}), operands));
}

// The sort comparator of (value, index) pairs: whether lhs goes first.
// Floats: NaN above everything, else total order.
HloComputation* MakeComparator(HloModule* module, PrimitiveType type, bool largest) {
  auto computation = std::make_unique<HloComputation>(module->GetUniqueName("topk_comparator"));
  HloComputation* c = computation.get();
  std::vector<HloInstruction*> parameters;
  for (int64_t i = 0; i < 4; ++i) {
    auto parameter = std::make_unique<HloParameterInstruction>(
        HloOpcode::kParameter, ShapeUtil::MakeShape(i < 2 ? type : S32, {}),
        absl::Span<HloInstruction* const>{});
    parameter->mutable_attrs()->parameter_number = i;
    parameters.push_back(c->AddInstruction(std::move(parameter)));
  }
  HloInstruction* lhs = parameters[0];
  HloInstruction* rhs = parameters[1];
  const ComparisonDirection direction =
      largest ? ComparisonDirection::kGt : ComparisonDirection::kLt;
  if (!primitive_util::IsFloatingPointType(type)) {
    c->set_root_instruction(AddCompare(c, lhs, rhs, direction));
    return module->AddEmbeddedComputation(std::move(computation));
  }
  HloInstruction* lhs_nan = AddCompare(c, lhs, lhs, ComparisonDirection::kNe);
  HloInstruction* rhs_nan = AddCompare(c, rhs, rhs, ComparisonDirection::kNe);
  HloInstruction* lhs_number = AddLogical(c, HloOpcode::kNot, {lhs_nan});
  HloInstruction* rhs_number = AddLogical(c, HloOpcode::kNot, {rhs_nan});
  HloInstruction* numbers = AddLogical(c, HloOpcode::kAnd, {lhs_number, rhs_number});
  HloInstruction* ordered =
      AddLogical(c, HloOpcode::kAnd,
                 {numbers, AddCompare(c, lhs, rhs, direction, ComparisonType::kFloatTotalOrder)});
  // largest: a NaN goes before a number; smallest: a number before a NaN.
  HloInstruction* nan_first = largest ? AddLogical(c, HloOpcode::kAnd, {lhs_nan, rhs_number})
                                      : AddLogical(c, HloOpcode::kAnd, {lhs_number, rhs_nan});
  c->set_root_instruction(AddLogical(c, HloOpcode::kOr, {nan_first, ordered}));
  return module->AddEmbeddedComputation(std::move(computation));
}

// sort(operand, iota) along the last dimension by `comparator` (stable),
// then the first k of both.
HloInstruction* SortAndSlice(HloInstruction* operand, int64_t k, HloComputation* comparator) {
  HloComputation* computation = operand->parent();
  const Shape& shape = operand->shape();
  const PrimitiveType type = shape.element_type();
  const int64_t last = shape.rank() - 1;
  const Shape values_shape = WithDescendingLayout(ShapeUtil::MakeShape(type, shape.dimensions()));
  const Shape indices_shape = WithDescendingLayout(ShapeUtil::MakeShape(S32, shape.dimensions()));
  auto iota = std::make_unique<HloIotaInstruction>(HloOpcode::kIota, indices_shape,
                                                   absl::Span<HloInstruction* const>{});
  iota->mutable_attrs()->iota_dimension = last;
  HloInstruction* indices = computation->AddInstruction(std::move(iota));

  HloInstruction* sort_operands[] = {operand, indices};
  auto sort = std::make_unique<HloSortInstruction>(
      HloOpcode::kSort, ShapeUtil::MakeTupleShape({values_shape, indices_shape}), sort_operands);
  sort->mutable_attrs()->sort_dimension = last;
  sort->mutable_attrs()->is_stable = true;
  sort->set_to_apply(comparator);
  HloInstruction* sorted = computation->AddInstruction(std::move(sort));

  std::vector<int64_t> starts(shape.rank(), 0), limits = shape.dimensions(),
                                                strides(shape.rank(), 1);
  limits[last] = k;
  std::vector<HloInstruction*> elements;
  for (int64_t i = 0; i < 2; ++i) {
    HloInstruction* full = MakeGetTupleElement(sorted, i);
    Shape sliced = full->shape();
    sliced.set_dimensions(last, k);
    elements.push_back(MakeSlice(full, sliced, starts, limits, strides));
  }
  return MakeTuple(computation, elements);
}

absl::StatusOr<HloInstruction*> Decompose(HloInstruction* instruction) {
  const auto& topk = *cast<HloTopKInstruction>(instruction);
  HloComputation* computation = instruction->parent();
  if (instruction->operand_count() != 1 || !instruction->operand(0)->shape().IsArray() ||
      instruction->operand(0)->shape().rank() < 1) {
    return PassUnimplemented(kPass, *instruction, "topk needs one operand of rank >= 1");
  }
  HloInstruction* operand = instruction->mutable_operand(0);
  const Shape& shape = operand->shape();
  const PrimitiveType type = shape.element_type();
  if (primitive_util::IsComplexType(type)) {
    return PassUnimplemented(kPass, *instruction, "complex numbers have no order");
  }
  const int64_t last = shape.rank() - 1;
  const int64_t length = shape.dimensions(last);
  if (topk.k() < 0 || topk.k() > length) {
    return PassUnimplemented(kPass, *instruction,
                             absl::StrCat("k=", topk.k(), " but rows have ", length, " elements"));
  }
  return SortAndSlice(operand, topk.k(),
                      MakeComparator(computation->parent(), type, topk.largest()));
}

// XLA's TopK custom calls ("TopK", and "__gpu$TopK" from XLA:GPU's
// dumps): operand [batch?, n], result (values [batch?, k], s32 indices
// [batch?, k]), the comparator of (value, value, index, index) called;
// sorted by it along the last dimension (stably), the first k kept.
absl::StatusOr<HloInstruction*> DecomposeCustomCall(HloInstruction* instruction) {
  const auto* call = dyn_cast<HloCustomCallInstruction>(instruction);
  if (call == nullptr || !IsTopKCustomCall(*call)) return nullptr;
  const Shape& result = instruction->shape();
  if (instruction->operand_count() != 1 || instruction->called_computations().size() != 1 ||
      !instruction->operand(0)->shape().IsArray() || !result.IsTuple() ||
      result.tuple_shapes_size() != 2) {
    return PassUnimplemented(kPass, *instruction,
                             "a TopK call needs one array operand, a comparator and a result of "
                             "(values, indices)");
  }
  HloInstruction* operand = instruction->mutable_operand(0);
  const Shape& shape = operand->shape();
  const Shape& values = result.tuple_shapes(0);
  const Shape& indices = result.tuple_shapes(1);
  const int64_t rank = shape.rank();
  bool fits = rank >= 1 && values.IsArray() && indices.IsArray() && values.rank() == rank &&
              indices.rank() == rank && values.element_type() == shape.element_type() &&
              indices.element_type() == S32 && !primitive_util::IsComplexType(shape.element_type());
  for (int64_t d = 0; fits && d < rank; ++d) {
    const bool last = d == rank - 1;
    fits = indices.dimensions(d) == values.dimensions(d) &&
           (last ? values.dimensions(d) <= shape.dimensions(d)
                 : values.dimensions(d) == shape.dimensions(d));
  }
  const HloComputation* comparator = instruction->called_computations()[0];
  fits = fits && comparator->num_parameters() == 4 &&
         comparator->root_instruction()->shape().element_type() == PRED;
  for (int64_t i = 0; fits && i < 4; ++i) {
    const Shape& parameter = comparator->parameter_instruction(i)->shape();
    fits = parameter.IsArray() && parameter.rank() == 0 &&
           parameter.element_type() == (i < 2 ? shape.element_type() : S32);
  }
  if (!fits) {
    return PassUnimplemented(
        kPass, *instruction,
        absl::StrCat("a TopK call of ", shape.ToString(false), " into ", result.ToString(false),
                     " with its comparator is no top-k of the last dimension"));
  }
  return SortAndSlice(operand, values.dimensions(rank - 1), instruction->to_apply());
}

}  // namespace

bool IsTopKCustomCall(const HloCustomCallInstruction& call) {
  return call.custom_call_target() == "TopK" || call.custom_call_target() == "__gpu$TopK";
}

absl::StatusOr<bool> TopKDecomposer::Run(HloModule* module) {
  return ReplaceEachInstruction(
      module, [&](HloInstruction* instruction) -> absl::StatusOr<HloInstruction*> {
        if (instruction->opcode() == HloOpcode::kCustomCall && custom_calls_) {
          return DecomposeCustomCall(instruction);
        }
        if (instruction->opcode() != HloOpcode::kTopK ||
            (should_decompose_ && !should_decompose_(*instruction))) {
          return nullptr;
        }
        return Decompose(instruction);
      });
}

}  // namespace axle
