//===- hlo_parser_async.cc - async-start, async-update, async-done --------===//
//
// The generic async ops and XLA's shorthand for them: `op-start(...)` with
// op's attributes becomes an async-start wrapping a computation that holds
// `op` on parameters; `op-update` / `op-done` continue the chain of the async
// op whose state they take (reached through copies, opt-barriers and
// tuple/get-tuple-element pairs), or, where the state comes from elsewhere
// (a loop), name or rebuild the wrapped computation.
//
//===----------------------------------------------------------------------===//
#include "absl/strings/str_cat.h"
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
    Operands parameters;
    for (int64_t i = 0; i < state.tuple_shapes(0).tuple_shapes_size(); ++i) {
      auto parameter = std::make_unique<HloParameterInstruction>(
          HloOpcode::kParameter, state.tuple_shapes(0).tuple_shapes(i), Operands{});
      parameter->mutable_attrs()->parameter_number = i;
      HloInstruction* added = Add(std::move(parameter));
      added->SetName("async_param");
      unnamed_instructions_.push_back({added, "async_param"});
      unnamed_set_.insert(added);
      parameters.push_back(added);
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

}  // namespace hlo_parser_internal
}  // namespace axle
