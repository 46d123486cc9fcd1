// A convolution's input copied channels-last (conv_input_gather.h).
#include "axle/cpu/runtime/conv_input_gather.h"

#include <algorithm>

namespace axle::cpu {
namespace {

// GatherRowsChannelsLast for one element type: for each line along the last
// spatial dim and each channel, a contiguous (or strided) read and a store
// every C elements; the line's C stores share the output's cache lines.
template <typename E>
void GatherRows(const E* in, const std::vector<int64_t>& dims, const std::vector<int64_t>& strides,
                int64_t row_begin, int64_t row_end, E* out) {
  const size_t rank = dims.size();
  // Lines along the last spatial dim, one pixel long with one spatial dim.
  const bool one_spatial = rank == 3;
  const int64_t channels = dims[1], channel_stride = strides[1];
  const int64_t width = one_spatial ? 1 : dims[rank - 1];
  const int64_t width_stride = one_spatial ? 0 : strides[rank - 1];
  const size_t line_dims_end = one_spatial ? 3 : rank - 1;  // dims [2, end) index the lines
  std::vector<int64_t> position(rank, 0);
  position[2] = row_begin;
  while (position[2] < row_end) {
    const E* line = in;
    for (size_t d = 2; d < line_dims_end; ++d) line += position[d] * strides[d];
    for (int64_t c = 0; c < channels; ++c) {
      const E* from = line + c * channel_stride;
      E* to = out + c;
      if (width_stride == 1) {
        for (int64_t w = 0; w < width; ++w) to[w * channels] = from[w];
      } else {
        for (int64_t w = 0; w < width; ++w) to[w * channels] = from[w * width_stride];
      }
    }
    out += width * channels;
    // The next line, the innermost of dims [2, end) first; dim 2 never wraps.
    for (size_t d = line_dims_end - 1;; --d) {
      if (++position[d] < dims[d] || d == 2) break;
      position[d] = 0;
    }
  }
}

// GatherDilatedInput for one element type.
template <typename E>
void GatherDilated(const conv::ConvPlan& p, const std::vector<int64_t>& crop_low,
                   const std::vector<int64_t>& spatial, const E* in, E* out) {
  std::vector<int64_t> ls = p.LhsStrides();
  const int64_t batch = p.out_dims[0], features = p.lhs_dims[1];
  std::vector<int64_t> position(p.spatial, 0);
  for (int64_t n = 0; n < batch; ++n) {
    std::fill(position.begin(), position.end(), 0);
    do {
      // The input element under this dense spatial position, if any.
      bool hole = false;
      int64_t offset = n * ls[0];
      for (int64_t i = 0; i < p.spatial; ++i) {
        int64_t dilated = position[i] + crop_low[i];
        int64_t d = p.window[i].base_dilation();
        hole = hole || dilated % d != 0;
        offset += dilated / d * ls[2 + i];
      }
      for (int64_t g = 0; g < p.batch_groups; ++g) {
        const E* from = in + offset + g * batch * ls[0];
        for (int64_t c = 0; c < features; ++c) *out++ = hole ? E() : from[c * ls[1]];
      }
    } while (conv::Next(spatial, position));
  }
}

}  // namespace

void GatherRowsChannelsLast(const char* in, int64_t element_size, const std::vector<int64_t>& dims,
                            const std::vector<int64_t>& strides, int64_t row_begin, int64_t row_end,
                            char* out) {
  if (element_size == 2) {
    GatherRows(reinterpret_cast<const uint16_t*>(in), dims, strides, row_begin, row_end,
               reinterpret_cast<uint16_t*>(out));
  } else {
    GatherRows(reinterpret_cast<const uint32_t*>(in), dims, strides, row_begin, row_end,
               reinterpret_cast<uint32_t*>(out));
  }
}

void GatherDilatedInput(const conv::ConvPlan& plan, const std::vector<int64_t>& crop_low,
                        const std::vector<int64_t>& spatial, const char* in, int64_t element_size,
                        char* out) {
  if (element_size == 2) {
    GatherDilated(plan, crop_low, spatial, reinterpret_cast<const uint16_t*>(in),
                  reinterpret_cast<uint16_t*>(out));
  } else {
    GatherDilated(plan, crop_low, spatial, reinterpret_cast<const uint32_t*>(in),
                  reinterpret_cast<uint32_t*>(out));
  }
}

}  // namespace axle::cpu
