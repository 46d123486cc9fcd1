//===- custom_call_target.h - A custom call's target, looked up once -------===//
//
// What the host and CUDA calling conventions (host_custom_call.h,
// gpu/cuda_custom_call.h) look up before they call a custom call, by the
// instruction's api_version: the untyped function registered for the
// platform (custom_call_registry.h) and the opaque string it is passed, or
// the typed FFI handler registered for it (host_ffi.h) and backend_config's
// attributes, parsed.
//
// A target is resolved from what the instruction says (CustomCallSpec):
// its target name, api_version and opaque. A serialized cpu program
// stores that spec and resolves it again by name when it is loaded, as
// XLA's AOT does (axle/cpu/runtime/custom_call_thunk.h); that half needs
// no HLO (custom_call_target.cc), the instruction's half is
// custom_call_target_from_hlo.cc.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_RUNTIME_CUSTOM_CALL_TARGET_H_
#define AXLE_RUNTIME_CUSTOM_CALL_TARGET_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "axle/core/xla_data.h"
#include "axle/runtime/custom_call_registry.h"
#include "axle/runtime/host_ffi.h"

namespace axle {

class HloCustomCallInstruction;

// What a custom call is resolved by.
struct CustomCallSpec {
  std::string target;  // the registered name
  CustomCallApiVersion api_version = API_VERSION_ORIGINAL;
  // The opaque (XLA keeps a custom call's opaque and its backend config as
  // one string): passed to untyped targets, parsed as attributes for FFI.
  std::string opaque;
  std::string call_name;  // "custom-call 'T' (name)", what errors say
};

struct CustomCallTarget {
  CustomCallSpec spec;  // what it was resolved from
  CustomCallApiVersion api_version = API_VERSION_ORIGINAL;
  std::string call_name;  // "custom-call 'T' (name)", what errors say
  // The untyped conventions: the function, and the opaque it is passed.
  void* address = nullptr;
  std::string opaque;
  // API_VERSION_TYPED_FFI.
  FfiHandler handler;
  std::shared_ptr<const FfiAttributes> attributes;
};

// NotFound when `spec.target` is not registered for `platform` under its
// api_version (the message says where it is registered instead),
// InvalidArgument for an unknown api_version or attributes that do not
// parse; errors end with `context` (e.g. " (instruction %c)").
absl::StatusOr<CustomCallTarget> ResolveCustomCallTarget(const CustomCallSpec& spec,
                                                         absl::string_view platform,
                                                         const CustomCallTargetRegistry& targets,
                                                         const FfiHandlerRegistry& ffi_handlers,
                                                         absl::string_view context = "");

// The instruction's half (custom_call_target_from_hlo.cc).
CustomCallSpec CustomCallSpecOf(const HloCustomCallInstruction& custom_call);
absl::StatusOr<CustomCallTarget> ResolveCustomCallTarget(
    const HloCustomCallInstruction& custom_call, absl::string_view platform,
    const CustomCallTargetRegistry& targets, const FfiHandlerRegistry& ffi_handlers);

// "custom-call 'T' (name)".
std::string CustomCallName(const HloCustomCallInstruction& custom_call);

}  // namespace axle

#endif  // AXLE_RUNTIME_CUSTOM_CALL_TARGET_H_
