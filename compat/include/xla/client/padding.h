// Compatibility header: XLA's xla/client/padding.h.
// Generated from compat/headers.txt by cmake/AxleCompatHeaders.cmake.
#ifndef AXLE_COMPAT_XLA_CLIENT_PADDING_H_
#define AXLE_COMPAT_XLA_CLIENT_PADDING_H_

#include "axle/builder/padding.h"

namespace xla {
using namespace ::axle;  // NOLINT: the XLA-compatible surface is Axle's
}  // namespace xla

#endif  // AXLE_COMPAT_XLA_CLIENT_PADDING_H_
