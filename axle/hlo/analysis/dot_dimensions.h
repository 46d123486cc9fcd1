//===- dot_dimensions.h - A dot operand's free dimensions ------------------===//
//
// The dimensions of a dot operand that are neither batch nor contracting:
// the ones that become result dimensions, as every backend's dot plan and
// the interpreter need them (XLA's GetNonContractingDims).
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_HLO_ANALYSIS_DOT_DIMENSIONS_H_
#define AXLE_HLO_ANALYSIS_DOT_DIMENSIONS_H_

#include <cstdint>
#include <vector>

#include "absl/types/span.h"

namespace axle {

// The dimensions of a rank-`rank` operand in none of `batch`,
// `contracting` and `excluded`, ascending.
std::vector<int64_t> DotFreeDimensions(int64_t rank, absl::Span<const int64_t> batch,
                                       absl::Span<const int64_t> contracting,
                                       absl::Span<const int64_t> excluded = {});

}  // namespace axle

#endif  // AXLE_HLO_ANALYSIS_DOT_DIMENSIONS_H_
