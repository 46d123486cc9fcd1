//===- scatter_indexing_test.cc ---------------------------------------------===//
#include "axle/hlo/analysis/scatter_indexing.h"

#include "axle/core/shape_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace axle {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Rows of f32[5,4] updated by f32[3,4] at the rows s32[3,1] names.
ScatterDimensionNumbers RowScatter() {
  ScatterDimensionNumbers dn;
  dn.add_update_window_dims(1);
  dn.add_inserted_window_dims(0);
  dn.add_scatter_dims_to_operand_dims(0);
  dn.set_index_vector_dim(1);
  return dn;
}

TEST(ScatterIndexingTest, RowsOfAMatrix) {
  absl::StatusOr<ScatterIndexing> g =
      AnalyzeScatterIndexing(ShapeUtil::MakeShape(F32, {5, 4}), ShapeUtil::MakeShape(S32, {3, 1}),
                             ShapeUtil::MakeShape(F32, {3, 4}), RowScatter());
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_THAT(g->update_scatter_dims, ElementsAre(0));
  EXPECT_THAT(g->update_window_dims, ElementsAre(1));
  EXPECT_THAT(g->window_operand_dims, ElementsAre(1));
  EXPECT_THAT(g->scatter_dims_to_operand_dims, ElementsAre(0));
  EXPECT_THAT(g->operand_dims, ElementsAre(5, 4));
  EXPECT_EQ(g->indices_type, S32);
  EXPECT_TRUE(g->input_batching_dims.empty());
}

TEST(ScatterIndexingTest, BatchingDimensionsTakeTheirIndexCoordinate) {
  // f32[2,5,4] batched over dimension 0 with s32[2,3,1] indices (batch
  // dimension 0, index vector dimension 2) and f32[2,3,4] updates.
  ScatterDimensionNumbers dn;
  dn.add_update_window_dims(2);
  dn.add_inserted_window_dims(1);
  dn.add_input_batching_dims(0);
  dn.add_scatter_indices_batching_dims(0);
  dn.add_scatter_dims_to_operand_dims(1);
  dn.set_index_vector_dim(2);
  absl::StatusOr<ScatterIndexing> g = AnalyzeScatterIndexing(
      ShapeUtil::MakeShape(F32, {2, 5, 4}), ShapeUtil::MakeShape(S32, {2, 3, 1}),
      ShapeUtil::MakeShape(F32, {2, 3, 4}), dn);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_THAT(g->update_scatter_dims, ElementsAre(0, 1));
  EXPECT_THAT(g->window_operand_dims, ElementsAre(2));
  EXPECT_THAT(g->input_batching_dims, ElementsAre(0));
  EXPECT_THAT(g->batch_positions, ElementsAre(0));
}

TEST(ScatterIndexingTest, InconsistenciesAreNamed) {
  // Four update rows for three index vectors.
  absl::StatusOr<ScatterIndexing> g =
      AnalyzeScatterIndexing(ShapeUtil::MakeShape(F32, {5, 4}), ShapeUtil::MakeShape(S32, {3, 1}),
                             ShapeUtil::MakeShape(F32, {4, 4}), RowScatter());
  EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(g.status().message(), HasSubstr("do not match the indices' batch dimensions"));
  ScatterDimensionNumbers dn = RowScatter();
  dn.set_index_vector_dim(3);
  g = AnalyzeScatterIndexing(ShapeUtil::MakeShape(F32, {5, 4}), ShapeUtil::MakeShape(S32, {3, 1}),
                             ShapeUtil::MakeShape(F32, {3, 4}), dn);
  EXPECT_THAT(g.status().message(), HasSubstr("index_vector_dim=3 is out of range"));
}

}  // namespace
}  // namespace axle
