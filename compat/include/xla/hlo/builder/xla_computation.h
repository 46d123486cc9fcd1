// Compatibility header: XLA's xla/hlo/builder/xla_computation.h.
// Generated from compat/headers.txt by cmake/AxleCompatHeaders.cmake.
#ifndef AXLE_COMPAT_XLA_HLO_BUILDER_XLA_COMPUTATION_H_
#define AXLE_COMPAT_XLA_HLO_BUILDER_XLA_COMPUTATION_H_

#include "axle/builder/xla_computation.h"

namespace xla {
using namespace ::axle;  // NOLINT: the XLA-compatible surface is Axle's
}  // namespace xla

#endif  // AXLE_COMPAT_XLA_HLO_BUILDER_XLA_COMPUTATION_H_
