// Compatibility header: XLA's tensorflow/compiler/xla/client/client_library.h.
// Generated from compat/headers.txt by cmake/AxleCompatHeaders.cmake.
#ifndef AXLE_COMPAT_TENSORFLOW_COMPILER_XLA_CLIENT_CLIENT_LIBRARY_H_
#define AXLE_COMPAT_TENSORFLOW_COMPILER_XLA_CLIENT_CLIENT_LIBRARY_H_

#include "axle/runtime/local_client.h"

namespace xla {
using namespace ::axle;  // NOLINT: the XLA-compatible surface is Axle's
}  // namespace xla

// StreamExecutor's namespace, and XLA's `se` alias for it.
namespace stream_executor = ::axle::se;

#endif  // AXLE_COMPAT_TENSORFLOW_COMPILER_XLA_CLIENT_CLIENT_LIBRARY_H_
