//===- cuda_custom_call.cc - Calling custom calls in XLA's GPU convention --===//
#include "axle/gpu/cuda_custom_call.h"

#include <optional>

#include "absl/strings/str_cat.h"
#include "axle/runtime/custom_call_status.h"

namespace axle::gpu {

absl::StatusOr<CudaCustomCallTarget> CudaCustomCallTarget::Resolve(
    const HloCustomCallInstruction& custom_call, const CustomCallTargetRegistry& targets) {
  CudaCustomCallTarget target;
  target.api_version_ = custom_call.api_version();
  const std::string& name = custom_call.custom_call_target();
  target.call_name_ = absl::StrCat("custom-call '", name, "' (", custom_call.name(), ")");
  switch (custom_call.api_version()) {
    case API_VERSION_ORIGINAL:
    case API_VERSION_STATUS_RETURNING:
    case API_VERSION_STATUS_RETURNING_UNIFIED:
      break;
    case API_VERSION_TYPED_FFI:
      return absl::UnimplementedError(absl::StrCat(
          target.call_name_, ": typed FFI custom calls are not supported on CUDA yet"));
    default:
      return absl::InvalidArgumentError(absl::StrCat(target.call_name_,
                                                     ": unknown custom-call api_version ",
                                                     static_cast<int>(custom_call.api_version())));
  }
  absl::StatusOr<void*> address = targets.LookupOrError(name, kCudaPlatformName);
  if (!address.ok()) {
    return absl::Status(
        address.status().code(),
        absl::StrCat(address.status().message(), " (instruction ", custom_call.name(), ")"));
  }
  target.address_ = *address;
  // XLA keeps a custom call's opaque and its backend config as one string.
  target.opaque_ = custom_call.opaque();
  return target;
}

absl::Status CudaCustomCallTarget::Call(CUstream stream, void** buffers) const {
  CustomCallStatus status;
  if (api_version_ == API_VERSION_ORIGINAL) {
    reinterpret_cast<CudaCustomCallFunction>(address_)(stream, buffers, opaque_.data(),
                                                       opaque_.size());
  } else {
    reinterpret_cast<CudaCustomCallWithStatusFunction>(address_)(stream, buffers, opaque_.data(),
                                                                 opaque_.size(), status.get());
  }
  if (std::optional<std::string> message = status.failure_message()) {
    return absl::InternalError(absl::StrCat(call_name_, " failed: ", *message));
  }
  return absl::OkStatus();
}

}  // namespace axle::gpu
