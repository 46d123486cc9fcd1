//===- host_custom_call_target.cc - A host custom call on buffers --------===//
#include "axle/runtime/host_custom_call_target.h"

#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "axle/runtime/custom_call_status.h"

namespace axle {
namespace {

using OriginalFn = void (*)(void* out, const void** in);
using StatusReturningFn = void (*)(void* out, const void** in, XlaCustomCallStatus* status);
using UnifiedFn = void (*)(void* out, const void** in, const char* opaque, size_t opaque_len,
                           XlaCustomCallStatus* status);

}  // namespace

absl::StatusOr<HostCustomCallTarget> HostCustomCallTarget::Resolve(
    const CustomCallSpec& spec, absl::string_view context, const CustomCallTargetRegistry& targets,
    const FfiHandlerRegistry& ffi_handlers) {
  absl::StatusOr<CustomCallTarget> target =
      ResolveCustomCallTarget(spec, kHostPlatformName, targets, ffi_handlers, context);
  if (!target.ok()) return target.status();
  return HostCustomCallTarget(*std::move(target));
}

absl::Status HostCustomCallTarget::CallUntyped(void* out, const void** in) const {
  CustomCallStatus status;
  void* address = target_.address;
  const std::string& opaque = target_.opaque;
  switch (target_.api_version) {
    case API_VERSION_ORIGINAL:
      reinterpret_cast<OriginalFn>(address)(out, in);
      break;
    case API_VERSION_STATUS_RETURNING:
      reinterpret_cast<StatusReturningFn>(address)(out, in, status.get());
      break;
    case API_VERSION_STATUS_RETURNING_UNIFIED:
      reinterpret_cast<UnifiedFn>(address)(out, in, opaque.data(), opaque.size(), status.get());
      break;
    default:
      return absl::InternalError(
          absl::StrCat(target_.call_name, ": CallUntyped on a typed FFI target"));
  }
  if (std::optional<std::string> message = status.failure_message()) {
    return absl::InternalError(absl::StrCat(target_.call_name, " failed: ", *message));
  }
  return absl::OkStatus();
}

absl::Status HostCustomCallTarget::CallFfi(absl::Span<const FfiBuffer> args,
                                           absl::Span<const FfiBuffer> rets) const {
  if (!is_typed_ffi()) {
    return absl::InternalError(absl::StrCat(target_.call_name, ": CallFfi on an untyped target"));
  }
  absl::Status status = target_.handler(FfiCallFrame{args, rets, *target_.attributes});
  if (!status.ok()) {
    return absl::Status(status.code(),
                        absl::StrCat(target_.call_name, " failed: ", status.message()));
  }
  return absl::OkStatus();
}

}  // namespace axle
