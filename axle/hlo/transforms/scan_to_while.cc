//===- scan_to_while.cc - scan as a while loop ------------------------------===//
#include "axle/hlo/transforms/scan_to_while.h"

#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "axle/base/status_macros.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/pass/rewrite_each_instruction.h"
#include "axle/hlo/transforms/hlo_creation_utils.h"

namespace axle {
namespace {

constexpr absl::string_view kPass = "scan-to-while";

const Shape kIndexShape = ShapeUtil::MakeShape(S64, {});

HloInstruction* Add(HloComputation* computation, HloOpcode opcode, const Shape& shape,
                    const std::vector<HloInstruction*>& operands) {
  return computation->AddInstruction(HloInstruction::Create(opcode, shape, operands));
}

HloInstruction* AddIndex(HloComputation* computation, int64_t value) {
  return MakeConstant(computation, LiteralUtil::CreateR0<int64_t>(value));
}

// A new computation of one parameter of `shape`; returns the parameter.
HloInstruction* AddParameterComputation(HloModule* module, absl::string_view name,
                                        const Shape& shape,
                                        std::unique_ptr<HloComputation>& computation) {
  computation = std::make_unique<HloComputation>(module->GetUniqueName(name));
  auto parameter = std::make_unique<HloParameterInstruction>(HloOpcode::kParameter, shape,
                                                             absl::Span<HloInstruction* const>{});
  parameter->mutable_attrs()->parameter_number = 0;
  return computation->AddInstruction(std::move(parameter));
}

// The start indices of element `k` along `dim` of a rank-`rank` array.
std::vector<HloInstruction*> Starts(HloComputation* computation, HloInstruction* k, int64_t rank,
                                    int64_t dim) {
  std::vector<HloInstruction*> starts;
  for (int64_t d = 0; d < rank; ++d) starts.push_back(d == dim ? k : AddIndex(computation, 0));
  return starts;
}

class ScanLowering {
 public:
  explicit ScanLowering(HloInstruction* scan)
      : scan_(scan), attrs_(cast<HloScanInstruction>(scan)->attrs()) {}

  absl::StatusOr<HloInstruction*> Lower() {
    AXLE_RETURN_IF_ERROR(Check());
    HloComputation* computation = scan_->parent();
    HloModule* module = computation->parent();
    // The loop state: (i, inputs..., carries..., outputs...).
    std::vector<HloInstruction*> init = {AddIndex(computation, 0)};
    for (HloInstruction* operand : scan_->operands()) init.push_back(operand);
    for (const Shape& output : outputs_) {
      Literal zero(ShapeUtil::MakeShape(output.element_type(), {}));
      init.push_back(MakeFilledArray(computation, zero, WithDescendingLayout(output)));
    }
    if (length_ == 0) {
      // No step: empty outputs and the inits.
      return Result(computation, init);
    }
    HloInstruction* state = MakeTuple(computation, init);

    std::unique_ptr<HloComputation> condition;
    HloInstruction* parameter =
        AddParameterComputation(module, "scan_condition", state->shape(), condition);
    HloInstruction* operands[] = {MakeGetTupleElement(parameter, 0),
                                  AddIndex(condition.get(), length_)};
    auto compare = std::make_unique<HloCompareInstruction>(
        HloOpcode::kCompare, ShapeUtil::MakeShape(PRED, {}), operands);
    compare->mutable_attrs()->direction = ComparisonDirection::kLt;
    condition->set_root_instruction(condition->AddInstruction(std::move(compare)));

    std::unique_ptr<HloComputation> body;
    parameter = AddParameterComputation(module, "scan_body", state->shape(), body);
    body->set_root_instruction(EmitBody(body.get(), parameter));

    HloInstruction* loop = Add(computation, HloOpcode::kWhile, state->shape(), {state});
    loop->AppendCalledComputation(module->AddEmbeddedComputation(std::move(condition)));
    loop->AppendCalledComputation(module->AddEmbeddedComputation(std::move(body)));
    std::vector<HloInstruction*> state_after;
    for (int64_t i = 0; i < Count(init); ++i) state_after.push_back(MakeGetTupleElement(loop, i));
    return Result(computation, state_after);
  }

 private:
  // The scan's result, (outputs..., carries...), from a loop state.
  HloInstruction* Result(HloComputation* computation, const std::vector<HloInstruction*>& state) {
    std::vector<HloInstruction*> results(state.begin() + 1 + inputs_ + carries_, state.end());
    results.insert(results.end(), state.begin() + 1 + inputs_,
                   state.begin() + 1 + inputs_ + carries_);
    return MakeTuple(computation, results);
  }

  template <typename T>
  static int64_t Count(const std::vector<T>& v) {
    return static_cast<int64_t>(v.size());
  }

  absl::Status Check() {
    carries_ = attrs_.num_carries;
    inputs_ = scan_->operand_count() - carries_;
    if (attrs_.dimensions.size() != 1 || carries_ < 0 || inputs_ < 1) {
      return PassUnimplemented(kPass, *scan_,
                               "a scan needs dimensions={d}, inputs and num_carries inits");
    }
    dim_ = attrs_.dimensions[0];
    for (const HloInstruction* operand : scan_->operands()) {
      if (!operand->shape().IsArray()) {
        return PassUnimplemented(kPass, *scan_, "scan inputs and carries that are not arrays");
      }
    }
    const Shape& first = scan_->operand(0)->shape();
    if (dim_ < 0 || dim_ >= first.rank()) {
      return PassUnimplemented(kPass, *scan_,
                               "the scan dimension is not a dimension of the inputs");
    }
    length_ = first.dimensions(dim_);
    for (int64_t i = 0; i < inputs_; ++i) {
      const Shape& shape = scan_->operand(i)->shape();
      if (shape.rank() <= dim_ || shape.dimensions(dim_) != length_) {
        return PassUnimplemented(kPass, *scan_, "scan inputs that disagree on the scan dimension");
      }
    }
    const Shape& shape = scan_->shape();
    if (!shape.IsTuple())
      return PassUnimplemented(kPass, *scan_, "a scan result that is not a tuple");
    const int64_t results = shape.tuple_shapes_size();
    if (results < carries_) return PassUnimplemented(kPass, *scan_, "fewer results than carries");
    for (int64_t j = 0; j < results; ++j) {
      const Shape& result = shape.tuple_shapes(j);
      if (!result.IsArray())
        return PassUnimplemented(kPass, *scan_, "scan results that are not arrays");
      if (j >= results - carries_) continue;
      if (result.rank() <= dim_ || result.dimensions(dim_) != length_) {
        return PassUnimplemented(kPass, *scan_, "scan outputs that do not keep the scan dimension");
      }
      outputs_.push_back(result);
    }
    const HloComputation* to_apply = scan_->to_apply();
    const Shape& returned = to_apply->root_instruction()->shape();
    const int64_t parts = returned.IsTuple() ? returned.tuple_shapes_size() : 1;
    if (parts != results) {
      return PassUnimplemented(kPass, *scan_,
                               "to_apply does not return the outputs and the carries");
    }
    for (int64_t j = 0; j < parts; ++j) {
      const Shape& part = returned.IsTuple() ? returned.tuple_shapes(j) : returned;
      const Shape& result = shape.tuple_shapes(j);
      const bool fits =
          j < Count(outputs_)
              ? part.num_elements() * length_ == result.num_elements()
              : ShapeUtil::Compatible(part, scan_->operand(inputs_ + j - Count(outputs_))->shape());
      if (!part.IsArray() || part.element_type() != result.element_type() || !fits) {
        return PassUnimplemented(kPass, *scan_,
                                 absl::StrCat("to_apply's result ", j, " (", part.ToString(false),
                                              ") does not fit the scan's"));
      }
    }
    return absl::OkStatus();
  }

  // One step: the new state from `state`.
  HloInstruction* EmitBody(HloComputation* body, HloInstruction* state) {
    HloInstruction* i = MakeGetTupleElement(state, 0);
    HloInstruction* k = i;
    if (attrs_.is_reverse) {
      k = Add(body, HloOpcode::kSubtract, kIndexShape, {AddIndex(body, length_ - 1), i});
    }
    std::vector<HloInstruction*> arguments;
    std::vector<HloInstruction*> next = {
        Add(body, HloOpcode::kAdd, kIndexShape, {i, AddIndex(body, 1)})};
    for (int64_t t = 0; t < inputs_; ++t) {
      HloInstruction* input = MakeGetTupleElement(state, 1 + t);
      const Shape& shape = input->shape();
      std::vector<HloInstruction*> operands = {input};
      for (HloInstruction* start : Starts(body, k, shape.rank(), dim_)) operands.push_back(start);
      std::vector<int64_t> sizes = shape.dimensions();
      sizes[dim_] = 1;
      auto slice = std::make_unique<HloDynamicSliceInstruction>(
          HloOpcode::kDynamicSlice,
          WithDescendingLayout(ShapeUtil::MakeShape(shape.element_type(), sizes)), operands);
      slice->mutable_attrs()->dynamic_slice_sizes = sizes;
      HloInstruction* element = body->AddInstruction(std::move(slice));
      arguments.push_back(
          MakeReshape(element, WithDescendingLayout(ShapeUtil::DeleteDimensions({dim_}, shape))));
      next.push_back(input);
    }
    for (int64_t c = 0; c < carries_; ++c)
      arguments.push_back(MakeGetTupleElement(state, 1 + inputs_ + c));
    HloComputation* to_apply = scan_->to_apply();
    HloInstruction* call =
        Add(body, HloOpcode::kCall, to_apply->root_instruction()->shape(), arguments);
    call->set_to_apply(to_apply);
    auto part = [&](int64_t j) {
      return call->shape().IsTuple() ? MakeGetTupleElement(call, j) : call;
    };
    for (int64_t c = 0; c < carries_; ++c) next.push_back(part(Count(outputs_) + c));
    for (int64_t j = 0; j < Count(outputs_); ++j) {
      HloInstruction* output = MakeGetTupleElement(state, 1 + inputs_ + carries_ + j);
      std::vector<int64_t> sizes = output->shape().dimensions();
      sizes[dim_] = 1;
      HloInstruction* update = MakeReshape(part(j), WithDescendingLayout(ShapeUtil::MakeShape(
                                                        output->shape().element_type(), sizes)));
      std::vector<HloInstruction*> operands = {output, update};
      for (HloInstruction* start : Starts(body, k, sizes.size(), dim_)) operands.push_back(start);
      next.push_back(Add(body, HloOpcode::kDynamicUpdateSlice, output->shape(), operands));
    }
    return MakeTuple(body, next);
  }

  HloInstruction* scan_;
  const ScanAttrs& attrs_;
  int64_t inputs_ = 0, carries_ = 0, dim_ = 0, length_ = 0;
  std::vector<Shape> outputs_;
};

}  // namespace

absl::StatusOr<bool> ScanToWhile::Run(HloModule* module) {
  return ReplaceEachInstruction(module,
                                [](HloInstruction* instruction) -> absl::StatusOr<HloInstruction*> {
                                  if (instruction->opcode() != HloOpcode::kScan) return nullptr;
                                  return ScanLowering(instruction).Lower();
                                });
}

}  // namespace axle
