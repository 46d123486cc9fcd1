// f32 dots with few rows on AVX-512 register tiles (see small_dot.h).
#include "axle/cpu/runtime/small_dot.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>
#include <vector>

#include "axle/base/alignment.h"
#include "axle/cpu/runtime/avx512_target.h"
#include "axle/cpu/runtime/vector_activations.h"

namespace axle::cpu {
namespace {

// A packed rhs under at most this many rows is read in wide panels.
constexpr int64_t kWidePanelMaxRows = 3;
constexpr int64_t kWidePanelColumns = 128;

}  // namespace

int64_t SmallDotPanelColumns(const SmallDotShape& shape) {
  return shape.m <= kWidePanelMaxRows ? kWidePanelColumns : kSmallDotColumns;
}

// With 1-3 rows a rhs with dense columns is read in wide units too: in
// place, kWidePanelColumns of each rhs row per step (whole cache lines,
// eight accumulators per row) instead of a 32-column tile's two.
static bool ReadsWide(const SmallDotShape& shape) {
  return shape.m <= kWidePanelMaxRows && (shape.rhs_packed || !shape.rhs_transposed);
}

int64_t SmallDotUnitColumns(const SmallDotShape& shape) {
  return ReadsWide(shape) ? kWidePanelColumns
                          : (shape.rhs_packed ? SmallDotPanelColumns(shape) : kSmallDotColumns);
}

int64_t SmallDotUnits(const SmallDotShape& shape) {
  const int64_t columns = SmallDotUnitColumns(shape);
  return shape.batch * ((shape.n + columns - 1) / columns);
}

#ifdef __x86_64__

bool SmallDotAvailable() {
  static const bool available = __builtin_cpu_supports("avx512f");
  return available;
}

namespace {

// Rows per register tile: 8 rows x 2 vectors of 16 columns = 16 sums.
constexpr int kTileRows = 8;
// A dot of at least kTallRows rows (a pointwise convolution over its
// pixels, convolution_thunk_pointwise.cc) uses tiles of 12 rows: 24 sums,
// three FMAs per load where 8 rows give two (one thread, standalone:
// [3025, 16] x [16, 64] 87 -> 84 us, [784, 192] x [192, 64] 184 -> 176 us).
constexpr int kTallRows = 72;
constexpr int kTallTileRows = 12;
// Rhs rows ahead that a tile prefetches.
constexpr int64_t kPrefetchRows = 8;

// The activations StoreSums does not do, on `count` stored results (still
// in L1), 16 at a time (vector_activations.h): GELU (with std::tanh value by
// value a [16,512]x[512,1024] dot + bias + GELU took 0.44 ms, then 0.15, 1
// thread), logistic, tanh and exp (an LSTM step's gates).
void ActivateStored(const SmallDotShape& shape, float* out, int64_t count) {
  if (shape.activation == Activation::kNone || shape.activation == Activation::kRelu ||
      shape.activation == Activation::kClamp) {
    return;
  }
  ActivateF32InPlace(shape.activation, 0.f, 0.f, out, count);
}

// Stores one vector of sums: 16 columns from `first` (those under `mask`)
// to `o`, with the bias row's terms added and the vector activations.
AXLE_AVX512 inline void StoreSums(const SmallDotShape& shape, __m512 v, const float* bias_row,
                                  int64_t first, __mmask16 mask, float* o) {
  if (mask == 0) return;
  if (bias_row != nullptr) {
    __m512 term;
    if (shape.bias_column_stride == 1) {
      term = _mm512_maskz_loadu_ps(mask, bias_row + first);
    } else if (shape.bias_column_stride == 0) {
      term = _mm512_set1_ps(bias_row[0]);
    } else {
      alignas(kBufferAlignment) float lanes[16] = {};
      for (int l = 0; l < 16; ++l) {
        if ((mask >> l) & 1) lanes[l] = bias_row[(first + l) * shape.bias_column_stride];
      }
      term = _mm512_load_ps(lanes);
    }
    v = _mm512_add_ps(v, term);
  }
  // max_ps / min_ps return their second operand when either is NaN: a NaN
  // result stays NaN, as HLO's max and min say.
  if (shape.activation == Activation::kRelu) {
    v = _mm512_max_ps(_mm512_setzero_ps(), v);
  } else if (shape.activation == Activation::kClamp) {
    v = _mm512_min_ps(_mm512_set1_ps(shape.high), _mm512_max_ps(_mm512_set1_ps(shape.low), v));
  }
  _mm512_mask_storeu_ps(o, mask, v);
}

// One tile: rows [row, row + R) of a batch, columns [column, column +
// width) (width <= 32; kFull: width == 32, no masks; kHalf: width <= 16,
// one vector of sums per row), over the whole
// contraction (the rhs read in place, `rhs` at the block's first column),
// then the epilogue. The lhs rows are read in place (`lhs` at the batch's
// row 0): a step broadcasts one element of each of the R rows.
template <int R, bool kFull, bool kHalf = false>
AXLE_AVX512 void Tile(const SmallDotShape& shape, const float* lhs, const float* rhs,
                      const float* bias, float* out, int64_t row, int64_t column, int64_t width) {
  const __mmask16 mask0 =
      width >= 16 ? __mmask16(0xffff) : static_cast<__mmask16>((1u << width) - 1);
  const __mmask16 mask1 =
      width >= 32 ? __mmask16(0xffff)
                  : (width <= 16 ? __mmask16(0) : static_cast<__mmask16>((1u << (width - 16)) - 1));
  __m512 sum[R][2];
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r) {
    sum[r][0] = _mm512_setzero_ps();
    sum[r][1] = _mm512_setzero_ps();
  }
  const float* a[R];
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r) a[r] = lhs + (row + r) * shape.lhs_row_stride;
  const int64_t a_step = shape.lhs_k_stride;
  const float* b = rhs;
  const int64_t b_step = shape.rhs_k_stride;
  const int64_t k = shape.k;  // a local: the stores may alias `shape`
  const int64_t prefetch = kPrefetchRows * b_step;
  for (int64_t p = 0; p < k; ++p, b += b_step) {
    _mm_prefetch(reinterpret_cast<const char*>(b + prefetch), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(b + prefetch + 16), _MM_HINT_T0);
    __m512 b0, b1 = _mm512_setzero_ps();
    if constexpr (kFull) {
      b0 = _mm512_loadu_ps(b);
      b1 = _mm512_loadu_ps(b + 16);
    } else {
      b0 = _mm512_maskz_loadu_ps(mask0, b);
      if constexpr (!kHalf) b1 = _mm512_maskz_loadu_ps(mask1, b + 16);
    }
    const int64_t at = p * a_step;
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r) {
      const __m512 x = _mm512_set1_ps(a[r][at]);
      sum[r][0] = _mm512_fmadd_ps(x, b0, sum[r][0]);
      if constexpr (!kHalf) sum[r][1] = _mm512_fmadd_ps(x, b1, sum[r][1]);
    }
  }
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r) {
    float* o = out + (row + r) * OutRowStride(shape) + column;
    const float* bias_row = bias != nullptr ? bias + (row + r) * shape.bias_row_stride : nullptr;
    StoreSums(shape, sum[r][0], bias_row, column, mask0, o);
    if constexpr (!kHalf) StoreSums(shape, sum[r][1], bias_row, column + 16, mask1, o + 16);
    ActivateStored(shape, o, width);
  }
}

// (A packed rhs has whole panels: no masked loads. A block of at most 16
// columns computes one vector per row.)
template <int R>
AXLE_AVX512 inline void AnyTile(const SmallDotShape& shape, const float* lhs, const float* rhs,
                                const float* bias, float* out, int64_t row, int64_t column,
                                int64_t width) {
  if (width <= 16) {
    Tile<R, false, true>(shape, lhs, rhs, bias, out, row, column, width);
  } else if (width == kSmallDotColumns || shape.rhs_packed) {
    Tile<R, true>(shape, lhs, rhs, bias, out, row, column, width);
  } else {
    Tile<R, false>(shape, lhs, rhs, bias, out, row, column, width);
  }
}

// `rows` (1 to R) rows of a batch from `row` on, as one tile.
template <int R>
AXLE_AVX512 inline void TileOf(int64_t rows, const SmallDotShape& shape, const float* lhs,
                               const float* rhs, const float* bias, float* out, int64_t row,
                               int64_t column, int64_t width) {
  if (rows == R || R == 1) return AnyTile<R>(shape, lhs, rhs, bias, out, row, column, width);
  if constexpr (R > 1) TileOf<R - 1>(rows, shape, lhs, rhs, bias, out, row, column, width);
}

// Every row of a batch (its lhs read in place), in as few tiles of at
// most R rows as hold them, of near-equal size: 49 rows in 7 tiles of 7,
// not 6 of 8 and one of 1 (a one-row tile keeps two sums and waits on
// each FMA's latency: a 7x7 pointwise convolution of 832 -> 256 features
// took 0.234 ms that way against oneDNN's 0.208, one thread).
template <int R>
AXLE_AVX512 void RowsInTiles(const SmallDotShape& shape, const float* lhs, const float* rhs,
                             const float* bias, float* out, int64_t column, int64_t width) {
  const int64_t tiles = (shape.m + R - 1) / R;
  int64_t row = 0;
  for (int64_t t = 0; t < tiles; ++t) {
    const int64_t rows = shape.m / tiles + (t < shape.m % tiles ? 1 : 0);
    TileOf<R>(rows, shape, lhs, rhs, bias, out, row, column, width);
    row += rows;
  }
}

// Tiles of kTileRows, or of kTallTileRows for a tall dot.
AXLE_AVX512 void Rows(const SmallDotShape& shape, const float* lhs, const float* rhs,
                      const float* bias, float* out, int64_t column, int64_t width) {
  if (shape.m >= kTallRows) {
    RowsInTiles<kTallTileRows>(shape, lhs, rhs, bias, out, column, width);
  } else {
    RowsInTiles<kTileRows>(shape, lhs, rhs, bias, out, column, width);
  }
}

// R <= 3 rows, columns [column, column + width) (width <= 128) of a
// packed rhs's wide panel ([k][128], one sequential stream, `step` 128) or
// of a rhs read in place (`panel` at row 0's first column, rows `step`
// apart, the next rows prefetched; kMasked when width < 128): 8 vector
// loads and R broadcasts per 8R FMAs, no horizontal sums.
template <int R, bool kMasked>
AXLE_AVX512 void WidePanel(const SmallDotShape& shape, const float* lhs, const float* panel,
                           int64_t step, const float* bias, float* out, int64_t column,
                           int64_t width) {
  constexpr int kVectors = kWidePanelColumns / 16;
  __mmask16 masks[kVectors];
#pragma GCC unroll 8
  for (int v = 0; v < kVectors; ++v) {
    const int64_t left = width - int64_t{16} * v;
    masks[v] = left >= 16  ? __mmask16(0xffff)
               : left <= 0 ? __mmask16(0)
                           : static_cast<__mmask16>((1u << left) - 1);
  }
  const bool in_place = step != kWidePanelColumns;
  const int64_t prefetch = kPrefetchRows * step;
  __m512 sum[R][kVectors];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 8
    for (int v = 0; v < kVectors; ++v) sum[r][v] = _mm512_setzero_ps();
  }
  const float* a[R];
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) a[r] = lhs + r * shape.lhs_row_stride;
  const int64_t a_step = shape.lhs_k_stride;
  const float* w = panel;
  for (int64_t p = 0; p < shape.k; ++p, w += step) {
    if (in_place) {
#pragma GCC unroll 8
      for (int v = 0; v < kVectors; ++v) {
        if (masks[v] != 0) {
          _mm_prefetch(reinterpret_cast<const char*>(w + prefetch + int64_t{16} * v), _MM_HINT_T0);
        }
      }
    }
    __m512 y[kVectors];
#pragma GCC unroll 8
    for (int v = 0; v < kVectors; ++v) {
      if constexpr (kMasked) {
        y[v] = _mm512_maskz_loadu_ps(masks[v], w + int64_t{16} * v);
      } else {
        y[v] = _mm512_loadu_ps(w + int64_t{16} * v);
      }
    }
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
      const __m512 x = _mm512_set1_ps(a[r][p * a_step]);
#pragma GCC unroll 8
      for (int v = 0; v < kVectors; ++v) sum[r][v] = _mm512_fmadd_ps(x, y[v], sum[r][v]);
    }
  }
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) {
    const float* bias_row = bias != nullptr ? bias + r * shape.bias_row_stride : nullptr;
    float* o = out + r * OutRowStride(shape) + column;
#pragma GCC unroll 8
    for (int v = 0; v < kVectors; ++v) {
      StoreSums(shape, sum[r][v], bias_row, column + int64_t{16} * v, masks[v],
                o + int64_t{16} * v);
    }
    ActivateStored(shape, o, width);
  }
}

// One level of SumLanes16 (w = 8, 4, 2, 1): in each group of 2w lanes,
// the first w get x's sums of the group's two halves, the last w y's.
template <int W>
AXLE_AVX512 inline __m512 HalveAndPair(__m512 x, __m512 y) {
  // Lane l takes x[l] (or y[l] in a group's upper half) plus x[l + W] (or
  // y[l - W]).
  constexpr __mmask16 kUpper = W == 8 ? 0xff00 : W == 4 ? 0xf0f0 : W == 2 ? 0xcccc : 0xaaaa;
  alignas(kBufferAlignment) static constexpr int32_t kIndex[16] = {
      (0 % (2 * W)) >= W ? 16 + 0 - W : 0 + W,    (1 % (2 * W)) >= W ? 16 + 1 - W : 1 + W,
      (2 % (2 * W)) >= W ? 16 + 2 - W : 2 + W,    (3 % (2 * W)) >= W ? 16 + 3 - W : 3 + W,
      (4 % (2 * W)) >= W ? 16 + 4 - W : 4 + W,    (5 % (2 * W)) >= W ? 16 + 5 - W : 5 + W,
      (6 % (2 * W)) >= W ? 16 + 6 - W : 6 + W,    (7 % (2 * W)) >= W ? 16 + 7 - W : 7 + W,
      (8 % (2 * W)) >= W ? 16 + 8 - W : 8 + W,    (9 % (2 * W)) >= W ? 16 + 9 - W : 9 + W,
      (10 % (2 * W)) >= W ? 16 + 10 - W : 10 + W, (11 % (2 * W)) >= W ? 16 + 11 - W : 11 + W,
      (12 % (2 * W)) >= W ? 16 + 12 - W : 12 + W, (13 % (2 * W)) >= W ? 16 + 13 - W : 13 + W,
      (14 % (2 * W)) >= W ? 16 + 14 - W : 14 + W, (15 % (2 * W)) >= W ? 16 + 15 - W : 15 + W};
  const __m512 kept = _mm512_mask_blend_ps(kUpper, x, y);
  const __m512 moved =
      _mm512_permutex2var_ps(x, _mm512_load_si512(reinterpret_cast<const void*>(kIndex)), y);
  return _mm512_add_ps(kept, moved);
}

// The horizontal sums of 16 vectors as one vector (lane i: the sum of
// v[i]'s lanes): four levels of HalveAndPair (15 steps) leave sum i in lane
// bitreverse4(i); one permute puts it in lane i. Instead of 16 separate
// reductions of 8 steps each.
AXLE_AVX512 inline __m512 SumLanes16(const __m512 (&v)[16]) {
  __m512 b[8], c[4], d[2];
#pragma GCC unroll 8
  for (size_t i = 0; i < 8; ++i) b[i] = HalveAndPair<8>(v[2 * i], v[2 * i + 1]);
#pragma GCC unroll 4
  for (size_t i = 0; i < 4; ++i) c[i] = HalveAndPair<4>(b[2 * i], b[2 * i + 1]);
#pragma GCC unroll 2
  for (size_t i = 0; i < 2; ++i) d[i] = HalveAndPair<2>(c[2 * i], c[2 * i + 1]);
  const __m512 e = HalveAndPair<1>(d[0], d[1]);
  const __m512i reverse = _mm512_set_epi32(15, 7, 11, 3, 13, 5, 9, 1, 14, 6, 10, 2, 12, 4, 8, 0);
  return _mm512_permutexvar_ps(reverse, e);
}

// Transposed rhs: rows [row, row + R) x columns [column, column + C) as
// dot products of dense rows, 16 lanes at a time, the last step masked.
template <int R, int C>
AXLE_AVX512 void DotProducts(const SmallDotShape& shape, const float* lhs, const float* rhs,
                             const float* bias, float* out, int64_t row, int64_t column) {
  __m512 sum[R][C];
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 16
    for (int c = 0; c < C; ++c) sum[r][c] = _mm512_setzero_ps();
  }
  const float* a[R];
  const float* w[C];
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r) a[r] = lhs + (row + r) * shape.lhs_row_stride;
#pragma GCC unroll 16
  for (int c = 0; c < C; ++c) w[c] = rhs + (column + c) * shape.rhs_k_stride;
  const int64_t k = shape.k;
  for (int64_t p = 0; p < k; p += 16) {
    const __mmask16 mask =
        k - p >= 16 ? __mmask16(0xffff) : static_cast<__mmask16>((1u << (k - p)) - 1);
    __m512 x[R];
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r) x[r] = _mm512_maskz_loadu_ps(mask, a[r] + p);
#pragma GCC unroll 16
    for (int c = 0; c < C; ++c) {
      const __m512 y = _mm512_maskz_loadu_ps(mask, w[c] + p);
#pragma GCC unroll 16
      for (int r = 0; r < R; ++r) sum[r][c] = _mm512_fmadd_ps(x[r], y, sum[r][c]);
    }
  }
  __m512 totals[R];
  if constexpr (R * C == 16) {
    // The 16 sums in one vector, row r's in lanes [8r, 8r + 8).
    __m512 v[16];
#pragma GCC unroll 16
    for (int i = 0; i < 16; ++i) v[i] = sum[i / C][i % C];
    const __m512 all = SumLanes16(v);
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r) {
      totals[r] = _mm512_maskz_compress_ps(static_cast<__mmask16>(0xffu << (8 * r)), all);
    }
  } else {
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r) {
      alignas(kBufferAlignment) float lanes[16] = {};
#pragma GCC unroll 16
      for (int c = 0; c < C; ++c) lanes[c] = _mm512_reduce_add_ps(sum[r][c]);
      totals[r] = _mm512_load_ps(lanes);
    }
  }
  for (int r = 0; r < R; ++r) {
    const float* bias_row = bias != nullptr ? bias + (row + r) * shape.bias_row_stride : nullptr;
    float* o = out + (row + r) * OutRowStride(shape) + column;
    StoreSums(shape, totals[r], bias_row, column, static_cast<__mmask16>((1u << C) - 1), o);
    ActivateStored(shape, o, C);
  }
}

// One unit of a transposed rhs: every row, columns [column, column +
// width), in tiles of 2 x 8 (single rows and columns at the edges).
AXLE_AVX512 void TransposedUnit(const SmallDotShape& shape, const float* lhs, const float* rhs,
                                const float* bias, float* out, int64_t column, int64_t width) {
  int64_t row = 0;
  for (; row + 2 <= shape.m; row += 2) {
    int64_t c = 0;
    for (; c + 8 <= width; c += 8) DotProducts<2, 8>(shape, lhs, rhs, bias, out, row, column + c);
    for (; c < width; ++c) DotProducts<2, 1>(shape, lhs, rhs, bias, out, row, column + c);
  }
  for (; row < shape.m; ++row) {
    int64_t c = 0;
    for (; c + 8 <= width; c += 8) DotProducts<1, 8>(shape, lhs, rhs, bias, out, row, column + c);
    for (; c < width; ++c) DotProducts<1, 1>(shape, lhs, rhs, bias, out, row, column + c);
  }
}

}  // namespace

int64_t SmallDotPackedRhsSize(const SmallDotShape& shape) {
  const int64_t columns = SmallDotPanelColumns(shape);
  return shape.batch * ((shape.n + columns - 1) / columns) * shape.k * columns;
}

void PackSmallDotRhs(const SmallDotShape& shape, const float* rhs, float* packed) {
  const int64_t columns = SmallDotPanelColumns(shape);
  const int64_t panels = (shape.n + columns - 1) / columns;
  for (int64_t b = 0; b < shape.batch; ++b) {
    const float* batch_rhs =
        rhs + SmallDotBatchOffset(shape, b, shape.rhs_batch_stride, shape.rhs_outer_stride);
    for (int64_t q = 0; q < panels; ++q) {
      float* panel = packed + (b * panels + q) * shape.k * columns;
      const int64_t first = q * columns;
      const int64_t width = std::min(columns, shape.n - first);
      for (int64_t p = 0; p < shape.k; ++p) {
        float* row = panel + p * columns;
        if (shape.rhs_transposed) {
          for (int64_t c = 0; c < width; ++c)
            row[c] = batch_rhs[(first + c) * shape.rhs_k_stride + p];
        } else {
          // Run-time packing (loop_run.h): dense row pieces, copied whole.
          std::memcpy(row, batch_rhs + p * shape.rhs_k_stride + first, width * sizeof(float));
        }
        std::fill(row + width, row + columns, 0.0f);
      }
    }
  }
}

AXLE_AVX512 void SmallDotF32(const SmallDotShape& shape, const float* lhs, const float* rhs,
                             const float* bias, float* out, int64_t begin, int64_t end) {
  if (ReadsWide(shape)) {
    const int64_t panels = (shape.n + kWidePanelColumns - 1) / kWidePanelColumns;
    for (int64_t unit = begin; unit < end; ++unit) {
      const int64_t b = unit / panels;
      const int64_t column = (unit % panels) * kWidePanelColumns;
      const int64_t width = std::min(kWidePanelColumns, shape.n - column);
      const float* batch_lhs =
          lhs + SmallDotBatchOffset(shape, b, shape.lhs_batch_stride, shape.lhs_outer_stride);
      const float* panel =
          shape.rhs_packed
              ? rhs + unit * shape.k * kWidePanelColumns
              : rhs +
                    SmallDotBatchOffset(shape, b, shape.rhs_batch_stride, shape.rhs_outer_stride) +
                    column;
      // A packed panel's rows are kWidePanelColumns apart; a rhs read in
      // place at exactly that stride reads the same way.
      const int64_t step = shape.rhs_packed ? kWidePanelColumns : shape.rhs_k_stride;
      const float* batch_bias = bias != nullptr
                                    ? bias + SmallDotBatchOffset(shape, b, shape.bias_batch_stride,
                                                                 shape.bias_outer_stride)
                                    : nullptr;
      float* batch_out = out + b * shape.m * OutRowStride(shape);
      const bool masked = width < kWidePanelColumns;
      auto run = [&](auto rows) {
        constexpr int kRows = decltype(rows)::value;
        if (masked) {
          WidePanel<kRows, true>(shape, batch_lhs, panel, step, batch_bias, batch_out, column,
                                 width);
        } else {
          WidePanel<kRows, false>(shape, batch_lhs, panel, step, batch_bias, batch_out, column,
                                  width);
        }
      };
      switch (shape.m) {
        case 1:
          run(std::integral_constant<int, 1>());
          break;
        case 2:
          run(std::integral_constant<int, 2>());
          break;
        default:
          run(std::integral_constant<int, 3>());
          break;
      }
    }
    return;
  }
  const int64_t blocks = (shape.n + kSmallDotColumns - 1) / kSmallDotColumns;
  // The rows tiles read a packed rhs panel by panel, 32 floats per step.
  SmallDotShape tiles = shape;
  if (shape.rhs_packed) tiles.rhs_k_stride = kSmallDotColumns;
  for (int64_t unit = begin; unit < end; ++unit) {
    const int64_t b = unit / blocks;
    const int64_t column = (unit % blocks) * kSmallDotColumns;
    const int64_t width = std::min(kSmallDotColumns, shape.n - column);
    const float* batch_lhs =
        lhs + SmallDotBatchOffset(shape, b, shape.lhs_batch_stride, shape.lhs_outer_stride);
    const float* batch_bias =
        bias != nullptr
            ? bias + SmallDotBatchOffset(shape, b, shape.bias_batch_stride, shape.bias_outer_stride)
            : nullptr;
    float* batch_out = out + b * shape.m * OutRowStride(shape);
    if (shape.rhs_transposed && !shape.rhs_packed) {
      TransposedUnit(
          shape, batch_lhs,
          rhs + SmallDotBatchOffset(shape, b, shape.rhs_batch_stride, shape.rhs_outer_stride),
          batch_bias, batch_out, column, width);
      continue;
    }
    // Each rhs row is read in place by every tile of rows (packing panels
    // of it measured slower at these row counts), prefetched ahead; a
    // packed rhs is read panel by panel.
    const float* block_rhs =
        shape.rhs_packed
            ? rhs + unit * shape.k * kSmallDotColumns
            : rhs + SmallDotBatchOffset(shape, b, shape.rhs_batch_stride, shape.rhs_outer_stride) +
                  column;
    Rows(tiles, batch_lhs, block_rhs, batch_bias, batch_out, column, width);
  }
}

#else  // !__x86_64__

bool SmallDotAvailable() { return false; }

int64_t SmallDotPackedRhsSize(const SmallDotShape&) { return 0; }

void PackSmallDotRhs(const SmallDotShape&, const float*, float*) {}

void SmallDotF32(const SmallDotShape&, const float*, const float*, const float*, float*, int64_t,
                 int64_t) {}

#endif

}  // namespace axle::cpu
