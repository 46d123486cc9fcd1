// Compatibility header: XLA's tensorflow/compiler/xla/ffi/ffi_api.h.
// For GetXlaFfiApi().
// Generated from compat/headers.txt by cmake/AxleCompatHeaders.cmake.
#ifndef AXLE_COMPAT_TENSORFLOW_COMPILER_XLA_FFI_FFI_API_H_
#define AXLE_COMPAT_TENSORFLOW_COMPILER_XLA_FFI_FFI_API_H_

#include "axle/runtime/ffi/ffi_api.h"

namespace xla {
using namespace ::axle;  // NOLINT: the XLA-compatible surface is Axle's
}  // namespace xla

#endif  // AXLE_COMPAT_TENSORFLOW_COMPILER_XLA_FFI_FFI_API_H_
