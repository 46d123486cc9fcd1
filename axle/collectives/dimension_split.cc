//===- dimension_split.cc - A collective's buffer cut along one dimension -===//
#include "axle/collectives/dimension_split.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "axle/core/primitive_type.h"

namespace axle {

absl::StatusOr<DimensionSplit> SplitAtDimension(const Shape& shape, int64_t dim) {
  if (!shape.IsArray() || dim < 0 || dim >= shape.rank()) {
    return absl::InvalidArgumentError(
        absl::StrCat("dimension ", dim, " is not a dimension of ", shape.ToString(false)));
  }
  DimensionSplit split;
  split.inner = primitive_util::ByteWidth(shape.element_type());
  for (int64_t d = 0; d < dim; ++d) split.outer *= shape.dimensions(d);
  for (int64_t d = dim + 1; d < shape.rank(); ++d) split.inner *= shape.dimensions(d);
  split.length = shape.dimensions(dim);
  return split;
}

}  // namespace axle
