//===- compare_by_direction.h - a OP b for a ComparisonDirection -----------===//
//
// What `compare(a, b), direction=...` means for two values of one ordered
// type, in one place for the interpreter's compare and select-and-scatter
// and the passes that fold comparisons of known integers.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_CORE_COMPARE_BY_DIRECTION_H_
#define AXLE_CORE_COMPARE_BY_DIRECTION_H_

#include "axle/core/xla_data.h"

namespace axle {

template <typename T>
bool CompareByDirection(ComparisonDirection direction, const T& a, const T& b) {
  switch (direction) {
    case ComparisonDirection::kEq:
      return a == b;
    case ComparisonDirection::kNe:
      return a != b;
    case ComparisonDirection::kGe:
      return a >= b;
    case ComparisonDirection::kGt:
      return a > b;
    case ComparisonDirection::kLe:
      return a <= b;
    case ComparisonDirection::kLt:
      return a < b;
  }
  return false;
}

}  // namespace axle

#endif  // AXLE_CORE_COMPARE_BY_DIRECTION_H_
