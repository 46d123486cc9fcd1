//===- custom_call_target.cc - A custom call's target, looked up once ------===//
#include "axle/runtime/custom_call_target.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace axle {
namespace {

absl::Status WithContext(const absl::Status& status, absl::string_view note,
                         absl::string_view context) {
  return absl::Status(status.code(), absl::StrCat(status.message(), note, context));
}

}  // namespace

absl::StatusOr<CustomCallTarget> ResolveCustomCallTarget(const CustomCallSpec& spec,
                                                         absl::string_view platform_name,
                                                         const CustomCallTargetRegistry& targets,
                                                         const FfiHandlerRegistry& ffi_handlers,
                                                         absl::string_view context) {
  const std::string platform(platform_name);
  CustomCallTarget target;
  target.spec = spec;
  target.api_version = spec.api_version;
  target.call_name = spec.call_name;
  const std::string& name = spec.target;
  switch (spec.api_version) {
    case API_VERSION_ORIGINAL:
    case API_VERSION_STATUS_RETURNING:
    case API_VERSION_STATUS_RETURNING_UNIFIED: {
      absl::StatusOr<void*> address = targets.LookupOrError(name, platform);
      if (!address.ok()) {
        std::string note;
        if (ffi_handlers.Find(name, platform).ok()) {
          note = "; it has a typed FFI handler: call it with api_version=API_VERSION_TYPED_FFI";
        }
        return WithContext(address.status(), note, context);
      }
      target.address = *address;
      target.opaque = spec.opaque;
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
        return WithContext(handler.status(), note, context);
      }
      absl::StatusOr<FfiAttributes> attributes = ParseFfiAttributes(spec.opaque);
      if (!attributes.ok()) return WithContext(attributes.status(), "", context);
      target.handler = *std::move(handler);
      target.attributes = std::make_shared<const FfiAttributes>(*std::move(attributes));
      return target;
    }
    default:
      return absl::InvalidArgumentError(absl::StrCat(target.call_name,
                                                     ": unknown custom-call api_version ",
                                                     static_cast<int>(spec.api_version)));
  }
}

}  // namespace axle
