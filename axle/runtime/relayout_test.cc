#include "axle/runtime/relayout.h"

#include <cstdint>
#include <vector>

#include "axle/core/shape_util.h"
#include "gtest/gtest.h"

namespace axle {
namespace {

Shape Array(PrimitiveType type, std::vector<int64_t> dimensions) {
  return ShapeUtil::MakeShape(type, std::move(dimensions));
}

Layout MinorToMajor(std::vector<int64_t> minor_to_major) {
  Layout layout;
  *layout.mutable_minor_to_major() = std::move(minor_to_major);
  return layout;
}

TEST(Relayout, ColumnMajorAndBack) {
  const Shape shape = Array(F32, {2, 3});
  const std::vector<float> row_major = {0, 1, 2, 3, 4, 5};
  std::vector<float> column_major(6, -1), back(6, -1);
  Relayout(shape, MinorToMajor({0, 1}), row_major.data(), column_major.data(), true);
  EXPECT_EQ(column_major, (std::vector<float>{0, 3, 1, 4, 2, 5}));
  Relayout(shape, MinorToMajor({0, 1}), column_major.data(), back.data(), false);
  EXPECT_EQ(back, row_major);
}

TEST(Relayout, RankThreePermutationOfNarrowElements) {
  // Layout {1,0,2}: dimension 1 is minor, then 0, then 2 is major.
  const Shape shape = Array(S8, {2, 3, 2});
  std::vector<int8_t> row_major(12), laid_out(12, -1), back(12, -1);
  for (int i = 0; i < 12; ++i) row_major[i] = static_cast<int8_t>(i);
  Relayout(shape, MinorToMajor({1, 0, 2}), row_major.data(), laid_out.data(), true);
  // Element (i, j, k) is row-major 6i + 2j + k and lands at 6k + 3i + j.
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 3; ++j) {
      for (int k = 0; k < 2; ++k) EXPECT_EQ(laid_out[6 * k + 3 * i + j], 6 * i + 2 * j + k);
    }
  }
  Relayout(shape, MinorToMajor({1, 0, 2}), laid_out.data(), back.data(), false);
  EXPECT_EQ(back, row_major);
}

TEST(Relayout, DescendingLayoutsAndEmptyArraysCopyAsTheyAre) {
  const std::vector<double> values = {1, 2, 3, 4};
  std::vector<double> copy(4, 0);
  Relayout(Array(F64, {2, 2}), MinorToMajor({1, 0}), values.data(), copy.data(), true);
  EXPECT_EQ(copy, values);
  Relayout(Array(F64, {0, 3}), MinorToMajor({0, 1}), values.data(), copy.data(), true);
  EXPECT_EQ(copy, values);  // nothing written
}

}  // namespace
}  // namespace axle
