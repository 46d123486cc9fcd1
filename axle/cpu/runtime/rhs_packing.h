//===- rhs_packing.h - A dot's rhs packed into oneDNN's blocked layouts -----===//
//
// The DnnlDotThunk packs a rhs that is not a constant on each run into the
// weights layout its oneDNN matmul primitive prefers (dot_thunk.cc,
// kPackRhsMinRows): BA16a64b for f32 (from a plain or a transposed rhs),
// BA16a64b2a for bf16. These loops do
// it instead of oneDNN's reorder primitive, callable on row ranges so the
// intra-op pool can share the work. Full 64-column blocks are copied with
// AVX-512 where the CPU has it (the matmul's packed layouts are chosen on
// AVX-512 machines; a packed f32 rhs of 4x the L2 cache or more with
// non-temporal stores, host_cache_sizes.h), else with SSE2. The copy is memory-bound; what matters
// is that each 256-byte block row is a few vector moves (a variable-length memcpy compiled to `rep
// movsq` took 2.5x as long: 4.4% of a 1-thread f32 matmul 1024^3's samples; AVX-512 2.4%,
// non-temporal 1.2%).
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_CPU_RUNTIME_RHS_PACKING_H_
#define AXLE_CPU_RUNTIME_RHS_PACKING_H_

#include <cstdint>

namespace axle::cpu {

// Packs an f32 [k, n] array (rows `ld` elements apart, columns dense) into
// oneDNN's BA16a64b layout of `padded_k` x `padded_n` (multiples of 16 and
// 64): blocks of 16 rows x 64 columns, the column blocks outermost, each
// block row-major, so row r of column block b starts at (b * padded_k + r)
// * 64. Rows and columns past the array are zero. This call packs rows
// [row_begin, row_end).
void PackBA16a64b(const float* src, int64_t k, int64_t n, int64_t ld, int64_t padded_k,
                  int64_t padded_n, int64_t row_begin, int64_t row_end, float* dst);

// Packs a bf16 [k, n] array (rows `ld` elements apart, columns dense) into
// oneDNN's BA16a64b2a layout of `padded_k` x `padded_n` (multiples of 16
// and 64, the desc's padded dims): blocks of 16 rows x 64 columns, the
// column blocks outermost; in a block, 8 row pairs, each 64 columns of
// (even row, odd row) pairs. Rows and columns past the array are zero. This
// call packs the row pairs [pair_begin, pair_end).
void PackBA16a64b2a(const uint16_t* src, int64_t k, int64_t n, int64_t ld, int64_t padded_k,
                    int64_t padded_n, int64_t pair_begin, int64_t pair_end, uint16_t* dst);

// Packs a transposed f32 rhs into the same BA16a64b layout: element (r, c)
// of the [k, n] array is src[c * ld + r] (the contraction dense, as in
// dX = dY W^T, where the rhs W contracts over its minor dim). Full 16 x 16
// tiles are transposed in registers with AVX-512 where the CPU has it.
void PackBA16a64bTransposed(const float* src, int64_t k, int64_t n, int64_t ld, int64_t padded_k,
                            int64_t padded_n, int64_t row_begin, int64_t row_end, float* dst);

// The same without AVX-512 (what the three above run on other CPUs), for
// tests.
void PackBA16a64bTransposedPortable(const float* src, int64_t k, int64_t n, int64_t ld,
                                    int64_t padded_k, int64_t padded_n, int64_t row_begin,
                                    int64_t row_end, float* dst);
void PackBA16a64bPortable(const float* src, int64_t k, int64_t n, int64_t ld, int64_t padded_k,
                          int64_t padded_n, int64_t row_begin, int64_t row_end, float* dst);
void PackBA16a64b2aPortable(const uint16_t* src, int64_t k, int64_t n, int64_t ld, int64_t padded_k,
                            int64_t padded_n, int64_t pair_begin, int64_t pair_end, uint16_t* dst);

}  // namespace axle::cpu

#endif  // AXLE_CPU_RUNTIME_RHS_PACKING_H_
