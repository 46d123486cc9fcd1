//===- ragged_rows.h - ragged-all-to-all's one row copy --------------------===//
//
// One update of ragged-all-to-all, for the interpreter's single-participant
// form (evaluator_data_movement.cc) and its collective one
// (evaluator_collectives.cc).
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_EVAL_RAGGED_ROWS_H_
#define AXLE_EVAL_RAGGED_ROWS_H_

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace axle::eval_internal {

// Copies rows [from, from + size) of `src` (`in_rows` rows of `row_bytes`)
// to rows [to, to + size) of `dst` (`out_rows` rows), skipping the rows
// outside either array. In 128 bits: offsets near the int64 limits do not
// overflow.
inline void CopyRaggedRows(const void* src, int64_t in_rows, void* dst, int64_t out_rows,
                           int64_t row_bytes, int64_t from, int64_t size, int64_t to) {
  const __int128 first = std::max<__int128>({0, -__int128{from}, -__int128{to}});
  const __int128 last =
      std::min<__int128>({__int128{size}, in_rows - __int128{from}, out_rows - __int128{to}});
  for (__int128 r = first; r < last; ++r) {
    std::memcpy(static_cast<char*>(dst) + static_cast<int64_t>(to + r) * row_bytes,
                static_cast<const char*>(src) + static_cast<int64_t>(from + r) * row_bytes,
                row_bytes);
  }
}

}  // namespace axle::eval_internal

#endif  // AXLE_EVAL_RAGGED_ROWS_H_
