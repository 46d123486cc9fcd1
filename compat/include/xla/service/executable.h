// Compatibility header: XLA's xla/service/executable.h.
// Generated from compat/headers.txt by cmake/AxleCompatHeaders.cmake.
#ifndef AXLE_COMPAT_XLA_SERVICE_EXECUTABLE_H_
#define AXLE_COMPAT_XLA_SERVICE_EXECUTABLE_H_

#include "axle/runtime/executable.h"

namespace xla {
using namespace ::axle;  // NOLINT: the XLA-compatible surface is Axle's
}  // namespace xla

// StreamExecutor's namespace, and XLA's `se` alias for it.
namespace stream_executor = ::axle::se;

#endif  // AXLE_COMPAT_XLA_SERVICE_EXECUTABLE_H_
