//===- shape_inference.cc - Inferring an instruction's shape ---------------===//
//
// InferInstructionShape: reads an instruction's operands, attributes and
// called computations and calls the matching ShapeInference function. It
// never trusts counts: a wrong number of operands or called computations is
// an error, not a crash.
//
//===----------------------------------------------------------------------===//
#include "axle/hlo/shape_inference/shape_inference.h"

#include "axle/hlo/ir/hlo_computation.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/ir/hlo_opcode_families.h"
#include "axle/hlo/shape_inference/shape_inference_util.h"

namespace axle {

using namespace shape_inference_internal;  // NOLINT

absl::StatusOr<ProgramShape> ShapeInference::ComputationSignature(
    const HloComputation& computation) {
  ProgramShape signature;
  for (int64_t i = 0; i < computation.num_parameters(); ++i) {
    const HloInstruction* parameter = computation.parameter_instruction(i);
    if (parameter == nullptr) {
      return InvalidArgument("computation ", computation.name(), " has no parameter number ", i,
                             " (parameter numbers must be 0..", computation.num_parameters() - 1,
                             ")");
    }
    signature.mutable_parameters()->push_back(parameter->shape());
    signature.mutable_parameter_names()->push_back(parameter->name());
  }
  if (computation.root_instruction() == nullptr) {
    return InvalidArgument("computation ", computation.name(), " has no root instruction");
  }
  *signature.mutable_result() = computation.root_instruction()->shape();
  return signature;
}

namespace {

std::vector<const Shape*> OperandShapes(const HloInstruction& instruction, int64_t begin = 0,
                                        int64_t end = -1) {
  if (end < 0) end = instruction.operand_count();
  std::vector<const Shape*> shapes;
  for (int64_t i = begin; i < end; ++i) shapes.push_back(&instruction.operand(i)->shape());
  return shapes;
}

std::vector<Shape> OperandShapeValues(const HloInstruction& instruction, int64_t begin) {
  std::vector<Shape> shapes;
  for (int64_t i = begin; i < instruction.operand_count(); ++i) {
    shapes.push_back(instruction.operand(i)->shape());
  }
  return shapes;
}

absl::Status ExpectOperands(const HloInstruction& instruction, int64_t count) {
  if (instruction.operand_count() != count) {
    return InvalidArgument(HloOpcodeString(instruction.opcode()), ": expected ", count,
                           " operand(s); got ", instruction.operand_count());
  }
  return absl::OkStatus();
}

absl::Status ExpectAtLeastOperands(const HloInstruction& instruction, int64_t count) {
  if (instruction.operand_count() < count) {
    return InvalidArgument(HloOpcodeString(instruction.opcode()), ": expected at least ", count,
                           " operand(s); got ", instruction.operand_count());
  }
  return absl::OkStatus();
}

absl::StatusOr<ProgramShape> CalledSignature(const HloInstruction& instruction, size_t index,
                                             size_t expected_count, absl::string_view role) {
  const auto& called = instruction.called_computations();
  if (called.size() != expected_count) {
    return InvalidArgument(HloOpcodeString(instruction.opcode()), ": expected ", expected_count,
                           " called computation(s); got ", called.size());
  }
  if (called[index] == nullptr) {
    return InvalidArgument(HloOpcodeString(instruction.opcode()), ": the ", role,
                           " computation is missing");
  }
  return ShapeInference::ComputationSignature(*called[index]);
}

// Like XLA's verifier: the gathered / scattered size ratio of operand 0.
int64_t ShardCount(int64_t larger, int64_t smaller) {
  if (smaller <= 0) return 1;
  return (larger + smaller - 1) / smaller;
}

absl::StatusOr<Shape> InferCollective(const HloInstruction& instruction) {
  const Shape& shape = instruction.shape();
  auto operands = OperandShapes(instruction);
  // The `-done` halves are plain instructions without collective attributes.
  static const CollectiveAttrs kNoAttributes;
  const CollectiveAttrs& attrs = HloOpcodeIsAsyncDone(instruction.opcode())
                                     ? kNoAttributes
                                     : cast<HloCollectiveInstruction>(&instruction)->attrs();
  switch (instruction.opcode()) {
    case HloOpcode::kAllReduce:
    case HloOpcode::kAllReduceStart:
      return ShapeInference::InferAllReduceShape(operands);
    case HloOpcode::kAllGather:
    case HloOpcode::kAllGatherStart: {
      if (auto s = ExpectAtLeastOperands(instruction, 1); !s.ok()) return s;
      if (attrs.dimensions.size() != 1) {
        return InvalidArgument(HloOpcodeString(instruction.opcode()),
                               ": expected one gather dimension (dimensions={d}); got ",
                               Str(attrs.dimensions));
      }
      const int64_t dim = attrs.dimensions[0];
      const bool start = instruction.opcode() == HloOpcode::kAllGatherStart;
      const Shape* out = &shape;
      if (start) {
        if (!shape.IsTuple() || shape.tuple_shapes_size() != 2) {
          return InvalidArgument(
              "all-gather-start: the result must be a (operands, results) "
              "tuple; got ",
              Str(shape));
        }
        out = &shape.tuple_shapes(1);
      }
      if (operands.size() > 1) {
        if (!out->IsTuple() || out->tuple_shapes_size() < 1) {
          return InvalidArgument(HloOpcodeString(instruction.opcode()),
                                 ": a multi-operand all-gather must produce a tuple; got ",
                                 Str(shape));
        }
        out = &out->tuple_shapes(0);
      }
      int64_t shard_count = 1;
      if (out->IsArray() && operands[0]->IsArray() && dim >= 0 && dim < out->rank() &&
          dim < operands[0]->rank()) {
        shard_count = ShardCount(out->dimensions(dim), operands[0]->dimensions(dim));
      }
      return start ? ShapeInference::InferAllGatherStartShape(operands, dim, shard_count)
                   : ShapeInference::InferAllGatherShape(operands, dim, shard_count);
    }
    case HloOpcode::kReduceScatter: {
      if (auto s = ExpectAtLeastOperands(instruction, 1); !s.ok()) return s;
      if (attrs.dimensions.size() != 1) {
        return InvalidArgument(
            "reduce-scatter: expected one scatter dimension (dimensions={d}); "
            "got ",
            Str(attrs.dimensions));
      }
      const int64_t dim = attrs.dimensions[0];
      const Shape* out = &shape;
      if (operands.size() > 1 && shape.IsTuple() && shape.tuple_shapes_size() > 0) {
        out = &shape.tuple_shapes(0);
      }
      int64_t shard_count = 1;
      if (out->IsArray() && operands[0]->IsArray() && dim >= 0 && dim < out->rank() &&
          dim < operands[0]->rank()) {
        shard_count = ShardCount(operands[0]->dimensions(dim), out->dimensions(dim));
      }
      return ShapeInference::InferReduceScatterShape(operands, dim, shard_count);
    }
    case HloOpcode::kAllToAll: {
      if (auto s = ExpectAtLeastOperands(instruction, 1); !s.ok()) return s;
      auto mode = GetCollectiveGroupMode(attrs.channel_id.has_value(), std::nullopt);
      if (!mode.ok()) return mode.status();
      const int64_t split_count =
          SubgroupSize(*cast<HloCollectiveInstruction>(&instruction), *mode);
      if (!attrs.dimensions.empty()) {
        if (auto s = ExpectOperands(instruction, 1); !s.ok()) return s;
        return ShapeInference::InferAllToAllShape(*operands[0], attrs.dimensions[0],
                                                  attrs.dimensions[0], split_count);
      }
      // A split count of 1 comes from an unset replica count (empty groups):
      // the participants are unknown, as in XLA's verifier.
      if (split_count != 1 && static_cast<int64_t>(operands.size()) != split_count) {
        return InvalidArgument("all-to-all: the tuple form needs one operand per participant (",
                               split_count, "); got ", operands.size());
      }
      return ShapeInference::InferAllToAllTupleShape(operands);
    }
    case HloOpcode::kRaggedAllToAll:
      return ShapeInference::InferRaggedAllToAllShape(operands);
    case HloOpcode::kCollectivePermute:
      return ShapeInference::InferCollectivePermuteShape(operands);
    case HloOpcode::kCollectivePermuteStart: {
      std::vector<Shape> context;
      if (shape.IsTuple() && shape.tuple_shapes_size() > 2) {
        context.assign(shape.tuple_shapes().begin() + 2, shape.tuple_shapes().end());
      }
      return ShapeInference::InferCollectivePermuteStartShape(operands, context);
    }
    case HloOpcode::kCollectiveBroadcast: {
      const RawAttribute* dynamic_root = instruction.FindRawAttribute("has_dynamic_root");
      if (dynamic_root != nullptr && dynamic_root->value == "true" && operands.size() == 2) {
        operands.pop_back();
      }
      return ShapeInference::InferCollectiveBroadcastShape(operands);
    }
    case HloOpcode::kAllReduceDone:
    case HloOpcode::kAllGatherDone:
    case HloOpcode::kCollectivePermuteDone: {
      if (auto s = ExpectOperands(instruction, 1); !s.ok()) return s;
      if (instruction.opcode() == HloOpcode::kAllReduceDone) return *operands[0];
      return ShapeInference::InferCollectivePermuteDoneShape(*operands[0]);
    }
    default:
      break;
  }
  return absl::UnimplementedError(
      absl::StrCat("no shape inference for ", HloOpcodeString(instruction.opcode())));
}

// Async ops as XLA has them now: the async value is a tuple
// ((bound operands...), result, context...). Operands may be bound
// progressively (async-start binds a prefix of the wrapped computation's
// parameters, each async-update may bind more) and the result may be
// late-bound: an empty tuple at {1} until an async-update gives it.
absl::StatusOr<Shape> InferAsync(const HloInstruction& instruction) {
  const HloOpcode opcode = instruction.opcode();
  const auto& called = instruction.called_computations();
  if (called.size() != 1 || called[0] == nullptr) {
    return InvalidArgument(HloOpcodeString(opcode),
                           ": expected exactly one wrapped computation; got ", called.size());
  }
  auto signature = ShapeInference::ComputationSignature(*called[0]);
  if (!signature.ok()) return signature.status();
  const std::string op(HloOpcodeString(opcode));
  auto check_async_shape = [&](const Shape& shape, absl::string_view whose) -> absl::Status {
    if (!shape.IsTuple() || shape.tuple_shapes_size() < 2 || !shape.tuple_shapes(0).IsTuple()) {
      return InvalidArgument(op, ": the async shape of ", whose,
                             " must be a tuple ((operands...), result, ...); got ", Str(shape));
    }
    const Shape& bound = shape.tuple_shapes(0);
    if (bound.tuple_shapes_size() > static_cast<int64_t>(signature->parameters().size())) {
      return InvalidArgument(op, ": the async shape of ", whose, " binds ",
                             bound.tuple_shapes_size(), " operands but the wrapped computation ",
                             called[0]->name(), " takes ", signature->parameters().size());
    }
    for (int64_t i = 0; i < bound.tuple_shapes_size(); ++i) {
      if (!CompatibleShapes(bound.tuple_shapes(i), signature->parameters()[i])) {
        return InvalidArgument(op, ": operand ", i, " in the async shape of ", whose, " (",
                               Str(bound.tuple_shapes(i)), ") does not match parameter ", i,
                               " of the wrapped computation (", Str(signature->parameters()[i]),
                               ")");
      }
    }
    const Shape& result = shape.tuple_shapes(1);
    if (!ShapeUtil::IsEmptyTuple(result) && !CompatibleShapes(result, signature->result())) {
      return InvalidArgument(op, ": the result in the async shape of ", whose, " (", Str(result),
                             ") does not match the wrapped computation's result ",
                             Str(signature->result()));
    }
    return absl::OkStatus();
  };
  const Shape& own = instruction.shape();
  switch (opcode) {
    case HloOpcode::kAsyncStart: {
      std::vector<Shape> elements = {ShapeUtil::MakeTupleShape(OperandShapeValues(instruction, 0)),
                                     signature->result()};
      if (own.IsTuple() && own.tuple_shapes_size() >= 2) {
        if (ShapeUtil::IsEmptyTuple(own.tuple_shapes(1))) elements[1] = own.tuple_shapes(1);
        elements.insert(elements.end(), own.tuple_shapes().begin() + 2, own.tuple_shapes().end());
      }
      Shape result = ShapeUtil::MakeTupleShape(std::move(elements));
      if (auto s = check_async_shape(result, "the operands"); !s.ok()) return s;
      return result;
    }
    case HloOpcode::kAsyncUpdate: {
      if (auto s = ExpectAtLeastOperands(instruction, 1); !s.ok()) return s;
      const Shape& operand = instruction.operand(0)->shape();
      if (auto s = check_async_shape(operand, "operand 0"); !s.ok()) return s;
      // Extra operands bind further parameters; the result may get bound.
      std::vector<Shape> bound = operand.tuple_shapes(0).tuple_shapes();
      for (const Shape& extra : OperandShapeValues(instruction, 1)) bound.push_back(extra);
      std::vector<Shape> elements = {ShapeUtil::MakeTupleShape(std::move(bound)),
                                     operand.tuple_shapes(1)};
      if (ShapeUtil::IsEmptyTuple(operand.tuple_shapes(1)) && own.IsTuple() &&
          own.tuple_shapes_size() >= 2) {
        elements[1] = own.tuple_shapes(1);
      }
      elements.insert(elements.end(), operand.tuple_shapes().begin() + 2,
                      operand.tuple_shapes().end());
      Shape result = ShapeUtil::MakeTupleShape(std::move(elements));
      if (auto s = check_async_shape(result, "the result"); !s.ok()) return s;
      return result;
    }
    case HloOpcode::kAsyncDone: {
      if (auto s = ExpectOperands(instruction, 1); !s.ok()) return s;
      const Shape& operand = instruction.operand(0)->shape();
      if (auto s = check_async_shape(operand, "operand 0"); !s.ok()) return s;
      if (ShapeUtil::IsEmptyTuple(operand.tuple_shapes(1))) return signature->result();
      return operand.tuple_shapes(1);
    }
    default:
      break;
  }
  return absl::UnimplementedError("not an async op");
}

}  // namespace

absl::StatusOr<Shape> ShapeInference::InferInstructionShape(const HloInstruction& instruction) {
  const HloOpcode opcode = instruction.opcode();
  const Shape& shape = instruction.shape();
  // async-update may bind further operands (XLA's progressive binding).
  const int arity = opcode == HloOpcode::kAsyncUpdate ? kVariadic : HloOpcodeArity(opcode);
  if (arity != kVariadic) {
    if (auto s = ExpectOperands(instruction, arity); !s.ok()) return s;
  }
  auto operand = [&](int64_t i) -> const Shape& { return instruction.operand(i)->shape(); };

  // No default: a new opcode fails to compile until it is given a rule here.
  switch (opcode) {
    // clang-format off
    AXLE_HLO_COLLECTIVE_OPCODES(AXLE_HLO_OPCODE_CASE)
      return InferCollective(instruction);
    // clang-format on

    // --- Elementwise ---------------------------------------------------------
    case HloOpcode::kDomain:
    case HloOpcode::kOptimizationBarrier:
      AXLE_HLO_UNARY_ELEMENTWISE_OPCODES(AXLE_HLO_OPCODE_CASE)
      return InferUnaryOpShape(opcode, operand(0));
    case HloOpcode::kCompare:
      AXLE_HLO_BINARY_ELEMENTWISE_OPCODES(AXLE_HLO_OPCODE_CASE)
      return InferBinaryOpShape(opcode, operand(0), operand(1), {});
    case HloOpcode::kClamp:
    case HloOpcode::kSelect:
      return InferTernaryOpShape(opcode, operand(0), operand(1), operand(2));
    case HloOpcode::kConvert:
      return InferConvertShape(operand(0), shape.element_type());
    case HloOpcode::kBitcastConvert:
      return InferBitcastConvertShape(operand(0), shape.element_type());
    case HloOpcode::kStochasticConvert:
      return InferStochasticConvertShape(operand(0), operand(1), shape.element_type());
    case HloOpcode::kReducePrecision: {
      const auto* rp = cast<HloReducePrecisionInstruction>(&instruction);
      return InferReducePrecisionShape(operand(0), rp->exponent_bits(), rp->mantissa_bits());
    }
    case HloOpcode::kTuple:
      return InferVariadicOpShape(opcode, OperandShapes(instruction));
    case HloOpcode::kMap: {
      auto to_apply = CalledSignature(instruction, 0, 1, "to_apply");
      if (!to_apply.ok()) return to_apply.status();
      const auto* map = cast<HloDimensionsInstruction>(&instruction);
      std::vector<int64_t> dims = map->dimensions();
      if (dims.empty() && instruction.operand_count() > 0 && operand(0).IsArray()) {
        for (int64_t d = 0; d < operand(0).rank(); ++d) dims.push_back(d);
      }
      return InferMapShape(OperandShapes(instruction), *to_apply, dims);
    }

    // --- Data movement -------------------------------------------------------
    case HloOpcode::kBroadcast: {
      // HLO's broadcast: operand dimension i becomes output dimension
      // dimensions[i], with the same size (no degenerate expansion; the
      // order of `dimensions` is free, XLA's verifier does not require it).
      const auto& dims = cast<HloDimensionsInstruction>(&instruction)->dimensions();
      if (auto s = ExpectArray(operand(0), "operand of broadcast"); !s.ok()) return s;
      if (auto s = ExpectArray(shape, "result of broadcast"); !s.ok()) return s;
      if (operand(0).element_type() != shape.element_type()) {
        return InvalidArgument("broadcast: the result element type ", Str(shape.element_type()),
                               " differs from the operand's ", Str(operand(0).element_type()));
      }
      if (static_cast<int64_t>(dims.size()) != operand(0).rank()) {
        return InvalidArgument("broadcast: dimensions=", Str(dims), " has ", dims.size(),
                               " entries but the operand ", Str(operand(0)), " has rank ",
                               operand(0).rank());
      }
      for (size_t i = 0; i < dims.size(); ++i) {
        if (dims[i] < 0 || dims[i] >= shape.rank()) {
          return InvalidArgument("broadcast: dimensions=", Str(dims),
                                 " has an entry out of range for the result ", Str(shape));
        }
        if (operand(0).dimensions(i) != shape.dimensions(dims[i])) {
          return InvalidArgument("broadcast: operand dimension ", i, " (size ",
                                 operand(0).dimensions(i), ") must equal result dimension ",
                                 dims[i], " (size ", shape.dimensions(dims[i]), ")");
        }
      }
      return shape;
    }
    case HloOpcode::kReshape: {
      if (operand(0).element_type() != shape.element_type()) {
        return InvalidArgument("reshape: the result element type ", Str(shape.element_type()),
                               " differs from the operand's ", Str(operand(0).element_type()));
      }
      const auto* reshape = cast<HloReshapeInstruction>(&instruction);
      if (!shape.IsArray()) return InvalidArgument("reshape: the result must be an array");
      auto result =
          InferReshapeShape(operand(0), shape.dimensions(), reshape->inferred_dimension());
      if (!result.ok()) return result;
      Shape out = *result;
      for (int64_t d = 0; d < shape.rank(); ++d) {
        out.set_dynamic_dimension(d, shape.is_dynamic_dimension(d));
      }
      return out;
    }
    case HloOpcode::kDynamicReshape: {
      if (auto s = ExpectAtLeastOperands(instruction, 1); !s.ok()) return s;
      if (!shape.IsArray()) return InvalidArgument("dynamic-reshape: the result must be an array");
      if (operand(0).element_type() != shape.element_type()) {
        return InvalidArgument("dynamic-reshape: the result element type ",
                               Str(shape.element_type()), " differs from the operand's ",
                               Str(operand(0).element_type()));
      }
      return InferDynamicReshapeShape(operand(0), OperandShapes(instruction, 1), shape.dimensions(),
                                      shape.dynamic_dimensions());
    }
    case HloOpcode::kTranspose:
      return InferTransposeShape(operand(0),
                                 cast<HloDimensionsInstruction>(&instruction)->dimensions());
    case HloOpcode::kReverse:
      return InferReverseShape(operand(0),
                               cast<HloDimensionsInstruction>(&instruction)->dimensions());
    case HloOpcode::kSlice: {
      const auto* slice = cast<HloSliceInstruction>(&instruction);
      return InferSliceShape(operand(0), slice->slice_starts(), slice->slice_limits(),
                             slice->slice_strides());
    }
    case HloOpcode::kDynamicSlice: {
      if (auto s = ExpectAtLeastOperands(instruction, 1); !s.ok()) return s;
      return InferDynamicSliceShape(
          operand(0), OperandShapeValues(instruction, 1),
          cast<HloDynamicSliceInstruction>(&instruction)->dynamic_slice_sizes());
    }
    case HloOpcode::kDynamicUpdateSlice: {
      if (auto s = ExpectAtLeastOperands(instruction, 2); !s.ok()) return s;
      return InferDynamicUpdateSliceShape(operand(0), operand(1),
                                          OperandShapeValues(instruction, 2));
    }
    case HloOpcode::kConcatenate: {
      const auto& dims = cast<HloDimensionsInstruction>(&instruction)->dimensions();
      if (dims.size() != 1) {
        return InvalidArgument("concatenate: expected one dimension (dimensions={d}); got ",
                               Str(dims));
      }
      return InferConcatOpShape(OperandShapes(instruction), dims[0]);
    }
    case HloOpcode::kPad:
      return InferPadShape(operand(0), operand(1),
                           cast<HloPadInstruction>(&instruction)->padding_config());
    case HloOpcode::kGetTupleElement:
      return InferGetTupleElementShape(
          operand(0), cast<HloGetTupleElementInstruction>(&instruction)->tuple_index());
    case HloOpcode::kGetDimensionSize:
    case HloOpcode::kSetDimensionSize: {
      const auto& dims = cast<HloDimensionsInstruction>(&instruction)->dimensions();
      if (dims.size() != 1) {
        return InvalidArgument(HloOpcodeString(opcode),
                               ": expected one dimension (dimensions={d}); got ", Str(dims));
      }
      if (opcode == HloOpcode::kGetDimensionSize) {
        return InferGetDimensionSizeShape(operand(0), dims[0]);
      }
      return InferSetDimensionSizeShape(operand(0), operand(1), dims[0]);
    }
    case HloOpcode::kTopK:
      return InferTopKShape(operand(0), cast<HloTopKInstruction>(&instruction)->k());
    case HloOpcode::kIota:
      return InferIotaShape(shape, cast<HloIotaInstruction>(&instruction)->iota_dimension());
    case HloOpcode::kSort: {
      auto comparator = CalledSignature(instruction, 0, 1, "comparator");
      if (!comparator.ok()) return comparator.status();
      if (auto s = ExpectAtLeastOperands(instruction, 1); !s.ok()) return s;
      if (!CompatibleShapes(comparator->result(), MakeScalar(PRED))) {
        return InvalidArgument("sort: the comparator must return pred[]; got ",
                               Str(comparator->result()));
      }
      if (static_cast<int64_t>(comparator->parameters().size()) !=
          2 * instruction.operand_count()) {
        return InvalidArgument("sort: the comparator must take ", 2 * instruction.operand_count(),
                               " parameters (two per operand); it takes ",
                               comparator->parameters().size());
      }
      for (size_t p = 0; p < comparator->parameters().size(); ++p) {
        Shape expected = MakeScalar(operand(p / 2).element_type());
        if (!CompatibleShapes(expected, comparator->parameters()[p], true)) {
          return InvalidArgument("sort: comparator parameter ", p, " must be ", Str(expected),
                                 "; got ", Str(comparator->parameters()[p]));
        }
      }
      const int64_t dim = cast<HloSortInstruction>(&instruction)->sort_dimension();
      if (dim < 0 || dim >= operand(0).rank()) {
        return InvalidArgument("sort: dimensions={", dim, "} is out of range for ",
                               Str(operand(0)));
      }
      return InferVariadicOpShape(opcode, OperandShapes(instruction));
    }

    // --- Reductions, windows, convolution ------------------------------------
    case HloOpcode::kReduce: {
      auto to_apply = CalledSignature(instruction, 0, 1, "to_apply");
      if (!to_apply.ok()) return to_apply.status();
      return InferReduceShape(OperandShapes(instruction),
                              cast<HloDimensionsInstruction>(&instruction)->dimensions(),
                              *to_apply);
    }
    case HloOpcode::kReduceWindow: {
      auto to_apply = CalledSignature(instruction, 0, 1, "to_apply");
      if (!to_apply.ok()) return to_apply.status();
      const int64_t n = instruction.operand_count() / 2;
      if (n < 1 || instruction.operand_count() % 2 != 0) {
        return InvalidArgument("reduce-window: expected inputs then as many init values; got ",
                               instruction.operand_count(), " operands");
      }
      return InferReduceWindowShape(OperandShapes(instruction, 0, n), OperandShapes(instruction, n),
                                    cast<HloWindowInstruction>(&instruction)->window(), *to_apply);
    }
    case HloOpcode::kSelectAndScatter: {
      auto select = CalledSignature(instruction, 0, 2, "select");
      if (!select.ok()) return select.status();
      auto scatter = CalledSignature(instruction, 1, 2, "scatter");
      if (!scatter.ok()) return scatter.status();
      return InferSelectAndScatterShape(operand(0), *select,
                                        cast<HloWindowInstruction>(&instruction)->window(),
                                        operand(1), operand(2), *scatter);
    }
    case HloOpcode::kConvolution: {
      const auto* conv = cast<HloConvolutionInstruction>(&instruction);
      return InferConvolveShape(operand(0), operand(1), conv->feature_group_count(),
                                conv->batch_group_count(), conv->window(),
                                conv->convolution_dimension_numbers(), shape.element_type());
    }

    // --- Linear algebra ------------------------------------------------------
    case HloOpcode::kDot: {
      if (auto s = ExpectOperands(instruction, 2); !s.ok()) return s;
      return InferDotOpShape(operand(0), operand(1),
                             cast<HloDotInstruction>(&instruction)->dot_dimension_numbers(),
                             shape.element_type());
    }
    case HloOpcode::kRaggedDot: {
      const DotAttrs& attrs = cast<HloDotInstruction>(&instruction)->attrs();
      RaggedDotDimensionNumbers dnums;
      *dnums.mutable_dot_dimension_numbers() = attrs.dot_dimension_numbers;
      *dnums.mutable_lhs_ragged_dimensions() = attrs.lhs_ragged_dimensions;
      *dnums.mutable_rhs_group_dimensions() = attrs.rhs_group_dimensions;
      return InferRaggedDotOpShape(operand(0), operand(1), operand(2), dnums, shape.element_type());
    }
    case HloOpcode::kScaledDot:
      return InferScaledDotOpShape(operand(0), operand(1), operand(2), operand(3),
                                   cast<HloDotInstruction>(&instruction)->dot_dimension_numbers(),
                                   shape.element_type());
    case HloOpcode::kFft: {
      const auto* fft = cast<HloFftInstruction>(&instruction);
      return InferFftShape(operand(0), fft->fft_type(), fft->fft_length());
    }
    case HloOpcode::kCholesky:
      return InferCholeskyShape(operand(0));
    case HloOpcode::kTriangularSolve:
      return InferTriangularSolveShape(
          operand(0), operand(1),
          cast<HloTriangularSolveInstruction>(&instruction)->triangular_solve_options());
    case HloOpcode::kBatchNormTraining: {
      const auto* bn = cast<HloBatchNormInstruction>(&instruction);
      return InferBatchNormTrainingShape(operand(0), operand(1), operand(2), bn->feature_index());
    }
    case HloOpcode::kBatchNormInference: {
      const auto* bn = cast<HloBatchNormInstruction>(&instruction);
      return InferBatchNormInferenceShape(operand(0), operand(1), operand(2), operand(3),
                                          operand(4), bn->feature_index());
    }
    case HloOpcode::kBatchNormGrad: {
      const auto* bn = cast<HloBatchNormInstruction>(&instruction);
      return InferBatchNormGradShape(operand(0), operand(1), operand(2), operand(3), operand(4),
                                     bn->feature_index());
    }

    // --- Gather / scatter ----------------------------------------------------
    case HloOpcode::kGather: {
      const auto* gather = cast<HloGatherInstruction>(&instruction);
      return InferGatherShape(operand(0), operand(1), gather->gather_dimension_numbers(),
                              gather->gather_slice_sizes());
    }
    case HloOpcode::kScatter: {
      auto to_apply = CalledSignature(instruction, 0, 1, "to_apply");
      if (!to_apply.ok()) return to_apply.status();
      return InferScatterShape(
          OperandShapes(instruction), *to_apply,
          cast<HloScatterInstruction>(&instruction)->scatter_dimension_numbers());
    }

    // --- Control flow --------------------------------------------------------
    case HloOpcode::kWhile: {
      auto condition = CalledSignature(instruction, 0, 2, "condition");
      if (!condition.ok()) return condition.status();
      auto body = CalledSignature(instruction, 1, 2, "body");
      if (!body.ok()) return body.status();
      return InferWhileShape(*condition, *body, operand(0));
    }
    case HloOpcode::kConditional: {
      if (auto s = ExpectAtLeastOperands(instruction, 1); !s.ok()) return s;
      const auto& branches = instruction.called_computations();
      if (branches.size() + 1 != static_cast<size_t>(instruction.operand_count())) {
        return InvalidArgument("conditional: ", branches.size(), " branch computations need ",
                               branches.size() + 1, " operands; got ", instruction.operand_count());
      }
      std::vector<ProgramShape> signatures;
      for (size_t j = 0; j < branches.size(); ++j) {
        auto signature = CalledSignature(instruction, j, branches.size(), "branch");
        if (!signature.ok()) return signature.status();
        signatures.push_back(*signature);
      }
      return InferConditionalShape(operand(0), signatures, OperandShapeValues(instruction, 1));
    }
    case HloOpcode::kCall: {
      auto to_apply = CalledSignature(instruction, 0, 1, "to_apply");
      if (!to_apply.ok()) return to_apply.status();
      return InferCallShape(OperandShapes(instruction), *to_apply);
    }
    case HloOpcode::kFusion: {
      // As XLA: the fused computation may ignore trailing operands.
      auto fused = CalledSignature(instruction, 0, 1, "fused");
      if (!fused.ok()) return fused.status();
      if (static_cast<int64_t>(fused->parameters().size()) > instruction.operand_count()) {
        return InvalidArgument("fusion: the fused computation has ", fused->parameters().size(),
                               " parameters but the fusion has only ", instruction.operand_count(),
                               " operands");
      }
      for (size_t i = 0; i < fused->parameters().size(); ++i) {
        if (!CompatibleShapes(fused->parameters()[i], operand(i))) {
          return InvalidArgument("fusion: operand ", i, " (", Str(operand(i)),
                                 ") does not match parameter ", i, " of the fused computation (",
                                 Str(fused->parameters()[i]), ")");
        }
      }
      return fused->result();
    }
    case HloOpcode::kAsyncStart:
    case HloOpcode::kAsyncUpdate:
    case HloOpcode::kAsyncDone:
      return InferAsync(instruction);
    case HloOpcode::kScan: {
      auto to_apply = CalledSignature(instruction, 0, 1, "to_apply");
      if (!to_apply.ok()) return to_apply.status();
      const ScanAttrs& attrs = cast<HloScanInstruction>(&instruction)->attrs();
      if (attrs.dimensions.size() != 1) {
        return InvalidArgument("scan: expected one scan dimension (dimensions={d}); got ",
                               Str(attrs.dimensions));
      }
      return InferScanShape(OperandShapes(instruction), attrs.dimensions[0], attrs.num_carries,
                            *to_apply);
    }

    // --- Tokens, side effects, transfers -------------------------------------
    case HloOpcode::kAfterAll:
      // As XLA: the operands order side effects; their types do not matter.
      return ShapeUtil::MakeTokenShape();
    case HloOpcode::kAddDependency:
      if (!operand(1).IsToken()) {
        return InvalidArgument("add-dependency: operand 1 must be a token; got ", Str(operand(1)));
      }
      return operand(0);
    case HloOpcode::kPartitionId:
    case HloOpcode::kReplicaId:
      return MakeScalar(U32);
    case HloOpcode::kRngGetAndUpdateState:
      return MakeArray(U64, {2});
    case HloOpcode::kRng: {
      if (auto s = ExpectOperands(instruction, 2); !s.ok()) return s;
      return InferRngShape(operand(0), operand(1),
                           cast<HloRngInstruction>(&instruction)->random_distribution(), shape);
    }
    case HloOpcode::kRngBitGenerator: {
      if (!shape.IsTuple()) return shape;
      if (shape.tuple_shapes_size() != 2) {
        return InvalidArgument(
            "rng-bit-generator: the result must be a (state, output) tuple; "
            "got ",
            Str(shape));
      }
      return InferRngBitGeneratorShape(operand(0), shape.tuple_shapes(1));
    }
    case HloOpcode::kInfeed: {
      if (!operand(0).IsToken()) {
        return InvalidArgument("infeed: the operand must be a token; got ", Str(operand(0)));
      }
      if (!shape.IsTuple() || shape.tuple_shapes_size() != 2) {
        return InvalidArgument("infeed: the result must be a (data, token) tuple; got ",
                               Str(shape));
      }
      return ShapeUtil::MakeTupleShape({shape.tuple_shapes(0), ShapeUtil::MakeTokenShape()});
    }
    case HloOpcode::kOutfeed: {
      if (!operand(1).IsToken()) {
        return InvalidArgument("outfeed: operand 1 must be a token; got ", Str(operand(1)));
      }
      const auto& outfeed_shape = cast<HloFeedInstruction>(&instruction)->attrs().outfeed_shape;
      if (outfeed_shape.has_value() && !CompatibleShapes(*outfeed_shape, operand(0))) {
        return InvalidArgument("outfeed: outfeed_shape ", Str(*outfeed_shape),
                               " differs from the operand's shape ", Str(operand(0)));
      }
      return ShapeUtil::MakeTokenShape();
    }
    case HloOpcode::kSend:
      if (!operand(1).IsToken()) {
        return InvalidArgument("send: operand 1 must be a token; got ", Str(operand(1)));
      }
      return ShapeUtil::MakeTupleShape({operand(0), MakeScalar(U32), ShapeUtil::MakeTokenShape()});
    case HloOpcode::kSendDone:
      return ShapeUtil::MakeTokenShape();
    case HloOpcode::kRecv:
      if (!operand(0).IsToken()) {
        return InvalidArgument("recv: the operand must be a token; got ", Str(operand(0)));
      }
      if (!shape.IsTuple() || shape.tuple_shapes_size() != 3) {
        return InvalidArgument("recv: the result must be a (data, u32[], token) tuple; got ",
                               Str(shape));
      }
      return ShapeUtil::MakeTupleShape(
          {shape.tuple_shapes(0), MakeScalar(U32), ShapeUtil::MakeTokenShape()});
    case HloOpcode::kRecvDone:
      if (!operand(0).IsTuple() || operand(0).tuple_shapes_size() < 1) {
        return InvalidArgument("recv-done: the operand must be a recv tuple; got ",
                               Str(operand(0)));
      }
      return ShapeUtil::MakeTupleShape({operand(0).tuple_shapes(0), ShapeUtil::MakeTokenShape()});
    case HloOpcode::kCopyStart:
      return ShapeUtil::MakeTupleShape({operand(0), operand(0), MakeScalar(U32)});
    case HloOpcode::kCopyDone:
      if (!operand(0).IsTuple() || operand(0).tuple_shapes_size() < 2 ||
          !CompatibleShapes(operand(0).tuple_shapes(0), operand(0).tuple_shapes(1))) {
        return InvalidArgument(
            "copy-done: the operand must be a copy-start (dest, src, u32[]) "
            "tuple with equal buffers; got ",
            Str(operand(0)));
      }
      return operand(0).tuple_shapes(0);
    case HloOpcode::kConstant: {
      const auto* constant = cast<HloConstantInstruction>(&instruction);
      return constant->literal().shape();
    }

    // The instruction's own shape is the definition.
    case HloOpcode::kParameter:
    case HloOpcode::kBitcast:
    case HloOpcode::kCustomCall:
      break;
  }
  return absl::UnimplementedError(
      absl::StrCat("the shape of ", HloOpcodeString(opcode), " is not inferred from its operands"));
}

}  // namespace axle
