//===- scatter_thunk.h - scatter with a compiled combiner ------------------===//
//
// XLA's scatter (operation semantics: update_window_dims,
// inserted_window_dims, scatter_dims_to_operand_dims, index_vector_dim,
// input / scatter-indices batching dims; variadic). The thunk copies each
// operand into its output, then visits the index vectors in row-major order
// and, for each, its update window in row-major order (the interpreter's
// order, so colliding float updates round identically), combining
//   output[i] = to_apply(output..., update...)
// through the combiner computation compiled to a native function
// (scalar_function_emitter.h). An index vector whose window would reach
// outside the operand in any dimension skips its whole window, as XLA's
// evaluator and ScatterExpander do. indices_are_sorted / unique_indices
// are hints and ignored.
//
// Why a thunk with a compiled scalar combiner rather than a loop kernel:
// scatter is a serial read-modify-write walk with data-dependent addresses
// and a bounds check per window; the index arithmetic is plain C++ that is
// easy to check, and the combiner, the only per-element computation, is the
// elemental emitter's IR, so it computes exactly what a fused kernel would.
//
// A scatter operand that is a scalar constant broadcast (a loop fusion of
// no operands, used by the scatter only: `ScatterFillsOperand`) is not
// computed by a kernel of its own: the thunk fills its output with the
// scalar itself, and on the parallel path of one row per update each thread
// fills the rows it owns just before it combines into them, while they
// are in its cache (an embedding's gradient: zeros, then the rows added).
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_CPU_RUNTIME_SCATTER_THUNK_H_
#define AXLE_CPU_RUNTIME_SCATTER_THUNK_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "axle/core/literal.h"
#include "axle/core/scatter_indexing.h"
#include "axle/core/shape.h"
#include "axle/cpu/runtime/scatter_rows.h"
#include "axle/cpu/runtime/thunk.h"
#include "axle/cpu/scalar_function_emitter.h"

namespace axle {
class HloInstruction;
}  // namespace axle

namespace axle::cpu {

// The scalar constant `operand` is a broadcast of, when it is a scatter
// operand the scatter's thunk fills in itself (see above): then the
// program builder emits no kernel for it. Null otherwise.
const Literal* ScatterFillsOperand(const HloInstruction& operand);

class ScatterThunk : public Thunk {
 public:
  // Everything the walk needs, derived from the shapes and dimension numbers.
  // The shared indexing (axle/hlo/analysis/scatter_indexing.h) and how
  // this thunk combines.
  struct Geometry : ScatterIndexing {
    std::vector<int64_t> element_bytes;  // per operand
    // A combiner that is one plain op of (output, update), on one operand
    // whose windows are contiguous rows (the minor dimension of operand and
    // updates is a window dimension): the rows are combined by a loop the
    // C++ compiler vectorizes instead of a combiner call per element. The
    // same op in the same order as the compiled combiner (a + b and a * b
    // commute exactly in IEEE arithmetic; integers wrap; max and min of
    // (output, update) only in that order, whose NaN and tie rules are not
    // symmetric): scatter_rows.h.
    using RowOp = ScatterRowOp;
    RowOp row_op = RowOp::kNone;
    PrimitiveType element_type = F32;
  };

  // `fills[i]`, when not empty, is the scalar (element_bytes[i] bytes)
  // output i starts from instead of operand i, whose value is then -1.
  ScatterThunk(std::string name, std::unique_ptr<CompiledScalarFunction> combiner,
               Geometry geometry, std::vector<int64_t> operand_values, int64_t indices_value,
               std::vector<int64_t> update_values, std::vector<int64_t> output_values,
               std::vector<std::vector<char>> fills = {});

  absl::Status Execute(const ThunkContext& context) const override;
  std::optional<BufferUses> buffer_uses() const override;
  // Operands are read only while being copied into the outputs, a copy
  // skipped when an output shares its operand's memory.
  // The shapes and dimension numbers, the values, the fills and the
  // combiner by symbol (LoadScatterThunk, thunk_serialization.h).
  absl::Status Serialize(ThunkWriter& writer) const override;
  std::vector<std::pair<int64_t, int64_t>> in_place_pairs() const override {
    std::vector<std::pair<int64_t, int64_t>> pairs;
    for (size_t i = 0; i < operand_values_.size(); ++i) {
      if (operand_values_[i] >= 0) pairs.emplace_back(operand_values_[i], output_values_[i]);
    }
    return pairs;
  }

 private:
  std::unique_ptr<CompiledScalarFunction> combiner_;
  Geometry geometry_;
  std::vector<int64_t> operand_values_;
  int64_t indices_value_;
  std::vector<int64_t> update_values_;
  std::vector<int64_t> output_values_;
  std::vector<std::vector<char>> fills_;  // per operand; empty: copy the operand
};

}  // namespace axle::cpu

#endif  // AXLE_CPU_RUNTIME_SCATTER_THUNK_H_
