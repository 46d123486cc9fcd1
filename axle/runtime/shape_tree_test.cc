// ShapeTree: nodes in pre-order, lookup by index, the iterator's node
// references, trees sharing one IndexedShape, and moves; and that an
// executable's runs share its result's IndexedShape instead of copying it.
#include "axle/runtime/shape_tree.h"

#include <string>
#include <vector>

#include "axle/hlo/text/hlo_parser.h"
#include "axle/runtime/local_client.h"
#include "gtest/gtest.h"

namespace axle {
namespace {

// (f32[2], (f32[3], s32[]), f32[4]): 6 nodes.
Shape Nested() {
  return ShapeUtil::MakeTupleShape(
      {ShapeUtil::MakeShape(F32, {2}),
       ShapeUtil::MakeTupleShape({ShapeUtil::MakeShape(F32, {3}), ShapeUtil::MakeShape(S32, {})}),
       ShapeUtil::MakeShape(F32, {4})});
}

TEST(ShapeTreeTest, NodesAreInPreOrderAndFoundByIndex) {
  ShapeTree<int> tree(Nested(), 7);
  std::vector<ShapeIndex> indices;
  for (auto&& [index, value] : tree) {
    EXPECT_EQ(value, 7);
    indices.push_back(index);
  }
  EXPECT_EQ(indices, (std::vector<ShapeIndex>{{}, {0}, {1}, {1, 0}, {1, 1}, {2}}));
  EXPECT_EQ(tree.size(), 6);
  EXPECT_EQ(tree.end() - tree.begin(), 6);

  // Writing through the iteration's references, through it->second and by
  // index all reach the same values.
  int next = 0;
  for (auto&& [index, value] : tree) value = next++;
  EXPECT_EQ(tree.element({1, 1}), 4);
  (tree.begin() + 5)->second = 50;
  EXPECT_EQ(tree.element({2}), 50);
  *tree.mutable_element({1, 0}) = 30;
  EXPECT_EQ((tree.begin() + 3)->second, 30);
  EXPECT_EQ((*(tree.begin() + 3)).first, (ShapeIndex{1, 0}));
  EXPECT_TRUE(tree.IsLeaf({1, 0}));
  EXPECT_FALSE(tree.IsLeaf({1}));

  const ShapeTree<int>& const_tree = tree;
  ShapeTree<int>::const_iterator it = tree.begin();  // iterator -> const_iterator
  EXPECT_EQ(it, const_tree.begin());
  EXPECT_EQ(it[2].second, 2);
}

TEST(ShapeTreeTest, TreesOfOneIndexedShapeShareItAndNotTheirValues) {
  std::shared_ptr<const IndexedShape> shape = IndexedShape::Make(Nested());
  EXPECT_EQ(shape->node_count(), 6u);
  ShapeTree<int> a(shape);
  ShapeTree<int> b(shape);
  EXPECT_EQ(a.indexed_shape(), shape);
  EXPECT_EQ(&a.shape(), &b.shape());
  // Values start default-constructed and are each tree's own.
  EXPECT_EQ(a.element({2}), 0);
  *a.mutable_element({2}) = 1;
  EXPECT_EQ(b.element({2}), 0);
  // A copy shares the shape and copies the values.
  ShapeTree<int> c = a;
  EXPECT_EQ(c.indexed_shape(), shape);
  EXPECT_EQ(c.element({2}), 1);
  *c.mutable_element({2}) = 2;
  EXPECT_EQ(a.element({2}), 1);
}

TEST(ShapeTreeTest, AMovedFromTreeHasNoShapeAndOneValue) {
  ShapeTree<std::string> tree(Nested(), "x");
  const Shape* shape = &tree.shape();
  ShapeTree<std::string> moved(std::move(tree));
  EXPECT_EQ(&moved.shape(), shape);
  EXPECT_EQ(moved.element({1, 1}), "x");
  // NOLINTNEXTLINE(bugprone-use-after-move): what a moved-from tree holds
  EXPECT_EQ(tree.shape().element_type(), PRIMITIVE_TYPE_INVALID);
  ASSERT_EQ(tree.size(), 1);
  EXPECT_EQ(tree.element({}), "");
  // Assigned to, it is whole again; the other is moved from.
  tree = std::move(moved);
  EXPECT_EQ(&tree.shape(), shape);
  EXPECT_EQ(tree.size(), 6);
  EXPECT_EQ(moved.size(), 1);  // NOLINT(bugprone-use-after-move)
}

TEST(ShapeTreeTest, RunsShareTheExecutablesResultShape) {
  absl::StatusOr<se::Platform*> platform = PlatformUtil::GetPlatform("interpreter");
  ASSERT_TRUE(platform.ok()) << platform.status();
  absl::StatusOr<LocalClient*> client = ClientLibrary::GetOrCreateLocalClient(*platform);
  ASSERT_TRUE(client.ok()) << client.status();
  auto module = ParseAndReturnUnverifiedModule(R"(
HloModule pair
ENTRY e {
  a = f32[4] parameter(0)
  n = f32[4] negate(a)
  ROOT t = (f32[4], f32[4]) tuple(a, n)
})");
  ASSERT_TRUE(module.ok()) << module.status();
  auto executable = (*client)->Compile(std::move(*module), ExecutableBuildOptions());
  ASSERT_TRUE(executable.ok()) << executable.status();
  Literal input(ShapeUtil::MakeShape(F32, {4}));
  for (int i = 0; i < 4; ++i) input.data<float>()[i] = static_cast<float>(i);
  auto argument = (*client)->LiteralToShapedBuffer(input, 0);
  ASSERT_TRUE(argument.ok()) << argument.status();

  auto first = (*executable)->Run({&*argument}, ExecutableRunOptions());
  auto second = (*executable)->Run({&*argument}, ExecutableRunOptions());
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_TRUE(second.ok()) << second.status();
  // One shape for both results; buffers of their own.
  EXPECT_EQ(first->buffers().indexed_shape(), second->buffers().indexed_shape());
  EXPECT_NE(first->buffer({1}).opaque(), second->buffer({1}).opaque());
  auto literal = (*client)->ShapedBufferToLiteral(*second);
  ASSERT_TRUE(literal.ok()) << literal.status();
  Literal negated(ShapeUtil::MakeShape(F32, {4}));
  for (int i = 0; i < 4; ++i) negated.data<float>()[i] = -static_cast<float>(i);
  EXPECT_EQ(*literal, Literal::MakeTuple({input.Clone(), std::move(negated)}));
}

}  // namespace
}  // namespace axle
