// Compatibility header: XLA's tensorflow/compiler/xla/ffi/api/c_api.h.
// The FFI C types.
// Generated from compat/headers.txt by cmake/AxleCompatHeaders.cmake.
#ifndef AXLE_COMPAT_TENSORFLOW_COMPILER_XLA_FFI_API_C_API_H_
#define AXLE_COMPAT_TENSORFLOW_COMPILER_XLA_FFI_API_C_API_H_

#include "axle/runtime/ffi/c_api.h"

#endif  // AXLE_COMPAT_TENSORFLOW_COMPILER_XLA_FFI_API_C_API_H_
