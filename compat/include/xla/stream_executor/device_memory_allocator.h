// Compatibility header: XLA's xla/stream_executor/device_memory_allocator.h.
// Generated from compat/headers.txt by cmake/AxleCompatHeaders.cmake.
#ifndef AXLE_COMPAT_XLA_STREAM_EXECUTOR_DEVICE_MEMORY_ALLOCATOR_H_
#define AXLE_COMPAT_XLA_STREAM_EXECUTOR_DEVICE_MEMORY_ALLOCATOR_H_

#include "axle/runtime/device_memory.h"

namespace xla {
using namespace ::axle;  // NOLINT: the XLA-compatible surface is Axle's
}  // namespace xla

// StreamExecutor's namespace, and XLA's `se` alias for it.
namespace stream_executor = ::axle::se;

#endif  // AXLE_COMPAT_XLA_STREAM_EXECUTOR_DEVICE_MEMORY_ALLOCATOR_H_
