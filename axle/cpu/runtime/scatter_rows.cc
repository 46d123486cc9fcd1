//===- scatter_rows.cc - Scatter's inline row combine ----------------------===//
#include "axle/cpu/runtime/scatter_rows.h"

#include <algorithm>
#include <cstring>

#include "axle/cpu/runtime/avx512_target.h"
#include "axle/cpu/runtime/integer_element.h"

namespace axle::cpu {
namespace {

// HLO's maximum and minimum (ScatterRowOp): x's NaN, then y's, else y only
// when it is strictly larger (smaller). `x != x` is false for integers.
template <typename T>
inline T MaxOf(T x, T y) {
  T result = x < y ? y : x;
  result = y != y ? y : result;  // NOLINT(misc-redundant-expression): NaN test
  return x != x ? x : result;    // NOLINT(misc-redundant-expression): NaN test
}
template <typename T>
inline T MinOf(T x, T y) {
  T result = y < x ? y : x;
  result = y != y ? y : result;  // NOLINT(misc-redundant-expression): NaN test
  return x != x ? x : result;    // NOLINT(misc-redundant-expression): NaN test
}

// Output and update rows never overlap (distinct buffers); the loops are
// vectorized (GCC's -O2 leaves loops of unknown trip count scalar).
template <typename T>
__attribute__((optimize("tree-vectorize"))) void CombineRowOf(ScatterRowOp op, char* output,
                                                              const char* update, int64_t length) {
  T* __restrict out = reinterpret_cast<T*>(output);
  const T* __restrict in = reinterpret_cast<const T*>(update);
  switch (op) {
    case ScatterRowOp::kAdd:
#pragma GCC ivdep
      for (int64_t j = 0; j < length; ++j) out[j] = out[j] + in[j];
      break;
    case ScatterRowOp::kMultiply:
#pragma GCC ivdep
      for (int64_t j = 0; j < length; ++j) out[j] = out[j] * in[j];
      break;
    case ScatterRowOp::kAssign:
      std::memcpy(out, in, length * sizeof(T));
      break;
    case ScatterRowOp::kMax:
#pragma GCC ivdep
      for (int64_t j = 0; j < length; ++j) out[j] = MaxOf(out[j], in[j]);
      break;
    case ScatterRowOp::kMin:
#pragma GCC ivdep
      for (int64_t j = 0; j < length; ++j) out[j] = MinOf(out[j], in[j]);
      break;
    case ScatterRowOp::kNone:
      break;
  }
}

#ifdef AXLE_AVX512
// f32 (or, with `integer`, wrapping 32-bit integer) rows added 16 lanes at a
// time, the tail under a mask: the same sums, element by element, as the
// scalar loop.
template <bool integer>
AXLE_AVX512 void AddRow32Avx512(char* output, const char* update, int64_t length) {
  auto* out = reinterpret_cast<float*>(output);
  const auto* in = reinterpret_cast<const float*>(update);
  int64_t j = 0;
  for (; j + 16 <= length; j += 16) {
    if constexpr (integer) {
      const __m512i sum = _mm512_add_epi32(_mm512_loadu_si512(out + j), _mm512_loadu_si512(in + j));
      _mm512_storeu_si512(out + j, sum);
    } else {
      _mm512_storeu_ps(out + j, _mm512_add_ps(_mm512_loadu_ps(out + j), _mm512_loadu_ps(in + j)));
    }
  }
  if (j < length) {
    const auto mask = static_cast<__mmask16>((1u << (length - j)) - 1);
    if constexpr (integer) {
      const __m512i sum = _mm512_add_epi32(_mm512_maskz_loadu_epi32(mask, out + j),
                                           _mm512_maskz_loadu_epi32(mask, in + j));
      _mm512_mask_storeu_epi32(out + j, mask, sum);
    } else {
      const __m512 sum =
          _mm512_add_ps(_mm512_maskz_loadu_ps(mask, out + j), _mm512_maskz_loadu_ps(mask, in + j));
      _mm512_mask_storeu_ps(out + j, mask, sum);
    }
  }
}

bool HostHasAvx512() {
  static const bool has = __builtin_cpu_supports("avx512f");
  return has;
}
#endif

// Output rows prefetched this many updates ahead, at most this many 64-byte
// lines of each (the hardware prefetcher follows a longer row by itself).
constexpr int64_t kPrefetchDistance = 8;
constexpr int64_t kPrefetchLines = 8;

}  // namespace

void CombineRow(ScatterRowOp op, PrimitiveType type, char* output, const char* update,
                int64_t length) {
  // Signed integers compare as signed (adds and multiplies wrap as unsigned).
  const bool compares = op == ScatterRowOp::kMax || op == ScatterRowOp::kMin;
  if (compares && type == S32) return CombineRowOf<int32_t>(op, output, update, length);
  if (compares && type == S64) return CombineRowOf<int64_t>(op, output, update, length);
  switch (type) {
    case F32:
#ifdef AXLE_AVX512
      if (op == ScatterRowOp::kAdd && HostHasAvx512()) {
        return AddRow32Avx512<false>(output, update, length);
      }
#endif
      return CombineRowOf<float>(op, output, update, length);
    case F64:
      return CombineRowOf<double>(op, output, update, length);
    case S32:
    case U32:  // wrapping: unsigned arithmetic for both
#ifdef AXLE_AVX512
      if (op == ScatterRowOp::kAdd && HostHasAvx512()) {
        return AddRow32Avx512<true>(output, update, length);
      }
#endif
      return CombineRowOf<uint32_t>(op, output, update, length);
    case S64:
    case U64:
      return CombineRowOf<uint64_t>(op, output, update, length);
    default:
      break;
  }
}

void CombineRows(const ScatterRows& rows, int64_t first, int64_t last) {
  const int64_t lines = std::min<int64_t>(
      kPrefetchLines, (rows.length * primitive_util::ByteWidth(rows.type) + 63) / 64);
  auto row_of = [&](int64_t s) -> int64_t {
    const int64_t start = ReadIntegerElement(rows.indices, rows.index_type, s * rows.index_stride);
    return start < 0 || start > rows.limit || start < first || start >= last ? -1 : start;
  };
  auto prefetch = [&](int64_t s) {
    const int64_t start = row_of(s);
    if (start < 0) return;
    const char* row = rows.output + start * rows.output_step;
    for (int64_t l = 0; l < lines; ++l) __builtin_prefetch(row + l * 64, /*rw=*/1);
  };
  for (int64_t s = 0; s < std::min(kPrefetchDistance, rows.count); ++s) prefetch(s);
  for (int64_t s = 0; s < rows.count; ++s) {
    if (s + kPrefetchDistance < rows.count) prefetch(s + kPrefetchDistance);
    const int64_t start = row_of(s);
    if (start < 0) continue;
    CombineRow(rows.op, rows.type, rows.output + start * rows.output_step,
               rows.updates + s * rows.update_step, rows.length);
  }
}

}  // namespace axle::cpu
