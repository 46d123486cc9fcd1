// The ONNX host kernels on cases the node tests do not cover: NaNs in
// Unique and NonMaxSuppression scores, out-of-range counts, other element
// types, empty inputs, and the errors for bad inputs (naming the node).
#include "absl/strings/match.h"
#include "axle/frontends/graph/host_kernel.h"
#include "axle/frontends/onnx/kernels/kernels.h"
#include "gtest/gtest.h"

namespace axle::onnx {
namespace {

graph::Node MakeNode(std::string op, int outputs) {
  (void)LinkOnnxKernels();
  graph::Node n;
  n.name = "n";
  n.op_type = std::move(op);
  for (int i = 0; i < outputs; ++i) n.outputs.push_back("out" + std::to_string(i));
  return n;
}

std::vector<Literal> RunOk(const graph::Node& node, std::vector<const Literal*> inputs) {
  absl::StatusOr<std::vector<Literal>> out = graph::RunHostKernel(node, 13, std::move(inputs));
  CHECK(out.ok()) << out.status();
  return std::move(*out);
}

TEST(HostKernelsTest, UniqueSortsNaNsLastAndKeepsFirstOccurrences) {
  float nan = std::numeric_limits<float>::quiet_NaN();
  Literal x = LiteralUtil::CreateR1<float>({3, nan, 1, 3, nan, -2});
  std::vector<Literal> out = RunOk(MakeNode("Unique", 4), {&x});
  ASSERT_EQ(out[0].element_count(), 4);
  EXPECT_EQ(out[0].GetAsDouble(0), -2);
  EXPECT_EQ(out[0].GetAsDouble(2), 3);
  EXPECT_TRUE(std::isnan(out[0].GetAsDouble(3)));
  EXPECT_EQ(out[1], LiteralUtil::CreateR1<int64_t>({5, 2, 0, 1}));
  EXPECT_EQ(out[2], LiteralUtil::CreateR1<int64_t>({2, 3, 1, 2, 3, 0}));
  EXPECT_EQ(out[3], LiteralUtil::CreateR1<int64_t>({1, 1, 2, 2}));
}

TEST(HostKernelsTest, UniqueAndNonZeroOnIntegersAndEmptyInputs) {
  Literal x = LiteralUtil::CreateR2<int32_t>({{0, 7}, {-1, 0}});
  std::vector<Literal> nz = RunOk(MakeNode("NonZero", 1), {&x});
  EXPECT_EQ(nz[0], LiteralUtil::CreateR2<int64_t>({{0, 1}, {1, 0}}));
  Literal empty(ShapeUtil::MakeShape(S32, {0, 3}));
  nz = RunOk(MakeNode("NonZero", 1), {&empty});
  EXPECT_EQ(nz[0].shape().dimensions(), (std::vector<int64_t>{2, 0}));
  graph::Node unique = MakeNode("Unique", 1);
  unique.attrs["axis"] = int64_t{1};
  unique.attrs["sorted"] = int64_t{0};
  Literal cols = LiteralUtil::CreateR2<int32_t>({{5, 1, 5}, {2, 0, 2}});
  std::vector<Literal> u = RunOk(unique, {&cols});
  EXPECT_EQ(u[0], LiteralUtil::CreateR2<int32_t>({{5, 1}, {2, 0}}));
  u = RunOk(unique, {&empty});  // three empty columns, all equal
  EXPECT_EQ(u[0].shape().dimensions(), (std::vector<int64_t>{0, 1}));
}

Literal Boxes() {
  Literal boxes(ShapeUtil::MakeShape(F32, {1, 3, 4}));
  std::vector<float> v = {0, 0, 1, 1, 0, 0.1f, 1, 1.1f, 5, 5, 6, 6};
  for (int i = 0; i < 12; ++i) boxes.SetFromDouble(i, v[i]);
  return boxes;
}

TEST(HostKernelsTest, NonMaxSuppressionSkipsNaNScoresAndClampsTheCount) {
  Literal boxes = Boxes();
  Literal scores(ShapeUtil::MakeShape(F32, {1, 1, 3}));
  scores.SetFromDouble(0, 0.9);
  scores.SetFromDouble(1, std::numeric_limits<double>::quiet_NaN());
  scores.SetFromDouble(2, 0.5);
  Literal huge = LiteralUtil::CreateR1<int64_t>({std::numeric_limits<int64_t>::max()});
  Literal iou = LiteralUtil::CreateR1<float>({0.5});
  std::vector<Literal> out =
      RunOk(MakeNode("NonMaxSuppression", 1), {&boxes, &scores, &huge, &iou});
  EXPECT_EQ(out[0], LiteralUtil::CreateR2<int64_t>({{0, 0, 0}, {0, 0, 2}}));
  Literal negative = LiteralUtil::CreateR1<int64_t>({-3});
  out = RunOk(MakeNode("NonMaxSuppression", 1), {&boxes, &scores, &negative, &iou});
  EXPECT_EQ(out[0].shape().dimensions(), (std::vector<int64_t>{0, 3}));
}

TEST(HostKernelsTest, BadInputsAreErrorsNamingTheNode) {
  Literal boxes = Boxes();
  Literal scores(ShapeUtil::MakeShape(F32, {1, 1, 4}));
  absl::Status s =
      graph::RunHostKernel(MakeNode("NonMaxSuppression", 1), 13, {&boxes, &scores}).status();
  EXPECT_TRUE(absl::StrContains(s.message(), "node 'n' (NonMaxSuppression): boxes must be")) << s;
  graph::Node unique = MakeNode("Unique", 1);
  unique.attrs["axis"] = int64_t{2};
  Literal x = LiteralUtil::CreateR1<float>({1});
  s = graph::RunHostKernel(unique, 13, {&x}).status();
  EXPECT_TRUE(absl::StrContains(s.message(), "node 'n' (Unique): axis 2 is out of range")) << s;
  graph::Node compress = MakeNode("Compress", 1);
  Literal cond = LiteralUtil::CreateR2<bool>({{true}});
  s = graph::RunHostKernel(compress, 13, {&x, &cond}).status();
  EXPECT_TRUE(absl::StrContains(s.message(), "condition must be a 1-D tensor")) << s;
  unique.attrs["axis"] = std::string("zero");
  s = graph::RunHostKernel(unique, 13, {&x}).status();
  EXPECT_TRUE(absl::StrContains(s.message(), "attribute 'axis' must be an int")) << s;
}

}  // namespace
}  // namespace axle::onnx
