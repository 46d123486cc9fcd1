//===- hlo_parser_async.cc - async-start, async-update, async-done --------===//
//
// The generic async ops and XLA's shorthand for them: `op-start(...)` with
// op's attributes becomes an async-start wrapping a computation that holds
// `op` on parameters; `op-update` / `op-done` continue the chain of the async
// op whose state they take (reached through copies, opt-barriers and
// tuple/get-tuple-element pairs), or, where the state comes from elsewhere
// (a loop), name or rebuild the wrapped computation. As in XLA, the shorthand
// may bind operands late: `dot-start()` then `dot-update(state, lhs)`, ...
//
//===----------------------------------------------------------------------===//
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "axle/core/shape_util.h"
#include "axle/hlo/text/attribute_text.h"
#include "axle/hlo/text/hlo_parser_internal.h"

namespace axle {
namespace hlo_parser_internal {

using Operands = std::vector<HloInstruction*>;

namespace {

// The async op whose state `state` is, looking through the ops that pass a
// value on unchanged (copy, opt-barrier, a get-tuple-element of a tuple), as
// XLA's async-done does; null when the state comes from anything else.
HloAsyncInstruction* AsyncStateProducer(HloInstruction* state) {
  for (int64_t steps = 0; state != nullptr && steps < kMaxDepth; ++steps) {
    if (auto* async = dyn_cast<HloAsyncInstruction>(state)) return async;
    switch (state->opcode()) {
      case HloOpcode::kCopy:
      case HloOpcode::kOptimizationBarrier:
        state = state->operand_count() == 1 ? state->mutable_operand(0) : nullptr;
        break;
      case HloOpcode::kGetTupleElement: {
        HloInstruction* tuple = state->operand_count() == 1 ? state->mutable_operand(0) : nullptr;
        auto* gte = dyn_cast<HloGetTupleElementInstruction>(state);
        int64_t index = gte != nullptr ? gte->tuple_index() : -1;
        if (tuple == nullptr || tuple->opcode() != HloOpcode::kTuple || index < 0 ||
            index >= tuple->operand_count()) {
          return nullptr;
        }
        state = tuple->mutable_operand(index);
        break;
      }
      default:
        return nullptr;
    }
  }
  return nullptr;
}

// How many operands the async chain up to `async` has bound: the
// async-start's operands plus those each async-update binds after the state.
int64_t BoundOperandCount(HloAsyncInstruction* async) {
  int64_t count = 0;
  for (int64_t steps = 0; async != nullptr && steps < kMaxDepth; ++steps) {
    if (async->opcode() == HloOpcode::kAsyncStart) return count + async->operand_count();
    if (async->operand_count() < 1) return count;
    count += async->operand_count() - 1;
    async = AsyncStateProducer(async->mutable_operand(0));
  }
  return count;
}

}  // namespace

HloInstruction* HloParserImpl::CreateAsync(std::optional<Shape> shape, HloOpcode opcode,
                                           std::optional<HloOpcode> async_wrapped, AttrMap& attrs,
                                           bool allow_attributes, size_t opcode_offset,
                                           Operands operands) {
  auto fail = [&](absl::string_view message) -> HloInstruction* {
    Error(opcode_offset, message);
    return nullptr;
  };
  auto is_state_shape = [](const Shape& s) {
    return s.IsTuple() && s.tuple_shapes_size() >= 2 && s.tuple_shapes(0).IsTuple();
  };
  if (opcode == HloOpcode::kAsyncStart) {
    if (!shape.has_value() || !is_state_shape(*shape)) {
      return fail(
          "AsyncStart expects the op shape to be in the form of "
          "((async-operands), async-outputs, state).");
    }
  } else if (operands.empty()) {
    return fail("AsyncUpdate and AsyncDone expect the async state as their first operand.");
  }
  // async-update / async-done continue the op of their first operand when
  // it is an async op; otherwise (the state came through a tuple or a loop)
  // the text names the computation.
  auto* previous = opcode == HloOpcode::kAsyncStart ? nullptr : AsyncStateProducer(operands[0]);
  if (previous != nullptr && previous->opcode() == HloOpcode::kAsyncDone) {
    return fail("AsyncUpdate and AsyncDone cannot continue an async-done.");
  }
  // As in XLA: the `op-update` / `op-done` shorthand continues an async op,
  // possibly one whose state crossed a loop (a get-tuple-element or
  // parameter), never a state assembled by a `tuple`.
  if (opcode != HloOpcode::kAsyncStart && async_wrapped.has_value() && previous == nullptr &&
      operands[0]->opcode() == HloOpcode::kTuple) {
    return fail("AsyncUpdate and AsyncDone expect a single async op as their operand.");
  }
  std::optional<std::string> thread;
  std::optional<HloComputation*> calls;
  attrs["async_execution_thread"] = StringAttr(false, &thread);
  attrs["output_to_operand_aliasing"] = Raw("output_to_operand_aliasing", false, [this] {
    std::vector<OutputOperandAlias> ignored;
    return ParseOutputOperandAliasing(&ignored);
  });
  HloComputation* wrapped = nullptr;
  if (async_wrapped.has_value() && previous == nullptr) {
    // `op-start(...)` (or an update/done of a state without its start): the
    // wrapped computation holds `op` on parameters of the async operand
    // shapes; the attributes written belong to `op`.
    const Shape& state = opcode == HloOpcode::kAsyncStart ? *shape : operands[0]->shape();
    if (!is_state_shape(state)) {
      return fail("expects the async state ((async-operands), async-outputs, state) as operand");
    }
    auto computation = std::make_unique<HloComputation>("async_wrapped");
    scopes_.emplace_back();
    scope().computation = computation.get();
    // Operands the shorthand leaves out (`dot-start()`) are bound later by
    // `op-update(state, operands...)`: their parameters are placeholders
    // until then.
    const Shape& bound = state.tuple_shapes(0);
    if (opcode == HloOpcode::kAsyncStart &&
        static_cast<int64_t>(operands.size()) != static_cast<int64_t>(bound.tuple_shapes_size())) {
      // The state's first element lists the operands bound so far; the
      // wrapped op's parameters follow it.
      return fail(absl::StrCat("async-start has ", operands.size(),
                               " operands, but its state lists ", bound.tuple_shapes_size(),
                               " async operands: ", ShapeUtil::HumanString(bound)));
    }
    int64_t count =
        std::max<int64_t>(bound.tuple_shapes_size(), AsyncShorthandParameterCount(*async_wrapped));
    Operands parameters;
    for (int64_t i = 0; i < count; ++i) {
      parameters.push_back(AddAsyncParameter(
          computation.get(),
          i < bound.tuple_shapes_size() ? bound.tuple_shapes(i) : Shape::MakeTuple({}), i));
    }
    HloInstruction* root = CreateInstruction(state.tuple_shapes(1), *async_wrapped, std::nullopt,
                                             attrs, allow_attributes, opcode_offset, &parameters);
    scopes_.pop_back();
    if (root == nullptr) return nullptr;
    root->SetName(std::string(HloOpcodeString(root->opcode())));
    unnamed_instructions_.push_back({root, root->name()});
    unnamed_set_.insert(root);
    computation->set_root_instruction(root);
    if (thread.has_value()) computation->SetExecutionThread(*thread);
    wrapped = AdoptComputation(std::move(computation), /*generated_name=*/true);
    last_wrapper_ = wrapped;
    shorthand_wrappers_.insert(wrapped);
  } else {
    if (!async_wrapped.has_value()) {
      attrs["calls"] = ComputationAttr(previous == nullptr, &calls);
    }
    if (!ParseAttributes(attrs, allow_attributes)) return nullptr;
    if (previous != nullptr) {
      HloComputation* inherited = previous->async_wrapped_computation();
      if (async_wrapped.has_value() && inherited->root_instruction()->opcode() != *async_wrapped) {
        return fail(absl::StrCat("Expect async wrapped opcode to be ",
                                 HloOpcodeString(inherited->root_instruction()->opcode()),
                                 ", but got ", HloOpcodeString(*async_wrapped)));
      }
      if (thread.has_value() && *thread != previous->async_execution_thread()) {
        return fail(absl::StrCat("Expect async_execution_thread to be ",
                                 previous->async_execution_thread(), ", but got ", *thread));
      }
      if (calls.has_value() && *calls != inherited) {
        return fail(absl::StrCat("Expect async_wrapped_computation to be ", inherited->name(),
                                 ", but got ", (*calls)->name()));
      }
      wrapped = inherited;
      thread = previous->async_execution_thread();
      if (opcode == HloOpcode::kAsyncUpdate && shorthand_wrappers_.contains(wrapped)) {
        BindAsyncOperands(wrapped, BoundOperandCount(previous),
                          absl::MakeConstSpan(operands).subspan(1));
      }
    } else {
      wrapped = *calls;
    }
  }
  if (!shape.has_value()) {
    if (opcode != HloOpcode::kAsyncUpdate) return fail("cannot infer the shape of async-done");
    shape = operands[0]->shape();
  }
  auto instruction = std::make_unique<HloAsyncInstruction>(opcode, *shape, operands);
  instruction->mutable_attrs()->async_execution_thread = thread.value_or("main");
  instruction->AppendCalledComputation(wrapped);
  return Add(std::move(instruction));
}

HloInstruction* HloParserImpl::AddAsyncParameter(HloComputation* wrapped, const Shape& shape,
                                                 int64_t number) {
  auto parameter =
      std::make_unique<HloParameterInstruction>(HloOpcode::kParameter, shape, Operands{});
  parameter->mutable_attrs()->parameter_number = number;
  HloInstruction* added = wrapped->AddInstruction(std::move(parameter));
  added->SetName("async_param");
  unnamed_instructions_.push_back({added, "async_param"});
  unnamed_set_.insert(added);
  return added;
}

void HloParserImpl::BindAsyncOperands(HloComputation* wrapped, int64_t first,
                                      absl::Span<HloInstruction* const> operands) {
  HloInstruction* root = wrapped->root_instruction();
  for (size_t i = 0; i < operands.size(); ++i) {
    int64_t number = first + static_cast<int64_t>(i);
    if (number < wrapped->num_parameters()) {
      // A placeholder parameter takes the shape of the operand bound to it.
      *wrapped->parameter_instruction(number)->mutable_shape() = operands[i]->shape();
    } else {
      // More operands than the wrapped op had parameters: as XLA, the op
      // takes one more operand.
      root->AppendOperand(AddAsyncParameter(wrapped, operands[i]->shape(), number));
    }
  }
}

}  // namespace hlo_parser_internal
}  // namespace axle
