//===- custom_call_target_from_hlo.cc - A custom call's spec from HLO -----===//
#include "absl/strings/str_cat.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/runtime/custom_call_target.h"

namespace axle {

std::string CustomCallName(const HloCustomCallInstruction& custom_call) {
  return absl::StrCat("custom-call '", custom_call.custom_call_target(), "' (", custom_call.name(),
                      ")");
}

CustomCallSpec CustomCallSpecOf(const HloCustomCallInstruction& custom_call) {
  CustomCallSpec spec;
  spec.target = custom_call.custom_call_target();
  spec.api_version = custom_call.api_version();
  spec.opaque =
      custom_call.opaque().empty() ? custom_call.raw_backend_config_string() : custom_call.opaque();
  spec.call_name = CustomCallName(custom_call);
  return spec;
}

absl::StatusOr<CustomCallTarget> ResolveCustomCallTarget(
    const HloCustomCallInstruction& custom_call, absl::string_view platform,
    const CustomCallTargetRegistry& targets, const FfiHandlerRegistry& ffi_handlers) {
  return ResolveCustomCallTarget(CustomCallSpecOf(custom_call), platform, targets, ffi_handlers,
                                 absl::StrCat(" (instruction ", custom_call.name(), ")"));
}

}  // namespace axle
