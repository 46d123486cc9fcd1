//===- hlo_parser_control_flow.cc - Ops that call computations, tokens ----===//
//
// CreateControlFlow (see hlo_parser_instructions.cc): while, call,
// conditional, fusion, custom-call, sort, reduce-window, select-and-scatter,
// scan; and the token and side-effect ops: after-all, add-dependency,
// copy-start, infeed, outfeed, domain.
//
//===----------------------------------------------------------------------===//
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "axle/core/shape_util.h"
#include "axle/hlo/shape_inference/shape_inference.h"
#include "axle/hlo/text/hlo_parser_internal.h"

namespace axle {
namespace hlo_parser_internal {

HloInstruction* HloParserImpl::CreateControlFlow(NewInstruction& n) {
  switch (n.opcode) {
    case HloOpcode::kSort: {
      std::optional<std::vector<int64_t>> dimensions;
      std::optional<bool> is_stable;
      std::optional<HloComputation*> to_apply;
      n.attrs["dimensions"] = Int64ListAttr(true, &dimensions);
      n.attrs["is_stable"] = BoolAttr(false, &is_stable);
      n.attrs["to_apply"] = ComputationAttr(true, &to_apply);
      if (!ParseOperandsOf(n) || !ParseAttributesOf(n) || !SingleDimension(n, *dimensions))
        return nullptr;
      if (n.operands.empty()) return FailOperands(n, "sort needs at least one operand");
      if (!InferShape(n, [&] {
            return ShapeInference::InferVariadicOpShape(
                n.opcode, OperandShapes(n.operands, 0, n.operands.size()));
          })) {
        return nullptr;
      }
      auto sort = std::make_unique<HloSortInstruction>(n.opcode, *n.shape, n.operands);
      sort->mutable_attrs()->sort_dimension = (*dimensions)[0];
      sort->mutable_attrs()->is_stable = is_stable.value_or(false);
      sort->AppendCalledComputation(*to_apply);
      return Add(std::move(sort));
    }
    case HloOpcode::kWhile: {
      std::optional<HloComputation*> condition, body;
      n.attrs["condition"] = ComputationAttr(true, &condition);
      n.attrs["body"] = ComputationAttr(true, &body);
      if (!ParseOperandsOf(n, 1) || !ParseAttributesOf(n)) return nullptr;
      if (!InferShape(n, [&]() -> absl::StatusOr<Shape> {
            absl::StatusOr<ProgramShape> condition_signature =
                ShapeInference::ComputationSignature(**condition);
            if (!condition_signature.ok()) return condition_signature.status();
            absl::StatusOr<ProgramShape> body_signature =
                ShapeInference::ComputationSignature(**body);
            if (!body_signature.ok()) return body_signature.status();
            return ShapeInference::InferWhileShape(*condition_signature, *body_signature,
                                                   n.operands[0]->shape());
          })) {
        return nullptr;
      }
      HloInstruction* instruction = AddPlain(n);
      instruction->AppendCalledComputation(*condition);
      instruction->AppendCalledComputation(*body);
      return instruction;
    }
    case HloOpcode::kCall: {
      std::optional<HloComputation*> to_apply;
      n.attrs["to_apply"] = ComputationAttr(true, &to_apply);
      n.attrs["is_composite"] = Raw("is_composite", false, [this] {
        bool ignored;
        return ParseBool(&ignored);
      });
      if (!ParseOperandsOf(n) || !ParseAttributesOf(n)) return nullptr;
      if (!InferShape(n, [&]() -> absl::StatusOr<Shape> {
            absl::StatusOr<ProgramShape> signature =
                ShapeInference::ComputationSignature(**to_apply);
            if (!signature.ok()) return signature.status();
            return ShapeInference::InferCallShape(OperandShapes(n.operands, 0, n.operands.size()),
                                                  *signature);
          })) {
        return nullptr;
      }
      HloInstruction* call = AddPlain(n);
      call->AppendCalledComputation(*to_apply);
      return call;
    }
    case HloOpcode::kReduceWindow:
    case HloOpcode::kSelectAndScatter: {
      std::optional<Window> window;
      std::optional<HloComputation*> to_apply, select, scatter;
      n.attrs["window"] = WindowAttr(false, &window);
      bool is_reduce_window = n.opcode == HloOpcode::kReduceWindow;
      if (is_reduce_window) {
        n.attrs["to_apply"] = ComputationAttr(true, &to_apply);
      } else {
        n.attrs["select"] = ComputationAttr(true, &select);
        n.attrs["scatter"] = ComputationAttr(true, &scatter);
      }
      if (!(is_reduce_window ? ParseOperandsOf(n) : ParseOperandsOf(n, 3)) ||
          !ParseAttributesOf(n)) {
        return nullptr;
      }
      if (is_reduce_window && (n.operands.empty() || n.operands.size() % 2 != 0)) {
        return FailOperands(n, absl::StrCat("expects an even number of operands, but has ",
                                            n.operands.size(), " operands"));
      }
      if (!InferShape(n, [&]() -> absl::StatusOr<Shape> {
            if (!is_reduce_window) return n.operands[0]->shape();
            absl::StatusOr<ProgramShape> signature =
                ShapeInference::ComputationSignature(**to_apply);
            if (!signature.ok()) return signature.status();
            size_t inputs = n.operands.size() / 2;
            return ShapeInference::InferReduceWindowShape(
                OperandShapes(n.operands, 0, inputs),
                OperandShapes(n.operands, inputs, n.operands.size()), window.value_or(Window()),
                *signature);
          })) {
        return nullptr;
      }
      auto instruction = std::make_unique<HloWindowInstruction>(n.opcode, *n.shape, n.operands);
      instruction->mutable_attrs()->window = window.value_or(Window());
      if (is_reduce_window) {
        instruction->AppendCalledComputation(*to_apply);
      } else {
        instruction->AppendCalledComputation(*select);
        instruction->AppendCalledComputation(*scatter);
      }
      return Add(std::move(instruction));
    }
    case HloOpcode::kScan: {
      std::optional<HloComputation*> to_apply;
      std::optional<std::vector<int64_t>> dimensions;
      std::optional<int64_t> num_carries;
      std::optional<bool> is_reverse, is_associative;
      if (!ParseOperandsOf(n)) return nullptr;
      n.attrs["to_apply"] = ComputationAttr(true, &to_apply);
      n.attrs["dimensions"] = Int64ListAttr(true, &dimensions);
      n.attrs["num_carries"] = Int64Attr(true, &num_carries);
      n.attrs["is_reverse"] = BoolAttr(false, &is_reverse);
      n.attrs["is_associative"] = BoolAttr(false, &is_associative);
      if (!ParseAttributesOf(n)) return nullptr;
      int64_t count = static_cast<int64_t>(n.operands.size());
      if (count != (*to_apply)->num_parameters()) {
        return FailOperands(n, absl::StrCat("expects ", count,
                                            " operands to match the number of parameters of "
                                            "to_apply, but to_apply has ",
                                            (*to_apply)->num_parameters(), " parameters"));
      }
      if (dimensions->size() != 1) return FailOperands(n, "expects exactly one dimension");
      if (*num_carries < 0 || count < *num_carries) {
        return FailOperands(n, absl::StrCat("expects at least ", *num_carries,
                                            " operands to match the number of carries, but has ",
                                            count, " operands"));
      }
      if (!InferShape(n, [&]() -> absl::StatusOr<Shape> {
            absl::StatusOr<ProgramShape> signature =
                ShapeInference::ComputationSignature(**to_apply);
            if (!signature.ok()) return signature.status();
            return ShapeInference::InferScanShape(OperandShapes(n.operands, 0, n.operands.size()),
                                                  (*dimensions)[0], *num_carries, *signature);
          })) {
        return nullptr;
      }
      auto scan = std::make_unique<HloScanInstruction>(n.opcode, *n.shape, n.operands);
      scan->mutable_attrs()->dimensions = *dimensions;
      scan->mutable_attrs()->num_carries = *num_carries;
      scan->mutable_attrs()->is_reverse = is_reverse.value_or(false);
      scan->mutable_attrs()->is_associative = is_associative;
      scan->AppendCalledComputation(*to_apply);
      return Add(std::move(scan));
    }
    case HloOpcode::kFusion: {
      std::optional<HloComputation*> calls;
      std::optional<int> fusion_kind;
      std::optional<std::vector<OutputOperandAlias>> aliasing;
      n.attrs["calls"] = ComputationAttr(true, &calls);
      n.attrs["kind"] = EnumAttr(true, {"kLoop", "kInput", "kOutput", "kCustom"}, &fusion_kind);
      n.attrs["output_to_operand_aliasing"] =
          Raw("output_to_operand_aliasing", false, AliasingAttr(false, &aliasing).parse);
      if (!ParseOperandsOf(n) || !ParseAttributesOf(n)) return nullptr;
      if ((*calls)->FusionInstruction() != nullptr) {
        return FailOperands(n, absl::StrCat("computation ", (*calls)->name(),
                                            " is already the fused computation of another fusion"));
      }
      auto fusion = std::make_unique<HloFusionInstruction>(n.opcode, *n.shape, n.operands);
      fusion->mutable_attrs()->kind = static_cast<FusionKind>(*fusion_kind);
      fusion->AppendCalledComputation(*calls);
      HloInstruction* added = Add(std::move(fusion));
      (*calls)->SetFusionInstruction(added);
      return added;
    }
    case HloOpcode::kConditional: {
      std::optional<HloComputation*> true_computation, false_computation;
      std::optional<std::vector<HloComputation*>> branches;
      if (!ParseOperandsOf(n)) return nullptr;
      if (n.operands.empty()) return FailOperands(n, "conditional needs a branch index operand");
      const Shape& index = n.operands[0]->shape();
      if (!index.IsArray() || index.rank() != 0)
        return FailOperands(n, "The first operand must be a scalar");
      bool is_pred = index.element_type() == PRED;
      if (is_pred) {
        n.attrs["true_computation"] = ComputationAttr(true, &true_computation);
        n.attrs["false_computation"] = ComputationAttr(true, &false_computation);
      } else if (index.element_type() == S32) {
        n.attrs["branch_computations"] = ComputationListAttr(true, &branches);
      } else {
        return FailOperands(n, "The first operand must be a scalar of PRED or S32");
      }
      if (!ParseAttributesOf(n)) return nullptr;
      if (is_pred) branches = std::vector<HloComputation*>{*true_computation, *false_computation};
      if (branches->empty() || n.operands.size() != branches->size() + 1) {
        return FailOperands(n, absl::StrCat("conditional has ", branches->size(), " branches but ",
                                            n.operands.size() - 1, " branch operands"));
      }
      if (!InferShape(n, [&]() -> absl::StatusOr<Shape> {
            std::vector<ProgramShape> signatures;
            for (HloComputation* branch : *branches) {
              absl::StatusOr<ProgramShape> signature =
                  ShapeInference::ComputationSignature(*branch);
              if (!signature.ok()) return signature.status();
              signatures.push_back(*std::move(signature));
            }
            std::vector<Shape> branch_operands;
            for (size_t i = 1; i < n.operands.size(); ++i) {
              branch_operands.push_back(n.operands[i]->shape());
            }
            return ShapeInference::InferConditionalShape(n.operands[0]->shape(), signatures,
                                                         branch_operands);
          })) {
        return nullptr;
      }
      HloInstruction* conditional = AddPlain(n);
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
      n.attrs["custom_call_target"] = StringAttr(true, &target);
      n.attrs["opaque"] = StringAttr(false, &opaque);
      n.attrs["window"] = WindowAttr(false, &window);
      n.attrs["dim_labels"] = DimLabelsAttr(false, &dnums);
      n.attrs["feature_group_count"] = Int64Attr(false, &feature_group_count);
      n.attrs["batch_group_count"] = Int64Attr(false, &batch_group_count);
      n.attrs["operand_layout_constraints"] = ShapeListAttr(false, &layout_constraints);
      n.attrs["custom_call_has_side_effect"] = BoolAttr(false, &has_side_effect);
      n.attrs["to_apply"] = ComputationAttr(false, &to_apply);
      n.attrs["called_computations"] = ComputationListAttr(false, &called);
      n.attrs["output_to_operand_aliasing"] = AliasingAttr(false, &aliasing);
      std::optional<int> padding_type;
      AttrSpec padding_spec =
          EnumAttr(false, {"PADDING_INVALID", "PADDING_VALID", "PADDING_SAME"}, &padding_type);
      n.attrs["padding_type"] = Raw("padding_type", false, padding_spec.parse);
      n.attrs["literal"] = {false, [&] {
                              literal.emplace();
                              return ParseLiteralWithShape(&*literal);
                            }};
      n.attrs["operand_precision"] = PrecisionListAttr(false, &precision);
      n.attrs["schedule"] =
          EnumAttr(false, {"SCHEDULE_NONE", "SCHEDULE_LATEST", "SCHEDULE_EARLIEST"}, &schedule);
      n.attrs["api_version"] = EnumAttr(
          false,
          {"API_VERSION_UNSPECIFIED", "API_VERSION_ORIGINAL", "API_VERSION_STATUS_RETURNING",
           "API_VERSION_STATUS_RETURNING_UNIFIED", "API_VERSION_TYPED_FFI"},
          &api_version);
      if (!ParseOperandsOf(n) || !ParseAttributesOf(n)) return nullptr;
      if (to_apply.has_value() && called.has_value()) {
        return FailOperands(n, "A single instruction can't have both to_apply and calls field");
      }
      if (api_version.has_value() && *api_version == API_VERSION_UNSPECIFIED) {
        return FailOperands(n, "Invalid API version: API_VERSION_UNSPECIFIED");
      }
      if (layout_constraints.has_value()) {
        if (layout_constraints->size() != n.operands.size()) {
          return FailOperands(
              n, absl::StrCat("Expected ", n.operands.size(), " operand layout constraints, ",
                              layout_constraints->size(), " given"));
        }
        for (size_t i = 0; i < n.operands.size(); ++i) {
          if (!ShapeUtil::Compatible((*layout_constraints)[i], n.operands[i]->shape())) {
            return FailOperands(
                n, absl::StrCat("Operand layout constraint shape ",
                                ShapeUtil::HumanStringWithLayout((*layout_constraints)[i]),
                                " for operand ", i, " is not compatible with operand shape ",
                                ShapeUtil::HumanStringWithLayout(n.operands[i]->shape())));
          }
        }
      }
      auto call = std::make_unique<HloCustomCallInstruction>(n.opcode, *n.shape, n.operands);
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
      a->precision_config = MakePrecisionConfig(precision, n.operands.size());
      if (schedule.has_value()) a->schedule = static_cast<CustomCallSchedule>(*schedule);
      if (api_version.has_value()) a->api_version = static_cast<CustomCallApiVersion>(*api_version);
      if (to_apply.has_value()) call->AppendCalledComputation(*to_apply);
      if (called.has_value()) {
        for (HloComputation* c : *called) call->AppendCalledComputation(c);
      }
      return Add(std::move(call));
    }
    case HloOpcode::kCopyStart: {
      std::optional<int64_t> index;
      n.attrs["cross_program_prefetch_index"] = Int32Attr(false, &index);
      if (!ParseOperandsOf(n, 1) || !ParseAttributesOf(n) || !RequireShape(n)) return nullptr;
      auto copy_start = std::make_unique<HloCopyStartInstruction>(n.opcode, *n.shape, n.operands);
      copy_start->mutable_attrs()->cross_program_prefetch_index = index;
      return Add(std::move(copy_start));
    }
    case HloOpcode::kAfterAll: {
      if (!ParseOperandsOf(n) || !ParseAttributesOf(n)) return nullptr;
      if (!InferShape(n, [] { return absl::StatusOr<Shape>(ShapeUtil::MakeTokenShape()); }))
        return nullptr;
      return AddPlain(n);
    }
    case HloOpcode::kAddDependency: {
      if (!ParseOperandsOf(n, 2) || !ParseAttributesOf(n)) return nullptr;
      if (!InferShape(n, [&] { return absl::StatusOr<Shape>(n.operands[0]->shape()); }))
        return nullptr;
      return AddPlain(n);
    }
    case HloOpcode::kInfeed:
    case HloOpcode::kOutfeed: {
      std::optional<std::string> config;
      std::optional<Shape> outfeed_shape;
      bool infeed = n.opcode == HloOpcode::kInfeed;
      n.attrs[infeed ? "infeed_config" : "outfeed_config"] = StringAttr(false, &config);
      if (!infeed) n.attrs["outfeed_shape"] = ShapeAttr(false, &outfeed_shape);
      if (!ParseOperandsOf(n, infeed ? 1 : 2) || !ParseAttributesOf(n)) return nullptr;
      if (infeed && !n.shape->IsTuple())
        return FailOperands(n, "infeed must have a non-empty tuple shape");
      if (!infeed) {
        if (!outfeed_shape.has_value()) outfeed_shape = n.operands[0]->shape();
        n.shape = ShapeUtil::MakeTokenShape();
      }
      auto feed = std::make_unique<HloFeedInstruction>(n.opcode, *n.shape, n.operands);
      feed->mutable_attrs()->config = config.value_or("");
      feed->mutable_attrs()->outfeed_shape = outfeed_shape;
      return Add(std::move(feed));
    }
    case HloOpcode::kDomain: {
      std::string canonical;
      n.attrs["domain"] = {true, [&] { return ParseDomain(&canonical); }};
      if (!ParseOperandsOf(n, 1) || !ParseAttributesOf(n)) return nullptr;
      if (!InferShape(n, [&] { return absl::StatusOr<Shape>(n.operands[0]->shape()); }))
        return nullptr;
      pending_raw_.push_back({"domain", canonical});
      return AddPlain(n);
    }
    default:
      return Unsupported(n);
  }
}
}  // namespace hlo_parser_internal
}  // namespace axle
