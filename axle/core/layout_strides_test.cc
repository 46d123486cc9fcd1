//===- layout_strides_test.cc - Element strides of an array in its layout --===//
#include "axle/core/layout_strides.h"

#include <vector>

#include "axle/core/shape_util.h"
#include "gtest/gtest.h"

namespace axle {
namespace {

TEST(LayoutStridesTest, StridesFollowTheMinorToMajorOrder) {
  // Column-major: the first dimension varies fastest.
  EXPECT_EQ(StridesInLayout({2, 3, 4}, {0, 1, 2}), (std::vector<int64_t>{1, 2, 6}));
  EXPECT_EQ(StridesInLayout({2, 3, 4}, {2, 1, 0}), (std::vector<int64_t>{12, 4, 1}));
  EXPECT_EQ(StridesInLayout({2, 3, 4}, {1, 2, 0}), (std::vector<int64_t>{12, 1, 3}));
}

TEST(LayoutStridesTest, AShapeWithoutAFullLayoutIsRowMajor) {
  EXPECT_EQ(LayoutStrides(ShapeUtil::MakeShapeWithDenseLayout(F32, {2, 3}, {0, 1})),
            (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(LayoutStrides(ShapeUtil::MakeShape(F32, {2, 3})), (std::vector<int64_t>{3, 1}));
  EXPECT_EQ(LayoutStrides(Shape(F32, {2, 3})), (std::vector<int64_t>{3, 1}));
  EXPECT_TRUE(LayoutStrides(ShapeUtil::MakeScalarShape(F32)).empty());
}

}  // namespace
}  // namespace axle
