// String tensors (graph/string_tensor.h): fed, cast both ways and
// normalized by host kernels between clusters (host_kernels/string_ops.cc),
// and clear errors for bad strings and for ops with no kernel on strings.
#include "absl/strings/match.h"
#include "axle/frontends/graph/string_tensor.h"
#include "axle/frontends/onnx/onnx_test_util.h"
#include "axle/frontends/onnx/session.h"
#include "gtest/gtest.h"

namespace axle::onnx {
namespace {

std::unique_ptr<Session> Open(graph::Graph g) {
  absl::StatusOr<std::unique_ptr<Session>> s = Session::FromGraph(std::move(g), {});
  CHECK(s.ok()) << s.status();
  return std::move(*s);
}

graph::ValueInfo StringInput(const std::string& name, int64_t n) {
  return {name, U8, std::vector<graph::Dim>{{n, ""}}, graph::ValueKind::kStringTensor};
}

TEST(StringTensorTest, RoundTrip) {
  Literal t = graph::MakeStringTensor({"a", "", "xyz", "éé"}, {2, 2});
  EXPECT_TRUE(graph::IsStringTensorShape(t.shape()));
  EXPECT_EQ(graph::StringTensorDims(t), (std::vector<int64_t>{2, 2}));
  absl::StatusOr<std::vector<std::string>> s = graph::ReadStringTensor(t, "t");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(*s, (std::vector<std::string>{"a", "", "xyz", "éé"}));
  EXPECT_FALSE(graph::ReadStringTensor(LiteralUtil::CreateR1<float>({1}), "t").ok());
}

// x -> Cast(STRING) -> Cast(FLOAT) -> f + f: both casts run on the host,
// the Add in a cluster after them.
TEST(StringOpsTest, CastsRunOnTheHostAroundClusters) {
  graph::Graph g;
  g.opsets[""] = 13;
  g.inputs = {{"x", F32, std::vector<graph::Dim>{{4, ""}}}};
  graph::Node to_string = MakeNode("to_string", "Cast", {"x"}, {"s"});
  to_string.attrs["to"] = int64_t{8};
  graph::Node to_float = MakeNode("to_float", "Cast", {"s"}, {"f"});
  to_float.attrs["to"] = int64_t{1};
  g.nodes = {to_string, to_float, MakeNode("add", "Add", {"f", "f"}, {"y"})};
  g.outputs = {{"s"}, {"y"}};
  std::unique_ptr<Session> session = Open(g);
  Literal x = LiteralUtil::CreateR1<float>({0.1f, -2.5f, 1e-7f, 3.0f});
  absl::StatusOr<std::vector<Literal>> y = session->Run({x.Clone()});
  ASSERT_TRUE(y.ok()) << y.status();
  absl::StatusOr<std::vector<std::string>> s = graph::ReadStringTensor((*y)[0], "s");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(*s, (std::vector<std::string>{"0.1", "-2.5", "1e-07", "3"}));
  EXPECT_EQ((*y)[1], LiteralUtil::CreateR1<float>({0.2f, -5.0f, 2e-7f, 6.0f}));
  ClusteringReport report = session->Clustering();
  EXPECT_EQ(report.fallbacks.size(), 2u) << report.ToString();
}

TEST(StringOpsTest, NormalizerOnAFedStringTensor) {
  graph::Graph g;
  g.opsets[""] = 10;
  g.inputs = {StringInput("x", 3)};
  graph::Node n = MakeNode("norm", "StringNormalizer", {"x"}, {"y"});
  n.attrs["case_change_action"] = std::string("UPPER");
  n.attrs["stopwords"] = std::vector<std::string>{"the"};
  g.nodes = {n};
  g.outputs = {{"y"}};
  std::unique_ptr<Session> session = Open(g);
  absl::StatusOr<std::vector<Literal>> y =
      session->Run({graph::MakeStringTensor({"The", "cat", "sat"}, {3})});
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ((*y)[0], graph::MakeStringTensor({"CAT", "SAT"}, {2}));
  // A non-string literal for a string input is refused, naming it.
  absl::StatusOr<std::vector<Literal>> bad = session->Run({LiteralUtil::CreateR1<float>({1})});
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(absl::StrContains(bad.status().message(), "input 'x' is a string tensor"))
      << bad.status();
}

TEST(StringOpsTest, Errors) {
  // A string that is not a number.
  graph::Graph g;
  g.opsets[""] = 13;
  g.inputs = {StringInput("x", 2)};
  graph::Node cast = MakeNode("parse", "Cast", {"x"}, {"y"});
  cast.attrs["to"] = int64_t{1};
  g.nodes = {cast};
  g.outputs = {{"y"}};
  std::unique_ptr<Session> session = Open(g);
  absl::StatusOr<std::vector<Literal>> y =
      session->Run({graph::MakeStringTensor({"1.5", "one"}, {2})});
  ASSERT_FALSE(y.ok());
  EXPECT_TRUE(absl::StrContains(y.status().message(), "node 'parse' (Cast)")) << y.status();
  EXPECT_TRUE(absl::StrContains(y.status().message(), "'one' is not a number")) << y.status();

  // An op with no kernel on strings: Unimplemented, naming it.
  g.nodes = {MakeNode("cat", "Concat", {"x", "x"}, {"y"})};
  g.nodes[0].attrs["axis"] = int64_t{0};
  absl::StatusOr<std::unique_ptr<Session>> s = Session::FromGraph(g, {});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kUnimplemented) << s.status();
  EXPECT_TRUE(absl::StrContains(s.status().message(), "'Concat'")) << s.status();
  EXPECT_TRUE(absl::StrContains(s.status().message(), "string")) << s.status();
}

}  // namespace
}  // namespace axle::onnx
