// Compatibility header: XLA's xla/service/custom_call_status.h.
// Generated from compat/headers.txt by cmake/AxleCompatHeaders.cmake.
#ifndef AXLE_COMPAT_XLA_SERVICE_CUSTOM_CALL_STATUS_H_
#define AXLE_COMPAT_XLA_SERVICE_CUSTOM_CALL_STATUS_H_

#include "axle/runtime/custom_call_status.h"

namespace xla {
using namespace ::axle;  // NOLINT: the XLA-compatible surface is Axle's
}  // namespace xla

#endif  // AXLE_COMPAT_XLA_SERVICE_CUSTOM_CALL_STATUS_H_
