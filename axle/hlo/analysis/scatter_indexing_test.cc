//===- scatter_indexing_test.cc ---------------------------------------------===//
#include "axle/hlo/analysis/scatter_indexing.h"

#include "absl/strings/str_replace.h"
#include "axle/core/shape_util.h"
#include "axle/hlo/text/hlo_parser.h"
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

constexpr char kRowScatter[] = R"(
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = COMBINER_TYPE[] add(a, b)
}
ENTRY e {
  x = f32[5,4] parameter(0)
  i = s32[3,1] parameter(1)
  u = f32[3,4] parameter(2)
  ROOT r = f32[5,4] scatter(x, i, u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
})";

TEST(ScatterIndexingTest, AnalyzeScatterChecksTheOperandsAndTheCombiner) {
  auto module =
      ParseAndReturnUnverifiedModule(absl::StrReplaceAll(kRowScatter, {{"COMBINER_TYPE", "f32"}}));
  ASSERT_TRUE(module.ok()) << module.status();
  absl::StatusOr<ScatterIndexing> g =
      AnalyzeScatter(*(*module)->entry_computation()->root_instruction());
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_THAT(g->update_window_dims, ElementsAre(1));
  EXPECT_THAT(g->operand_dims, ElementsAre(5, 4));

  auto bad =
      ParseAndReturnUnverifiedModule(absl::StrReplaceAll(kRowScatter, {{"COMBINER_TYPE", "f16"}}));
  ASSERT_TRUE(bad.ok()) << bad.status();
  absl::StatusOr<ScatterIndexing> refused =
      AnalyzeScatter(*(*bad)->entry_computation()->root_instruction());
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(refused.status().message(), HasSubstr("combiner result 0 is f16[]"));
  EXPECT_THAT(
      AnalyzeScatter(*(*bad)->entry_computation()->parameter_instruction(0)).status().message(),
      HasSubstr("is not a scatter"));
}

}  // namespace
}  // namespace axle
