// Compatibility header: XLA's tensorflow/compiler/xla/ffi/api/ffi.h.
// The typed FFI C++ API.
// Generated from compat/headers.txt by cmake/AxleCompatHeaders.cmake.
#ifndef AXLE_COMPAT_TENSORFLOW_COMPILER_XLA_FFI_API_FFI_H_
#define AXLE_COMPAT_TENSORFLOW_COMPILER_XLA_FFI_API_FFI_H_

#include "axle/runtime/ffi/ffi_api.h"

namespace xla {
using namespace ::axle;  // NOLINT: the XLA-compatible surface is Axle's
}  // namespace xla

#endif  // AXLE_COMPAT_TENSORFLOW_COMPILER_XLA_FFI_API_FFI_H_
