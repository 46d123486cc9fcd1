//===- select_and_scatter_shapes_test.cc ------------------------------------===//
//
// A max pool's gradient: the shapes, the reduce-window output's dimensions
// and the computations; inconsistent operands, windows, sources and
// computations are InvalidArgument saying what; a reversed window is
// reported for the caller to refuse.
//
//===----------------------------------------------------------------------===//
#include "axle/hlo/analysis/select_and_scatter_shapes.h"

#include <memory>
#include <string>

#include "absl/strings/str_replace.h"
#include "axle/hlo/text/hlo_parser.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace axle {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr char kMaxPoolGrad[] = R"(
HloModule m
ge {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=GE
}
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[4,6] parameter(0)
  s = f32[SOURCE] parameter(1)
  z = f32[] constant(0)
  ROOT r = f32[4,6] select-and-scatter(x, s, z), window={size=2x3 stride=2x3WINDOW}, select=ge, scatter=add
})";

// The module (which owns the computations the shapes point to) and the
// analysis of its root.
struct Analyzed {
  std::unique_ptr<HloModule> module;
  absl::StatusOr<SelectAndScatterShapes> shapes = absl::UnknownError("not parsed");
};

Analyzed Analyze(const std::string& source, const std::string& window = "",
                 const std::string& select = "ge") {
  Analyzed analyzed;
  auto module = ParseAndReturnUnverifiedModule(absl::StrReplaceAll(
      kMaxPoolGrad, {{"SOURCE", source}, {"WINDOW", window}, {"select=ge", "select=" + select}}));
  EXPECT_TRUE(module.ok()) << module.status();
  if (!module.ok()) return analyzed;
  analyzed.module = std::move(module).value();
  analyzed.shapes =
      AnalyzeSelectAndScatter(*analyzed.module->entry_computation()->root_instruction());
  return analyzed;
}

TEST(SelectAndScatterShapesTest, AMaxPoolsGradient) {
  Analyzed analyzed = Analyze("2,2");
  const absl::StatusOr<SelectAndScatterShapes>& shapes = analyzed.shapes;
  ASSERT_TRUE(shapes.ok()) << shapes.status();
  EXPECT_THAT(shapes->operand_dims, ElementsAre(4, 6));
  EXPECT_THAT(shapes->source_dims, ElementsAre(2, 2));
  EXPECT_EQ(shapes->window.dimensions_size(), 2);
  EXPECT_EQ(shapes->type, F32);
  ASSERT_NE(shapes->select, nullptr);
  ASSERT_NE(shapes->scatter, nullptr);
  EXPECT_EQ(shapes->select->name(), "ge");
  EXPECT_EQ(shapes->scatter->name(), "add");
  EXPECT_FALSE(shapes->window_reversal);
}

TEST(SelectAndScatterShapesTest, ASourceOfOtherDimensionsNamesTheExpectedOnes) {
  Analyzed analyzed = Analyze("3,2");
  const absl::StatusOr<SelectAndScatterShapes>& shapes = analyzed.shapes;
  ASSERT_FALSE(shapes.ok());
  EXPECT_EQ(shapes.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(shapes.status().message(), HasSubstr("must have dimensions {2,2}"));
}

TEST(SelectAndScatterShapesTest, ASelectReturningNoPredIsInvalid) {
  Analyzed analyzed = Analyze("2,2", "", "add");
  const absl::StatusOr<SelectAndScatterShapes>& shapes = analyzed.shapes;
  ASSERT_FALSE(shapes.ok());
  EXPECT_EQ(shapes.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(shapes.status().message(),
              HasSubstr("select must take two f32 scalars and return a pred"));
}

TEST(SelectAndScatterShapesTest, AReversedWindowIsReported) {
  Analyzed analyzed = Analyze("2,2", " rhs_reversal=0x1");
  const absl::StatusOr<SelectAndScatterShapes>& shapes = analyzed.shapes;
  ASSERT_TRUE(shapes.ok()) << shapes.status();
  EXPECT_TRUE(shapes->window_reversal);
}

TEST(SelectAndScatterShapesTest, AnotherOpIsInvalid) {
  auto module = ParseAndReturnUnverifiedModule(R"(
HloModule m
ENTRY e {
  ROOT x = f32[4] parameter(0)
})");
  ASSERT_TRUE(module.ok()) << module.status();
  absl::StatusOr<SelectAndScatterShapes> shapes =
      AnalyzeSelectAndScatter(*(*module)->entry_computation()->root_instruction());
  ASSERT_FALSE(shapes.ok());
  EXPECT_THAT(shapes.status().message(), HasSubstr("is not a select-and-scatter"));
}

}  // namespace
}  // namespace axle
