// Compatibility header: XLA's tensorflow/compiler/xla/client/executable_build_options.h.
// Generated from compat/headers.txt by cmake/AxleCompatHeaders.cmake.
#ifndef AXLE_COMPAT_TENSORFLOW_COMPILER_XLA_CLIENT_EXECUTABLE_BUILD_OPTIONS_H_
#define AXLE_COMPAT_TENSORFLOW_COMPILER_XLA_CLIENT_EXECUTABLE_BUILD_OPTIONS_H_

#include "axle/runtime/executable.h"

namespace xla {
using namespace ::axle;  // NOLINT: the XLA-compatible surface is Axle's
}  // namespace xla

// StreamExecutor's namespace, and XLA's `se` alias for it.
namespace stream_executor = ::axle::se;

#endif  // AXLE_COMPAT_TENSORFLOW_COMPILER_XLA_CLIENT_EXECUTABLE_BUILD_OPTIONS_H_
