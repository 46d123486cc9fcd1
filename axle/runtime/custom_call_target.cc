//===- custom_call_target.cc - A custom call's target, looked up once ------===//
#include "axle/runtime/custom_call_target.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace axle {
namespace {

absl::Status WithContext(const absl::Status& status, const HloCustomCallInstruction& custom_call,
                         absl::string_view note = "") {
  return absl::Status(status.code(), absl::StrCat(status.message(), note, " (instruction ",
                                                  custom_call.name(), ")"));
}

}  // namespace

std::string CustomCallName(const HloCustomCallInstruction& custom_call) {
  return absl::StrCat("custom-call '", custom_call.custom_call_target(), "' (", custom_call.name(),
                      ")");
}

absl::StatusOr<CustomCallTarget> ResolveCustomCallTarget(
    const HloCustomCallInstruction& custom_call, absl::string_view platform_name,
    const CustomCallTargetRegistry& targets, const FfiHandlerRegistry& ffi_handlers) {
  const std::string platform(platform_name);
  CustomCallTarget target;
  target.api_version = custom_call.api_version();
  target.call_name = CustomCallName(custom_call);
  const std::string& name = custom_call.custom_call_target();
  const std::string& opaque =
      custom_call.opaque().empty() ? custom_call.raw_backend_config_string() : custom_call.opaque();
  switch (custom_call.api_version()) {
    case API_VERSION_ORIGINAL:
    case API_VERSION_STATUS_RETURNING:
    case API_VERSION_STATUS_RETURNING_UNIFIED: {
      absl::StatusOr<void*> address = targets.LookupOrError(name, platform);
      if (!address.ok()) {
        std::string note;
        if (ffi_handlers.Find(name, platform).ok()) {
          note = "; it has a typed FFI handler: call it with api_version=API_VERSION_TYPED_FFI";
        }
        return WithContext(address.status(), custom_call, note);
      }
      target.address = *address;
      target.opaque = opaque;
      return target;
    }
    case API_VERSION_TYPED_FFI: {
      absl::StatusOr<FfiHandler> handler = ffi_handlers.Find(name, platform);
      if (!handler.ok()) {
        std::string note;
        if (targets.Lookup(name, platform) != nullptr) {
          note =
              "; it is registered as an untyped target: call it with "
              "api_version=API_VERSION_ORIGINAL or a STATUS_RETURNING version";
        } else if (!targets.PlatformsOf(name).empty()) {
          note = "; it is registered (untyped) for another platform only";
        }
        return WithContext(handler.status(), custom_call, note);
      }
      absl::StatusOr<FfiAttributes> attributes = ParseFfiAttributes(opaque);
      if (!attributes.ok()) return WithContext(attributes.status(), custom_call);
      target.handler = *std::move(handler);
      target.attributes = std::make_shared<const FfiAttributes>(*std::move(attributes));
      return target;
    }
    default:
      return absl::InvalidArgumentError(absl::StrCat(target.call_name,
                                                     ": unknown custom-call api_version ",
                                                     static_cast<int>(custom_call.api_version())));
  }
}

}  // namespace axle
