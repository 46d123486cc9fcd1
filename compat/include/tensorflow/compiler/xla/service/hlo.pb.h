// Compatibility header: XLA's tensorflow/compiler/xla/service/hlo.pb.h.
// HloModuleProto (needs axle_hlo_proto).
// Generated from compat/headers.txt by cmake/AxleCompatHeaders.cmake.
#ifndef AXLE_COMPAT_TENSORFLOW_COMPILER_XLA_SERVICE_HLO_PB_H_
#define AXLE_COMPAT_TENSORFLOW_COMPILER_XLA_SERVICE_HLO_PB_H_

#include "axle/hlo/proto/hlo_proto.h"

namespace xla {
using namespace ::axle;  // NOLINT: the XLA-compatible surface is Axle's
}  // namespace xla

#endif  // AXLE_COMPAT_TENSORFLOW_COMPILER_XLA_SERVICE_HLO_PB_H_
