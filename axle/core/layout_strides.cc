//===- layout_strides.cc - Element strides of an array in its layout -------===//
#include "axle/core/layout_strides.h"

#include "axle/core/shape_util.h"

namespace axle {

std::vector<int64_t> StridesInLayout(absl::Span<const int64_t> dimensions,
                                     absl::Span<const int64_t> minor_to_major) {
  std::vector<int64_t> strides(dimensions.size(), 1);
  int64_t stride = 1;
  for (int64_t dimension : minor_to_major) {
    strides[dimension] = stride;
    stride *= dimensions[dimension];
  }
  return strides;
}

std::vector<int64_t> LayoutStrides(const Shape& shape) {
  if (!shape.has_layout() ||
      static_cast<int64_t>(shape.layout().minor_to_major().size()) != shape.rank()) {
    return ShapeUtil::RowMajorStrides(shape.dimensions());
  }
  return StridesInLayout(shape.dimensions(), shape.layout().minor_to_major());
}

}  // namespace axle
