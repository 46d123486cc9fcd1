//===- kernel_test_util.h - Literal builders for the kernel tests ----------===//
#ifndef AXLE_EVAL_KERNEL_TEST_UTIL_H_
#define AXLE_EVAL_KERNEL_TEST_UTIL_H_

#include <cmath>
#include <complex>
#include <initializer_list>
#include <vector>

#include "axle/core/literal.h"
#include "gtest/gtest.h"

namespace axle::testing_util {

template <typename T>
Literal R1(std::initializer_list<T> values) {
  return LiteralUtil::CreateR1<T>(values);
}

// A literal of `dims` holding `values` in row-major order.
template <typename T>
Literal Values(std::vector<int64_t> dims, std::vector<T> values) {
  return LiteralUtil::CreateFromDimensions<T>(dims, values);
}

// Element-wise |actual - expected| <= tolerance (as doubles, or complex
// magnitudes), with equal dimensions.
inline void ExpectNear(const Literal& actual, const Literal& expected, double tolerance) {
  ASSERT_EQ(actual.shape().dimensions(), expected.shape().dimensions())
      << actual.shape().ToString() << " vs " << expected.shape().ToString();
  for (int64_t i = 0; i < expected.element_count(); ++i) {
    EXPECT_LE(std::abs(actual.GetAsComplex128(i) - expected.GetAsComplex128(i)), tolerance)
        << "element " << i << ": " << actual.GetAsComplex128(i) << " vs "
        << expected.GetAsComplex128(i);
  }
}

}  // namespace axle::testing_util

#endif  // AXLE_EVAL_KERNEL_TEST_UTIL_H_
