//===- conv_input_gather.h - A convolution's input copied channels-last ----===//
//
// Internal to the oneDNN convolution thunk (convolution_thunk.cc and
// convolution_thunk_pieces.cc): the copies of a convolution's input into a
// dense channels-last buffer that the primitive reads instead of the input
// itself. No oneDNN here.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_CPU_RUNTIME_CONV_INPUT_GATHER_H_
#define AXLE_CPU_RUNTIME_CONV_INPUT_GATHER_H_

#include <cstdint>
#include <vector>

#include "axle/cpu/runtime/convolution_plan.h"

namespace axle::cpu {

// Copies rows [row_begin, row_end) (dim 2) of a batch-1 array of
// `element_size`-byte elements (2 or 4) with dims [1, C, rows, more
// spatial...] at element `strides` into `out`, dense channels-last: [rows
// of the range][more spatial...][C]. A piece of a convolution whose input is
// not channels-last (an NCHW image into a network's first convolution)
// gathers its own input rows this way.
void GatherRowsChannelsLast(const char* in, int64_t element_size, const std::vector<int64_t>& dims,
                            const std::vector<int64_t>& strides, int64_t row_begin, int64_t row_end,
                            char* out);

// Copies the input `in` of `plan` (its lhs, `element_size`-byte elements, 2
// or 4) into `out`, dense channels-last [N, spatial..., batch groups * C]:
// batch group g of the input becomes features [g * C, (g + 1) * C), the
// spatial dims are lhs-dilated (holes are zeros) and then cropped by
// `crop_low` elements at their start to `spatial` elements (negative
// padding). A convolution with lhs dilation or batch groups reads this copy.
void GatherDilatedInput(const conv::ConvPlan& plan, const std::vector<int64_t>& crop_low,
                        const std::vector<int64_t>& spatial, const char* in, int64_t element_size,
                        char* out);

}  // namespace axle::cpu

#endif  // AXLE_CPU_RUNTIME_CONV_INPUT_GATHER_H_
