//===- layout_strides.h - Element strides of an array in its layout --------===//
//
// The layout-aware companions of ShapeUtil::RowMajorStrides: how many
// elements apart consecutive indices of each dimension lie when an array is
// stored densely in a minor-to-major order. Relayout, the interpreter's
// literal reads, the cuda backend's gemm, convolution and kernel emitters
// use them instead of loops of their own.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_CORE_LAYOUT_STRIDES_H_
#define AXLE_CORE_LAYOUT_STRIDES_H_

#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "axle/core/shape.h"

namespace axle {

// Strides (in elements) of `dimensions` stored densely in `minor_to_major`
// order, its first dimension the fastest-varying; a dimension it does not
// name gets stride 1.
std::vector<int64_t> StridesInLayout(absl::Span<const int64_t> dimensions,
                                     absl::Span<const int64_t> minor_to_major);

// The strides of an array shape's dimensions in its own layout; row-major
// when it has none or one that does not order every dimension.
std::vector<int64_t> LayoutStrides(const Shape& shape);

}  // namespace axle

#endif  // AXLE_CORE_LAYOUT_STRIDES_H_
