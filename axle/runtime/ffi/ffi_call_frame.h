//===- ffi_call_frame.h - Running XLA FFI handlers on Axle call frames -----===//
//
// The runtime side of XLA's typed FFI C++ API (ffi_api.h): the C API table
// that GetXlaFfiApi() returns lives in ffi_call_frame.cc, and this header
// exposes the piece the rest of Axle (and tests) use: calling an
// `XLA_FFI_Handler` on host_ffi.h's FfiCallFrame.
//
// The XLA_FFI_CallFrame built for a call holds:
//   * args/rets: one XLA_FFI_Buffer per FfiBuffer (tuples already flattened);
//   * attrs: backend_config's attributes in name order. Scalars keep the
//     type written in MLIR (`2 : i32` is S32; untyped integers are S64,
//     untyped floats F64, `true` is PRED); arrays likewise (`array<i32: ...>`
//     is an S32 array; f16/bf16 arrays are passed as F64); strings as bytes;
//     nested dictionaries as XLA_FFI_Attrs.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_RUNTIME_FFI_FFI_CALL_FRAME_H_
#define AXLE_RUNTIME_FFI_FFI_CALL_FRAME_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "axle/runtime/ffi/c_api.h"
#include "axle/runtime/host_ffi.h"

namespace axle::ffi {

// Runs `handler` on `call`. A returned XLA_FFI_Error becomes a status with
// its code and message; an attribute the C API cannot carry is
// InvalidArgument naming it.
absl::Status CallXlaFfiHandler(XLA_FFI_Handler* handler, const FfiCallFrame& call);

// XLA's platform names as FfiHandlerRegistry keys: "Host" for "host"/"cpu",
// "CUDA" for "cuda"/"gpu", "ROCM" for "rocm"; others unchanged.
std::string CanonicalFfiPlatform(absl::string_view platform);

}  // namespace axle::ffi

#endif  // AXLE_RUNTIME_FFI_FFI_CALL_FRAME_H_
