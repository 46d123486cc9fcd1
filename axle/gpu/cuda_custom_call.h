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
// made the call fails with it. Typed FFI targets on CUDA are Unimplemented
// for now.
//
// This header is CUDA- and LLVM-free (CUstream comes from gpu_custom_call.h).
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_GPU_CUDA_CUSTOM_CALL_H_
#define AXLE_GPU_CUDA_CUSTOM_CALL_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "axle/gpu/gpu_custom_call.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/runtime/custom_call_registry.h"

namespace axle::gpu {

class CudaCustomCallTarget {
 public:
  // NotFound when the target is not registered for "CUDA" (naming where
  // it is registered instead), Unimplemented for typed FFI, InvalidArgument
  // for an unknown api_version.
  static absl::StatusOr<CudaCustomCallTarget> Resolve(
      const HloCustomCallInstruction& custom_call,
      const CustomCallTargetRegistry& targets = *CustomCallTargetRegistry::Global());

  // Calls the target on `stream` with `buffers` (see above).
  absl::Status Call(CUstream stream, void** buffers) const;

 private:
  CustomCallApiVersion api_version_ = API_VERSION_ORIGINAL;
  std::string call_name_;  // "custom-call 'T' (name)"
  void* address_ = nullptr;
  std::string opaque_;
};

}  // namespace axle::gpu

#endif  // AXLE_GPU_CUDA_CUSTOM_CALL_H_
