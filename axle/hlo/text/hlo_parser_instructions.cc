//===- hlo_parser_instructions.cc - From opcode to instruction ------------===//
//
// CreateInstruction sends each opcode to the function for its family (one
// switch over every opcode, with no default: a new opcode that is not given a
// family fails to compile), over one shared preamble, NewInstruction and the
// steps every family takes: parse the operands and attributes, infer the
// shape the text left out (through ShapeInference, the rules the verifier
// and the builder use), add the instruction. Each family says, per opcode,
// how many operands it takes, which attributes it accepts (anything else is
// "unexpected attribute", as in XLA) and the checks XLA's parser makes.
// Attributes the IR has no typed field for are parsed (so that bad values are
// rejected) and kept as raw attributes.
//
// The families: source ops and elementwise ops (this file), data movement
// (hlo_parser_data_movement.cc), control flow and other ops that call
// computations (hlo_parser_control_flow.cc), linear algebra and the ops with
// dimension numbers (hlo_parser_linalg.cc), collectives
// (hlo_parser_collectives.cc), async ops (hlo_parser_async.cc).
//
//===----------------------------------------------------------------------===//
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "axle/core/shape_util.h"
#include "axle/hlo/ir/hlo_opcode_families.h"
#include "axle/hlo/shape_inference/shape_inference.h"
#include "axle/hlo/text/attribute_text.h"
#include "axle/hlo/text/hlo_parser_internal.h"

namespace axle {
namespace hlo_parser_internal {

using Operands = std::vector<HloInstruction*>;

// --- The shared preamble ----------------------------------------------------

bool HloParserImpl::ParseOperandsOf(NewInstruction& n, int64_t expected) {
  if (n.preset != nullptr) {
    n.operands = *n.preset;
    if (expected >= 0 && static_cast<int64_t>(n.operands.size()) != expected) {
      return Error(n.opcode_offset, absl::StrCat("expects ", expected, " operands, but has ",
                                                 n.operands.size(), " operands"));
    }
    return true;
  }
  return expected < 0 ? ParseOperands(&n.operands) : ParseOperands(&n.operands, expected);
}

bool HloParserImpl::ParseAttributesOf(NewInstruction& n) {
  return ParseAttributes(n.attrs, n.allow_attributes);
}

HloInstruction* HloParserImpl::FailOperands(const NewInstruction& n, absl::string_view message) {
  Error(n.operands_offset, message);
  return nullptr;
}

HloInstruction* HloParserImpl::Unsupported(const NewInstruction& n) {
  Error(n.opcode_offset, absl::StrCat("opcode ", HloOpcodeString(n.opcode), " is not supported"));
  return nullptr;
}

bool HloParserImpl::InferShape(NewInstruction& n,
                               const std::function<absl::StatusOr<Shape>()>& inference) {
  if (n.shape.has_value()) return true;
  absl::StatusOr<Shape> inferred = inference();
  if (!inferred.ok()) {
    return Error(n.opcode_offset,
                 absl::StrCat("failed to infer shape for opcode: ", HloOpcodeString(n.opcode),
                              ", error: ", inferred.status().message()));
  }
  n.shape = *std::move(inferred);
  ShapeUtil::SetToDefaultLayoutIfMissing(&*n.shape);
  return true;
}

bool HloParserImpl::RequireShape(NewInstruction& n) {
  return InferShape(n, [] {
    return absl::StatusOr<Shape>(
        absl::InvalidArgumentError("write the result shape: Axle's parser does not infer it"));
  });
}

bool HloParserImpl::SingleDimension(const NewInstruction& n, const std::vector<int64_t>& dims) {
  if (dims.size() != 1) {
    return Error(n.operands_offset, absl::StrCat("expects dimensions={d} with exactly one "
                                                 "dimension, but sees ",
                                                 dims.size()));
  }
  return true;
}

HloInstruction* HloParserImpl::AddPlain(NewInstruction& n) {
  return Add(HloInstruction::Create(n.opcode, *n.shape, n.operands));
}

PrecisionConfig MakePrecisionConfig(
    const std::optional<std::vector<PrecisionConfig::Precision>>& list, size_t default_count) {
  PrecisionConfig config;
  if (list.has_value()) {
    *config.mutable_operand_precision() = *list;
  } else {
    config.mutable_operand_precision()->assign(default_count, PrecisionConfig::DEFAULT);
  }
  return config;
}

std::vector<const Shape*> OperandShapes(const std::vector<HloInstruction*>& operands, size_t begin,
                                        size_t end) {
  std::vector<const Shape*> shapes;
  for (size_t i = begin; i < end && i < operands.size(); ++i) {
    shapes.push_back(&operands[i]->shape());
  }
  return shapes;
}

// --- Dispatch -----------------------------------------------------------------

HloInstruction* HloParserImpl::CreateInstruction(std::optional<Shape> shape, HloOpcode opcode,
                                                 std::optional<HloOpcode> async_wrapped,
                                                 AttrMap& attrs, bool allow_attributes,
                                                 size_t opcode_offset, const Operands* preset) {
  NewInstruction n{std::move(shape), opcode,        async_wrapped,        attrs,
                   allow_attributes, opcode_offset, lexer_.token_start(), preset};
  // No default: every opcode names its family here.
  switch (opcode) {
    case HloOpcode::kConstant:
    case HloOpcode::kIota:
    case HloOpcode::kParameter:
    case HloOpcode::kPartitionId:
    case HloOpcode::kReplicaId:
    case HloOpcode::kRng:
    case HloOpcode::kRngBitGenerator:
    case HloOpcode::kRngGetAndUpdateState:
      return CreateSourceOp(n);
    case HloOpcode::kClamp:
    case HloOpcode::kCompare:
    case HloOpcode::kReducePrecision:
    case HloOpcode::kSelect:
    case HloOpcode::kStochasticConvert:
      AXLE_HLO_BINARY_ELEMENTWISE_OPCODES(AXLE_HLO_OPCODE_CASE)
      return CreateElementwise(n);
    case HloOpcode::kBroadcast:
    case HloOpcode::kConcatenate:
    case HloOpcode::kDynamicReshape:
    case HloOpcode::kDynamicSlice:
    case HloOpcode::kDynamicUpdateSlice:
    case HloOpcode::kGetDimensionSize:
    case HloOpcode::kGetTupleElement:
    case HloOpcode::kMap:
    case HloOpcode::kPad:
    case HloOpcode::kReduce:
    case HloOpcode::kReshape:
    case HloOpcode::kReverse:
    case HloOpcode::kSetDimensionSize:
    case HloOpcode::kSlice:
    case HloOpcode::kTopK:
    case HloOpcode::kTranspose:
    case HloOpcode::kTuple:
      return CreateDataMovement(n);
    case HloOpcode::kAddDependency:
    case HloOpcode::kAfterAll:
    case HloOpcode::kCall:
    case HloOpcode::kConditional:
    case HloOpcode::kCopyStart:
    case HloOpcode::kCustomCall:
    case HloOpcode::kDomain:
    case HloOpcode::kFusion:
    case HloOpcode::kInfeed:
    case HloOpcode::kOutfeed:
    case HloOpcode::kReduceWindow:
    case HloOpcode::kScan:
    case HloOpcode::kSelectAndScatter:
    case HloOpcode::kSort:
    case HloOpcode::kWhile:
      return CreateControlFlow(n);
    case HloOpcode::kBatchNormGrad:
    case HloOpcode::kBatchNormInference:
    case HloOpcode::kBatchNormTraining:
    case HloOpcode::kCholesky:
    case HloOpcode::kConvolution:
    case HloOpcode::kDot:
    case HloOpcode::kFft:
    case HloOpcode::kGather:
    case HloOpcode::kRaggedDot:
    case HloOpcode::kScaledDot:
    case HloOpcode::kScatter:
    case HloOpcode::kTriangularSolve:
      return CreateLinearAlgebraOp(n);
    case HloOpcode::kAllGather:
    case HloOpcode::kAllGatherStart:
    case HloOpcode::kAllReduce:
    case HloOpcode::kAllReduceStart:
    case HloOpcode::kAllToAll:
    case HloOpcode::kCollectiveBroadcast:
    case HloOpcode::kCollectivePermute:
    case HloOpcode::kCollectivePermuteStart:
    case HloOpcode::kRaggedAllToAll:
    case HloOpcode::kRecv:
    case HloOpcode::kRecvDone:
    case HloOpcode::kReduceScatter:
    case HloOpcode::kSend:
    case HloOpcode::kSendDone:
      return CreateCollective(n);
    case HloOpcode::kAsyncDone:
    case HloOpcode::kAsyncStart:
    case HloOpcode::kAsyncUpdate:
      if (!ParseOperandsOf(n)) return nullptr;
      return CreateAsync(n.shape, opcode, async_wrapped, attrs, allow_attributes, opcode_offset,
                         std::move(n.operands));
    case HloOpcode::kAllGatherDone:
    case HloOpcode::kAllReduceDone:
    case HloOpcode::kBitcast:
    case HloOpcode::kBitcastConvert:
    case HloOpcode::kCollectivePermuteDone:
    case HloOpcode::kConvert:
    case HloOpcode::kCopyDone:
    case HloOpcode::kOptimizationBarrier:
      AXLE_HLO_UNARY_ELEMENTWISE_OPCODES(AXLE_HLO_OPCODE_CASE)
      return CreateLikeOperand(n);
  }
  return Unsupported(n);
}

// --- Source ops: parameter, constant, iota, ids, random numbers -------------

HloInstruction* HloParserImpl::CreateSourceOp(NewInstruction& n) {
  switch (n.opcode) {
    case HloOpcode::kParameter: {
      int64_t number;
      if (!ParseToken(TokKind::kLparen, "expects '(' before parameter number")) return nullptr;
      size_t number_offset = lexer_.token_start();
      if (!ParseInt64(&number)) return nullptr;
      if (number < 0) return Error(number_offset, "parameter number must be >= 0"), nullptr;
      if (number > static_cast<int64_t>(lexer_.text().size())) {
        return Error(number_offset, "parameter number is too large"), nullptr;
      }
      HloComputation* computation = scope().computation;
      if (number < computation->num_parameters() &&
          computation->parameter_instruction(number) != nullptr) {
        return Error(number_offset,
                     absl::StrCat("parameter number ", number, " already used by ",
                                  computation->parameter_instruction(number)->name())),
               nullptr;
      }
      if (!ParseToken(TokKind::kRparen, "expects ')' after parameter number") ||
          !ParseAttributesOf(n)) {
        return nullptr;
      }
      auto parameter = std::make_unique<HloParameterInstruction>(n.opcode, *n.shape, Operands{});
      parameter->mutable_attrs()->parameter_number = number;
      return Add(std::move(parameter));
    }
    case HloOpcode::kConstant: {
      Literal literal;
      if (!ParseToken(TokKind::kLparen, "expects '(' before constant literal")) return nullptr;
      size_t literal_start = lexer_.token_start();
      if (!ParseLiteral(*n.shape, &literal)) return nullptr;
      absl::string_view literal_text = absl::StripAsciiWhitespace(
          lexer_.text().substr(literal_start, last_end_ - literal_start));
      if (!ParseToken(TokKind::kRparen, "expects ')' after constant literal") ||
          !ParseAttributesOf(n)) {
        return nullptr;
      }
      auto constant = std::make_unique<HloConstantInstruction>(n.opcode, *n.shape, Operands{});
      constant->mutable_attrs()->literal = std::move(literal);
      constant->mutable_attrs()->elided = literal_text == "{...}";
      return Add(std::move(constant));
    }
    case HloOpcode::kIota: {
      std::optional<int64_t> dimension;
      n.attrs["iota_dimension"] = Int64Attr(true, &dimension);
      if (!ParseOperandsOf(n, 0) || !ParseAttributesOf(n)) return nullptr;
      auto iota = std::make_unique<HloIotaInstruction>(n.opcode, *n.shape, n.operands);
      iota->mutable_attrs()->iota_dimension = *dimension;
      return Add(std::move(iota));
    }
    case HloOpcode::kReplicaId:
    case HloOpcode::kPartitionId: {
      if (!ParseOperandsOf(n, 0) || !ParseAttributesOf(n)) return nullptr;
      if (!InferShape(n, [] { return absl::StatusOr<Shape>(ShapeUtil::MakeShape(U32, {})); })) {
        return nullptr;
      }
      return AddPlain(n);
    }
    case HloOpcode::kRngGetAndUpdateState: {
      std::optional<int64_t> delta;
      AttrSpec delta_spec = Int64Attr(true, &delta);
      n.attrs["delta"] = Raw("delta", true, delta_spec.parse);
      if (!ParseOperandsOf(n, 0) || !ParseAttributesOf(n)) return nullptr;
      return AddPlain(n);
    }
    case HloOpcode::kRng: {
      std::optional<int> distribution;
      n.attrs["distribution"] =
          EnumAttr(true, {"rng_invalid", "rng_uniform", "rng_normal"}, &distribution);
      if (!ParseOperandsOf(n) || !ParseAttributesOf(n)) return nullptr;
      auto rng = std::make_unique<HloRngInstruction>(n.opcode, *n.shape, n.operands);
      rng->mutable_attrs()->distribution = static_cast<RandomDistribution>(*distribution);
      return Add(std::move(rng));
    }
    case HloOpcode::kRngBitGenerator: {
      std::optional<int> algorithm;
      n.attrs["algorithm"] =
          EnumAttr(true, {"rng_default", "rng_three_fry", "rng_philox"}, &algorithm);
      if (!ParseOperandsOf(n) || !ParseAttributesOf(n)) return nullptr;
      if (n.operands.empty()) return FailOperands(n, "rng-bit-generator needs a state operand");
      auto rng = std::make_unique<HloRngBitGeneratorInstruction>(n.opcode, *n.shape, n.operands);
      rng->mutable_attrs()->algorithm = static_cast<RandomAlgorithm>(*algorithm);
      return Add(std::move(rng));
    }
    default:
      return Unsupported(n);
  }
}
// --- Elementwise ------------------------------------------------------------

// One operand whose shape the result takes: every one-operand elementwise op
// but reduce-precision (ShapeInference's unary rule gives the element type),
// bitcasts, converts, opt-barrier and the -done ops of async pairs.
HloInstruction* HloParserImpl::CreateLikeOperand(NewInstruction& n) {
  if (!ParseOperandsOf(n, 1) || !ParseAttributesOf(n)) return nullptr;
  bool elementwise = HloOpcodeIsElementwise(n.opcode) && n.opcode != HloOpcode::kConvert;
  if (!InferShape(n, [&]() -> absl::StatusOr<Shape> {
        if (elementwise) return ShapeInference::InferUnaryOpShape(n.opcode, n.operands[0]->shape());
        return n.operands[0]->shape();
      })) {
    return nullptr;
  }
  return AddPlain(n);
}

HloInstruction* HloParserImpl::CreateElementwise(NewInstruction& n) {
  switch (n.opcode) {
    AXLE_HLO_BINARY_ELEMENTWISE_OPCODES(AXLE_HLO_OPCODE_CASE)
    case HloOpcode::kStochasticConvert: {
      if (!ParseOperandsOf(n, 2) || !ParseAttributesOf(n)) return nullptr;
      if (!InferShape(n, [&] {
            return ShapeInference::InferBinaryOpShape(n.opcode, n.operands[0]->shape(),
                                                      n.operands[1]->shape(), {});
          })) {
        return nullptr;
      }
      return AddPlain(n);
    }
    case HloOpcode::kClamp:
    case HloOpcode::kSelect: {
      if (!ParseOperandsOf(n, 3) || !ParseAttributesOf(n)) return nullptr;
      if (!InferShape(n, [&] {
            return ShapeInference::InferTernaryOpShape(
                n.opcode, n.operands[0]->shape(), n.operands[1]->shape(), n.operands[2]->shape());
          }))
        return nullptr;
      return AddPlain(n);
    }
    case HloOpcode::kCompare: {
      std::optional<int> direction, type, order;
      n.attrs["direction"] = EnumAttr(true, {"EQ", "NE", "GE", "GT", "LE", "LT"}, &direction);
      n.attrs["type"] = EnumAttr(false, {"FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED"}, &type);
      // order=TOTAL|PARTIAL (as JAX 0.11.2 writes it; TOTALORDER|PARTIALORDER
      // are XLA's names for its Comparison::Order) says the same thing as the
      // type: see ComparisonTypeForOrder.
      size_t order_offset = 0;
      AttrSpec order_spec =
          EnumAttr(false, {"TOTAL", "PARTIAL", "TOTALORDER", "PARTIALORDER"}, &order);
      n.attrs["order"] = {false, [&, parse = order_spec.parse] {
                            order_offset = lexer_.token_start();
                            return parse();
                          }};
      if (!ParseOperandsOf(n, 2) || !ParseAttributesOf(n)) return nullptr;
      if (!InferShape(n, [&] {
            return ShapeInference::InferBinaryOpShape(n.opcode, n.operands[0]->shape(),
                                                      n.operands[1]->shape(), {});
          })) {
        return nullptr;
      }
      static constexpr ComparisonType kTypes[] = {
          ComparisonType::kFloat, ComparisonType::kFloatTotalOrder, ComparisonType::kSigned,
          ComparisonType::kUnsigned};
      ComparisonType comparison_type = type.has_value() ? kTypes[*type] : ComparisonType::kDefault;
      if (order.has_value()) {
        absl::StatusOr<ComparisonType> with_order = ComparisonTypeForOrder(
            comparison_type, n.operands[0]->shape().element_type(), /*total=*/*order % 2 == 0);
        if (!with_order.ok()) return Error(order_offset, with_order.status().message()), nullptr;
        comparison_type = *with_order;
      }
      auto compare = std::make_unique<HloCompareInstruction>(n.opcode, *n.shape, n.operands);
      compare->mutable_attrs()->direction = static_cast<ComparisonDirection>(*direction);
      compare->mutable_attrs()->type = comparison_type;
      return Add(std::move(compare));
    }
    case HloOpcode::kReducePrecision: {
      std::optional<int64_t> exponent_bits, mantissa_bits;
      n.attrs["exponent_bits"] = Int32Attr(true, &exponent_bits);
      n.attrs["mantissa_bits"] = Int32Attr(true, &mantissa_bits);
      if (!ParseOperandsOf(n, 1) || !ParseAttributesOf(n)) return nullptr;
      auto rp = std::make_unique<HloReducePrecisionInstruction>(n.opcode, *n.shape, n.operands);
      rp->mutable_attrs()->exponent_bits = static_cast<int32_t>(*exponent_bits);
      rp->mutable_attrs()->mantissa_bits = static_cast<int32_t>(*mantissa_bits);
      return Add(std::move(rp));
    }
    default:
      return Unsupported(n);
  }
}
}  // namespace hlo_parser_internal
}  // namespace axle
