//===- hlo_parser_instructions.cc - One case per opcode -------------------===//
//
// For each opcode: how many operands it takes, which attributes it accepts
// (anything else is "unexpected attribute", as in XLA), the checks XLA's
// parser makes, and, where the text leaves the result shape out, the shape
// XLA would infer. Attributes the IR has no typed field for are parsed (so
// that bad values are rejected) and kept as raw attributes. Collectives:
// hlo_parser_collectives.cc; async ops: hlo_parser_async.cc; dot,
// convolution, gather, scatter: hlo_parser_dimension_numbers.cc.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <limits>

#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "axle/core/shape_util.h"
#include "axle/hlo/text/attribute_text.h"
#include "axle/hlo/text/hlo_parser_internal.h"

namespace axle {
namespace hlo_parser_internal {

using Operands = std::vector<HloInstruction*>;

bool HloParserImpl::TakeOrParseOperands(const Operands* preset, int64_t expected,
                                        size_t opcode_offset, Operands* operands) {
  if (preset != nullptr) {
    *operands = *preset;
    if (expected >= 0 && static_cast<int64_t>(operands->size()) != expected) {
      return Error(opcode_offset, absl::StrCat("expects ", expected, " operands, but has ",
                                               operands->size(), " operands"));
    }
    return true;
  }
  return expected < 0 ? ParseOperands(operands) : ParseOperands(operands, expected);
}

HloInstruction* HloParserImpl::CreateInstruction(std::optional<Shape> shape, HloOpcode opcode,
                                                 std::optional<HloOpcode> async_wrapped,
                                                 AttrMap& attrs, bool allow_attributes,
                                                 size_t opcode_offset, const Operands* preset) {
  Operands operands;
  size_t operands_offset = lexer_.token_start();
  // -1: any number of operands.
  auto parse_operands = [&](int64_t expected = -1) {
    return TakeOrParseOperands(preset, expected, opcode_offset, &operands);
  };
  auto parse_attributes = [&]() { return ParseAttributes(attrs, allow_attributes); };
  auto fail = [&](absl::string_view message) -> HloInstruction* {
    Error(operands_offset, message);
    return nullptr;
  };
  auto infer = [&](const std::function<absl::StatusOr<Shape>()>& inference) {
    if (shape.has_value()) return true;
    absl::StatusOr<Shape> inferred = inference();
    if (!inferred.ok()) {
      return Error(opcode_offset,
                   absl::StrCat("failed to infer shape for opcode: ", HloOpcodeString(opcode),
                                ", error: ", inferred.status().message()));
    }
    shape = *std::move(inferred);
    ShapeUtil::SetToDefaultLayoutIfMissing(&*shape);
    return true;
  };
  auto no_inference = [&]() {
    return infer([&]() -> absl::StatusOr<Shape> {
      return InferError("write the result shape: Axle's parser does not infer it");
    });
  };
  auto plain = [&]() -> HloInstruction* {
    return Add(HloInstruction::Create(opcode, *shape, operands));
  };
  auto precision_config = [&](const std::optional<std::vector<PrecisionConfig::Precision>>& list,
                              size_t default_count) {
    PrecisionConfig config;
    if (list.has_value()) {
      *config.mutable_operand_precision() = *list;
    } else {
      config.mutable_operand_precision()->assign(default_count, PrecisionConfig::DEFAULT);
    }
    return config;
  };
  auto single_dimension = [&](const std::optional<std::vector<int64_t>>& dims) {
    if (dims->size() != 1) {
      return Error(operands_offset, absl::StrCat("expects dimensions={d} with exactly one "
                                                 "dimension, but sees ",
                                                 dims->size()));
    }
    return true;
  };

  if (IsCollectiveOrChannelOp(opcode)) {
    return CreateCollective(shape, opcode, attrs, allow_attributes, opcode_offset, preset);
  }
  if (opcode == HloOpcode::kAsyncStart || opcode == HloOpcode::kAsyncUpdate ||
      opcode == HloOpcode::kAsyncDone) {
    if (!parse_operands()) return nullptr;
    return CreateAsync(shape, opcode, async_wrapped, attrs, allow_attributes, opcode_offset,
                       std::move(operands));
  }

  // One-operand ops whose result is shaped like their operand: every
  // one-operand elementwise op of the opcode table (but reduce-precision,
  // which has attributes of its own), and the few listed in the switch.
  auto parse_one_operand = [&]() -> HloInstruction* {
    if (!parse_operands(1) || !parse_attributes()) return nullptr;
    bool elementwise = HloOpcodeIsElementwise(opcode) && opcode != HloOpcode::kConvert;
    if (!infer([&]() -> absl::StatusOr<Shape> {
          if (elementwise) return InferUnary(opcode, operands[0]->shape());
          return operands[0]->shape();
        })) {
      return nullptr;
    }
    return plain();
  };
  if (HloOpcodeIsElementwise(opcode) && HloOpcodeArity(opcode) == 1 &&
      opcode != HloOpcode::kReducePrecision) {
    return parse_one_operand();
  }

  switch (opcode) {
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
          !parse_attributes()) {
        return nullptr;
      }
      auto parameter = std::make_unique<HloParameterInstruction>(opcode, *shape, Operands{});
      parameter->mutable_attrs()->parameter_number = number;
      return Add(std::move(parameter));
    }
    case HloOpcode::kConstant: {
      Literal literal;
      if (!ParseToken(TokKind::kLparen, "expects '(' before constant literal")) return nullptr;
      size_t literal_start = lexer_.token_start();
      if (!ParseLiteral(*shape, &literal)) return nullptr;
      absl::string_view literal_text = absl::StripAsciiWhitespace(
          lexer_.text().substr(literal_start, last_end_ - literal_start));
      if (!ParseToken(TokKind::kRparen, "expects ')' after constant literal") ||
          !parse_attributes()) {
        return nullptr;
      }
      auto constant = std::make_unique<HloConstantInstruction>(opcode, *shape, Operands{});
      constant->mutable_attrs()->literal = std::move(literal);
      constant->mutable_attrs()->elided = literal_text == "{...}";
      return Add(std::move(constant));
    }
    case HloOpcode::kIota: {
      std::optional<int64_t> dimension;
      attrs["iota_dimension"] = Int64Attr(true, &dimension);
      if (!parse_operands(0) || !parse_attributes()) return nullptr;
      auto iota = std::make_unique<HloIotaInstruction>(opcode, *shape, operands);
      iota->mutable_attrs()->iota_dimension = *dimension;
      return Add(std::move(iota));
    }
    case HloOpcode::kTopK: {
      std::optional<int64_t> k;
      std::optional<bool> largest;
      attrs["k"] = Int64Attr(true, &k);
      attrs["largest"] = BoolAttr(false, &largest);
      attrs["is_stable"] = Raw("is_stable", false, [this] {
        bool ignored;
        return ParseBool(&ignored);
      });
      if (!parse_operands(1) || !parse_attributes()) return nullptr;
      if (!infer([&]() -> absl::StatusOr<Shape> {
            const Shape& in = operands[0]->shape();
            if (!in.IsArray() || in.rank() == 0 || *k < 0 || *k > in.dimensions(in.rank() - 1)) {
              return InferError("topk needs an array operand and 0 <= k <= its last dimension");
            }
            Shape values = in;
            values.set_dimensions(in.rank() - 1, *k);
            Shape indices = ShapeUtil::ChangeElementType(values, S32);
            return ShapeUtil::MakeTupleShape({values, indices});
          })) {
        return nullptr;
      }
      auto topk = std::make_unique<HloTopKInstruction>(opcode, *shape, operands);
      topk->mutable_attrs()->k = *k;
      topk->mutable_attrs()->largest = largest.value_or(true);
      return Add(std::move(topk));
    }
    case HloOpcode::kOptimizationBarrier:
    case HloOpcode::kAllGatherDone:
    case HloOpcode::kAllReduceDone:
    case HloOpcode::kCollectivePermuteDone:
    case HloOpcode::kCopyDone:
    case HloOpcode::kBitcast:
    case HloOpcode::kConvert:
    case HloOpcode::kBitcastConvert: {
      return parse_one_operand();
    }
    case HloOpcode::kAdd:
    case HloOpcode::kAnd:
    case HloOpcode::kAtan2:
    case HloOpcode::kComplex:
    case HloOpcode::kDivide:
    case HloOpcode::kMaximum:
    case HloOpcode::kMinimum:
    case HloOpcode::kMultiply:
    case HloOpcode::kOr:
    case HloOpcode::kPower:
    case HloOpcode::kRemainder:
    case HloOpcode::kShiftLeft:
    case HloOpcode::kShiftRightArithmetic:
    case HloOpcode::kShiftRightLogical:
    case HloOpcode::kSubtract:
    case HloOpcode::kXor:
    case HloOpcode::kStochasticConvert: {
      if (!parse_operands(2) || !parse_attributes()) return nullptr;
      if (!infer([&] { return InferBinary(opcode, operands[0]->shape(), operands[1]->shape()); })) {
        return nullptr;
      }
      return plain();
    }
    case HloOpcode::kClamp:
    case HloOpcode::kSelect: {
      if (!parse_operands(3) || !parse_attributes()) return nullptr;
      if (!infer([&]() -> absl::StatusOr<Shape> { return operands[1]->shape(); })) return nullptr;
      return plain();
    }
    case HloOpcode::kCopyStart: {
      std::optional<int64_t> index;
      attrs["cross_program_prefetch_index"] = Int32Attr(false, &index);
      if (!parse_operands(1) || !parse_attributes() || !no_inference()) return nullptr;
      auto copy_start = std::make_unique<HloCopyStartInstruction>(opcode, *shape, operands);
      copy_start->mutable_attrs()->cross_program_prefetch_index = index;
      return Add(std::move(copy_start));
    }
    case HloOpcode::kReplicaId:
    case HloOpcode::kPartitionId: {
      if (!parse_operands(0) || !parse_attributes()) return nullptr;
      if (!infer([] { return absl::StatusOr<Shape>(ShapeUtil::MakeShape(U32, {})); })) {
        return nullptr;
      }
      return plain();
    }
    case HloOpcode::kDynamicReshape: {
      if (!parse_operands() || !parse_attributes()) return nullptr;
      if (operands.empty()) return fail("Expected at least one operand.");
      return plain();
    }
    case HloOpcode::kReshape: {
      std::optional<int64_t> inferred_dimension;
      attrs["inferred_dimension"] = Int64Attr(false, &inferred_dimension);
      if (!parse_operands(1) || !parse_attributes()) return nullptr;
      auto reshape = std::make_unique<HloReshapeInstruction>(opcode, *shape, operands);
      reshape->mutable_attrs()->inferred_dimension = inferred_dimension.value_or(-1);
      return Add(std::move(reshape));
    }
    case HloOpcode::kAfterAll: {
      if (!parse_operands() || !parse_attributes()) return nullptr;
      if (!infer([] { return absl::StatusOr<Shape>(ShapeUtil::MakeTokenShape()); })) return nullptr;
      return plain();
    }
    case HloOpcode::kAddDependency: {
      if (!parse_operands(2) || !parse_attributes()) return nullptr;
      if (!infer([&] { return absl::StatusOr<Shape>(operands[0]->shape()); })) return nullptr;
      return plain();
    }
    case HloOpcode::kSort: {
      std::optional<std::vector<int64_t>> dimensions;
      std::optional<bool> is_stable;
      std::optional<HloComputation*> to_apply;
      attrs["dimensions"] = Int64ListAttr(true, &dimensions);
      attrs["is_stable"] = BoolAttr(false, &is_stable);
      attrs["to_apply"] = ComputationAttr(true, &to_apply);
      if (!parse_operands() || !parse_attributes() || !single_dimension(dimensions)) return nullptr;
      if (operands.empty()) return fail("sort needs at least one operand");
      if (!infer([&]() -> absl::StatusOr<Shape> {
            if (operands.size() == 1) return operands[0]->shape();
            std::vector<Shape> shapes;
            for (HloInstruction* operand : operands) shapes.push_back(operand->shape());
            return ShapeUtil::MakeTupleShape(std::move(shapes));
          })) {
        return nullptr;
      }
      auto sort = std::make_unique<HloSortInstruction>(opcode, *shape, operands);
      sort->mutable_attrs()->sort_dimension = (*dimensions)[0];
      sort->mutable_attrs()->is_stable = is_stable.value_or(false);
      sort->AppendCalledComputation(*to_apply);
      return Add(std::move(sort));
    }
    case HloOpcode::kTuple: {
      bool ok = shape.has_value() ? parse_operands(shape->tuple_shapes_size()) : parse_operands();
      if (!ok || !parse_attributes()) return nullptr;
      if (!infer([&]() -> absl::StatusOr<Shape> {
            std::vector<Shape> shapes;
            for (HloInstruction* operand : operands) shapes.push_back(operand->shape());
            return ShapeUtil::MakeTupleShape(std::move(shapes));
          })) {
        return nullptr;
      }
      return plain();
    }
    case HloOpcode::kWhile: {
      std::optional<HloComputation*> condition, body;
      attrs["condition"] = ComputationAttr(true, &condition);
      attrs["body"] = ComputationAttr(true, &body);
      if (!parse_operands(1) || !parse_attributes()) return nullptr;
      if (!infer([&] { return absl::StatusOr<Shape>(operands[0]->shape()); })) return nullptr;
      HloInstruction* instruction = plain();
      instruction->AppendCalledComputation(*condition);
      instruction->AppendCalledComputation(*body);
      return instruction;
    }
    case HloOpcode::kGetTupleElement: {
      std::optional<int64_t> index;
      attrs["index"] = Int64Attr(true, &index);
      if (!parse_operands(1) || !parse_attributes()) return nullptr;
      if (!infer([&]() -> absl::StatusOr<Shape> {
            const Shape& tuple = operands[0]->shape();
            if (!tuple.IsTuple() || *index < 0 || *index >= tuple.tuple_shapes_size()) {
              return InferError("index out of range for the operand's tuple shape");
            }
            return tuple.tuple_shapes(*index);
          })) {
        return nullptr;
      }
      auto gte = std::make_unique<HloGetTupleElementInstruction>(opcode, *shape, operands);
      gte->mutable_attrs()->tuple_index = *index;
      return Add(std::move(gte));
    }
    case HloOpcode::kCall: {
      std::optional<HloComputation*> to_apply;
      attrs["to_apply"] = ComputationAttr(true, &to_apply);
      attrs["is_composite"] = Raw("is_composite", false, [this] {
        bool ignored;
        return ParseBool(&ignored);
      });
      if (!parse_operands() || !parse_attributes()) return nullptr;
      if (!infer([&] { return absl::StatusOr<Shape>((*to_apply)->root_instruction()->shape()); })) {
        return nullptr;
      }
      HloInstruction* call = plain();
      call->AppendCalledComputation(*to_apply);
      return call;
    }
    case HloOpcode::kReduceWindow:
    case HloOpcode::kSelectAndScatter: {
      std::optional<Window> window;
      std::optional<HloComputation*> to_apply, select, scatter;
      attrs["window"] = WindowAttr(false, &window);
      bool is_reduce_window = opcode == HloOpcode::kReduceWindow;
      if (is_reduce_window) {
        attrs["to_apply"] = ComputationAttr(true, &to_apply);
      } else {
        attrs["select"] = ComputationAttr(true, &select);
        attrs["scatter"] = ComputationAttr(true, &scatter);
      }
      if (!(is_reduce_window ? parse_operands() : parse_operands(3)) || !parse_attributes()) {
        return nullptr;
      }
      if (is_reduce_window && (operands.empty() || operands.size() % 2 != 0)) {
        return fail(absl::StrCat("expects an even number of operands, but has ", operands.size(),
                                 " operands"));
      }
      if (!infer([&]() -> absl::StatusOr<Shape> {
            if (!is_reduce_window) return operands[0]->shape();
            return InferReduceWindow(operands, window.value_or(Window()));
          })) {
        return nullptr;
      }
      auto instruction = std::make_unique<HloWindowInstruction>(opcode, *shape, operands);
      instruction->mutable_attrs()->window = window.value_or(Window());
      if (is_reduce_window) {
        instruction->AppendCalledComputation(*to_apply);
      } else {
        instruction->AppendCalledComputation(*select);
        instruction->AppendCalledComputation(*scatter);
      }
      return Add(std::move(instruction));
    }
    case HloOpcode::kConvolution:
    case HloOpcode::kDot:
    case HloOpcode::kRaggedDot:
    case HloOpcode::kScaledDot:
    case HloOpcode::kGather:
    case HloOpcode::kScatter:
      return CreateWithDimensionNumbers(shape, opcode, attrs, allow_attributes, opcode_offset,
                                        preset);
    case HloOpcode::kFft: {
      std::optional<int> fft_type;
      std::optional<std::vector<int64_t>> fft_length;
      attrs["fft_type"] = EnumAttr(true, {"FFT", "IFFT", "RFFT", "IRFFT"}, &fft_type);
      attrs["fft_length"] = Int64ListAttr(true, &fft_length);
      if (!parse_operands(1) || !parse_attributes() || !no_inference()) return nullptr;
      auto fft = std::make_unique<HloFftInstruction>(opcode, *shape, operands);
      fft->mutable_attrs()->fft_type = static_cast<FftType>(*fft_type);
      fft->mutable_attrs()->fft_length = *fft_length;
      return Add(std::move(fft));
    }
    case HloOpcode::kTriangularSolve: {
      std::optional<bool> left_side, lower, unit_diagonal;
      std::optional<int> transpose_a;
      attrs["left_side"] = BoolAttr(false, &left_side);
      attrs["lower"] = BoolAttr(false, &lower);
      attrs["unit_diagonal"] = BoolAttr(false, &unit_diagonal);
      attrs["transpose_a"] = EnumAttr(
          false, {"TRANSPOSE_INVALID", "NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"}, &transpose_a);
      if (!parse_operands(2) || !parse_attributes()) return nullptr;
      if (!infer([&] { return absl::StatusOr<Shape>(operands[1]->shape()); })) return nullptr;
      auto solve = std::make_unique<HloTriangularSolveInstruction>(opcode, *shape, operands);
      TriangularSolveOptions& options = solve->mutable_attrs()->options;
      options.set_left_side(left_side.value_or(false));
      options.set_lower(lower.value_or(false));
      options.set_unit_diagonal(unit_diagonal.value_or(false));
      options.set_transpose_a(transpose_a.has_value()
                                  ? static_cast<TriangularSolveOptions::Transpose>(*transpose_a)
                                  : TriangularSolveOptions::NO_TRANSPOSE);
      return Add(std::move(solve));
    }
    case HloOpcode::kCompare: {
      std::optional<int> direction, type, order;
      attrs["direction"] = EnumAttr(true, {"EQ", "NE", "GE", "GT", "LE", "LT"}, &direction);
      attrs["type"] = EnumAttr(false, {"FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED"}, &type);
      // order=TOTAL|PARTIAL (as JAX 0.11.2 writes it; TOTALORDER|PARTIALORDER
      // are XLA's names for its Comparison::Order) says the same thing as the
      // type: see ComparisonTypeForOrder.
      size_t order_offset = 0;
      AttrSpec order_spec =
          EnumAttr(false, {"TOTAL", "PARTIAL", "TOTALORDER", "PARTIALORDER"}, &order);
      attrs["order"] = {false, [&, parse = order_spec.parse] {
                          order_offset = lexer_.token_start();
                          return parse();
                        }};
      if (!parse_operands(2) || !parse_attributes()) return nullptr;
      if (!infer([&] { return InferBinary(opcode, operands[0]->shape(), operands[1]->shape()); })) {
        return nullptr;
      }
      static constexpr ComparisonType kTypes[] = {
          ComparisonType::kFloat, ComparisonType::kFloatTotalOrder, ComparisonType::kSigned,
          ComparisonType::kUnsigned};
      ComparisonType comparison_type = type.has_value() ? kTypes[*type] : ComparisonType::kDefault;
      if (order.has_value()) {
        absl::StatusOr<ComparisonType> with_order = ComparisonTypeForOrder(
            comparison_type, operands[0]->shape().element_type(), /*total=*/*order % 2 == 0);
        if (!with_order.ok()) return Error(order_offset, with_order.status().message()), nullptr;
        comparison_type = *with_order;
      }
      auto compare = std::make_unique<HloCompareInstruction>(opcode, *shape, operands);
      compare->mutable_attrs()->direction = static_cast<ComparisonDirection>(*direction);
      compare->mutable_attrs()->type = comparison_type;
      return Add(std::move(compare));
    }
    case HloOpcode::kCholesky: {
      std::optional<bool> lower;
      attrs["lower"] = BoolAttr(false, &lower);
      if (!parse_operands(1) || !parse_attributes()) return nullptr;
      if (!infer([&] { return absl::StatusOr<Shape>(operands[0]->shape()); })) return nullptr;
      auto cholesky = std::make_unique<HloCholeskyInstruction>(opcode, *shape, operands);
      cholesky->mutable_attrs()->options.set_lower(lower.value_or(false));
      return Add(std::move(cholesky));
    }
    case HloOpcode::kBroadcast:
    case HloOpcode::kTranspose:
    case HloOpcode::kReverse:
    case HloOpcode::kConcatenate:
    case HloOpcode::kMap:
    case HloOpcode::kReduce:
    case HloOpcode::kGetDimensionSize:
    case HloOpcode::kSetDimensionSize: {
      std::optional<std::vector<int64_t>> dimensions;
      std::optional<HloComputation*> to_apply;
      int64_t expected = -1;
      if (opcode == HloOpcode::kBroadcast || opcode == HloOpcode::kTranspose ||
          opcode == HloOpcode::kReverse || opcode == HloOpcode::kGetDimensionSize) {
        expected = 1;
      } else if (opcode == HloOpcode::kSetDimensionSize) {
        expected = 2;
      }
      if (!parse_operands(expected)) return nullptr;
      bool scalar_broadcast = opcode == HloOpcode::kBroadcast && operands[0]->shape().IsArray() &&
                              operands[0]->shape().rank() == 0;
      attrs["dimensions"] =
          Int64ListAttr(opcode != HloOpcode::kMap && !scalar_broadcast, &dimensions);
      if (opcode == HloOpcode::kMap || opcode == HloOpcode::kReduce) {
        attrs["to_apply"] = ComputationAttr(true, &to_apply);
      }
      if (!parse_attributes()) return nullptr;
      if (!dimensions.has_value()) dimensions.emplace();
      if (opcode == HloOpcode::kConcatenate || opcode == HloOpcode::kGetDimensionSize ||
          opcode == HloOpcode::kSetDimensionSize) {
        if (!single_dimension(dimensions)) return nullptr;
      }
      if (opcode == HloOpcode::kReduce && (operands.empty() || operands.size() % 2 != 0)) {
        return fail(absl::StrCat("expects an even number of operands, but has ", operands.size(),
                                 " operands"));
      }
      if (!infer([&]() -> absl::StatusOr<Shape> {
            const Shape& in = operands[0]->shape();
            switch (opcode) {
              case HloOpcode::kBroadcast: {
                if (!in.IsArray()) return InferError("broadcast operand must be an array");
                std::vector<int64_t> dims = *dimensions;
                dims.insert(dims.end(), in.dimensions().begin(), in.dimensions().end());
                return ShapeUtil::MakeShape(in.element_type(), dims);
              }
              case HloOpcode::kTranspose:
                return InferTranspose(in, *dimensions);
              case HloOpcode::kReverse:
                return in;
              case HloOpcode::kConcatenate:
                return InferConcatenate(operands, (*dimensions)[0]);
              case HloOpcode::kMap: {
                const Shape& root = (*to_apply)->root_instruction()->shape();
                return ShapeUtil::ChangeElementType(in, root.element_type());
              }
              case HloOpcode::kReduce:
                return InferReduce(operands, *dimensions);
              case HloOpcode::kGetDimensionSize:
                return ShapeUtil::MakeShape(S32, {});
              default: {
                Shape out = in;
                int64_t d = (*dimensions)[0];
                if (!out.IsArray() || d < 0 || d >= out.rank()) {
                  return InferError("dimension out of range");
                }
                out.set_dynamic_dimension(d, true);
                return out;
              }
            }
          })) {
        return nullptr;
      }
      auto instruction = std::make_unique<HloDimensionsInstruction>(opcode, *shape, operands);
      instruction->mutable_attrs()->dimensions = *dimensions;
      if (to_apply.has_value()) instruction->AppendCalledComputation(*to_apply);
      return Add(std::move(instruction));
    }
    case HloOpcode::kScan: {
      std::optional<HloComputation*> to_apply;
      std::optional<std::vector<int64_t>> dimensions;
      std::optional<int64_t> num_carries;
      std::optional<bool> is_reverse, is_associative;
      if (!parse_operands()) return nullptr;
      attrs["to_apply"] = ComputationAttr(true, &to_apply);
      attrs["dimensions"] = Int64ListAttr(true, &dimensions);
      attrs["num_carries"] = Int64Attr(true, &num_carries);
      attrs["is_reverse"] = BoolAttr(false, &is_reverse);
      attrs["is_associative"] = BoolAttr(false, &is_associative);
      if (!parse_attributes()) return nullptr;
      int64_t n = static_cast<int64_t>(operands.size());
      if (n != (*to_apply)->num_parameters()) {
        return fail(absl::StrCat("expects ", n,
                                 " operands to match the number of parameters of to_apply, but "
                                 "to_apply has ",
                                 (*to_apply)->num_parameters(), " parameters"));
      }
      if (dimensions->size() != 1) return fail("expects exactly one dimension");
      if (*num_carries < 0 || n < *num_carries) {
        return fail(absl::StrCat("expects at least ", *num_carries,
                                 " operands to match the number of carries, but has ", n,
                                 " operands"));
      }
      int64_t scan_dim = (*dimensions)[0];
      int64_t inputs = n - *num_carries;
      if (!infer([&]() -> absl::StatusOr<Shape> {
            if (inputs == 0) return InferError("Cannot infer shape for scan with no inputs");
            const Shape& first = operands[0]->shape();
            if (!first.IsArray() || scan_dim < 0 || scan_dim >= first.rank()) {
              return InferError("scan dimension out of range");
            }
            int64_t size = first.dimensions(scan_dim);
            auto insert_dim = [&](const Shape& s) -> absl::StatusOr<Shape> {
              if (!s.IsArray() || scan_dim > s.rank()) return InferError("bad scan body shape");
              std::vector<int64_t> dims = s.dimensions();
              dims.insert(dims.begin() + scan_dim, size);
              return ShapeUtil::MakeShape(s.element_type(), dims);
            };
            const Shape& root = (*to_apply)->root_instruction()->shape();
            if (!root.IsTuple())
              return *num_carries > 0 ? absl::StatusOr<Shape>(root) : insert_dim(root);
            std::vector<Shape> results;
            for (int64_t i = 0; i < root.tuple_shapes_size(); ++i) {
              if (i + *num_carries < root.tuple_shapes_size()) {
                absl::StatusOr<Shape> s = insert_dim(root.tuple_shapes(i));
                if (!s.ok()) return s;
                results.push_back(*s);
              } else {
                results.push_back(root.tuple_shapes(i));
              }
            }
            return ShapeUtil::MakeTupleShape(std::move(results));
          })) {
        return nullptr;
      }
      auto scan = std::make_unique<HloScanInstruction>(opcode, *shape, operands);
      scan->mutable_attrs()->dimensions = *dimensions;
      scan->mutable_attrs()->num_carries = *num_carries;
      scan->mutable_attrs()->is_reverse = is_reverse.value_or(false);
      scan->mutable_attrs()->is_associative = is_associative;
      scan->AppendCalledComputation(*to_apply);
      return Add(std::move(scan));
    }
    case HloOpcode::kSlice: {
      std::optional<SliceAttrs> slice;
      attrs["slice"] = {true, [&] {
                          slice.emplace();
                          return ParseSliceRanges(&*slice);
                        }};
      if (!parse_operands(1) || !parse_attributes()) return nullptr;
      auto instruction = std::make_unique<HloSliceInstruction>(opcode, *shape, operands);
      *instruction->mutable_attrs() = *slice;
      return Add(std::move(instruction));
    }
    case HloOpcode::kDynamicSlice: {
      std::optional<std::vector<int64_t>> sizes;
      attrs["dynamic_slice_sizes"] = Int64ListAttr(true, &sizes);
      if (!parse_operands() || !parse_attributes()) return nullptr;
      if (operands.empty()) return fail("Expected at least one operand.");
      if (!(operands.size() == 2 && operands[1]->shape().rank() == 1) &&
          static_cast<int64_t>(operands.size()) != 1 + operands[0]->shape().rank()) {
        return fail("Wrong number of operands.");
      }
      auto instruction = std::make_unique<HloDynamicSliceInstruction>(opcode, *shape, operands);
      instruction->mutable_attrs()->dynamic_slice_sizes = *sizes;
      return Add(std::move(instruction));
    }
    case HloOpcode::kDynamicUpdateSlice: {
      if (!parse_operands() || !parse_attributes()) return nullptr;
      if (operands.size() < 2) return fail("Expected at least two operands.");
      if (!(operands.size() == 3 && operands[2]->shape().rank() == 1) &&
          static_cast<int64_t>(operands.size()) != 2 + operands[0]->shape().rank()) {
        return fail("Wrong number of operands.");
      }
      return plain();
    }
    case HloOpcode::kBatchNormTraining:
    case HloOpcode::kBatchNormInference:
    case HloOpcode::kBatchNormGrad: {
      std::optional<float> epsilon;
      std::optional<int64_t> feature_index;
      attrs["epsilon"] = FloatAttr(true, &epsilon);
      attrs["feature_index"] = Int64Attr(true, &feature_index);
      if (!parse_operands(opcode == HloOpcode::kBatchNormTraining ? 3 : 5) || !parse_attributes()) {
        return nullptr;
      }
      if (!infer([&]() -> absl::StatusOr<Shape> {
            const Shape& in = operands[0]->shape();
            if (opcode == HloOpcode::kBatchNormInference) return in;
            if (!in.IsArray() || *feature_index < 0 || *feature_index >= in.rank()) {
              return InferError("feature_index out of range");
            }
            Shape feature =
                ShapeUtil::MakeShape(in.element_type(), {in.dimensions(*feature_index)});
            return ShapeUtil::MakeTupleShape({in, feature, feature});
          })) {
        return nullptr;
      }
      auto bn = std::make_unique<HloBatchNormInstruction>(opcode, *shape, operands);
      bn->mutable_attrs()->epsilon = *epsilon;
      bn->mutable_attrs()->feature_index = *feature_index;
      return Add(std::move(bn));
    }
    case HloOpcode::kPad: {
      std::optional<PaddingConfig> padding;
      attrs["padding"] = {true, [&] {
                            padding.emplace();
                            return ParsePaddingConfig(&*padding);
                          }};
      if (!parse_operands(2) || !parse_attributes()) return nullptr;
      if (!infer([&] { return InferPad(operands[0]->shape(), *padding); })) return nullptr;
      auto pad = std::make_unique<HloPadInstruction>(opcode, *shape, operands);
      pad->mutable_attrs()->padding_config = *padding;
      return Add(std::move(pad));
    }
    case HloOpcode::kFusion: {
      std::optional<HloComputation*> calls;
      std::optional<int> fusion_kind;
      std::optional<std::vector<OutputOperandAlias>> aliasing;
      attrs["calls"] = ComputationAttr(true, &calls);
      attrs["kind"] = EnumAttr(true, {"kLoop", "kInput", "kOutput", "kCustom"}, &fusion_kind);
      attrs["output_to_operand_aliasing"] =
          Raw("output_to_operand_aliasing", false, AliasingAttr(false, &aliasing).parse);
      if (!parse_operands() || !parse_attributes()) return nullptr;
      if ((*calls)->FusionInstruction() != nullptr) {
        return fail(absl::StrCat("computation ", (*calls)->name(),
                                 " is already the fused computation of another fusion"));
      }
      auto fusion = std::make_unique<HloFusionInstruction>(opcode, *shape, operands);
      fusion->mutable_attrs()->kind = static_cast<FusionKind>(*fusion_kind);
      fusion->AppendCalledComputation(*calls);
      HloInstruction* added = Add(std::move(fusion));
      (*calls)->SetFusionInstruction(added);
      return added;
    }
    case HloOpcode::kInfeed:
    case HloOpcode::kOutfeed: {
      std::optional<std::string> config;
      std::optional<Shape> outfeed_shape;
      bool infeed = opcode == HloOpcode::kInfeed;
      attrs[infeed ? "infeed_config" : "outfeed_config"] = StringAttr(false, &config);
      if (!infeed) attrs["outfeed_shape"] = ShapeAttr(false, &outfeed_shape);
      if (!parse_operands(infeed ? 1 : 2) || !parse_attributes()) return nullptr;
      if (infeed && !shape->IsTuple()) return fail("infeed must have a non-empty tuple shape");
      if (!infeed) {
        if (!outfeed_shape.has_value()) outfeed_shape = operands[0]->shape();
        shape = ShapeUtil::MakeTokenShape();
      }
      auto feed = std::make_unique<HloFeedInstruction>(opcode, *shape, operands);
      feed->mutable_attrs()->config = config.value_or("");
      feed->mutable_attrs()->outfeed_shape = outfeed_shape;
      return Add(std::move(feed));
    }
    case HloOpcode::kRng: {
      std::optional<int> distribution;
      attrs["distribution"] =
          EnumAttr(true, {"rng_invalid", "rng_uniform", "rng_normal"}, &distribution);
      if (!parse_operands() || !parse_attributes()) return nullptr;
      auto rng = std::make_unique<HloRngInstruction>(opcode, *shape, operands);
      rng->mutable_attrs()->distribution = static_cast<RandomDistribution>(*distribution);
      return Add(std::move(rng));
    }
    case HloOpcode::kRngGetAndUpdateState: {
      std::optional<int64_t> delta;
      AttrSpec delta_spec = Int64Attr(true, &delta);
      attrs["delta"] = Raw("delta", true, delta_spec.parse);
      if (!parse_operands(0) || !parse_attributes()) return nullptr;
      return plain();
    }
    case HloOpcode::kRngBitGenerator: {
      std::optional<int> algorithm;
      attrs["algorithm"] =
          EnumAttr(true, {"rng_default", "rng_three_fry", "rng_philox"}, &algorithm);
      if (!parse_operands() || !parse_attributes()) return nullptr;
      if (operands.empty()) return fail("rng-bit-generator needs a state operand");
      auto rng = std::make_unique<HloRngBitGeneratorInstruction>(opcode, *shape, operands);
      rng->mutable_attrs()->algorithm = static_cast<RandomAlgorithm>(*algorithm);
      return Add(std::move(rng));
    }
    case HloOpcode::kReducePrecision: {
      std::optional<int64_t> exponent_bits, mantissa_bits;
      attrs["exponent_bits"] = Int32Attr(true, &exponent_bits);
      attrs["mantissa_bits"] = Int32Attr(true, &mantissa_bits);
      if (!parse_operands(1) || !parse_attributes()) return nullptr;
      auto rp = std::make_unique<HloReducePrecisionInstruction>(opcode, *shape, operands);
      rp->mutable_attrs()->exponent_bits = static_cast<int32_t>(*exponent_bits);
      rp->mutable_attrs()->mantissa_bits = static_cast<int32_t>(*mantissa_bits);
      return Add(std::move(rp));
    }
    case HloOpcode::kConditional: {
      std::optional<HloComputation*> true_computation, false_computation;
      std::optional<std::vector<HloComputation*>> branches;
      if (!parse_operands()) return nullptr;
      if (operands.empty()) return fail("conditional needs a branch index operand");
      const Shape& index = operands[0]->shape();
      if (!index.IsArray() || index.rank() != 0) return fail("The first operand must be a scalar");
      bool is_pred = index.element_type() == PRED;
      if (is_pred) {
        attrs["true_computation"] = ComputationAttr(true, &true_computation);
        attrs["false_computation"] = ComputationAttr(true, &false_computation);
      } else if (index.element_type() == S32) {
        attrs["branch_computations"] = ComputationListAttr(true, &branches);
      } else {
        return fail("The first operand must be a scalar of PRED or S32");
      }
      if (!parse_attributes()) return nullptr;
      if (is_pred) branches = std::vector<HloComputation*>{*true_computation, *false_computation};
      if (branches->empty() || operands.size() != branches->size() + 1) {
        return fail(absl::StrCat("conditional has ", branches->size(), " branches but ",
                                 operands.size() - 1, " branch operands"));
      }
      if (!infer(
              [&] { return absl::StatusOr<Shape>((*branches)[0]->root_instruction()->shape()); })) {
        return nullptr;
      }
      HloInstruction* conditional = plain();
      for (HloComputation* branch : *branches) conditional->AppendCalledComputation(branch);
      return conditional;
    }
    case HloOpcode::kCustomCall: {
      std::optional<std::string> target;
      std::optional<Window> window;
      std::optional<ConvolutionDimensionNumbers> dnums;
      std::optional<int64_t> feature_group_count, batch_group_count;
      std::optional<std::vector<Shape>> layout_constraints;
      std::optional<bool> has_side_effect;
      std::optional<HloComputation*> to_apply;
      std::optional<std::vector<HloComputation*>> called;
      std::optional<std::vector<OutputOperandAlias>> aliasing;
      std::optional<Literal> literal;
      std::optional<std::vector<PrecisionConfig::Precision>> precision;
      std::optional<int> schedule, api_version;
      std::optional<std::string> opaque;
      attrs["custom_call_target"] = StringAttr(true, &target);
      attrs["opaque"] = StringAttr(false, &opaque);
      attrs["window"] = WindowAttr(false, &window);
      attrs["dim_labels"] = DimLabelsAttr(false, &dnums);
      attrs["feature_group_count"] = Int64Attr(false, &feature_group_count);
      attrs["batch_group_count"] = Int64Attr(false, &batch_group_count);
      attrs["operand_layout_constraints"] = ShapeListAttr(false, &layout_constraints);
      attrs["custom_call_has_side_effect"] = BoolAttr(false, &has_side_effect);
      attrs["to_apply"] = ComputationAttr(false, &to_apply);
      attrs["called_computations"] = ComputationListAttr(false, &called);
      attrs["output_to_operand_aliasing"] = AliasingAttr(false, &aliasing);
      std::optional<int> padding_type;
      AttrSpec padding_spec =
          EnumAttr(false, {"PADDING_INVALID", "PADDING_VALID", "PADDING_SAME"}, &padding_type);
      attrs["padding_type"] = Raw("padding_type", false, padding_spec.parse);
      attrs["literal"] = {false, [&] {
                            literal.emplace();
                            return ParseLiteralWithShape(&*literal);
                          }};
      attrs["operand_precision"] = PrecisionListAttr(false, &precision);
      attrs["schedule"] =
          EnumAttr(false, {"SCHEDULE_NONE", "SCHEDULE_LATEST", "SCHEDULE_EARLIEST"}, &schedule);
      attrs["api_version"] = EnumAttr(
          false,
          {"API_VERSION_UNSPECIFIED", "API_VERSION_ORIGINAL", "API_VERSION_STATUS_RETURNING",
           "API_VERSION_STATUS_RETURNING_UNIFIED", "API_VERSION_TYPED_FFI"},
          &api_version);
      if (!parse_operands() || !parse_attributes()) return nullptr;
      if (to_apply.has_value() && called.has_value()) {
        return fail("A single instruction can't have both to_apply and calls field");
      }
      if (api_version.has_value() && *api_version == API_VERSION_UNSPECIFIED) {
        return fail("Invalid API version: API_VERSION_UNSPECIFIED");
      }
      if (layout_constraints.has_value()) {
        if (layout_constraints->size() != operands.size()) {
          return fail(absl::StrCat("Expected ", operands.size(), " operand layout constraints, ",
                                   layout_constraints->size(), " given"));
        }
        for (size_t i = 0; i < operands.size(); ++i) {
          if (!ShapeUtil::Compatible((*layout_constraints)[i], operands[i]->shape())) {
            return fail(absl::StrCat("Operand layout constraint shape ",
                                     ShapeUtil::HumanStringWithLayout((*layout_constraints)[i]),
                                     " for operand ", i, " is not compatible with operand shape ",
                                     ShapeUtil::HumanStringWithLayout(operands[i]->shape())));
          }
        }
      }
      auto call = std::make_unique<HloCustomCallInstruction>(opcode, *shape, operands);
      CustomCallAttrs* a = call->mutable_attrs();
      a->custom_call_target = *target;
      if (opaque.has_value()) a->opaque = *opaque;
      a->window = window;
      a->convolution_dimension_numbers = dnums;
      a->feature_group_count = feature_group_count.value_or(1);
      a->batch_group_count = batch_group_count.value_or(1);
      a->operand_layout_constraints = layout_constraints;
      a->custom_call_has_side_effect = has_side_effect.value_or(false);
      if (aliasing.has_value()) a->output_to_operand_aliasing = *aliasing;
      a->literal = std::move(literal);
      a->precision_config = precision_config(precision, operands.size());
      if (schedule.has_value()) a->schedule = static_cast<CustomCallSchedule>(*schedule);
      if (api_version.has_value()) a->api_version = static_cast<CustomCallApiVersion>(*api_version);
      if (to_apply.has_value()) call->AppendCalledComputation(*to_apply);
      if (called.has_value()) {
        for (HloComputation* c : *called) call->AppendCalledComputation(c);
      }
      return Add(std::move(call));
    }
    case HloOpcode::kDomain: {
      std::string canonical;
      attrs["domain"] = {true, [&] { return ParseDomain(&canonical); }};
      if (!parse_operands(1) || !parse_attributes()) return nullptr;
      if (!infer([&] { return absl::StatusOr<Shape>(operands[0]->shape()); })) return nullptr;
      pending_raw_.push_back({"domain", canonical});
      return plain();
    }
    default:
      break;
  }
  Error(opcode_offset, absl::StrCat("opcode ", HloOpcodeString(opcode), " is not supported"));
  return nullptr;
}

}  // namespace hlo_parser_internal
}  // namespace axle
