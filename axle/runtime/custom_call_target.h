//===- custom_call_target.h - A custom call's target, looked up once -------===//
//
// What the host and CUDA calling conventions (host_custom_call.h,
// gpu/cuda_custom_call.h) look up before they call a custom call, by the
// instruction's api_version: the untyped function registered for the
// platform (custom_call_registry.h) and the opaque string it is passed, or
// the typed FFI handler registered for it (host_ffi.h) and backend_config's
// attributes, parsed.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_RUNTIME_CUSTOM_CALL_TARGET_H_
#define AXLE_RUNTIME_CUSTOM_CALL_TARGET_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/runtime/custom_call_registry.h"
#include "axle/runtime/host_ffi.h"

namespace axle {

struct CustomCallTarget {
  CustomCallApiVersion api_version = API_VERSION_ORIGINAL;
  std::string call_name;  // "custom-call 'T' (name)", what errors say
  // The untyped conventions: the function, and the opaque it is passed (XLA
  // keeps a custom call's opaque and its backend config as one string).
  void* address = nullptr;
  std::string opaque;
  // API_VERSION_TYPED_FFI.
  FfiHandler handler;
  std::shared_ptr<const FfiAttributes> attributes;
};

// NotFound when the target is not registered for `platform` under the
// instruction's api_version (the message says where it is registered
// instead), InvalidArgument for an unknown api_version or backend_config
// attributes that do not parse.
absl::StatusOr<CustomCallTarget> ResolveCustomCallTarget(
    const HloCustomCallInstruction& custom_call, absl::string_view platform,
    const CustomCallTargetRegistry& targets, const FfiHandlerRegistry& ffi_handlers);

// "custom-call 'T' (name)".
std::string CustomCallName(const HloCustomCallInstruction& custom_call);

}  // namespace axle

#endif  // AXLE_RUNTIME_CUSTOM_CALL_TARGET_H_
