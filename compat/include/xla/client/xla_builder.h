// Compatibility header: XLA's xla/client/xla_builder.h.
// Generated from compat/headers.txt by cmake/AxleCompatHeaders.cmake.
#ifndef AXLE_COMPAT_XLA_CLIENT_XLA_BUILDER_H_
#define AXLE_COMPAT_XLA_CLIENT_XLA_BUILDER_H_

#include "axle/builder/xla_builder.h"

namespace xla {
using namespace ::axle;  // NOLINT: the XLA-compatible surface is Axle's
}  // namespace xla

#endif  // AXLE_COMPAT_XLA_CLIENT_XLA_BUILDER_H_
