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
