//===- shape_test.cc - Shape, Layout and ShapeUtil ------------------------===//
#include "axle/core/shape.h"

#include <gtest/gtest.h>

#include "axle/core/shape_util.h"

namespace axle {
namespace {

TEST(ShapeTest, ArrayToString) {
  Shape s = ShapeUtil::MakeShape(F32, {2, 3});
  EXPECT_EQ(s.ToString(), "f32[2,3]{1,0}");
  EXPECT_EQ(s.ToString(/*print_layout=*/false), "f32[2,3]");
  EXPECT_EQ(ShapeUtil::HumanString(s), "f32[2,3]");
  EXPECT_EQ(ShapeUtil::MakeShapeWithDenseLayout(BF16, {4, 5, 6}, {0, 2, 1}).ToString(),
            "bf16[4,5,6]{0,2,1}");
  EXPECT_EQ(Shape(S8, {7}).ToString(), "s8[7]");  // no layout set
  EXPECT_EQ(ShapeUtil::MakeShape(PRED, {0}).ToString(), "pred[0]{0}");
}

TEST(ShapeTest, ScalarsDoNotPrintAnEmptyLayout) {
  EXPECT_EQ(ShapeUtil::MakeScalarShape(F32).ToString(), "f32[]");
  Shape s = ShapeUtil::MakeScalarShape(S32);
  s.mutable_layout()->set_memory_space(1);
  EXPECT_EQ(s.ToString(), "s32[]{:S(1)}");
}

TEST(ShapeTest, DynamicDimensions) {
  Shape s = ShapeUtil::MakeShape(F32, {5, 3});
  s.set_dynamic_dimension(0, true);
  EXPECT_EQ(s.ToString(false), "f32[<=5,3]");
  EXPECT_TRUE(s.is_dynamic());
  Shape u(F32, {Shape::kUnboundedSize, 2});
  EXPECT_EQ(u.ToString(), "f32[?,2]");
  EXPECT_TRUE(u.is_unbounded_dynamic_dimension(0));
  EXPECT_TRUE(u.is_dynamic_dimension(0));
  EXPECT_EQ(u.num_elements(), 0);
  Shape t = ShapeUtil::MakeTupleShape({ShapeUtil::MakeShape(F32, {1}), s});
  EXPECT_FALSE(t.is_static());
}

TEST(ShapeTest, TuplesAndTokens) {
  Shape t =
      ShapeUtil::MakeTupleShape({ShapeUtil::MakeScalarShape(F32), ShapeUtil::MakeShape(S32, {4})});
  EXPECT_EQ(t.ToString(), "(f32[], s32[4]{0})");
  EXPECT_EQ(t.ToString(false), "(f32[], s32[4])");
  Shape nested = ShapeUtil::MakeTupleShape({t, ShapeUtil::MakeScalarShape(PRED)});
  EXPECT_EQ(nested.ToString(false), "((f32[], s32[4]), pred[])");
  EXPECT_TRUE(ShapeUtil::IsNestedTuple(nested));
  EXPECT_EQ(ShapeUtil::MakeNil().ToString(), "()");
  EXPECT_EQ(ShapeUtil::MakeTokenShape().ToString(), "token[]");
  EXPECT_EQ(ShapeUtil::GetLeafCount(nested), 3);
  EXPECT_EQ(ShapeUtil::GetSubshape(nested, {0, 1}).ToString(), "s32[4]{0}");
  EXPECT_FALSE(ShapeUtil::TryGetSubshape(nested, {0, 2}).ok());
}

TEST(LayoutTest, TiledLayoutToString) {
  Layout layout({1, 0});
  layout.tiles().push_back(Tile{{8, 128}});
  layout.tiles().push_back(Tile{{2, 1}});
  layout.set_memory_space(1);
  EXPECT_EQ(layout.ToString(), "{1,0:T(8,128)(2,1)S(1)}");
  Shape s(F32, {256, 256});
  s.set_layout(layout);
  EXPECT_EQ(s.ToString(), "f32[256,256]{1,0:T(8,128)(2,1)S(1)}");
  EXPECT_FALSE(layout.IsPlain());
}

TEST(LayoutTest, OtherAttributes) {
  Layout layout({0});
  layout.set_element_size_in_bits(4);
  EXPECT_EQ(layout.ToString(), "{0:E(4)}");
  Layout combined({1, 0});
  combined.tiles().push_back(Tile{{Tile::kCombineDimension, 128}});
  combined.set_index_primitive_type(U16);
  combined.set_pointer_primitive_type(U32);
  EXPECT_EQ(combined.ToString(), "{1,0:T(*,128)#(u16)*(u32)}");
  Layout split({0});
  split.split_configs().push_back(SplitConfig{0, {1, 2}});
  EXPECT_EQ(split.ToString(), "{0:SC(0:1,2)}");
  Layout physical({0});
  physical.set_physical_shape(ShapeUtil::MakeShape(S8, {16}));
  EXPECT_EQ(physical.ToString(), "{0:P(s8[16]{0})}");
  Layout copy = physical;
  EXPECT_EQ(copy, physical);
}

TEST(ShapeTest, EqualityAndCompatibility) {
  Shape a = ShapeUtil::MakeShape(F32, {2, 3});
  Shape b = ShapeUtil::MakeShapeWithDenseLayout(F32, {2, 3}, {0, 1});
  EXPECT_NE(a, b);
  EXPECT_TRUE(ShapeUtil::Compatible(a, b));
  EXPECT_FALSE(ShapeUtil::Compatible(a, ShapeUtil::MakeShape(F16, {2, 3})));
  EXPECT_TRUE(ShapeUtil::CompatibleIgnoringFpPrecision(a, ShapeUtil::MakeShape(F16, {2, 3})));
  EXPECT_TRUE(ShapeUtil::CompatibleIgnoringElementType(a, ShapeUtil::MakeShape(S8, {2, 3})));
  EXPECT_FALSE(ShapeUtil::Compatible(a, ShapeUtil::MakeShape(F32, {3, 2})));
}

TEST(ShapeUtilTest, SizesAndIndices) {
  EXPECT_EQ(ShapeUtil::ByteSizeOfElements(ShapeUtil::MakeShape(C64, {3, 2})), 48);
  EXPECT_EQ(ShapeUtil::ByteSizeOfElements(ShapeUtil::MakeShape(S4, {5})), 5);
  EXPECT_EQ(ShapeUtil::RowMajorStrides({2, 3, 4}), (std::vector<int64_t>{12, 4, 1}));
  std::vector<std::vector<int64_t>> seen;
  ShapeUtil::ForEachIndex({2, 2}, [&](absl::Span<const int64_t> index) {
    seen.emplace_back(index.begin(), index.end());
    return true;
  });
  EXPECT_EQ(seen, (std::vector<std::vector<int64_t>>{{0, 0}, {0, 1}, {1, 0}, {1, 1}}));
  Shape s = ShapeUtil::MakeShape(F32, {2, 3, 4});
  EXPECT_EQ(ShapeUtil::DeleteDimensions({1}, s).ToString(), "f32[2,4]{1,0}");
  EXPECT_EQ(ShapeUtil::PermuteDimensions({2, 0, 1}, s).ToString(false), "f32[4,2,3]");
}

TEST(ProgramShapeTest, XlaAccessors) {
  ProgramShape program;
  *program.add_parameters() = ShapeUtil::MakeShape(F32, {2});
  *program.add_parameter_names() = "x";
  program.mutable_parameters()->push_back(ShapeUtil::MakeShape(S32, {}));
  program.add_parameter_names()->assign("n");
  *program.mutable_result() = ShapeUtil::MakeShape(F32, {2});
  ASSERT_EQ(program.parameters_size(), 2);
  EXPECT_EQ(program.parameters(1), ShapeUtil::MakeShape(S32, {}));
  EXPECT_EQ(program.parameter_names(0), "x");
  program.set_parameter_names(1, "count");
  EXPECT_EQ(program.parameter_names()[1], "count");
  *program.mutable_parameters(0) = ShapeUtil::MakeShape(F32, {3});
  EXPECT_EQ(program.ToString(), "(f32[3]{0}, s32[])->f32[2]{0}");
  // Names are part of the value, as in XLA's proto.
  EXPECT_FALSE(ProgramShape(program.parameters(), program.result()) == program);
  ProgramShape copy = program;
  copy.clear_parameters();
  copy.clear_parameter_names();
  EXPECT_EQ(copy.parameters_size(), 0);
  EXPECT_FALSE(copy == program);
}

TEST(ShapeUtilTest, StridesFollowTheMinorToMajorOrder) {
  // Column-major: the first dimension varies fastest.
  EXPECT_EQ(ShapeUtil::StridesInLayout({2, 3, 4}, {0, 1, 2}), (std::vector<int64_t>{1, 2, 6}));
  EXPECT_EQ(ShapeUtil::StridesInLayout({2, 3, 4}, {2, 1, 0}), (std::vector<int64_t>{12, 4, 1}));
  EXPECT_EQ(ShapeUtil::StridesInLayout({2, 3, 4}, {1, 2, 0}), (std::vector<int64_t>{12, 1, 3}));
}

TEST(ShapeUtilTest, LayoutStridesOfAShapeWithoutAFullLayoutAreRowMajor) {
  EXPECT_EQ(ShapeUtil::LayoutStrides(ShapeUtil::MakeShapeWithDenseLayout(F32, {2, 3}, {0, 1})),
            (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(ShapeUtil::LayoutStrides(ShapeUtil::MakeShape(F32, {2, 3})),
            (std::vector<int64_t>{3, 1}));
  EXPECT_EQ(ShapeUtil::LayoutStrides(Shape(F32, {2, 3})), (std::vector<int64_t>{3, 1}));
  EXPECT_TRUE(ShapeUtil::LayoutStrides(ShapeUtil::MakeScalarShape(F32)).empty());
}

}  // namespace
}  // namespace axle
