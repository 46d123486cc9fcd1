//===- dot_dimensions_test.cc -----------------------------------------------===//
#include "axle/hlo/analysis/dot_dimensions.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace axle {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

TEST(DotDimensionsTest, FreeDimensionsAreNeitherBatchNorContracting) {
  EXPECT_THAT(DotFreeDimensions(2, {}, {1}), ElementsAre(0));
  EXPECT_THAT(DotFreeDimensions(4, {0}, {2}), ElementsAre(1, 3));
  EXPECT_THAT(DotFreeDimensions(4, {0}, {2}, {3}), ElementsAre(1));
  EXPECT_THAT(DotFreeDimensions(1, {}, {0}), IsEmpty());
}

}  // namespace
}  // namespace axle
