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
  sort->set_to_apply(MakeComparator(computation->parent(), type, topk.largest()));
  HloInstruction* sorted = computation->AddInstruction(std::move(sort));

  std::vector<int64_t> starts(shape.rank(), 0), limits = shape.dimensions(),
                                                strides(shape.rank(), 1);
  limits[last] = topk.k();
  std::vector<HloInstruction*> elements;
  for (int64_t i = 0; i < 2; ++i) {
    HloInstruction* full = MakeGetTupleElement(sorted, i);
    Shape sliced = full->shape();
    sliced.set_dimensions(last, topk.k());
    elements.push_back(MakeSlice(full, sliced, starts, limits, strides));
  }
  return MakeTuple(computation, elements);
}

}  // namespace

absl::StatusOr<bool> TopKDecomposer::Run(HloModule* module) {
  return ReplaceEachInstruction(
      module, [&](HloInstruction* instruction) -> absl::StatusOr<HloInstruction*> {
        if (instruction->opcode() != HloOpcode::kTopK ||
            (should_decompose_ && !should_decompose_(*instruction))) {
          return nullptr;
        }
        return Decompose(instruction);
      });
}

}  // namespace axle
