//===- conv_row_split.h - A convolution's output rows cut into pieces ------===//
//
// Internal to the oneDNN convolution thunk (convolution_thunk_pieces.cc),
// which can run a convolution as several smaller ones, each over a range of
// the output's outermost spatial dimension (its "rows"), one per thread of
// the intra-op pool. A piece reads the input rows its output rows need, and
// pads at its top and bottom only where the whole convolution does. No
// oneDNN here.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_CPU_RUNTIME_CONV_ROW_SPLIT_H_
#define AXLE_CPU_RUNTIME_CONV_ROW_SPLIT_H_

#include <cstdint>
#include <vector>

namespace axle::cpu {

// One piece: output rows [out_begin, out_end) from input rows [in_begin,
// in_end) with `pad_low` and `pad_high` rows of zeros around them.
struct ConvRowPiece {
  int64_t out_begin = 0, out_end = 0;
  int64_t in_begin = 0, in_end = 0;
  int64_t pad_low = 0, pad_high = 0;
};

// The window along the split dimension: input rows, window size, stride,
// window dilation (1: none) and padding (both >= 0).
struct ConvRowWindow {
  int64_t in_rows = 0, size = 1, stride = 1, dilation = 1, pad_low = 0, pad_high = 0;
  // The output rows, (in_rows + pads - (size - 1) * dilation - 1) / stride + 1.
  int64_t OutRows() const;
};

// `window`'s output rows cut into `pieces` ranges as even as can be (the
// first ones one row longer), in order. Empty when that is impossible: fewer
// output rows than pieces, or a piece whose rows all lie in the padding.
std::vector<ConvRowPiece> SplitConvRows(const ConvRowWindow& window, int64_t pieces);

// Copies `count` runs of `bytes` bytes, run i from `in` + i * `in_stride`
// to `out` + i * `out_stride` (strides in bytes): a convolution's pixels,
// computed dense, into its slice of a concatenation (concat_in_place.h).
// Short runs are moved in 64-byte blocks, not a memcpy call each.
void CopyRuns(const char* in, int64_t in_stride, char* out, int64_t out_stride, int64_t bytes,
              int64_t count);

}  // namespace axle::cpu

#endif  // AXLE_CPU_RUNTIME_CONV_ROW_SPLIT_H_
