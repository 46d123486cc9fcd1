// Compatibility header: XLA's xla/literal.h.
// Generated from compat/headers.txt by cmake/AxleCompatHeaders.cmake.
#ifndef AXLE_COMPAT_XLA_LITERAL_H_
#define AXLE_COMPAT_XLA_LITERAL_H_

#include "axle/core/literal.h"

namespace xla {
using namespace ::axle;  // NOLINT: the XLA-compatible surface is Axle's
}  // namespace xla

#endif  // AXLE_COMPAT_XLA_LITERAL_H_
