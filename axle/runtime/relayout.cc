// Arrays between row-major storage and a layout (see relayout.h).
#include "axle/runtime/relayout.h"

#include <cstdint>
#include <cstring>
#include <vector>

#include "axle/core/shape_util.h"

namespace axle {

void Relayout(const Shape& shape, const Layout& layout, const void* from, void* to,
              bool to_layout) {
  const int64_t bytes = ShapeUtil::ByteSizeOfElements(shape);
  const int64_t elements = shape.num_elements();
  const std::vector<int64_t>& minor_to_major = layout.minor_to_major();
  if (elements <= 1 ||
      minor_to_major == ShapeUtil::MakeDescendingLayout(shape.rank()).minor_to_major()) {
    if (bytes > 0) std::memcpy(to, from, bytes);
    return;
  }
  const int64_t width = bytes / elements;
  // The stride (in elements) of each logical dimension in `layout`.
  const std::vector<int64_t> strides =
      ShapeUtil::StridesInLayout(shape.dimensions(), minor_to_major);
  const auto* source = static_cast<const uint8_t*>(from);
  auto* target = static_cast<uint8_t*>(to);
  int64_t row_major = 0;
  ShapeUtil::ForEachIndex(shape.dimensions(), [&](absl::Span<const int64_t> index) {
    int64_t physical = 0;
    for (size_t d = 0; d < index.size(); ++d) physical += index[d] * strides[d];
    if (to_layout) {
      std::memcpy(target + physical * width, source + row_major * width, width);
    } else {
      std::memcpy(target + row_major * width, source + physical * width, width);
    }
    ++row_major;
    return true;
  });
}

}  // namespace axle
