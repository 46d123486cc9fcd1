//===- cuda_custom_call.h - Calling custom calls in XLA's GPU convention ---===//
//
// A custom call's target for platform "CUDA", resolved once from the
// registry (custom_call_registry.h) and called as XLA:GPU calls it
// (gpu_custom_call.h):
//
//   API_VERSION_ORIGINAL                 fn(stream, buffers, opaque, opaque_len)
//   API_VERSION_STATUS_RETURNING[_UNIFIED] fn(stream, buffers, opaque, opaque_len,
//                                             status)
//
// `buffers` holds the operands' device addresses, then the results', tuples
// flattened in pre-order (what the GPU executable's custom-call thunk will
// pass). A failure the target reports through XlaCustomCallStatus is an
// Internal error "custom-call 'T' (name) failed: <message>"; the run that
// made the call fails with it.
//
//   API_VERSION_TYPED_FFI                a handler registered for "CUDA"
//                                         (XLA_FFI_REGISTER_HANDLER(api, name,
//                                         "CUDA", h)), called with the same
//                                         buffers as typed FFI buffers, the
//                                         backend_config's attributes, and the
//                                         stream as Ctx<PlatformStream<T>>.
//
// A handler's error is the call's error with the handler's code and message.
//
// This header is CUDA- and LLVM-free (CUstream comes from gpu_custom_call.h).
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_GPU_CUDA_CUSTOM_CALL_H_
#define AXLE_GPU_CUDA_CUSTOM_CALL_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "axle/gpu/gpu_custom_call.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/runtime/custom_call_registry.h"
#include "axle/runtime/custom_call_target.h"
#include "axle/runtime/host_ffi.h"

namespace axle::gpu {

class CudaCustomCallTarget {
 public:
  // NotFound when the target is not registered for "CUDA" (naming where
  // it is registered instead), InvalidArgument for an unknown api_version
  // or backend_config attributes that do not parse.
  static absl::StatusOr<CudaCustomCallTarget> Resolve(
      const HloCustomCallInstruction& custom_call,
      const CustomCallTargetRegistry& targets = *CustomCallTargetRegistry::Global(),
      const FfiHandlerRegistry& ffi_handlers = *FfiHandlerRegistry::Global());

  // Calls the target on `stream` with `buffers` (see above).
  absl::Status Call(CUstream stream, void** buffers) const;

 private:
  CustomCallTarget target_;
  // Typed FFI: the element type and dimensions of each buffer (operand
  // leaves, then result leaves).
  std::vector<FfiBuffer> ffi_operands_;
  std::vector<FfiBuffer> ffi_results_;
};

}  // namespace axle::gpu

#endif  // AXLE_GPU_CUDA_CUSTOM_CALL_H_
