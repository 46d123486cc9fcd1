//===- hlo_creation_utils.cc - Adding new instructions to a computation ----===//
#include "axle/hlo/transforms/hlo_creation_utils.h"

#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "axle/base/logging.h"
#include "axle/core/shape_util.h"
#include "axle/hlo/ir/hlo_instructions.h"

namespace axle {

absl::Status PassUnimplemented(absl::string_view pass, const HloInstruction& instruction,
                               absl::string_view why) {
  return absl::UnimplementedError(absl::StrCat(pass, ": ", why, " (instruction %",
                                               instruction.name(), ", ",
                                               HloOpcodeString(instruction.opcode()), ")"));
}

Shape WithDescendingLayout(Shape shape) {
  if (shape.IsArray()) shape.set_layout(ShapeUtil::MakeDescendingLayout(shape.rank()));
  return shape;
}

bool SameShapeAndLayout(const Shape& a, const Shape& b) {
  if (!a.IsArray() || !b.IsArray()) return a == b;
  if (a.element_type() != b.element_type() || a.dimensions() != b.dimensions() ||
      a.dynamic_dimensions() != b.dynamic_dimensions()) {
    return false;
  }
  if (a.has_layout() && b.has_layout()) return a.layout() == b.layout();
  return ShapeUtil::HasDescendingLayout(a) && ShapeUtil::HasDescendingLayout(b);
}

HloInstruction* MakeConstant(HloComputation* computation, Literal literal) {
  Shape shape = WithDescendingLayout(literal.shape());
  auto constant = std::make_unique<HloConstantInstruction>(HloOpcode::kConstant, shape,
                                                           absl::Span<HloInstruction* const>{});
  constant->mutable_attrs()->literal = std::move(literal);
  return computation->AddInstruction(std::move(constant));
}

HloInstruction* MakeFilledArray(HloComputation* computation, const Literal& value,
                                const Shape& shape) {
  CHECK(value.shape().IsScalar());
  Literal scalar = value.shape().element_type() == shape.element_type()
                       ? value
                       : value.Convert(shape.element_type()).value();
  HloInstruction* constant = MakeConstant(computation, std::move(scalar));
  if (shape.rank() == 0) return constant;
  return MakeBroadcast(constant, shape, {});
}

HloInstruction* MakeTuple(HloComputation* computation,
                          const std::vector<HloInstruction*>& elements) {
  std::vector<Shape> shapes;
  shapes.reserve(elements.size());
  for (const HloInstruction* element : elements) shapes.push_back(element->shape());
  return computation->AddInstruction(
      HloInstruction::Create(HloOpcode::kTuple, ShapeUtil::MakeTupleShape(shapes), elements));
}

HloInstruction* MakeGetTupleElement(HloInstruction* tuple, int64_t index) {
  auto element = std::make_unique<HloGetTupleElementInstruction>(
      HloOpcode::kGetTupleElement, tuple->shape().tuple_shapes(index),
      absl::Span<HloInstruction* const>{&tuple, 1});
  element->mutable_attrs()->tuple_index = index;
  return tuple->parent()->AddInstruction(std::move(element));
}

HloInstruction* MakeBroadcast(HloInstruction* operand, const Shape& shape,
                              absl::Span<const int64_t> dimensions) {
  auto broadcast = std::make_unique<HloDimensionsInstruction>(
      HloOpcode::kBroadcast, shape.has_layout() ? shape : WithDescendingLayout(shape),
      absl::Span<HloInstruction* const>{&operand, 1});
  broadcast->mutable_attrs()->dimensions.assign(dimensions.begin(), dimensions.end());
  return operand->parent()->AddInstruction(std::move(broadcast));
}

HloInstruction* MakeReshape(HloInstruction* operand, const Shape& shape) {
  CHECK_EQ(shape.num_elements(), operand->shape().num_elements());
  auto reshape = std::make_unique<HloReshapeInstruction>(
      HloOpcode::kReshape, shape.has_layout() ? shape : WithDescendingLayout(shape),
      absl::Span<HloInstruction* const>{&operand, 1});
  return operand->parent()->AddInstruction(std::move(reshape));
}

HloInstruction* MakeTranspose(HloInstruction* operand, absl::Span<const int64_t> permutation) {
  const Shape& in = operand->shape();
  CHECK_EQ(static_cast<int64_t>(permutation.size()), in.rank());
  std::vector<int64_t> dims;
  for (int64_t p : permutation) dims.push_back(in.dimensions(p));
  Shape shape = ShapeUtil::MakeShapeWithDescendingLayout(in.element_type(), dims);
  auto transpose = std::make_unique<HloDimensionsInstruction>(
      HloOpcode::kTranspose, shape, absl::Span<HloInstruction* const>{&operand, 1});
  transpose->mutable_attrs()->dimensions.assign(permutation.begin(), permutation.end());
  return operand->parent()->AddInstruction(std::move(transpose));
}

HloInstruction* MakeBitcast(HloInstruction* operand, const Shape& shape) {
  return operand->parent()->AddInstruction(
      HloInstruction::Create(HloOpcode::kBitcast, shape, {operand}));
}

HloInstruction* MakeConvert(HloInstruction* operand, PrimitiveType type) {
  if (operand->shape().element_type() == type) return operand;
  Shape shape = operand->shape();
  shape.set_element_type(type);
  return operand->parent()->AddInstruction(
      HloInstruction::Create(HloOpcode::kConvert, shape, {operand}));
}

HloInstruction* MakeSlice(HloInstruction* operand, const Shape& shape, std::vector<int64_t> starts,
                          std::vector<int64_t> limits, std::vector<int64_t> strides) {
  auto slice = std::make_unique<HloSliceInstruction>(
      HloOpcode::kSlice, shape.has_layout() ? shape : WithDescendingLayout(shape),
      absl::Span<HloInstruction* const>{&operand, 1});
  slice->mutable_attrs()->starts = std::move(starts);
  slice->mutable_attrs()->limits = std::move(limits);
  slice->mutable_attrs()->strides = std::move(strides);
  return operand->parent()->AddInstruction(std::move(slice));
}

HloInstruction* MakeBinary(HloOpcode opcode, HloInstruction* lhs, HloInstruction* rhs,
                           const Shape& shape) {
  return lhs->parent()->AddInstruction(HloInstruction::Create(opcode, shape, {lhs, rhs}));
}

HloComputation* AddScalarCombiner(HloModule* module, absl::string_view name, HloOpcode opcode,
                                  PrimitiveType type) {
  // Names unique in the module: a module may already use "lhs" (or `name`).
  auto computation = std::make_unique<HloComputation>(module->GetUniqueName(name));
  const Shape scalar = ShapeUtil::MakeScalarShape(type);
  std::vector<HloInstruction*> parameters;
  for (int64_t i = 0; i < 2; ++i) {
    auto parameter = std::make_unique<HloParameterInstruction>(HloOpcode::kParameter, scalar,
                                                               absl::Span<HloInstruction* const>{});
    parameter->mutable_attrs()->parameter_number = i;
    parameter->SetName(module->GetUniqueName(i == 0 ? "lhs" : "rhs"));
    parameters.push_back(computation->AddInstruction(std::move(parameter)));
  }
  computation->set_root_instruction(
      computation->AddInstruction(HloInstruction::Create(opcode, scalar, parameters)));
  return module->AddEmbeddedComputation(std::move(computation));
}

std::vector<int64_t> InversePermutation(absl::Span<const int64_t> permutation) {
  std::vector<int64_t> inverse(permutation.size());
  for (size_t i = 0; i < permutation.size(); ++i) {
    CHECK(permutation[i] >= 0 && permutation[i] < static_cast<int64_t>(permutation.size()));
    inverse[permutation[i]] = static_cast<int64_t>(i);
  }
  return inverse;
}

std::vector<int64_t> ComposePermutations(absl::Span<const int64_t> inner,
                                         absl::Span<const int64_t> outer) {
  std::vector<int64_t> result;
  result.reserve(outer.size());
  for (int64_t o : outer) result.push_back(inner[o]);
  return result;
}

bool IsIdentityPermutation(absl::Span<const int64_t> permutation) {
  for (size_t i = 0; i < permutation.size(); ++i) {
    if (permutation[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

}  // namespace axle
