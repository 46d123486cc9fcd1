// A convolution's output rows cut into pieces (conv_row_split.h).
#include "axle/cpu/runtime/conv_row_split.h"

#include <algorithm>
#include <cstring>

#include "axle/cpu/runtime/avx512_target.h"

namespace axle::cpu {

int64_t ConvRowWindow::OutRows() const {
  const int64_t extent = (size - 1) * dilation + 1;
  const int64_t padded = in_rows + pad_low + pad_high;
  return padded < extent || stride < 1 ? 0 : (padded - extent) / stride + 1;
}

std::vector<ConvRowPiece> SplitConvRows(const ConvRowWindow& window, int64_t pieces) {
  const int64_t out_rows = window.OutRows();
  if (pieces < 1 || out_rows < pieces) return {};
  const int64_t extent = (window.size - 1) * window.dilation + 1;
  std::vector<ConvRowPiece> result;
  int64_t begin = 0;
  for (int64_t p = 0; p < pieces; ++p) {
    ConvRowPiece piece;
    piece.out_begin = begin;
    piece.out_end = begin + out_rows / pieces + (p < out_rows % pieces ? 1 : 0);
    begin = piece.out_end;
    // The padded input rows the piece's windows cover, in input coordinates.
    const int64_t first = piece.out_begin * window.stride - window.pad_low;
    const int64_t last = (piece.out_end - 1) * window.stride - window.pad_low + extent;
    piece.in_begin = std::max<int64_t>(0, first);
    piece.in_end = std::min(window.in_rows, last);
    if (piece.in_begin >= piece.in_end) return {};
    piece.pad_low = piece.in_begin - first;
    piece.pad_high = last - piece.in_end;
    result.push_back(piece);
  }
  return result;
}

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

namespace {

constexpr int64_t kRunBlock = 64;

#ifdef AXLE_AVX512
// CopyRuns with one 64-byte vector per block.
AXLE_AVX512 void CopyRunsAvx512(const char* in, int64_t in_stride, char* out, int64_t out_stride,
                                int64_t bytes, int64_t count) {
  for (int64_t i = 0; i < count; ++i) {
    const char* from = in + i * in_stride;
    char* to = out + i * out_stride;
    int64_t b = 0;
    for (; b + kRunBlock <= bytes; b += kRunBlock) {
      _mm512_storeu_si512(to + b, _mm512_loadu_si512(from + b));
    }
    if (b < bytes) std::memcpy(to + b, from + b, bytes - b);
  }
}
#endif

}  // namespace

void CopyRuns(const char* in, int64_t in_stride, char* out, int64_t out_stride, int64_t bytes,
              int64_t count) {
#ifdef AXLE_AVX512
  static const bool avx512 = __builtin_cpu_supports("avx512f");
  if (avx512) {
    CopyRunsAvx512(in, in_stride, out, out_stride, bytes, count);
    return;
  }
#endif
  for (int64_t i = 0; i < count; ++i) {
    const char* from = in + i * in_stride;
    char* to = out + i * out_stride;
    int64_t b = 0;
    for (; b + kRunBlock <= bytes; b += kRunBlock) std::memcpy(to + b, from + b, kRunBlock);
    if (b < bytes) std::memcpy(to + b, from + b, bytes - b);
  }
}

}  // namespace axle::cpu
