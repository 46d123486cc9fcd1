// A dot's rhs packed into oneDNN's BA16a64b / BA16a64b2a (see rhs_packing.h).
#include "axle/cpu/runtime/rhs_packing.h"

#include <algorithm>
#include <cstring>

#include "axle/base/alignment.h"
#include "axle/cpu/host_cache_sizes.h"

#ifdef __x86_64__
// GCC 12's avx512fintrin.h warns about its own _mm512_undefined_ps in
// unpacklo_ps / shuffle_f32x4.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>
#define AXLE_AVX512 __attribute__((target("avx512f,avx512bw")))
#endif

namespace axle::cpu {
namespace {

// One block row of BA16a64b: 64 columns of `in` (row `row` of the array,
// `width` of them inside it) into `out`, zero-padded.
inline void CopyF32BlockRow(const float* in, int64_t width, float* out) {
  if (width == 64) {
    std::memcpy(out, in, 256);  // a constant length: inline vector moves
    return;
  }
  if (width > 0) std::memcpy(out, in, width * sizeof(float));
  std::fill(out + std::max<int64_t>(width, 0), out + 64, 0.0f);
}

// One row pair of BA16a64b2a: 64 columns of (even, odd) pairs, `width` of
// them inside the array; a missing row (nullptr) reads as zeros.
inline void InterleaveBf16BlockRow(const uint16_t* even, const uint16_t* odd, int64_t width,
                                   uint16_t* out) {
  int64_t j = 0;
#ifdef __SSE2__
  if (even != nullptr && odd != nullptr) {
    for (; j + 8 <= width; j += 8) {
      __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(even + j));
      __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(odd + j));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 2 * j), _mm_unpacklo_epi16(a, b));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 2 * j + 8), _mm_unpackhi_epi16(a, b));
    }
  }
#endif
  for (; j < width; ++j) {
    out[2 * j] = even != nullptr ? even[j] : 0;
    out[2 * j + 1] = odd != nullptr ? odd[j] : 0;
  }
  std::fill(out + 2 * std::max<int64_t>(width, 0), out + 128, 0);
}

// The loops (inlined into each caller, the AVX-512 ones included, so that
// `full` inlines too), with `F32Full` / `Bf16Full` copying a full block row (64
// columns inside the array, both rows present for bf16).
template <typename F32Full>
__attribute__((always_inline)) inline void PackF32Rows(const float* src, int64_t k, int64_t n,
                                                       int64_t ld, int64_t padded_k,
                                                       int64_t padded_n, int64_t row_begin,
                                                       int64_t row_end, float* dst, F32Full full) {
  // Rows outermost: the source is read in order; each row writes 256
  // bytes into each column block.
  for (int64_t row = row_begin; row < row_end; ++row) {
    float* out = dst + row * 64;
    const float* in = src + row * ld;
    for (int64_t column = 0; column < padded_n; column += 64, out += padded_k * 64) {
      const int64_t width = row < k ? std::min<int64_t>(n - column, 64) : 0;
      if (width == 64) {
        full(in + column, out);
      } else {
        CopyF32BlockRow(in + column, width, out);
      }
    }
  }
}

template <typename Bf16Full>
__attribute__((always_inline)) inline void PackBf16Pairs(const uint16_t* src, int64_t k, int64_t n,
                                                         int64_t ld, int64_t padded_k,
                                                         int64_t padded_n, int64_t pair_begin,
                                                         int64_t pair_end, uint16_t* dst,
                                                         Bf16Full full) {
  // Row pairs outermost: the source is read in order; each pair writes
  // 256 bytes into each column block.
  const int64_t block_stride = padded_k * 64;
  for (int64_t row = 2 * pair_begin; row < 2 * pair_end; row += 2) {
    const uint16_t* even = row < k ? src + row * ld : nullptr;
    const uint16_t* odd = row + 1 < k ? src + (row + 1) * ld : nullptr;
    uint16_t* out = dst + row * 64;
    for (int64_t column = 0; column < padded_n; column += 64, out += block_stride) {
      const int64_t width = std::min<int64_t>(n - column, 64);
      if (width == 64 && odd != nullptr) {
        full(even + column, odd + column, out);
      } else {
        InterleaveBf16BlockRow(even != nullptr ? even + column : nullptr,
                               odd != nullptr ? odd + column : nullptr, width, out);
      }
    }
  }
}

// The transposed f32 loop: chunks of 16 rows (of the [k, n] array) inside
// both the range and the array, each column block's full 16-column tiles by
// `tile` (16 source runs of 16 dense floats, `ld` apart, into 16 block rows
// at `out`, 64 apart); the columns past a block's full tiles, and rows past
// the array or a range's last partial chunk, element by element.
template <typename Tile>
__attribute__((always_inline)) inline void PackF32TransposedRows(const float* src, int64_t k,
                                                                 int64_t n, int64_t ld,
                                                                 int64_t padded_k, int64_t padded_n,
                                                                 int64_t row_begin, int64_t row_end,
                                                                 float* dst, Tile tile) {
  const int64_t block_stride = padded_k * 64;
  int64_t row = row_begin;
  const int64_t chunks_end = std::min(row_end, k);
  for (; row + 16 <= chunks_end; row += 16) {
    float* out = dst + row * 64;
    for (int64_t column = 0; column < padded_n; column += 64, out += block_stride) {
      const int64_t width = std::min<int64_t>(n - column, 64);
      int64_t c = 0;
      for (; c + 16 <= width; c += 16) tile(src + (column + c) * ld + row, ld, out + c);
      for (; c < 64; ++c) {
        const float* in = src + (column + c) * ld + row;
        for (int64_t r = 0; r < 16; ++r) out[r * 64 + c] = c < width ? in[r] : 0.0f;
      }
    }
  }
  for (; row < row_end; ++row) {
    float* out = dst + row * 64;
    for (int64_t column = 0; column < padded_n; column += 64, out += block_stride) {
      const int64_t width = row < k ? std::min<int64_t>(n - column, 64) : 0;
      for (int64_t c = 0; c < 64; ++c) out[c] = c < width ? src[(column + c) * ld + row] : 0.0f;
    }
  }
}

#ifdef AXLE_AVX512
// Packed f32 rhs of at least 4x the L2 cache are written with non-temporal
// stores: the matmul reads them back no slower from memory than from a
// cache the pack filled, and the pack itself gets cheaper (1024x1024, 4 MiB,
// one thread, 1 MiB of L2: 2.4% -> 1.2% of a matmul's samples). A bf16 one
// of 2 MiB gained nothing, and one that fits in L2 would lose its cached
// copy.
int64_t NonTemporalPackBytes() { return 4 * HostCacheSizes().l2_bytes; }

AXLE_AVX512 void PackBA16a64bAvx512(const float* src, int64_t k, int64_t n, int64_t ld,
                                    int64_t padded_k, int64_t padded_n, int64_t row_begin,
                                    int64_t row_end, float* dst) {
  if (padded_k * padded_n * int64_t{sizeof(float)} >= NonTemporalPackBytes() && IsAligned(dst)) {
    PackF32Rows(src, k, n, ld, padded_k, padded_n, row_begin, row_end, dst,
                [](const float* in, float* out) AXLE_AVX512 {
                  __m512 a = _mm512_loadu_ps(in), b = _mm512_loadu_ps(in + 16);
                  __m512 c = _mm512_loadu_ps(in + 32), d = _mm512_loadu_ps(in + 48);
                  _mm512_stream_ps(out, a);
                  _mm512_stream_ps(out + 16, b);
                  _mm512_stream_ps(out + 32, c);
                  _mm512_stream_ps(out + 48, d);
                });
    // The stores are weakly ordered: done before the caller signals the
    // matmul's threads.
    _mm_sfence();
    return;
  }
  PackF32Rows(src, k, n, ld, padded_k, padded_n, row_begin, row_end, dst,
              [](const float* in, float* out) AXLE_AVX512 {
                __m512 a = _mm512_loadu_ps(in), b = _mm512_loadu_ps(in + 16);
                __m512 c = _mm512_loadu_ps(in + 32), d = _mm512_loadu_ps(in + 48);
                _mm512_storeu_ps(out, a);
                _mm512_storeu_ps(out + 16, b);
                _mm512_storeu_ps(out + 32, c);
                _mm512_storeu_ps(out + 48, d);
              });
}

// Transposes the 16 x 16 tile of rows `in`, `in + ld`, ... (16 floats
// each) into rows `out`, `out + 64`, ...: 32-bit and 64-bit interleaves
// within 128-bit lanes, then a 4 x 4 transpose of the lanes.
AXLE_AVX512 inline void TransposeTile16(const float* in, int64_t ld, float* out) {
  __m512 a[16], b[16];
#pragma GCC unroll 16
  for (size_t i = 0; i < 16; ++i) a[i] = _mm512_loadu_ps(in + static_cast<int64_t>(i) * ld);
    // b[2i], b[2i + 1]: rows 2i and 2i + 1 interleaved (columns 4l, 4l + 1 /
    // 4l + 2, 4l + 3 of lane l).
#pragma GCC unroll 8
  for (size_t i = 0; i < 8; ++i) {
    b[2 * i] = _mm512_unpacklo_ps(a[2 * i], a[2 * i + 1]);
    b[2 * i + 1] = _mm512_unpackhi_ps(a[2 * i], a[2 * i + 1]);
  }
  // a[4g + q], lane l: column 4l + q of rows 4g .. 4g + 3.
#pragma GCC unroll 4
  for (size_t g = 0; g < 4; ++g) {
    a[4 * g] = _mm512_shuffle_ps(b[4 * g], b[4 * g + 2], 0x44);
    a[4 * g + 1] = _mm512_shuffle_ps(b[4 * g], b[4 * g + 2], 0xee);
    a[4 * g + 2] = _mm512_shuffle_ps(b[4 * g + 1], b[4 * g + 3], 0x44);
    a[4 * g + 3] = _mm512_shuffle_ps(b[4 * g + 1], b[4 * g + 3], 0xee);
  }
  // Column 4l + q: lane l of a[q], a[4 + q], a[8 + q], a[12 + q].
#pragma GCC unroll 4
  for (int64_t q = 0; q < 4; ++q) {
    const __m512 low0 = _mm512_shuffle_f32x4(a[q], a[4 + q], 0x44);
    const __m512 high0 = _mm512_shuffle_f32x4(a[q], a[4 + q], 0xee);
    const __m512 low1 = _mm512_shuffle_f32x4(a[8 + q], a[12 + q], 0x44);
    const __m512 high1 = _mm512_shuffle_f32x4(a[8 + q], a[12 + q], 0xee);
    _mm512_storeu_ps(out + q * 64, _mm512_shuffle_f32x4(low0, low1, 0x88));
    _mm512_storeu_ps(out + (q + 4) * 64, _mm512_shuffle_f32x4(low0, low1, 0xdd));
    _mm512_storeu_ps(out + (q + 8) * 64, _mm512_shuffle_f32x4(high0, high1, 0x88));
    _mm512_storeu_ps(out + (q + 12) * 64, _mm512_shuffle_f32x4(high0, high1, 0xdd));
  }
}

AXLE_AVX512 void PackBA16a64bTransposedAvx512(const float* src, int64_t k, int64_t n, int64_t ld,
                                              int64_t padded_k, int64_t padded_n, int64_t row_begin,
                                              int64_t row_end, float* dst) {
  PackF32TransposedRows(src, k, n, ld, padded_k, padded_n, row_begin, row_end, dst,
                        [](const float* in, int64_t stride, float* out)
                            AXLE_AVX512 { TransposeTile16(in, stride, out); });
}

AXLE_AVX512 void PackBA16a64b2aAvx512(const uint16_t* src, int64_t k, int64_t n, int64_t ld,
                                      int64_t padded_k, int64_t padded_n, int64_t pair_begin,
                                      int64_t pair_end, uint16_t* dst) {
  // Word j of `low` / `high`: column j / 2 or 16 + j / 2 of the even
  // (j even) or odd (j odd, +32: the second operand) row.
  alignas(kBufferAlignment) uint16_t low_index[32], high_index[32];
  for (int j = 0; j < 32; ++j) {
    low_index[j] = static_cast<uint16_t>(j / 2 + (j % 2) * 32);
    high_index[j] = static_cast<uint16_t>(16 + j / 2 + (j % 2) * 32);
  }
  const __m512i low = _mm512_load_si512(low_index), high = _mm512_load_si512(high_index);
  PackBf16Pairs(src, k, n, ld, padded_k, padded_n, pair_begin, pair_end, dst,
                [&](const uint16_t* even, const uint16_t* odd, uint16_t* out) AXLE_AVX512 {
                  for (int64_t half = 0; half < 2; ++half) {
                    __m512i a = _mm512_loadu_si512(even + 32 * half);
                    __m512i b = _mm512_loadu_si512(odd + 32 * half);
                    _mm512_storeu_si512(out + 64 * half, _mm512_permutex2var_epi16(a, low, b));
                    _mm512_storeu_si512(out + 64 * half + 32,
                                        _mm512_permutex2var_epi16(a, high, b));
                  }
                });
}

bool HasAvx512() {
  static const bool has = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw");
  return has;
}
// Runs `call` (the AVX-512 variant) and returns where the CPU has AVX-512.
#define AXLE_RETURN_ON_AVX512(call) \
  do {                              \
    if (HasAvx512()) return call;   \
  } while (false)
#else
#define AXLE_RETURN_ON_AVX512(call) \
  do {                              \
  } while (false)
#endif

}  // namespace

void PackBA16a64b(const float* src, int64_t k, int64_t n, int64_t ld, int64_t padded_k,
                  int64_t padded_n, int64_t row_begin, int64_t row_end, float* dst) {
  AXLE_RETURN_ON_AVX512(
      PackBA16a64bAvx512(src, k, n, ld, padded_k, padded_n, row_begin, row_end, dst));
  PackBA16a64bPortable(src, k, n, ld, padded_k, padded_n, row_begin, row_end, dst);
}

void PackBA16a64bTransposed(const float* src, int64_t k, int64_t n, int64_t ld, int64_t padded_k,
                            int64_t padded_n, int64_t row_begin, int64_t row_end, float* dst) {
  AXLE_RETURN_ON_AVX512(
      PackBA16a64bTransposedAvx512(src, k, n, ld, padded_k, padded_n, row_begin, row_end, dst));
  PackBA16a64bTransposedPortable(src, k, n, ld, padded_k, padded_n, row_begin, row_end, dst);
}

void PackBA16a64bTransposedPortable(const float* src, int64_t k, int64_t n, int64_t ld,
                                    int64_t padded_k, int64_t padded_n, int64_t row_begin,
                                    int64_t row_end, float* dst) {
  PackF32TransposedRows(src, k, n, ld, padded_k, padded_n, row_begin, row_end, dst,
                        [](const float* in, int64_t stride, float* out) {
                          for (int64_t r = 0; r < 16; ++r) {
                            for (int64_t c = 0; c < 16; ++c) out[r * 64 + c] = in[c * stride + r];
                          }
                        });
}

void PackBA16a64b2a(const uint16_t* src, int64_t k, int64_t n, int64_t ld, int64_t padded_k,
                    int64_t padded_n, int64_t pair_begin, int64_t pair_end, uint16_t* dst) {
  AXLE_RETURN_ON_AVX512(
      PackBA16a64b2aAvx512(src, k, n, ld, padded_k, padded_n, pair_begin, pair_end, dst));
  PackBA16a64b2aPortable(src, k, n, ld, padded_k, padded_n, pair_begin, pair_end, dst);
}

void PackBA16a64bPortable(const float* src, int64_t k, int64_t n, int64_t ld, int64_t padded_k,
                          int64_t padded_n, int64_t row_begin, int64_t row_end, float* dst) {
  PackF32Rows(src, k, n, ld, padded_k, padded_n, row_begin, row_end, dst,
              [](const float* in, float* out) { CopyF32BlockRow(in, 64, out); });
}

void PackBA16a64b2aPortable(const uint16_t* src, int64_t k, int64_t n, int64_t ld, int64_t padded_k,
                            int64_t padded_n, int64_t pair_begin, int64_t pair_end, uint16_t* dst) {
  PackBf16Pairs(src, k, n, ld, padded_k, padded_n, pair_begin, pair_end, dst,
                [](const uint16_t* even, const uint16_t* odd, uint16_t* out) {
                  InterleaveBf16BlockRow(even, odd, 64, out);
                });
}

}  // namespace axle::cpu
