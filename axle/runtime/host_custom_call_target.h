//===- host_custom_call_target.h - A host custom call on buffers ---------===//
//
// A custom call's target for platform "Host" (host_custom_call.h says how
// the buffers are laid out), resolved once and then called on buffers:
// what the interpreter's InvokeHostCustomCall and the cpu platform's
// CustomCallThunk both call. Resolving from an instruction needs HLO
// (host_custom_call.cc); resolving from a CustomCallSpec and calling do
// not (host_custom_call_target.cc), so a serialized cpu program resolves
// its custom calls by name when it is loaded without linking any HLO.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_RUNTIME_HOST_CUSTOM_CALL_TARGET_H_
#define AXLE_RUNTIME_HOST_CUSTOM_CALL_TARGET_H_

#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "axle/runtime/custom_call_registry.h"
#include "axle/runtime/custom_call_target.h"
#include "axle/runtime/host_ffi.h"

namespace axle {

// A custom call's target for platform "Host", resolved once: the untyped
// function (and the opaque it is passed), or the typed FFI handler with
// backend_config's attributes parsed. Copyable; calls are thread-safe as
// far as the target itself is.
class HostCustomCallTarget {
 public:
  HostCustomCallTarget() = default;

  // NotFound when the target is not registered under the instruction's
  // api_version (the message says where it is registered instead),
  // InvalidArgument for an unknown api_version or a bad FFI backend_config.
  // Defined in host_custom_call.cc, with the instruction.
  static absl::StatusOr<HostCustomCallTarget> Resolve(
      const HloCustomCallInstruction& custom_call,
      const CustomCallTargetRegistry& targets = *CustomCallTargetRegistry::Global(),
      const FfiHandlerRegistry& ffi_handlers = *FfiHandlerRegistry::Global());
  // The same from a spec (a serialized cpu program's custom call, resolved
  // by name when it is loaded); errors end with `context`.
  static absl::StatusOr<HostCustomCallTarget> Resolve(
      const CustomCallSpec& spec, absl::string_view context = "",
      const CustomCallTargetRegistry& targets = *CustomCallTargetRegistry::Global(),
      const FfiHandlerRegistry& ffi_handlers = *FfiHandlerRegistry::Global());

  // What it was resolved from.
  const CustomCallSpec& spec() const { return target_.spec; }

  bool is_typed_ffi() const { return target_.api_version == API_VERSION_TYPED_FFI; }

  // Untyped conventions: calls the function on `out` and `in` (plus the
  // opaque and a fresh XlaCustomCallStatus, by api_version). A failure the
  // call reports is Internal: "custom-call 'T' (name) failed: <message>".
  absl::Status CallUntyped(void* out, const void** in) const;

  // Typed FFI: runs the handler on the leaf buffers. A handler's error
  // keeps its code; its message is prefixed with the call's name.
  absl::Status CallFfi(absl::Span<const FfiBuffer> args, absl::Span<const FfiBuffer> rets) const;

 private:
  explicit HostCustomCallTarget(CustomCallTarget target) : target_(std::move(target)) {}

  CustomCallTarget target_;
};

}  // namespace axle

#endif  // AXLE_RUNTIME_HOST_CUSTOM_CALL_TARGET_H_
