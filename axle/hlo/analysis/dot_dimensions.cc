//===- dot_dimensions.cc - A dot operand's free dimensions -----------------===//
#include "axle/hlo/analysis/dot_dimensions.h"

#include "absl/algorithm/container.h"

namespace axle {

std::vector<int64_t> DotFreeDimensions(int64_t rank, absl::Span<const int64_t> batch,
                                       absl::Span<const int64_t> contracting,
                                       absl::Span<const int64_t> excluded) {
  std::vector<int64_t> free;
  for (int64_t d = 0; d < rank; ++d) {
    if (!absl::c_linear_search(batch, d) && !absl::c_linear_search(contracting, d) &&
        !absl::c_linear_search(excluded, d)) {
      free.push_back(d);
    }
  }
  return free;
}

}  // namespace axle
