//===- padding.h - XLA's SAME / VALID window padding -----------------------===//
//
// The two padding schemes of XLA's client API (`Padding::kSame`,
// `Padding::kValid`) and MakePadding, which turns a scheme into explicit
// (low, high) padding per spatial dimension, as XLA's padding.h does.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_BUILDER_PADDING_H_
#define AXLE_BUILDER_PADDING_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"

namespace axle {

enum class Padding {
  // The output has ceil(input / stride) elements per dimension; the padding
  // is split evenly, the odd element going to the high side.
  kSame,
  // No padding: only windows that fit entirely in the input.
  kValid,
};

// Checks that the three spans have one entry per spatial dimension and that
// windows and strides are positive.
absl::Status ValidatePaddingValues(absl::Span<const int64_t> input_dimensions,
                                   absl::Span<const int64_t> window_dimensions,
                                   absl::Span<const int64_t> window_strides);

// (low, high) padding per dimension for `padding`. The spans must be of equal
// length (see ValidatePaddingValues); the window and stride sizes positive.
std::vector<std::pair<int64_t, int64_t>> MakePadding(absl::Span<const int64_t> input_dimensions,
                                                     absl::Span<const int64_t> window_dimensions,
                                                     absl::Span<const int64_t> window_strides,
                                                     Padding padding);

}  // namespace axle

#endif  // AXLE_BUILDER_PADDING_H_
