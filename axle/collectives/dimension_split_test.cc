#include "axle/collectives/dimension_split.h"

#include "axle/core/shape_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace axle {
namespace {

TEST(SplitAtDimension, RowsIndicesAndBytes) {
  const Shape shape = ShapeUtil::MakeShape(F32, {2, 3, 4, 5});
  absl::StatusOr<DimensionSplit> split = SplitAtDimension(shape, 1);
  ASSERT_TRUE(split.ok()) << split.status();
  EXPECT_EQ(split->outer, 2);
  EXPECT_EQ(split->length, 3);
  EXPECT_EQ(split->inner, 4 * 5 * 4);
  absl::StatusOr<DimensionSplit> first = SplitAtDimension(shape, 0);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->outer, 1);
  EXPECT_EQ(first->inner, 3 * 4 * 5 * 4);
}

TEST(SplitAtDimension, NamesABadDimension) {
  const Shape shape = ShapeUtil::MakeShape(S8, {2, 3});
  absl::StatusOr<DimensionSplit> split = SplitAtDimension(shape, 2);
  EXPECT_EQ(split.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(split.status().message(), ::testing::HasSubstr("dimension 2 is not a dimension of"));
  EXPECT_FALSE(SplitAtDimension(ShapeUtil::MakeTupleShape({shape}), 0).ok());
}

}  // namespace
}  // namespace axle
