//===- bf16_reductions_in_f32.cc - bf16 reductions accumulated in f32 ------===//
#include "axle/hlo/transforms/bf16_reductions_in_f32.h"

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "axle/base/status_macros.h"
#include "axle/hlo/ir/hlo_computation.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/transforms/hlo_creation_utils.h"

namespace axle {
namespace {

// The element types of an array shape, or of a tuple's array elements.
std::vector<PrimitiveType> LeafTypes(const Shape& shape) {
  if (shape.IsArray()) return {shape.element_type()};
  std::vector<PrimitiveType> types;
  if (!shape.IsTuple()) return types;
  for (const Shape& element : shape.tuple_shapes()) {
    if (!element.IsArray()) return {};
    types.push_back(element.element_type());
  }
  return types;
}

// `shape` with each bf16 array (nested in tuples too) made f32; layouts kept.
Shape Widened(Shape shape) {
  if (shape.IsArray()) {
    if (shape.element_type() == BF16) shape.set_element_type(F32);
    return shape;
  }
  if (shape.IsTuple()) {
    for (Shape& element : *shape.mutable_tuple_shapes()) element = Widened(element);
  }
  return shape;
}

// Whether every instruction of `reducer` computes the same in f32 as in
// bf16 but for rounding: plumbing, array constants and elementwise ops.
bool ReducerWidens(const HloComputation& reducer) {
  for (const HloInstruction* instruction : reducer.instructions()) {
    if (!instruction->called_computations().empty()) return false;
    switch (instruction->opcode()) {
      case HloOpcode::kParameter:
      case HloOpcode::kTuple:
      case HloOpcode::kGetTupleElement:
        continue;
      case HloOpcode::kConstant:
        if (!instruction->shape().IsArray()) return false;
        continue;
      case HloOpcode::kStochasticConvert:
        return false;
      default:
        if (!instruction->IsElementwise()) return false;
    }
  }
  return true;
}

// Whether `instruction` is a reduce or reduce-window with a bf16 result
// whose reducer takes (accumulators..., values...) of the result's element
// types and returns them (as the verifier checks; anything else is left
// for the verifier to name).
bool IsBf16Reduction(const HloInstruction& instruction) {
  if (instruction.opcode() != HloOpcode::kReduce &&
      instruction.opcode() != HloOpcode::kReduceWindow) {
    return false;
  }
  const std::vector<PrimitiveType> types = LeafTypes(instruction.shape());
  bool bf16 = false;
  for (PrimitiveType type : types) bf16 = bf16 || type == BF16;
  if (!bf16 || instruction.called_computations().size() != 1 ||
      instruction.operand_count() != 2 * static_cast<int64_t>(types.size())) {
    return false;
  }
  const HloComputation& reducer = *instruction.called_computations()[0];
  const int64_t n = static_cast<int64_t>(types.size());
  if (reducer.num_parameters() != 2 * n || reducer.root_instruction() == nullptr ||
      LeafTypes(reducer.root_instruction()->shape()) != types) {
    return false;
  }
  for (int64_t i = 0; i < 2 * n; ++i) {
    const Shape& parameter = reducer.parameter_instruction(i)->shape();
    const Shape& operand = instruction.operand(i)->shape();
    if (!parameter.IsArray() || parameter.rank() != 0 || parameter.element_type() != types[i % n] ||
        !operand.IsArray() || operand.element_type() != types[i % n]) {
      return false;
    }
  }
  return ReducerWidens(reducer);
}

// A copy of `reducer` with every bf16 value f32 (bf16 constants converted,
// exactly), added to `module`.
absl::StatusOr<HloComputation*> WidenReducer(HloModule* module, const HloComputation& reducer) {
  auto widened =
      std::make_unique<HloComputation>(module->GetUniqueName(absl::StrCat(reducer.name(), "_f32")));
  absl::flat_hash_map<const HloInstruction*, HloInstruction*> clones;
  auto clone = [&](const HloInstruction* instruction) -> absl::Status {
    if (instruction->opcode() == HloOpcode::kConstant &&
        instruction->shape().element_type() == BF16) {
      AXLE_ASSIGN_OR_RETURN(Literal wide,
                            cast<HloConstantInstruction>(instruction)->literal().Convert(F32));
      clones[instruction] = MakeConstant(widened.get(), std::move(wide));
      return absl::OkStatus();
    }
    std::vector<HloInstruction*> operands;
    for (const HloInstruction* operand : instruction->operands()) {
      operands.push_back(clones.at(operand));
    }
    std::unique_ptr<HloInstruction> copy =
        instruction->CloneWithNewOperands(Widened(instruction->shape()), operands);
    copy->SetName(module->GetUniqueName(instruction->name()));
    clones[instruction] = widened->AddInstruction(std::move(copy));
    return absl::OkStatus();
  };
  // Parameters first, in order (an unused one stays a parameter).
  for (const HloInstruction* parameter : reducer.parameter_instructions()) {
    AXLE_RETURN_IF_ERROR(clone(parameter));
  }
  for (const HloInstruction* instruction : reducer.MakeInstructionPostOrder()) {
    if (instruction->opcode() == HloOpcode::kParameter) continue;
    AXLE_RETURN_IF_ERROR(clone(instruction));
  }
  widened->set_root_instruction(clones.at(reducer.root_instruction()));
  return module->AddEmbeddedComputation(std::move(widened));
}

// `operand` in f32: the f32 value a convert to bf16 rounds, unrounded
// (excess precision, as XLA allows by default), or a convert of it.
HloInstruction* WidenedOperand(HloInstruction* operand) {
  if (operand->shape().element_type() != BF16) return operand;
  if (operand->opcode() == HloOpcode::kConvert &&
      SameShapeAndLayout(operand->operand(0)->shape(), Widened(operand->shape()))) {
    return operand->mutable_operand(0);
  }
  return MakeConvert(operand, F32);
}

// An f32 value that `narrow`'s users read instead: the users that convert
// it to f32 take `wide` itself; the others take it rounded to bf16.
absl::Status ReplaceWithWidened(HloInstruction* narrow, HloInstruction* wide) {
  HloComputation* computation = narrow->parent();
  for (HloInstruction* user : std::vector<HloInstruction*>(narrow->users())) {
    if (user->opcode() == HloOpcode::kConvert && SameShapeAndLayout(user->shape(), wide->shape()) &&
        user->control_predecessors().empty() && user->control_successors().empty()) {
      AXLE_RETURN_IF_ERROR(user->ReplaceAllUsesWith(wide));
      AXLE_RETURN_IF_ERROR(computation->RemoveInstruction(user));
    }
  }
  return absl::OkStatus();
}

absl::Status Widen(HloInstruction* reduction, HloComputation* reducer) {
  HloComputation* computation = reduction->parent();
  std::vector<HloInstruction*> operands;
  for (HloInstruction* operand : reduction->operands()) operands.push_back(WidenedOperand(operand));
  std::unique_ptr<HloInstruction> copy =
      reduction->CloneWithNewOperands(Widened(reduction->shape()), operands);
  copy->set_called_computation(0, reducer);
  HloInstruction* wide = computation->AddInstruction(std::move(copy));
  if (reduction->shape().IsArray()) {
    AXLE_RETURN_IF_ERROR(ReplaceWithWidened(reduction, wide));
    if (reduction->users().empty() && !reduction->IsRoot() &&
        reduction->control_predecessors().empty() && reduction->control_successors().empty()) {
      return computation->RemoveInstructionAndUnusedOperands(reduction);
    }
    return computation->ReplaceInstruction(reduction, MakeConvert(wide, BF16));
  }
  // A variadic reduction: its bf16 elements rounded, the others as they
  // are, through get-tuple-element users where they exist.
  std::vector<HloInstruction*> elements;
  for (int64_t i = 0; i < reduction->shape().tuple_shapes_size(); ++i) {
    HloInstruction* element = MakeGetTupleElement(wide, i);
    if (reduction->shape().tuple_shapes(i).element_type() == BF16) {
      element = MakeConvert(element, BF16);
    }
    elements.push_back(element);
  }
  return computation->ReplaceInstruction(reduction, MakeTuple(computation, elements));
}

}  // namespace

absl::StatusOr<bool> Bf16ReductionsInF32::Run(HloModule* module) {
  bool changed = false;
  absl::flat_hash_map<const HloComputation*, HloComputation*> widened_reducers;
  for (HloComputation* computation : module->MakeComputationPostOrder()) {
    if (computation->IsFusionComputation()) continue;
    // Collected first: widening removes the converts that read a result.
    std::vector<HloInstruction*> reductions;
    for (HloInstruction* instruction : computation->MakeInstructionPostOrder()) {
      if (IsBf16Reduction(*instruction)) reductions.push_back(instruction);
    }
    for (HloInstruction* instruction : reductions) {
      const HloComputation* reducer = instruction->called_computations()[0];
      auto [it, inserted] = widened_reducers.try_emplace(reducer, nullptr);
      if (inserted) {
        AXLE_ASSIGN_OR_RETURN(it->second, WidenReducer(module, *reducer));
      }
      AXLE_RETURN_IF_ERROR(Widen(instruction, it->second));
      changed = true;
    }
  }
  return changed;
}

}  // namespace axle
