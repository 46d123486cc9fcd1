// Compatibility header: XLA's tensorflow/compiler/xla/xla_data.pb.h.
// Generated from compat/headers.txt by cmake/AxleCompatHeaders.cmake.
#ifndef AXLE_COMPAT_TENSORFLOW_COMPILER_XLA_XLA_DATA_PB_H_
#define AXLE_COMPAT_TENSORFLOW_COMPILER_XLA_XLA_DATA_PB_H_

#include "axle/core/xla_data.h"

namespace xla {
using namespace ::axle;  // NOLINT: the XLA-compatible surface is Axle's
}  // namespace xla

#endif  // AXLE_COMPAT_TENSORFLOW_COMPILER_XLA_XLA_DATA_PB_H_
