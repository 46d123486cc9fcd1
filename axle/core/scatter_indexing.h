//===- scatter_indexing.h - A scatter's geometry from shapes ---------------===//
//
// How a scatter's updates map onto its operand, from its shapes and
// dimension numbers alone (no HLO): which update dimensions pick index
// vectors and which are window dimensions, the operand dimension of each
// window dimension, where each operand batching dimension takes its
// coordinate, and how a kernel walks the indices and the operand. The
// checks of an instruction's operands and combiner live in
// axle/hlo/analysis/scatter_indexing.h (AnalyzeScatter); this half is what
// a serialized cpu program's scatter is checked and run with
// (axle/cpu/runtime/scatter_thunk.h), in a program that links no HLO.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_CORE_SCATTER_INDEXING_H_
#define AXLE_CORE_SCATTER_INDEXING_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "axle/core/shape.h"
#include "axle/core/xla_data.h"

namespace axle {

struct ScatterIndexing {
  std::vector<int64_t> operand_dims;
  std::vector<int64_t> update_dims;
  std::vector<int64_t> indices_dims;
  PrimitiveType indices_type = S32;
  int64_t index_vector_dim = 0;
  // Update dimensions that pick index vectors, and those of the window.
  std::vector<int64_t> update_scatter_dims;
  std::vector<int64_t> update_window_dims;
  // The operand dimension of each update window dimension.
  std::vector<int64_t> window_operand_dims;
  std::vector<int64_t> scatter_dims_to_operand_dims;
  // Operand dimension input_batching_dims[i] starts at the index-vector
  // coordinate (position among update_scatter_dims) batch_positions[i].
  std::vector<int64_t> input_batching_dims;
  std::vector<int64_t> batch_positions;
};

// The indexing of a scatter of operands shaped `operand`, indices shaped
// `indices` and updates shaped `update` (all arrays; the index type is
// the caller's to check). InvalidArgument saying what is inconsistent
// (the caller names the instruction).
absl::StatusOr<ScatterIndexing> AnalyzeScatterIndexing(const Shape& operand, const Shape& indices,
                                                       const Shape& update,
                                                       const ScatterDimensionNumbers& dn);

// How a scatter kernel walks the indices and the operand, derived from the
// indexing (both arrays row-major).
struct ScatterWalk {
  std::vector<int64_t> operand_strides;
  std::vector<int64_t> indices_strides;
  // An index vector's elements and the indices' stride between them (one
  // element, stride 0, where index_vector_dim is the indices' rank).
  int64_t vector_size = 1;
  int64_t vector_stride = 0;
  // The indices' strides of their other dimensions, in order: one per
  // update scatter dimension.
  std::vector<int64_t> batch_strides;
  // Per operand dimension, the window's size along it (1 where no update
  // window dimension maps to it).
  std::vector<int64_t> window_extent;
};
ScatterWalk ScatterWalkOf(const ScatterIndexing& indexing);

}  // namespace axle

#endif  // AXLE_CORE_SCATTER_INDEXING_H_
