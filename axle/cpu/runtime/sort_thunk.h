//===- sort_thunk.h - sort with a compiled comparator ----------------------===//
//
// XLA's sort: every 1-d slice along `sort_dimension` of N same-shaped
// operands is reordered by one permutation, the order the comparator
// computation (called on lhs_0, rhs_0, lhs_1, rhs_1, ...) defines. As
// XLA:CPU does, the comparator is compiled to a native function
// (scalar_function_emitter.h) that the runtime sort calls.
//
// The thunk copies each operand into its output, then for each slice sorts
// an index permutation with std::stable_sort (the comparator reads the
// outputs in place) and gathers every output's slice through it; a single
// operand is sorted by value instead (its slice gathered into a contiguous
// buffer), which saves the indirection. Sorts are
// always stable: an unstable sort may return any order of equivalent
// elements, so a stable one is a valid answer, and std::sort reads out of
// bounds when the comparator is not a strict weak order (LT on NaN, a
// constant true), which user input can give; std::stable_sort stays in
// bounds whatever a deterministic comparator returns. Slices are split
// across the intra-op pool when the operands are large.
//
// A comparator that orders by the first operand's key alone under a total
// order (sort_key_order.h: JAX's sort and argsort) is not called at all:
// each slice's keys become unsigned integers, a stable LSD radix sort of
// them gives the permutation, and every operand is gathered through it.
// Under a float partial order (`GT` without `type=TOTALORDER`: JAX's
// approx_max_k on CPU) the same holds for a slice without a NaN key; a
// slice with one calls the comparator.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_CPU_RUNTIME_SORT_THUNK_H_
#define AXLE_CPU_RUNTIME_SORT_THUNK_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "axle/cpu/runtime/sort_key_order.h"
#include "axle/cpu/runtime/thunk.h"
#include "axle/cpu/scalar_function_emitter.h"

namespace axle::cpu {

class SortThunk : public Thunk {
 public:
  // The slices: `outer` runs of `length` elements strided by `inner` (the
  // product of the dimensions before, at and after the sort dimension).
  struct Geometry {
    int64_t outer = 0;
    int64_t length = 0;
    int64_t inner = 0;
  };

  SortThunk(std::string name, std::unique_ptr<CompiledScalarFunction> comparator,
            std::optional<SortKeyOrder> key_order, Geometry geometry,
            std::vector<int64_t> element_bytes, std::vector<int64_t> operand_values,
            std::vector<int64_t> output_values)
      : Thunk(std::move(name)),
        comparator_(std::move(comparator)),
        key_order_(std::move(key_order)),
        geometry_(geometry),
        element_bytes_(std::move(element_bytes)),
        operand_values_(std::move(operand_values)),
        output_values_(std::move(output_values)) {}

  absl::Status Execute(const ThunkContext& context) const override;
  std::optional<BufferUses> buffer_uses() const override {
    return BufferUses{operand_values_, output_values_};
  }
  // A sort by a native key order (LoadSortThunk, thunk_serialization.h,
  // makes it again with no comparator), or one that calls its comparator,
  // named by its symbol (LoadComparatorSortThunk; a key order for NaN-free
  // slices only is saved so).
  absl::Status Serialize(ThunkWriter& writer) const override;

  // A sort is its comparator calls (about length * log2(length) per
  // slice, each a call of compiled code): with fewer than this many in
  // all it runs on the calling thread; a thread takes at least half as
  // many. Bytes say little here: 64 rows of 1000 f32 (250 KiB) are 0.6M
  // calls, ~10 ms on one core.
  static constexpr int64_t kMinParallelComparisons = int64_t{1} << 14;

 private:
  // Sorts slices [begin, end) of the outputs, slice s = (outer s / inner,
  // inner s % inner).
  void SortSlices(const std::vector<char*>& outputs, int64_t begin, int64_t end) const;
  // The same by `key_order_`'s native keys, or by the comparator.
  void SortSlicesByKeys(const std::vector<char*>& outputs, int64_t begin, int64_t end) const;
  void SortSlicesByComparator(const std::vector<char*>& outputs, int64_t begin, int64_t end) const;

  std::unique_ptr<CompiledScalarFunction> comparator_;
  std::optional<SortKeyOrder> key_order_;
  Geometry geometry_;
  std::vector<int64_t> element_bytes_;
  std::vector<int64_t> operand_values_;
  std::vector<int64_t> output_values_;
};

}  // namespace axle::cpu

#endif  // AXLE_CPU_RUNTIME_SORT_THUNK_H_
