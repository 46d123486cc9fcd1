//===- shape_inference_control.cc - Control flow, collectives, rng ---------===//
//
// while, conditional and call (checked against the called computations'
// signatures), the collectives, rng and rng-bit-generator.
//
//===----------------------------------------------------------------------===//
#include "axle/hlo/shape_inference/shape_inference.h"
#include "axle/hlo/shape_inference/shape_inference_util.h"

namespace axle {

using namespace shape_inference_internal;  // NOLINT

namespace {

Shape OneOrTuple(absl::Span<const Shape* const> shapes) {
  if (shapes.size() == 1) return *shapes[0];
  std::vector<Shape> elements;
  for (const Shape* s : shapes) elements.push_back(*s);
  return ShapeUtil::MakeTupleShape(std::move(elements));
}

}  // namespace

absl::StatusOr<Shape> ShapeInference::InferWhileShape(const ProgramShape& condition,
                                                      const ProgramShape& body, const Shape& init) {
  if (condition.parameters().size() != 1) {
    return InvalidArgument("while: the condition must take 1 parameter; it takes ",
                           condition.parameters().size(), ".");
  }
  if (body.parameters().size() != 1) {
    return InvalidArgument("while: the body must take 1 parameter; it takes ",
                           body.parameters().size(), ".");
  }
  const std::string shapes =
      absl::StrCat("condition: ", Str(condition), "; body: ", Str(body), "; init: ", Str(init));
  if (!CompatibleShapes(condition.result(), MakeScalar(PRED))) {
    return InvalidArgument("while: the condition must return pred[]; got ", shapes, ".");
  }
  if (!CompatibleShapes(body.result(), condition.parameters()[0]) ||
      !CompatibleShapes(body.result(), body.parameters()[0]) ||
      !CompatibleShapes(body.result(), init)) {
    return InvalidArgument(
        "while: the parameter of the condition and of the body, the result of "
        "the body and the init value must all have the same shape; got ",
        shapes, ".");
  }
  return init;
}

absl::StatusOr<Shape> ShapeInference::InferConditionalShape(
    const Shape& branch_index, absl::Span<const ProgramShape> branch_computations,
    absl::Span<const Shape> branch_operands) {
  const bool is_pred = CompatibleShapes(branch_index, MakeScalar(PRED));
  if (!is_pred && !CompatibleShapes(branch_index, MakeScalar(S32))) {
    return InvalidArgument("conditional: the branch index must be pred[] or s32[]; got ",
                           Str(branch_index), ".");
  }
  if (is_pred && branch_computations.size() != 2) {
    return InvalidArgument("conditional: a pred branch index needs exactly 2 branches; got ",
                           branch_computations.size(), ".");
  }
  if (branch_computations.empty()) {
    return InvalidArgument("conditional: expected at least one branch computation.");
  }
  if (branch_computations.size() != branch_operands.size()) {
    return InvalidArgument("conditional: there are ", branch_computations.size(),
                           " branch computations but ", branch_operands.size(),
                           " branch operands.");
  }
  Shape result = branch_computations[0].result();
  for (size_t j = 0; j < branch_computations.size(); ++j) {
    const ProgramShape& branch = branch_computations[j];
    if (branch.parameters().size() != 1) {
      return InvalidArgument("conditional: branch computation ", j,
                             " must take 1 parameter; it takes ", branch.parameters().size(), ".");
    }
    if (!CompatibleShapes(branch.parameters()[0], branch_operands[j])) {
      return InvalidArgument("conditional: branch operand ", j, " (", Str(branch_operands[j]),
                             ") does not match the parameter of branch computation ", j, " (",
                             Str(branch), ").");
    }
    if (!CompatibleShapes(branch_computations[0].result(), branch.result())) {
      return InvalidArgument("conditional: branch 0 returns ", Str(branch_computations[0].result()),
                             " but branch ", j, " returns ", Str(branch.result()),
                             "; all branches must return the same shape.");
    }
  }
  return result;
}

absl::StatusOr<Shape> ShapeInference::InferCallShape(absl::Span<const Shape* const> arguments,
                                                     const ProgramShape& to_apply) {
  if (arguments.size() != to_apply.parameters().size()) {
    return InvalidArgument("call: the called computation takes ", to_apply.parameters().size(),
                           " parameters but there are ", arguments.size(), " arguments (",
                           Str(to_apply), ").");
  }
  for (size_t i = 0; i < arguments.size(); ++i) {
    if (!CompatibleShapes(*arguments[i], to_apply.parameters()[i])) {
      return InvalidArgument("call: argument ", i, " (", Str(*arguments[i]),
                             ") does not match parameter ", i, " of the called computation (",
                             Str(to_apply.parameters()[i]), ").");
    }
  }
  return to_apply.result();
}

absl::StatusOr<Shape> ShapeInference::InferScanShape(absl::Span<const Shape* const> operands,
                                                     int64_t dimension, int64_t num_carries,
                                                     const ProgramShape& to_apply) {
  const int64_t inputs = static_cast<int64_t>(operands.size()) - num_carries;
  if (num_carries < 0 || inputs < 1) {
    return InvalidArgument("scan: expected at least one input before the ", num_carries,
                           " init values; got ", operands.size(), " operands.");
  }
  const Shape& first = *operands[0];
  for (int64_t i = 0; i < inputs; ++i) {
    const Shape& s = *operands[i];
    if (auto st = ExpectArray(s, "input of scan"); !st.ok()) return st;
    if (dimension < 0 || dimension >= s.rank()) {
      return InvalidArgument("scan: dimensions={", dimension, "} is out of range for input ",
                             Str(s), ".");
    }
    if (s.dimensions(dimension) != first.dimensions(dimension)) {
      return InvalidArgument("scan: inputs ", Str(first), " and ", Str(s),
                             " differ in the scan dimension ", dimension, ".");
    }
  }
  if (static_cast<int64_t>(to_apply.parameters().size()) != inputs + num_carries) {
    return InvalidArgument("scan: to_apply must take ", inputs + num_carries,
                           " parameters (one per input and carry); it takes ",
                           to_apply.parameters().size(), ".");
  }
  std::vector<Shape> results;
  if (to_apply.result().IsTuple()) {
    results = to_apply.result().tuple_shapes();
  } else {
    results.push_back(to_apply.result());
  }
  const int64_t outputs = static_cast<int64_t>(results.size()) - num_carries;
  if (outputs < 0) {
    return InvalidArgument("scan: to_apply returns ", results.size(), " values but there are ",
                           num_carries, " carries.");
  }
  std::vector<Shape> elements;
  for (int64_t j = 0; j < outputs; ++j) {
    const Shape& r = results[j];
    if (!r.IsArray() || dimension > r.rank()) {
      return InvalidArgument("scan: output ", j, " of to_apply (", Str(r),
                             ") cannot be stacked along dimension ", dimension, ".");
    }
    std::vector<int64_t> dims = r.dimensions();
    dims.insert(dims.begin() + dimension, first.dimensions(dimension));
    elements.push_back(MakeArray(r.element_type(), dims));
  }
  for (int64_t c = 0; c < num_carries; ++c) {
    const Shape& init = *operands[inputs + c];
    if (!CompatibleShapes(results[outputs + c], init)) {
      return InvalidArgument("scan: carry ", c, " returned by to_apply (",
                             Str(results[outputs + c]), ") differs from its init value (",
                             Str(init), ").");
    }
    elements.push_back(init);
  }
  return ShapeUtil::MakeTupleShape(std::move(elements));
}

absl::StatusOr<Shape> ShapeInference::InferAllReduceShape(absl::Span<const Shape* const> operands) {
  if (operands.empty()) return InvalidArgument("all-reduce: expected at least one operand.");
  for (const Shape* s : operands) {
    if (auto st = ExpectArray(*s, "operand of all-reduce"); !st.ok()) return st;
  }
  return OneOrTuple(operands);
}

absl::StatusOr<Shape> ShapeInference::InferAllGatherShape(absl::Span<const Shape* const> operands,
                                                          int64_t dimension, int64_t shard_count) {
  if (operands.empty()) return InvalidArgument("all-gather: expected at least one operand.");
  if (shard_count <= 0) {
    return InvalidArgument("all-gather: the shard count must be positive; got ", shard_count, ".");
  }
  std::vector<Shape> results;
  for (const Shape* s : operands) {
    if (auto st = ExpectArray(*s, "operand of all-gather"); !st.ok()) return st;
    if (dimension < 0 || dimension >= s->rank()) {
      return InvalidArgument("all-gather: dimensions={", dimension, "} is out of range for ",
                             Str(*s), ".");
    }
    Shape result = *s;
    result.set_dimensions(dimension, s->dimensions(dimension) * shard_count);
    results.push_back(result);
  }
  if (results.size() == 1) return results[0];
  return ShapeUtil::MakeTupleShape(std::move(results));
}

absl::StatusOr<Shape> ShapeInference::InferAllGatherStartShape(
    absl::Span<const Shape* const> operands, int64_t dimension, int64_t shard_count) {
  auto gathered = InferAllGatherShape(operands, dimension, shard_count);
  if (!gathered.ok()) return gathered;
  return ShapeUtil::MakeTupleShape({OneOrTuple(operands), *gathered});
}

absl::StatusOr<Shape> ShapeInference::InferReduceScatterShape(
    absl::Span<const Shape* const> operands, int64_t dimension, int64_t shard_count) {
  if (operands.empty()) return InvalidArgument("reduce-scatter: expected at least one operand.");
  if (shard_count <= 0) {
    return InvalidArgument("reduce-scatter: the shard count must be positive; got ", shard_count,
                           ".");
  }
  std::vector<Shape> results;
  for (const Shape* s : operands) {
    if (auto st = ExpectArray(*s, "operand of reduce-scatter"); !st.ok()) return st;
    if (dimension < 0 || dimension >= s->rank()) {
      return InvalidArgument("reduce-scatter: dimensions={", dimension, "} is out of range for ",
                             Str(*s), ".");
    }
    if (s->dimensions(dimension) % shard_count != 0) {
      return InvalidArgument("reduce-scatter: dimension ", dimension, " of ", Str(*s),
                             " is not divisible by the shard count ", shard_count, ".");
    }
    Shape result = *s;
    result.set_dimensions(dimension, s->dimensions(dimension) / shard_count);
    results.push_back(result);
  }
  if (results.size() == 1) return results[0];
  return ShapeUtil::MakeTupleShape(std::move(results));
}

absl::StatusOr<Shape> ShapeInference::InferAllToAllShape(const Shape& operand,
                                                         int64_t split_dimension,
                                                         int64_t concat_dimension,
                                                         int64_t split_count) {
  if (auto st = ExpectArray(operand, "operand of all-to-all"); !st.ok()) return st;
  if (split_count <= 0) {
    return InvalidArgument("all-to-all: the split count must be positive; got ", split_count, ".");
  }
  if (split_dimension < 0 || split_dimension >= operand.rank()) {
    return InvalidArgument("all-to-all: split dimension ", split_dimension, " is out of range for ",
                           Str(operand), ".");
  }
  if (concat_dimension < 0 || concat_dimension >= operand.rank()) {
    return InvalidArgument("all-to-all: concat dimension ", concat_dimension,
                           " is out of range for ", Str(operand), ".");
  }
  if (operand.dimensions(split_dimension) % split_count != 0) {
    return InvalidArgument("all-to-all: split dimension ", split_dimension, " of ", Str(operand),
                           " is not divisible by the split count ", split_count, ".");
  }
  Shape result = operand;
  result.set_dimensions(split_dimension, operand.dimensions(split_dimension) / split_count);
  result.set_dimensions(concat_dimension, result.dimensions(concat_dimension) * split_count);
  return result;
}

absl::StatusOr<Shape> ShapeInference::InferAllToAllTupleShape(
    absl::Span<const Shape* const> operands) {
  if (operands.empty()) return InvalidArgument("all-to-all: expected at least one operand.");
  for (size_t i = 0; i < operands.size(); ++i) {
    if (!CompatibleShapes(*operands[0], *operands[i])) {
      return InvalidArgument("all-to-all: all operands must have the same shape; operand 0 is ",
                             Str(*operands[0]), ", operand ", i, " is ", Str(*operands[i]), ".");
    }
  }
  return InferVariadicOpShape(HloOpcode::kTuple, operands);
}

absl::StatusOr<Shape> ShapeInference::InferRaggedAllToAllShape(
    absl::Span<const Shape* const> operands) {
  if (operands.size() != 6) {
    return InvalidArgument(
        "ragged-all-to-all: expected 6 operands (input, output, "
        "input_offsets, send_sizes, output_offsets, recv_sizes); got ",
        operands.size(), ".");
  }
  if (auto st = ExpectArray(*operands[0], "input of ragged-all-to-all"); !st.ok()) return st;
  if (auto st = ExpectArray(*operands[1], "output of ragged-all-to-all"); !st.ok()) return st;
  if (operands[0]->rank() != operands[1]->rank()) {
    return InvalidArgument("ragged-all-to-all: input ", Str(*operands[0]), " and output ",
                           Str(*operands[1]), " must have the same rank.");
  }
  static constexpr const char* kNames[] = {"input_offsets", "send_sizes", "output_offsets",
                                           "recv_sizes"};
  for (int i = 2; i < 6; ++i) {
    const Shape& s = *operands[i];
    if (!s.IsArray() || !IsIntegral(s)) {
      return InvalidArgument("ragged-all-to-all: ", kNames[i - 2],
                             " must be an integral array; got ", Str(s), ".");
    }
    if (!CompatibleShapes(s, *operands[2])) {
      return InvalidArgument("ragged-all-to-all: ", kNames[i - 2], " (", Str(s),
                             ") must have the shape of input_offsets (", Str(*operands[2]), ").");
    }
  }
  return *operands[1];
}

absl::StatusOr<Shape> ShapeInference::InferCollectivePermuteShape(
    absl::Span<const Shape* const> operands) {
  if (operands.empty()) {
    return InvalidArgument("collective-permute: expected at least one operand.");
  }
  // The in-place form: (input, output, input_offsets, output_offsets).
  if (operands.size() == 4 && operands[2]->IsTuple()) return *operands[1];
  for (const Shape* s : operands) {
    if (auto st = ExpectArray(*s, "operand of collective-permute"); !st.ok()) return st;
  }
  return OneOrTuple(operands);
}

absl::StatusOr<Shape> ShapeInference::InferCollectivePermuteStartShape(
    absl::Span<const Shape* const> operands, absl::Span<const Shape> context_shapes) {
  if (operands.empty()) {
    return InvalidArgument("collective-permute-start: expected at least one operand.");
  }
  Shape input, output;
  if (operands.size() == 4 && operands[2]->IsTuple()) {
    input = *operands[0];
    output = *operands[1];
  } else {
    for (const Shape* s : operands) {
      if (auto st = ExpectArray(*s, "operand of collective-permute-start"); !st.ok()) return st;
    }
    input = OneOrTuple(operands);
    output = input;
  }
  std::vector<Shape> elements = {input, output};
  elements.insert(elements.end(), context_shapes.begin(), context_shapes.end());
  return ShapeUtil::MakeTupleShape(std::move(elements));
}

absl::StatusOr<Shape> ShapeInference::InferCollectivePermuteDoneShape(const Shape& start) {
  if (!start.IsTuple() || start.tuple_shapes_size() < 2) {
    return InvalidArgument(
        "collective-permute-done: the operand must be a collective-permute-"
        "start tuple; got ",
        Str(start), ".");
  }
  return start.tuple_shapes(1);
}

absl::StatusOr<Shape> ShapeInference::InferCollectiveBroadcastShape(
    absl::Span<const Shape* const> operands) {
  if (operands.empty()) {
    return InvalidArgument("collective-broadcast: expected at least one operand.");
  }
  for (const Shape* s : operands) {
    if (auto st = ExpectArray(*s, "operand of collective-broadcast"); !st.ok()) return st;
  }
  return OneOrTuple(operands);
}

absl::StatusOr<Shape> ShapeInference::InferRngShape(const Shape& a, const Shape& b,
                                                    RandomDistribution distribution,
                                                    const Shape& result) {
  if (!a.IsArray() || !b.IsArray() || !a.IsScalar() || !b.IsScalar()) {
    return InvalidArgument("rng: both operands must be scalars; got ", Str(a), " and ", Str(b),
                           ".");
  }
  if (!result.IsArray())
    return InvalidArgument("rng: the result must be an array; got ", Str(result), ".");
  if (a.element_type() != b.element_type()) {
    return InvalidArgument("rng: the operands must have the same element type; got ", Str(a),
                           " and ", Str(b), ".");
  }
  PrimitiveType type = a.element_type();
  switch (distribution) {
    case RNG_UNIFORM:
      if (!IsFloat(a) && !IsIntegral(a) && type != PRED) {
        return InvalidArgument(
            "rng: rng_uniform needs a floating-point, integral or pred type; "
            "got ",
            Str(type), ".");
      }
      break;
    case RNG_NORMAL:
      if (!IsFloat(a)) {
        return InvalidArgument("rng: rng_normal needs a floating-point type; got ", Str(type), ".");
      }
      break;
    default:
      return InvalidArgument("rng: invalid distribution.");
  }
  return ShapeUtil::ChangeElementType(result, type);
}

absl::StatusOr<Shape> ShapeInference::InferRngBitGeneratorShape(const Shape& state,
                                                                const Shape& output) {
  if (auto st = ExpectArray(state, "state of rng-bit-generator"); !st.ok()) return st;
  if (auto st = ExpectArray(output, "output of rng-bit-generator"); !st.ok()) return st;
  return ShapeUtil::MakeTupleShape({state, output});
}

}  // namespace axle
