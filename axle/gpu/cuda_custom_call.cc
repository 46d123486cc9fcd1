//===- cuda_custom_call.cc - Calling custom calls in XLA's GPU convention --===//
#include "axle/gpu/cuda_custom_call.h"

#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "axle/core/shape_util.h"
#include "axle/runtime/custom_call_status.h"

namespace axle::gpu {

absl::StatusOr<CudaCustomCallTarget> CudaCustomCallTarget::Resolve(
    const HloCustomCallInstruction& custom_call, const CustomCallTargetRegistry& targets,
    const FfiHandlerRegistry& ffi_handlers) {
  CudaCustomCallTarget target;
  target.api_version_ = custom_call.api_version();
  const std::string& name = custom_call.custom_call_target();
  target.call_name_ = absl::StrCat("custom-call '", name, "' (", custom_call.name(), ")");
  switch (custom_call.api_version()) {
    case API_VERSION_ORIGINAL:
    case API_VERSION_STATUS_RETURNING:
    case API_VERSION_STATUS_RETURNING_UNIFIED:
      break;
    case API_VERSION_TYPED_FFI: {
      absl::StatusOr<FfiHandler> handler = ffi_handlers.Find(name, kCudaPlatformName);
      if (!handler.ok()) {
        std::string note;
        if (targets.Lookup(name, kCudaPlatformName) != nullptr) {
          note =
              "; it is registered as an untyped target: call it with "
              "api_version=API_VERSION_ORIGINAL or a STATUS_RETURNING version";
        }
        return absl::Status(handler.status().code(),
                            absl::StrCat(handler.status().message(), " (instruction ",
                                         custom_call.name(), ")", note));
      }
      const std::string& config = custom_call.opaque().empty()
                                      ? custom_call.raw_backend_config_string()
                                      : custom_call.opaque();
      absl::StatusOr<FfiAttributes> attributes = ParseFfiAttributes(config);
      if (!attributes.ok()) {
        return absl::Status(attributes.status().code(),
                            absl::StrCat(target.call_name_, ": ", attributes.status().message()));
      }
      target.handler_ = *std::move(handler);
      target.attributes_ = std::make_shared<const FfiAttributes>(*std::move(attributes));
      auto add_leaves = [](const Shape& shape, std::vector<FfiBuffer>* out) {
        ShapeUtil::ForEachLeafShape(shape, [&](const Shape& leaf, const ShapeIndex&) {
          FfiBuffer buffer;
          buffer.element_type = leaf.element_type();
          if (leaf.IsArray()) {
            buffer.dimensions.assign(leaf.dimensions().begin(), leaf.dimensions().end());
          }
          out->push_back(std::move(buffer));
        });
      };
      for (const HloInstruction* operand : custom_call.operands()) {
        add_leaves(operand->shape(), &target.ffi_operands_);
      }
      add_leaves(custom_call.shape(), &target.ffi_results_);
      return target;
    }
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
  if (api_version_ == API_VERSION_TYPED_FFI) {
    std::vector<FfiBuffer> args = ffi_operands_;
    std::vector<FfiBuffer> rets = ffi_results_;
    size_t next = 0;
    for (FfiBuffer& buffer : args) buffer.data = buffers[next++];
    for (FfiBuffer& buffer : rets) buffer.data = buffers[next++];
    absl::Status status = handler_(FfiCallFrame{args, rets, *attributes_, stream});
    if (!status.ok()) {
      return absl::Status(status.code(), absl::StrCat(call_name_, " failed: ", status.message()));
    }
    return absl::OkStatus();
  }
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
