#include "axle/builder/padding.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace axle {

absl::Status ValidatePaddingValues(absl::Span<const int64_t> input_dimensions,
                                   absl::Span<const int64_t> window_dimensions,
                                   absl::Span<const int64_t> window_strides) {
  if (input_dimensions.size() != window_dimensions.size() ||
      input_dimensions.size() != window_strides.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("want one window dimension and one stride per spatial dimension; got ",
                     input_dimensions.size(), " spatial dimensions, ", window_dimensions.size(),
                     " window dimensions and ", window_strides.size(), " strides"));
  }
  for (size_t i = 0; i < input_dimensions.size(); ++i) {
    if (window_dimensions[i] <= 0 || window_strides[i] <= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("window dimensions and strides must be positive; dimension ", i,
                       " has window ", window_dimensions[i], " and stride ", window_strides[i]));
    }
  }
  return absl::OkStatus();
}

std::vector<std::pair<int64_t, int64_t>> MakePadding(absl::Span<const int64_t> input_dimensions,
                                                     absl::Span<const int64_t> window_dimensions,
                                                     absl::Span<const int64_t> window_strides,
                                                     Padding padding) {
  std::vector<std::pair<int64_t, int64_t>> low_high(input_dimensions.size(), {0, 0});
  if (padding == Padding::kValid) return low_high;
  for (size_t i = 0; i < input_dimensions.size(); ++i) {
    int64_t input = input_dimensions[i];
    int64_t stride = std::max<int64_t>(window_strides[i], 1);
    int64_t output = (input + stride - 1) / stride;
    int64_t needed = std::max<int64_t>(0, (output - 1) * stride + window_dimensions[i] - input);
    low_high[i] = {needed / 2, needed - needed / 2};
  }
  return low_high;
}

}  // namespace axle
