//===- cuda_custom_call.cc - Calling custom calls in XLA's GPU convention --===//
#include "axle/gpu/cuda_custom_call.h"

#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "axle/base/status_macros.h"
#include "axle/core/shape_util.h"
#include "axle/runtime/custom_call_status.h"

namespace axle::gpu {

absl::StatusOr<CudaCustomCallTarget> CudaCustomCallTarget::Resolve(
    const HloCustomCallInstruction& custom_call, const CustomCallTargetRegistry& targets,
    const FfiHandlerRegistry& ffi_handlers) {
  CudaCustomCallTarget target;
  AXLE_ASSIGN_OR_RETURN(target.target_, ResolveCustomCallTarget(custom_call, kCudaPlatformName,
                                                                targets, ffi_handlers));
  if (target.target_.api_version != API_VERSION_TYPED_FFI) return target;
  // The typed FFI buffers' element types and dimensions; Call fills in the
  // addresses.
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

absl::Status CudaCustomCallTarget::Call(CUstream stream, void** buffers) const {
  if (target_.api_version == API_VERSION_TYPED_FFI) {
    std::vector<FfiBuffer> args = ffi_operands_;
    std::vector<FfiBuffer> rets = ffi_results_;
    size_t next = 0;
    for (FfiBuffer& buffer : args) buffer.data = buffers[next++];
    for (FfiBuffer& buffer : rets) buffer.data = buffers[next++];
    absl::Status status = target_.handler(FfiCallFrame{args, rets, *target_.attributes, stream});
    if (!status.ok()) {
      return absl::Status(status.code(),
                          absl::StrCat(target_.call_name, " failed: ", status.message()));
    }
    return absl::OkStatus();
  }
  CustomCallStatus status;
  const std::string& opaque = target_.opaque;
  if (target_.api_version == API_VERSION_ORIGINAL) {
    reinterpret_cast<CudaCustomCallFunction>(target_.address)(stream, buffers, opaque.data(),
                                                              opaque.size());
  } else {
    reinterpret_cast<CudaCustomCallWithStatusFunction>(target_.address)(
        stream, buffers, opaque.data(), opaque.size(), status.get());
  }
  if (std::optional<std::string> message = status.failure_message()) {
    return absl::InternalError(absl::StrCat(target_.call_name, " failed: ", *message));
  }
  return absl::OkStatus();
}

}  // namespace axle::gpu
