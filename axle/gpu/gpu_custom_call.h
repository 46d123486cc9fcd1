//===- gpu_custom_call.h - XLA's GPU custom-call convention ----------------===//
//
// The function types of custom calls registered for XLA's "CUDA" platform
// (custom_call_registry.h), as XLA's custom-call guide writes them:
//
//   void fn(CUstream stream, void** buffers, const char* opaque,
//           size_t opaque_len);                                 // original
//   void fn(CUstream stream, void** buffers, const char* opaque,
//           size_t opaque_len, XlaCustomCallStatus* status);    // status-returning
//   XLA_REGISTER_CUSTOM_CALL_TARGET(fn, "CUDA");
//
// `buffers` holds the operands' device addresses, then the results', tuples
// flattened in pre-order. `stream` is the stream the executable runs on
// (cudaStream_t is the same type). The typed FFI's way of getting it, a
// context argument (`Ctx<PlatformStream<CUstream>>`), is not supported yet
// (ffi/ffi_api.h); typed handlers register for "CUDA" already.
//
// CUstream is declared here as cuda.h declares it, so code that includes
// cuda.h (or cuda_runtime_api.h) and code that does not agree on the type.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_GPU_GPU_CUSTOM_CALL_H_
#define AXLE_GPU_GPU_CUSTOM_CALL_H_

#include <cstddef>

#include "axle/runtime/custom_call_status.h"

// As cuda.h: an opaque stream handle (a redeclaration there is the same).
typedef struct CUstream_st* CUstream;  // NOLINT(modernize-use-using): cuda.h's own declaration

namespace axle::gpu {

using CudaCustomCallFunction = void (*)(CUstream stream, void** buffers, const char* opaque,
                                        size_t opaque_len);
using CudaCustomCallWithStatusFunction = void (*)(CUstream stream, void** buffers,
                                                  const char* opaque, size_t opaque_len,
                                                  XlaCustomCallStatus* status);

}  // namespace axle::gpu

#endif  // AXLE_GPU_GPU_CUSTOM_CALL_H_
