//===- scatter_rows.h - Scatter's inline row combine -----------------------===//
//
// The one-row-per-update path of ScatterThunk (an embedding's gradient, a
// segment sum): each update is one contiguous row of the operand, combined
// into the output by an inline op (add, multiply, assign) instead of the
// compiled scalar combiner. `CombineRows` walks the updates in order, reads
// each row's index, and prefetches the output row of an update a few
// places ahead (the rows land at random in a table that often exceeds L2,
// so a plain loop waits on each row's miss in turn); f32 and 32-bit integer
// adds run on AVX-512 where the host has it.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_CPU_RUNTIME_SCATTER_ROWS_H_
#define AXLE_CPU_RUNTIME_SCATTER_ROWS_H_

#include <cstdint>

#include "axle/core/primitive_type.h"

namespace axle::cpu {

// How a row of the update is combined into its row of the output. kMax and
// kMin are HLO's maximum and minimum of (output, update): a NaN of the
// output first, then one of the update, else the larger (smaller) value,
// the output's on a tie (so max(-0, +0) keeps the output's zero), exactly
// as the emitted combiner (ElementalIrEmitter::EmitMax) computes them.
enum class ScatterRowOp { kNone, kAdd, kMultiply, kAssign, kMax, kMin };

// One row: output[j] = op(output[j], update[j]) for j < length, in elements
// of `type` (F32, F64, S32, U32 wrapping, S64, U64 wrapping; max and min
// compare S32 and S64 as signed; others are left untouched: the thunk's
// loader admits only these).
void CombineRow(ScatterRowOp op, PrimitiveType type, char* output, const char* update,
                int64_t length);

// The updates s in [0, count), in order, whose row index
// (`indices[s * index_stride]`, of integer `index_type`) lies in
// [first, last) and in [0, limit]: output row `index` (at
// `output + index * output_step`) combined with update row s (at
// `updates + s * update_step`), `length` elements each.
struct ScatterRows {
  ScatterRowOp op = ScatterRowOp::kNone;
  PrimitiveType type = PRIMITIVE_TYPE_INVALID;
  const void* indices = nullptr;
  PrimitiveType index_type = PRIMITIVE_TYPE_INVALID;
  int64_t index_stride = 1;
  int64_t count = 0;
  int64_t limit = -1;
  char* output = nullptr;
  int64_t output_step = 0;
  const char* updates = nullptr;
  int64_t update_step = 0;
  int64_t length = 0;
};
void CombineRows(const ScatterRows& rows, int64_t first, int64_t last);

}  // namespace axle::cpu

#endif  // AXLE_CPU_RUNTIME_SCATTER_ROWS_H_
