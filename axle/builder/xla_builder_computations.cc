// Ops that call computations (reduce, reduce-window, select-and-scatter,
// map, sort, scatter, while, conditional, call, custom calls) and tokens.
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "axle/base/status_macros.h"
#include "axle/builder/xla_builder.h"
#include "axle/builder/xla_builder_internal.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/shape_inference/shape_inference.h"

namespace axle {

using builder_internal::BuilderOf;
using builder_internal::Emit;
using builder_internal::OperandShapes;
using builder_internal::RunOp;

namespace {

// The embedded copy of `computation` and its signature.
struct Callee {
  HloComputation* computation;
  ProgramShape signature;
};
absl::StatusOr<Callee> Embed(XlaBuilder* b, const XlaComputation& computation,
                             absl::string_view role) {
  absl::StatusOr<HloComputation*> embedded = b->AddSubComputation(computation);
  if (!embedded.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(role, ": ", embedded.status().message()));
  }
  AXLE_ASSIGN_OR_RETURN(ProgramShape signature, ShapeInference::ComputationSignature(**embedded));
  return Callee{*embedded, std::move(signature)};
}

std::vector<XlaOp> Concat(absl::Span<const XlaOp> a, absl::Span<const XlaOp> b) {
  std::vector<XlaOp> out(a.begin(), a.end());
  out.insert(out.end(), b.begin(), b.end());
  return out;
}

std::string ShapesToString(absl::Span<const Shape* const> shapes) {
  return absl::StrJoin(shapes, ", ", [](std::string* out, const Shape* shape) {
    out->append(ShapeUtil::HumanString(*shape));
  });
}

}  // namespace

// --- Reductions -----------------------------------------------------------------------

XlaOp Reduce(XlaBuilder* builder, absl::Span<const XlaOp> operands,
             absl::Span<const XlaOp> init_values, const XlaComputation& computation,
             absl::Span<const int64_t> dimensions_to_reduce) {
  return RunOp(builder, "Reduce", [&]() -> absl::StatusOr<XlaOp> {
    if (operands.empty() || operands.size() != init_values.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("expected one init value per operand and at least one operand; got ",
                       operands.size(), " operands and ", init_values.size(), " init values"));
    }
    std::vector<XlaOp> all = Concat(operands, init_values);
    AXLE_ASSIGN_OR_RETURN(std::vector<const Shape*> shapes, OperandShapes(builder, all));
    AXLE_ASSIGN_OR_RETURN(Callee callee, Embed(builder, computation, "to_apply"));
    AXLE_ASSIGN_OR_RETURN(Shape result, ShapeInference::InferReduceShape(
                                            shapes, dimensions_to_reduce, callee.signature));
    return Emit<HloDimensionsInstruction>(
        builder, HloOpcode::kReduce, result, all, [&](HloDimensionsInstruction* instruction) {
          instruction->mutable_attrs()->dimensions.assign(dimensions_to_reduce.begin(),
                                                          dimensions_to_reduce.end());
          instruction->AppendCalledComputation(callee.computation);
        });
  });
}

XlaOp Reduce(XlaOp operand, XlaOp init_value, const XlaComputation& computation,
             absl::Span<const int64_t> dimensions_to_reduce) {
  XlaBuilder* b = BuilderOf({operand, init_value});
  if (b == nullptr) return XlaOp();
  return Reduce(b, {operand}, {init_value}, computation, dimensions_to_reduce);
}

XlaOp ReduceAll(XlaOp operand, XlaOp init_value, const XlaComputation& computation) {
  XlaBuilder* b = BuilderOf({operand, init_value});
  return RunOp(b, "ReduceAll", [&]() -> absl::StatusOr<XlaOp> {
    AXLE_ASSIGN_OR_RETURN(const Shape* shape, b->GetShapePtr(operand));
    if (!shape->IsArray()) {
      return absl::InvalidArgumentError(
          absl::StrCat("expected an array operand; got ", ShapeUtil::HumanString(*shape)));
    }
    std::vector<int64_t> all_dimensions;
    for (int64_t i = 0; i < shape->rank(); ++i) all_dimensions.push_back(i);
    return Reduce(operand, init_value, computation, all_dimensions);
  });
}

XlaOp ReduceWindowWithGeneralPadding(absl::Span<const XlaOp> operands,
                                     absl::Span<const XlaOp> init_values,
                                     const XlaComputation& computation,
                                     absl::Span<const int64_t> window_dimensions,
                                     absl::Span<const int64_t> window_strides,
                                     absl::Span<const int64_t> base_dilations,
                                     absl::Span<const int64_t> window_dilations,
                                     absl::Span<const std::pair<int64_t, int64_t>> padding) {
  XlaBuilder* b = BuilderOf(operands);
  return RunOp(b, "ReduceWindow", [&]() -> absl::StatusOr<XlaOp> {
    if (operands.empty() || operands.size() != init_values.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("expected one init value per operand and at least one operand; got ",
                       operands.size(), " operands and ", init_values.size(), " init values"));
    }
    AXLE_ASSIGN_OR_RETURN(std::vector<const Shape*> operand_shapes, OperandShapes(b, operands));
    AXLE_ASSIGN_OR_RETURN(std::vector<const Shape*> init_shapes, OperandShapes(b, init_values));
    AXLE_ASSIGN_OR_RETURN(Window window,
                          builder_internal::MakeWindow(window_dimensions, window_strides, padding,
                                                       base_dilations, window_dilations));
    AXLE_ASSIGN_OR_RETURN(Callee callee, Embed(b, computation, "to_apply"));
    AXLE_ASSIGN_OR_RETURN(Shape result, ShapeInference::InferReduceWindowShape(
                                            operand_shapes, init_shapes, window, callee.signature));
    return Emit<HloWindowInstruction>(b, HloOpcode::kReduceWindow, result,
                                      Concat(operands, init_values),
                                      [&](HloWindowInstruction* instruction) {
                                        instruction->mutable_attrs()->window = window;
                                        instruction->AppendCalledComputation(callee.computation);
                                      });
  });
}

XlaOp ReduceWindowWithGeneralPadding(XlaOp operand, XlaOp init_value,
                                     const XlaComputation& computation,
                                     absl::Span<const int64_t> window_dimensions,
                                     absl::Span<const int64_t> window_strides,
                                     absl::Span<const int64_t> base_dilations,
                                     absl::Span<const int64_t> window_dilations,
                                     absl::Span<const std::pair<int64_t, int64_t>> padding) {
  return ReduceWindowWithGeneralPadding(
      absl::Span<const XlaOp>(&operand, 1), absl::Span<const XlaOp>(&init_value, 1), computation,
      window_dimensions, window_strides, base_dilations, window_dilations, padding);
}

XlaOp ReduceWindow(absl::Span<const XlaOp> operands, absl::Span<const XlaOp> init_values,
                   const XlaComputation& computation, absl::Span<const int64_t> window_dimensions,
                   absl::Span<const int64_t> window_strides, Padding padding) {
  XlaBuilder* b = BuilderOf(operands);
  return RunOp(b, "ReduceWindow", [&]() -> absl::StatusOr<XlaOp> {
    if (operands.empty()) return absl::InvalidArgumentError("expected at least one operand");
    AXLE_ASSIGN_OR_RETURN(const Shape* shape, b->GetShapePtr(operands[0]));
    if (!shape->IsArray()) {
      return absl::InvalidArgumentError(
          absl::StrCat("expected array operands; got ", ShapeUtil::HumanString(*shape)));
    }
    AXLE_RETURN_IF_ERROR(
        ValidatePaddingValues(shape->dimensions(), window_dimensions, window_strides));
    return ReduceWindowWithGeneralPadding(
        operands, init_values, computation, window_dimensions, window_strides, {}, {},
        MakePadding(shape->dimensions(), window_dimensions, window_strides, padding));
  });
}

XlaOp ReduceWindow(XlaOp operand, XlaOp init_value, const XlaComputation& computation,
                   absl::Span<const int64_t> window_dimensions,
                   absl::Span<const int64_t> window_strides, Padding padding) {
  return ReduceWindow(absl::Span<const XlaOp>(&operand, 1), absl::Span<const XlaOp>(&init_value, 1),
                      computation, window_dimensions, window_strides, padding);
}

XlaOp SelectAndScatterWithGeneralPadding(XlaOp operand, const XlaComputation& select,
                                         absl::Span<const int64_t> window_dimensions,
                                         absl::Span<const int64_t> window_strides,
                                         absl::Span<const std::pair<int64_t, int64_t>> padding,
                                         XlaOp source, XlaOp init_value,
                                         const XlaComputation& scatter) {
  XlaBuilder* b = BuilderOf({operand, source, init_value});
  return RunOp(b, "SelectAndScatter", [&]() -> absl::StatusOr<XlaOp> {
    AXLE_ASSIGN_OR_RETURN(auto shapes, OperandShapes(b, {operand, source, init_value}));
    AXLE_ASSIGN_OR_RETURN(Window window, builder_internal::MakeWindow(
                                             window_dimensions, window_strides, padding, {}, {}));
    AXLE_ASSIGN_OR_RETURN(Callee select_callee, Embed(b, select, "select"));
    AXLE_ASSIGN_OR_RETURN(Callee scatter_callee, Embed(b, scatter, "scatter"));
    AXLE_ASSIGN_OR_RETURN(Shape result, ShapeInference::InferSelectAndScatterShape(
                                            *shapes[0], select_callee.signature, window, *shapes[1],
                                            *shapes[2], scatter_callee.signature));
    return Emit<HloWindowInstruction>(
        b, HloOpcode::kSelectAndScatter, result, {operand, source, init_value},
        [&](HloWindowInstruction* instruction) {
          instruction->mutable_attrs()->window = window;
          instruction->AppendCalledComputation(select_callee.computation);
          instruction->AppendCalledComputation(scatter_callee.computation);
        });
  });
}

XlaOp SelectAndScatter(XlaOp operand, const XlaComputation& select,
                       absl::Span<const int64_t> window_dimensions,
                       absl::Span<const int64_t> window_strides, Padding padding, XlaOp source,
                       XlaOp init_value, const XlaComputation& scatter) {
  XlaBuilder* b = BuilderOf({operand, source, init_value});
  return RunOp(b, "SelectAndScatter", [&]() -> absl::StatusOr<XlaOp> {
    AXLE_ASSIGN_OR_RETURN(const Shape* shape, b->GetShapePtr(operand));
    if (!shape->IsArray()) {
      return absl::InvalidArgumentError(
          absl::StrCat("expected an array operand; got ", ShapeUtil::HumanString(*shape)));
    }
    AXLE_RETURN_IF_ERROR(
        ValidatePaddingValues(shape->dimensions(), window_dimensions, window_strides));
    return SelectAndScatterWithGeneralPadding(
        operand, select, window_dimensions, window_strides,
        MakePadding(shape->dimensions(), window_dimensions, window_strides, padding), source,
        init_value, scatter);
  });
}

// --- Map, sort, scatter ------------------------------------------------------------------

XlaOp Map(XlaBuilder* builder, absl::Span<const XlaOp> operands, const XlaComputation& computation,
          absl::Span<const int64_t> dimensions, absl::Span<const XlaOp> static_operands) {
  return RunOp(builder, "Map", [&]() -> absl::StatusOr<XlaOp> {
    if (!static_operands.empty()) {
      return absl::UnimplementedError("static_operands is not supported in Map");
    }
    if (operands.empty()) return absl::InvalidArgumentError("expected at least one operand");
    AXLE_ASSIGN_OR_RETURN(std::vector<const Shape*> shapes, OperandShapes(builder, operands));
    AXLE_ASSIGN_OR_RETURN(Callee callee, Embed(builder, computation, "to_apply"));
    AXLE_ASSIGN_OR_RETURN(Shape result,
                          ShapeInference::InferMapShape(shapes, callee.signature, dimensions));
    // Scalar operands are broadcast to the result's dimensions, as in XLA.
    std::vector<XlaOp> mapped(operands.begin(), operands.end());
    for (size_t i = 0; i < mapped.size(); ++i) {
      if (shapes[i]->rank() != result.rank()) {
        Shape target = ShapeUtil::ChangeElementType(result, shapes[i]->element_type());
        AXLE_ASSIGN_OR_RETURN(mapped[i],
                              builder_internal::InDimBroadcast(builder, target, mapped[i], {}));
      }
    }
    std::vector<int64_t> all_dimensions;
    for (int64_t i = 0; i < result.rank(); ++i) all_dimensions.push_back(i);
    return Emit<HloDimensionsInstruction>(
        builder, HloOpcode::kMap, result, mapped, [&](HloDimensionsInstruction* instruction) {
          instruction->mutable_attrs()->dimensions = all_dimensions;
          instruction->AppendCalledComputation(callee.computation);
        });
  });
}

XlaOp Sort(absl::Span<const XlaOp> operands, const XlaComputation& comparator, int64_t dimension,
           bool is_stable) {
  XlaBuilder* b = BuilderOf(operands);
  return RunOp(b, "Sort", [&]() -> absl::StatusOr<XlaOp> {
    AXLE_ASSIGN_OR_RETURN(std::vector<const Shape*> shapes, OperandShapes(b, operands));
    AXLE_ASSIGN_OR_RETURN(Shape result,
                          ShapeInference::InferVariadicOpShape(HloOpcode::kSort, shapes));
    for (const Shape* shape : shapes) {
      if (!shape->IsArray()) {
        return absl::InvalidArgumentError(
            absl::StrCat("expected array operands; got ", ShapesToString(shapes)));
      }
    }
    const int64_t rank = shapes[0]->rank();
    const int64_t sort_dimension = dimension == -1 ? rank - 1 : dimension;
    if (sort_dimension < 0 || sort_dimension >= rank) {
      return absl::InvalidArgumentError(
          absl::StrCat("dimension ", dimension, " is out of range for operands of rank ", rank));
    }
    AXLE_ASSIGN_OR_RETURN(Callee callee, Embed(b, comparator, "comparator"));
    const ProgramShape& sig = callee.signature;
    bool signature_ok = sig.parameters().size() == 2 * shapes.size() && sig.result().IsScalar() &&
                        sig.result().element_type() == PRED;
    for (size_t i = 0; signature_ok && i < sig.parameters().size(); ++i) {
      signature_ok = sig.parameters()[i].IsScalar() &&
                     sig.parameters()[i].element_type() == shapes[i / 2]->element_type();
    }
    if (!signature_ok) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the comparator must take two scalars of each operand's element type and return "
          "pred[]; operands are ",
          ShapesToString(shapes), ", comparator is ", sig.ToString()));
    }
    return Emit<HloSortInstruction>(b, HloOpcode::kSort, result, operands,
                                    [&](HloSortInstruction* instruction) {
                                      instruction->mutable_attrs()->sort_dimension = sort_dimension;
                                      instruction->mutable_attrs()->is_stable = is_stable;
                                      instruction->AppendCalledComputation(callee.computation);
                                    });
  });
}

XlaOp TopK(XlaOp operand, int64_t k, bool largest) {
  XlaBuilder* b = operand.builder();
  return RunOp(b, "TopK", [&]() -> absl::StatusOr<XlaOp> {
    AXLE_ASSIGN_OR_RETURN(const Shape* shape, b->GetShapePtr(operand));
    AXLE_ASSIGN_OR_RETURN(Shape result, ShapeInference::InferTopKShape(*shape, k));
    return Emit<HloTopKInstruction>(b, HloOpcode::kTopK, result, {operand},
                                    [&](HloTopKInstruction* instruction) {
                                      instruction->mutable_attrs()->k = k;
                                      instruction->mutable_attrs()->largest = largest;
                                    });
  });
}

XlaOp Scatter(absl::Span<const XlaOp> inputs, XlaOp scatter_indices,
              absl::Span<const XlaOp> updates, const XlaComputation& update_computation,
              const ScatterDimensionNumbers& dimension_numbers, bool indices_are_sorted,
              bool unique_indices) {
  XlaBuilder* b = BuilderOf(Concat(inputs, {scatter_indices}));
  return RunOp(b, "Scatter", [&]() -> absl::StatusOr<XlaOp> {
    if (inputs.empty() || inputs.size() != updates.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("expected one update per input and at least one input; got ", inputs.size(),
                       " inputs and ", updates.size(), " updates"));
    }
    std::vector<XlaOp> all = Concat(Concat(inputs, {scatter_indices}), updates);
    AXLE_ASSIGN_OR_RETURN(std::vector<const Shape*> shapes, OperandShapes(b, all));
    AXLE_ASSIGN_OR_RETURN(Callee callee, Embed(b, update_computation, "update_computation"));
    AXLE_ASSIGN_OR_RETURN(Shape result, ShapeInference::InferScatterShape(shapes, callee.signature,
                                                                          dimension_numbers));
    return Emit<HloScatterInstruction>(b, HloOpcode::kScatter, result, all,
                                       [&](HloScatterInstruction* instruction) {
                                         ScatterAttrs* attrs = instruction->mutable_attrs();
                                         attrs->scatter_dimension_numbers = dimension_numbers;
                                         attrs->indices_are_sorted = indices_are_sorted;
                                         attrs->unique_indices = unique_indices;
                                         instruction->AppendCalledComputation(callee.computation);
                                       });
  });
}

XlaOp Scatter(XlaOp input, XlaOp scatter_indices, XlaOp updates,
              const XlaComputation& update_computation,
              const ScatterDimensionNumbers& dimension_numbers, bool indices_are_sorted,
              bool unique_indices) {
  return Scatter(absl::Span<const XlaOp>(&input, 1), scatter_indices,
                 absl::Span<const XlaOp>(&updates, 1), update_computation, dimension_numbers,
                 indices_are_sorted, unique_indices);
}

// --- Control flow ---------------------------------------------------------------------------

XlaOp While(const XlaComputation& condition, const XlaComputation& body, XlaOp init) {
  XlaBuilder* b = init.builder();
  return RunOp(b, "While", [&]() -> absl::StatusOr<XlaOp> {
    AXLE_ASSIGN_OR_RETURN(const Shape* shape, b->GetShapePtr(init));
    AXLE_ASSIGN_OR_RETURN(Callee condition_callee, Embed(b, condition, "condition"));
    AXLE_ASSIGN_OR_RETURN(Callee body_callee, Embed(b, body, "body"));
    AXLE_ASSIGN_OR_RETURN(
        Shape result,
        ShapeInference::InferWhileShape(condition_callee.signature, body_callee.signature, *shape));
    AXLE_ASSIGN_OR_RETURN(std::vector<HloInstruction*> operands, b->LookUpInstructions({init}));
    auto instruction = HloInstruction::Create(HloOpcode::kWhile, result, operands);
    instruction->AppendCalledComputation(condition_callee.computation);
    instruction->AppendCalledComputation(body_callee.computation);
    return b->AddInstruction(std::move(instruction));
  });
}

namespace {
XlaOp ConditionalImpl(XlaOp branch_index,
                      absl::Span<const XlaComputation* const> branch_computations,
                      absl::Span<const XlaOp> branch_operands) {
  XlaBuilder* b = BuilderOf(Concat({branch_index}, branch_operands));
  return RunOp(b, "Conditional", [&]() -> absl::StatusOr<XlaOp> {
    if (branch_computations.empty() || branch_computations.size() != branch_operands.size()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "expected one operand per branch and at least one branch; got ",
          branch_computations.size(), " branches and ", branch_operands.size(), " operands"));
    }
    AXLE_ASSIGN_OR_RETURN(const Shape* index_shape, b->GetShapePtr(branch_index));
    AXLE_ASSIGN_OR_RETURN(std::vector<Shape> operand_shapes, b->GetOperandShapes(branch_operands));
    std::vector<HloComputation*> computations;
    std::vector<ProgramShape> signatures;
    for (size_t i = 0; i < branch_computations.size(); ++i) {
      if (branch_computations[i] == nullptr) {
        return absl::InvalidArgumentError(absl::StrCat("branch computation ", i, " is null"));
      }
      AXLE_ASSIGN_OR_RETURN(Callee callee,
                            Embed(b, *branch_computations[i], absl::StrCat("branch ", i)));
      computations.push_back(callee.computation);
      signatures.push_back(std::move(callee.signature));
    }
    AXLE_ASSIGN_OR_RETURN(Shape result, ShapeInference::InferConditionalShape(
                                            *index_shape, signatures, operand_shapes));
    AXLE_ASSIGN_OR_RETURN(std::vector<HloInstruction*> operands,
                          b->LookUpInstructions(Concat({branch_index}, branch_operands)));
    auto instruction = HloInstruction::Create(HloOpcode::kConditional, result, operands);
    for (HloComputation* computation : computations) {
      instruction->AppendCalledComputation(computation);
    }
    return b->AddInstruction(std::move(instruction));
  });
}
}  // namespace

XlaOp Conditional(XlaOp predicate, XlaOp true_operand, const XlaComputation& true_computation,
                  XlaOp false_operand, const XlaComputation& false_computation) {
  XlaBuilder* b = BuilderOf({predicate, true_operand, false_operand});
  return RunOp(b, "Conditional", [&]() -> absl::StatusOr<XlaOp> {
    AXLE_ASSIGN_OR_RETURN(const Shape* shape, b->GetShapePtr(predicate));
    if (!shape->IsScalar() || shape->element_type() != PRED) {
      return absl::InvalidArgumentError(absl::StrCat("the predicate must be a pred[] scalar; got ",
                                                     ShapeUtil::HumanString(*shape)));
    }
    const XlaComputation* branches[] = {&true_computation, &false_computation};
    return ConditionalImpl(predicate, branches, {true_operand, false_operand});
  });
}

XlaOp Conditional(XlaOp branch_index, absl::Span<const XlaComputation* const> branch_computations,
                  absl::Span<const XlaOp> branch_operands) {
  return ConditionalImpl(branch_index, branch_computations, branch_operands);
}

XlaOp Call(XlaBuilder* builder, const XlaComputation& computation,
           absl::Span<const XlaOp> operands) {
  return RunOp(builder, "Call", [&]() -> absl::StatusOr<XlaOp> {
    AXLE_ASSIGN_OR_RETURN(std::vector<const Shape*> shapes, OperandShapes(builder, operands));
    AXLE_ASSIGN_OR_RETURN(Callee callee, Embed(builder, computation, "to_apply"));
    AXLE_ASSIGN_OR_RETURN(Shape result, ShapeInference::InferCallShape(shapes, callee.signature));
    AXLE_ASSIGN_OR_RETURN(std::vector<HloInstruction*> instructions,
                          builder->LookUpInstructions(operands));
    auto instruction = HloInstruction::Create(HloOpcode::kCall, result, instructions);
    instruction->AppendCalledComputation(callee.computation);
    return builder->AddInstruction(std::move(instruction));
  });
}

// --- Tokens ---------------------------------------------------------------------------------

XlaOp CreateToken(XlaBuilder* builder) {
  return RunOp(builder, "CreateToken", [&]() {
    return Emit(builder, HloOpcode::kAfterAll, ShapeUtil::MakeTokenShape(), {});
  });
}

XlaOp AfterAll(XlaBuilder* builder, absl::Span<const XlaOp> tokens) {
  return RunOp(builder, "AfterAll", [&]() -> absl::StatusOr<XlaOp> {
    if (tokens.empty()) {
      return absl::InvalidArgumentError("AfterAll requires at least one operand");
    }
    AXLE_ASSIGN_OR_RETURN(std::vector<const Shape*> shapes, OperandShapes(builder, tokens));
    for (size_t i = 0; i < shapes.size(); ++i) {
      if (!shapes[i]->IsToken()) {
        return absl::InvalidArgumentError(absl::StrCat("all operands must be tokens; operand ", i,
                                                       " is ", ShapeUtil::HumanString(*shapes[i])));
      }
    }
    return Emit(builder, HloOpcode::kAfterAll, ShapeUtil::MakeTokenShape(), tokens);
  });
}

// --- Custom calls ---------------------------------------------------------------------------

namespace builder_internal {

absl::StatusOr<XlaOp> EmitCustomCall(XlaBuilder* builder, absl::Span<const XlaOp> operands,
                                     const CustomCallSpec& spec) {
  if (absl::StartsWith(spec.target, "$")) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid custom_call_target \"", spec.target,
                     "\": call targets that start with '$' are reserved for internal use"));
  }
  AXLE_ASSIGN_OR_RETURN(std::vector<const Shape*> shapes, OperandShapes(builder, operands));
  AXLE_ASSIGN_OR_RETURN(Shape shape, ValidatedShape(spec.shape));
  if (spec.operand_shapes_with_layout.has_value()) {
    bool has_layouts = true;
    ShapeUtil::ForEachSubshape(spec.shape, [&](const Shape& subshape, const ShapeIndex&) {
      if (subshape.IsArray() && !subshape.has_layout()) has_layouts = false;
    });
    if (!has_layouts) {
      return absl::InvalidArgumentError(
          "the result shape must have a layout for a custom call with constrained layouts");
    }
    const std::vector<Shape>& constraints = *spec.operand_shapes_with_layout;
    if (constraints.size() != operands.size()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "expected ", operands.size(), " operand shapes with layout, got ", constraints.size()));
    }
    for (size_t i = 0; i < constraints.size(); ++i) {
      bool operand_has_layouts = true;
      ShapeUtil::ForEachSubshape(constraints[i], [&](const Shape& subshape, const ShapeIndex&) {
        if (subshape.IsArray() && !subshape.has_layout()) operand_has_layouts = false;
      });
      if (!operand_has_layouts) {
        return absl::InvalidArgumentError(absl::StrCat(
            "operand shape ", i, " (", ShapeUtil::HumanString(constraints[i]), ") has no layout"));
      }
      AXLE_RETURN_IF_ERROR(ValidatedShape(constraints[i]).status());
      if (!ShapeUtil::Compatible(constraints[i], *shapes[i])) {
        return absl::InvalidArgumentError(absl::StrCat(
            "operand shape with layout ", i, " (", ShapeUtil::HumanStringWithLayout(constraints[i]),
            ") is not compatible with the operand's shape ", ShapeUtil::HumanString(*shapes[i])));
      }
    }
  }
  for (const OutputOperandAlias& alias : spec.aliasing) {
    if (!ShapeUtil::IndexIsValid(shape, alias.output_index)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "output_operand_aliasing: output index ", ShapeIndexToString(alias.output_index),
          " does not exist in the result shape ", ShapeUtil::HumanString(shape)));
    }
    if (alias.operand_number < 0 || alias.operand_number >= static_cast<int64_t>(shapes.size())) {
      return absl::InvalidArgumentError(absl::StrCat("output_operand_aliasing: operand ",
                                                     alias.operand_number, " does not exist (",
                                                     shapes.size(), " operands)"));
    }
    const Shape& operand_shape = *shapes[alias.operand_number];
    if (!ShapeUtil::IndexIsValid(operand_shape, alias.operand_index)) {
      return absl::InvalidArgumentError(
          absl::StrCat("output_operand_aliasing: index ", ShapeIndexToString(alias.operand_index),
                       " does not exist in operand ", alias.operand_number, " of shape ",
                       ShapeUtil::HumanString(operand_shape)));
    }
    const Shape& output = ShapeUtil::GetSubshape(shape, alias.output_index);
    const Shape& input = ShapeUtil::GetSubshape(operand_shape, alias.operand_index);
    if (!ShapeUtil::Compatible(output, input)) {
      return absl::InvalidArgumentError(
          absl::StrCat("output_operand_aliasing: output ", ShapeIndexToString(alias.output_index),
                       " (", ShapeUtil::HumanString(output), ") and operand ", alias.operand_number,
                       " at ", ShapeIndexToString(alias.operand_index), " (",
                       ShapeUtil::HumanString(input), ") must have the same shape"));
    }
  }
  if (spec.api_version == API_VERSION_UNSPECIFIED) {
    return absl::InvalidArgumentError("invalid API version: API_VERSION_UNSPECIFIED");
  }
  HloComputation* called = nullptr;
  if (spec.computation != nullptr) {
    AXLE_ASSIGN_OR_RETURN(Callee callee, Embed(builder, *spec.computation, "computation"));
    called = callee.computation;
  }
  return Emit<HloCustomCallInstruction>(
      builder, HloOpcode::kCustomCall, shape, operands, [&](HloCustomCallInstruction* instruction) {
        CustomCallAttrs* attrs = instruction->mutable_attrs();
        attrs->custom_call_target = spec.target;
        attrs->custom_call_has_side_effect = spec.has_side_effect;
        attrs->output_to_operand_aliasing = spec.aliasing;
        attrs->schedule = spec.schedule;
        attrs->api_version = spec.api_version;
        if (spec.literal != nullptr) attrs->literal = *spec.literal;
        if (spec.operand_shapes_with_layout.has_value()) {
          attrs->operand_layout_constraints = spec.operand_shapes_with_layout;
        }
        attrs->window = spec.window;
        attrs->convolution_dimension_numbers = spec.dnums;
        // As in XLA, the opaque string is the instruction's backend config.
        instruction->set_raw_backend_config_string(spec.opaque);
        if (called != nullptr) instruction->AppendCalledComputation(called);
      });
}

}  // namespace builder_internal

namespace {
builder_internal::CustomCallSpec MakeSpec(
    const std::string& target, const Shape& shape, const std::string& opaque, bool has_side_effect,
    absl::Span<const CustomCallOutputOperandAliasing> aliasing, const Literal* literal,
    CustomCallSchedule schedule, CustomCallApiVersion api_version) {
  builder_internal::CustomCallSpec spec;
  spec.target = target;
  spec.shape = shape;
  spec.opaque = opaque;
  spec.has_side_effect = has_side_effect;
  for (const auto& [output_index, operand] : aliasing) {
    spec.aliasing.push_back(OutputOperandAlias{output_index, operand.first, operand.second});
  }
  spec.literal = literal;
  spec.schedule = schedule;
  spec.api_version = api_version;
  return spec;
}
}  // namespace

XlaOp CustomCall(XlaBuilder* builder, const std::string& call_target_name,
                 absl::Span<const XlaOp> operands, const Shape& shape, const std::string& opaque,
                 bool has_side_effect,
                 absl::Span<const CustomCallOutputOperandAliasing> output_operand_aliasing,
                 const Literal* literal, CustomCallSchedule schedule,
                 CustomCallApiVersion api_version) {
  return RunOp(builder, "CustomCall", [&]() {
    return builder_internal::EmitCustomCall(
        builder, operands,
        MakeSpec(call_target_name, shape, opaque, has_side_effect, output_operand_aliasing, literal,
                 schedule, api_version));
  });
}

XlaOp CustomCallWithComputation(
    XlaBuilder* builder, const std::string& call_target_name, absl::Span<const XlaOp> operands,
    const XlaComputation& computation, const Shape& shape, const std::string& opaque,
    bool has_side_effect, absl::Span<const CustomCallOutputOperandAliasing> output_operand_aliasing,
    const Literal* literal, CustomCallSchedule schedule, CustomCallApiVersion api_version) {
  return RunOp(builder, "CustomCallWithComputation", [&]() {
    builder_internal::CustomCallSpec spec =
        MakeSpec(call_target_name, shape, opaque, has_side_effect, output_operand_aliasing, literal,
                 schedule, api_version);
    spec.computation = &computation;
    return builder_internal::EmitCustomCall(builder, operands, spec);
  });
}

XlaOp CustomCallWithLayout(
    XlaBuilder* builder, const std::string& call_target_name, absl::Span<const XlaOp> operands,
    const Shape& shape_with_layout, absl::Span<const Shape> operand_shapes_with_layout,
    const std::string& opaque, bool has_side_effect,
    absl::Span<const CustomCallOutputOperandAliasing> output_operand_aliasing,
    const Literal* literal, CustomCallSchedule schedule, CustomCallApiVersion api_version) {
  return RunOp(builder, "CustomCallWithLayout", [&]() {
    builder_internal::CustomCallSpec spec =
        MakeSpec(call_target_name, shape_with_layout, opaque, has_side_effect,
                 output_operand_aliasing, literal, schedule, api_version);
    spec.operand_shapes_with_layout =
        std::vector<Shape>(operand_shapes_with_layout.begin(), operand_shapes_with_layout.end());
    return builder_internal::EmitCustomCall(builder, operands, spec);
  });
}

XlaOp CustomCallWithConvDnums(
    XlaBuilder* builder, const std::string& call_target_name, absl::Span<const XlaOp> operands,
    const Shape& shape, absl::Span<const Shape> operand_shapes_with_layout,
    const std::string& opaque, bool has_side_effect,
    absl::Span<const CustomCallOutputOperandAliasing> output_operand_aliasing,
    const Literal* literal, Window window, ConvolutionDimensionNumbers dnums,
    CustomCallSchedule schedule, CustomCallApiVersion api_version) {
  return RunOp(builder, "CustomCallWithConvDnums", [&]() {
    builder_internal::CustomCallSpec spec =
        MakeSpec(call_target_name, shape, opaque, has_side_effect, output_operand_aliasing, literal,
                 schedule, api_version);
    if (!operand_shapes_with_layout.empty()) {
      spec.operand_shapes_with_layout =
          std::vector<Shape>(operand_shapes_with_layout.begin(), operand_shapes_with_layout.end());
    }
    spec.window = std::move(window);
    spec.dnums = std::move(dnums);
    return builder_internal::EmitCustomCall(builder, operands, spec);
  });
}

}  // namespace axle
