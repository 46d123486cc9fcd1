//===- host_custom_call.h - Running custom calls on host literals ----------===//
//
// Invokes a custom-call target registered for platform "Host" on host
// literals, the way XLA:CPU calls it, by the instruction's api_version:
//
//   API_VERSION_ORIGINAL                  void fn(void* out, const void** in)
//   API_VERSION_STATUS_RETURNING          void fn(void* out, const void** in,
//                                                 XlaCustomCallStatus* status)
//   API_VERSION_STATUS_RETURNING_UNIFIED  void fn(void* out, const void** in,
//                                                 const char* opaque, size_t opaque_len,
//                                                 XlaCustomCallStatus* status)
//   API_VERSION_TYPED_FFI                 an FfiHandler (host_ffi.h)
//
// Buffers, as XLA's custom-call guide lays them out for the CPU:
//   * `in[i]` points at operand i's buffer. A tuple operand's buffer is an
//     array of pointers to its elements' buffers (nested tuples nest).
//   * `out` is the result's buffer; for a tuple result, an array of pointers
//     to the elements' buffers (nested likewise). Every element is writable,
//     so tuple elements that are never read serve as scratch memory.
//   * Arrays are dense: row-major unless the custom call is layout
//     constrained (operand_layout_constraints), in which case operand i is in
//     its constraint's layout and the result in the instruction's layout
//     (typed FFI calls alike; here they are staged through copies).
//   * Tokens are null pointers.
//   * output_to_operand_aliasing: the aliased output *is* the operand's
//     buffer (the same pointer in `in` and `out`); the result there is what
//     the call left in it.
// The call works on copies of the operands, so a target that writes to its
// inputs cannot change the caller's values.
//
// A status set to failure aborts the run: the error is Internal and carries
// the call's message; no output is used. An unknown target is NotFound naming
// the target and "Host".
//
// Two levels: InvokeHostCustomCall works on literals (the interpreter's
// path: copies in, a new literal out, layouts staged), and
// HostCustomCallTarget (host_custom_call_target.h) is the buffer-level
// call both that path and the cpu platform's CustomCallThunk
// (axle/cpu/runtime/custom_call_thunk.h) make: resolved once, then called
// on buffers already laid out as above.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_RUNTIME_HOST_CUSTOM_CALL_H_
#define AXLE_RUNTIME_HOST_CUSTOM_CALL_H_

#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "axle/core/literal.h"
#include "axle/eval/hlo_evaluator.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/runtime/custom_call_registry.h"
#include "axle/runtime/custom_call_target.h"
#include "axle/runtime/host_custom_call_target.h"
#include "axle/runtime/host_ffi.h"

namespace axle {

// Runs `custom_call` on `operands` (one literal per operand, of the operand's
// shape) and returns its result, a literal of the instruction's shape.
absl::StatusOr<Literal> InvokeHostCustomCall(
    const HloCustomCallInstruction& custom_call, absl::Span<const Literal* const> operands,
    const CustomCallTargetRegistry& targets = *CustomCallTargetRegistry::Global(),
    const FfiHandlerRegistry& ffi_handlers = *FfiHandlerRegistry::Global());

// A custom-call handler for HloEvaluator that runs InvokeHostCustomCall with
// the given registries (they must outlive the handler).
HloEvaluator::CustomCallHandler MakeHostCustomCallHandler(
    const CustomCallTargetRegistry* targets = CustomCallTargetRegistry::Global(),
    const FfiHandlerRegistry* ffi_handlers = FfiHandlerRegistry::Global());

// Makes `evaluator` run custom calls through the global registries.
void InstallHostCustomCalls(HloEvaluator* evaluator);

}  // namespace axle

#endif  // AXLE_RUNTIME_HOST_CUSTOM_CALL_H_
