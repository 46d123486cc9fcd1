// Compatibility header: XLA's xla/service/hlo_parser.h.
// Generated from compat/headers.txt by cmake/AxleCompatHeaders.cmake.
#ifndef AXLE_COMPAT_XLA_SERVICE_HLO_PARSER_H_
#define AXLE_COMPAT_XLA_SERVICE_HLO_PARSER_H_

#include "axle/hlo/text/hlo_parser.h"

namespace xla {
using namespace ::axle;  // NOLINT: the XLA-compatible surface is Axle's
}  // namespace xla

#endif  // AXLE_COMPAT_XLA_SERVICE_HLO_PARSER_H_
