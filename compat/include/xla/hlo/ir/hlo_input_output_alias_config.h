// Compatibility header: XLA's xla/hlo/ir/hlo_input_output_alias_config.h.
// Generated from compat/headers.txt by cmake/AxleCompatHeaders.cmake.
#ifndef AXLE_COMPAT_XLA_HLO_IR_HLO_INPUT_OUTPUT_ALIAS_CONFIG_H_
#define AXLE_COMPAT_XLA_HLO_IR_HLO_INPUT_OUTPUT_ALIAS_CONFIG_H_

#include "axle/hlo/ir/hlo_module_config.h"

namespace xla {
using namespace ::axle;  // NOLINT: the XLA-compatible surface is Axle's
}  // namespace xla

#endif  // AXLE_COMPAT_XLA_HLO_IR_HLO_INPUT_OUTPUT_ALIAS_CONFIG_H_
