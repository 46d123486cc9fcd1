//===- small_dot.h - f32 dots with few rows, on AVX-512 register tiles ------===//
//
// A dot whose lhs has few rows (an RNN step's [16, 192] x [192, 512], a
// classifier head's [10, 256] x [256, 512]) reads the whole rhs once per
// block of rows and does little arithmetic per rhs element. oneDNN's brgemm
// matmul copies a plain rhs into its blocked layout on every call and runs
// such a call on one thread: [16, 192] x [192, 512] took 47-56 us here, at
// 2 threads no faster than at 1. This kernel reads the rhs in place (its
// columns dense, rows at any stride) and keeps an 8-row x 32-column tile of
// sums in 16 zmm registers for the whole contraction: per step two rhs
// vector loads and eight lhs broadcasts (from the lhs rows in place, at any
// strides) feed 16 FMAs; a block of at most 16 columns (a narrow output, a
// last block) keeps one vector per row. The work is split by blocks of 32
// columns across the intra-op pool. A small dot of more rows runs here too
// (small_dot_thunk.cc): at its size oneDNN's fixed costs match the
// arithmetic.
//
// The epilogue (a bias over any of the output's batch / row / column dims,
// then an activation) is applied to each tile while it is in registers or
// L1. Sums use FMA in contraction order, as oneDNN's f32 kernels do (not
// bit-identical to the interpreter, like the oneDNN path).
//
// Only on x86-64 CPUs with AVX-512F (SmallDotAvailable()); the caller
// falls back to oneDNN elsewhere.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_CPU_RUNTIME_SMALL_DOT_H_
#define AXLE_CPU_RUNTIME_SMALL_DOT_H_

#include <cstdint>

#include "axle/cpu/runtime/epilogue_activation.h"

namespace axle::cpu {

// out[b, i, j] = act(sum_p lhs[b, i, p] * rhs[b, p, j] + bias[b, i, j]),
// element strides for each operand (0 where it is broadcast; rhs columns
// and the [batch, m, n] output have stride 1; output rows lie
// OutRowStride apart).
//
// `rhs_transposed`: the rhs is [batch, n, k] instead, its rows (the
// contraction) dense and `rhs_k_stride` elements apart from column to
// column, as are lhs rows (lhs_k_stride 1): an ONNX / PyTorch Linear's
// weight. Each output is then a dot product of two dense rows, summed 16
// lanes at a time in tiles of 2 rows x 8 columns.
//
// With 1-3 rows (a matrix-vector product: a classifier head on one
// input, a decoder step) a rhs with dense columns is read in units of 128
// columns, each rhs row's 512 bytes in one step into eight accumulators per
// row (the weights stream through once, at memory bandwidth), instead of
// the 32-column tiles' two.
//
// `rhs_packed`: the rhs was copied by PackSmallDotRhs into panels of
// SmallDotPanelColumns columns ([k][columns] each), read as one sequential
// stream per panel (done once at compile time for a constant weight, as an
// RNN step's recurrent matrix: reading it in place is bound by the many
// strided streams from L2). The rhs strides then do not matter. With 1-3
// rows the panels are 128 columns wide and a unit of work is one panel (8
// vector loads and up to 3 broadcasts per 8-24 FMAs, no horizontal sums);
// otherwise 32, read by the row tiles.
struct SmallDotShape {
  int64_t batch = 1, m = 1, n = 1, k = 1;
  int64_t lhs_batch_stride = 0, lhs_row_stride = 0, lhs_k_stride = 0;
  int64_t rhs_batch_stride = 0, rhs_k_stride = 0;
  bool rhs_transposed = false;
  bool rhs_packed = false;
  int64_t bias_batch_stride = 0, bias_row_stride = 0, bias_column_stride = 0;
  Activation activation = Activation::kNone;
  float low = 0, high = 0;  // clamp bounds
  // Elements from one output row to the next (a slice of a wider array, as
  // a convolution's part of a concatenation); 0: n, a dense output. Batches
  // lie m rows apart.
  int64_t out_row_stride = 0;
  // A batch of two runs of dims with unrelated strides (attention's K cache
  // [b, s, h, d] batched over b and h, with s between them): batch i of an
  // operand lies at (i / inner_batch) * its outer stride + (i % inner_batch)
  // * its batch stride. 0: one run, i * its batch stride.
  int64_t inner_batch = 0;
  int64_t lhs_outer_stride = 0, rhs_outer_stride = 0, bias_outer_stride = 0;
};

// Elements from an operand's start to batch `i`'s, for that operand's batch
// and outer strides (SmallDotShape::inner_batch).
inline int64_t SmallDotBatchOffset(const SmallDotShape& shape, int64_t i, int64_t batch_stride,
                                   int64_t outer_stride) {
  if (shape.inner_batch == 0) return i * batch_stride;
  return (i / shape.inner_batch) * outer_stride + (i % shape.inner_batch) * batch_stride;
}

inline int64_t OutRowStride(const SmallDotShape& shape) {
  return shape.out_row_stride != 0 ? shape.out_row_stride : shape.n;
}

// Columns per unit of work.
inline constexpr int64_t kSmallDotColumns = 32;

// Whether this CPU runs the kernel (AVX-512F on x86-64).
bool SmallDotAvailable();

// Columns of a packed panel of `shape` (128 for 1-3 rows, else 32).
int64_t SmallDotPanelColumns(const SmallDotShape& shape);

// Columns per unit of work: SmallDotPanelColumns for a packed rhs, 128
// for 1-3 rows of a rhs with dense columns, else kSmallDotColumns.
int64_t SmallDotUnitColumns(const SmallDotShape& shape);

// Units of work of `shape`: batch x ceil(n / SmallDotUnitColumns).
int64_t SmallDotUnits(const SmallDotShape& shape);

// Floats in the packed rhs of `shape`: batch x panels x k x panel columns.
int64_t SmallDotPackedRhsSize(const SmallDotShape& shape);

// Copies `rhs` (laid out as `shape` says, transposed or not; batches at
// rhs_batch_stride) into `packed` (SmallDotPackedRhsSize floats): batch b's
// panel q holds columns [Cq, Cq + C) as [k][C] (C = SmallDotPanelColumns),
// columns past n zero.
void PackSmallDotRhs(const SmallDotShape& shape, const float* rhs, float* packed);

// Computes units [begin, end) of the dot; `bias` may be null.
void SmallDotF32(const SmallDotShape& shape, const float* lhs, const float* rhs, const float* bias,
                 float* out, int64_t begin, int64_t end);

}  // namespace axle::cpu

#endif  // AXLE_CPU_RUNTIME_SMALL_DOT_H_
