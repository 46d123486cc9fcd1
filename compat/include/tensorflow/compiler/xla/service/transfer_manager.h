// Compatibility header: XLA's tensorflow/compiler/xla/service/transfer_manager.h.
// Generated from compat/headers.txt by cmake/AxleCompatHeaders.cmake.
#ifndef AXLE_COMPAT_TENSORFLOW_COMPILER_XLA_SERVICE_TRANSFER_MANAGER_H_
#define AXLE_COMPAT_TENSORFLOW_COMPILER_XLA_SERVICE_TRANSFER_MANAGER_H_

#include "axle/runtime/transfer_manager.h"

namespace xla {
using namespace ::axle;  // NOLINT: the XLA-compatible surface is Axle's
}  // namespace xla

// StreamExecutor's namespace, and XLA's `se` alias for it.
namespace stream_executor = ::axle::se;

#endif  // AXLE_COMPAT_TENSORFLOW_COMPILER_XLA_SERVICE_TRANSFER_MANAGER_H_
