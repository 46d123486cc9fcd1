//===- dimension_split.h - A collective's buffer cut along one dimension ---===//
//
// All-gather, all-to-all and reduce-scatter move pieces of a buffer cut
// along one dimension: the interpreter (eval/evaluator_collectives.cc) and
// the cpu thunks (cpu/runtime/collective_thunk.cc) both see a row-major
// array as `outer` rows of `length` indices along the dimension, each index
// `inner` bytes.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_COLLECTIVES_DIMENSION_SPLIT_H_
#define AXLE_COLLECTIVES_DIMENSION_SPLIT_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "axle/core/shape.h"

namespace axle {

struct DimensionSplit {
  int64_t outer = 1;   // the product of the dimensions before
  int64_t length = 1;  // the dimension's size
  int64_t inner = 1;   // bytes of one index along it: the dimensions after x the element size
};

// `shape` (an array, row-major) cut along `dim`. InvalidArgument "dimension
// <dim> is not a dimension of <shape>" for another shape or dimension (the
// caller names the instruction).
absl::StatusOr<DimensionSplit> SplitAtDimension(const Shape& shape, int64_t dim);

}  // namespace axle

#endif  // AXLE_COLLECTIVES_DIMENSION_SPLIT_H_
