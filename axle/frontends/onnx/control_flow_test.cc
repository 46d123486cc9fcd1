// If, Loop and Scan (kernels/control_flow_ops.cc): the loader's subgraphs
// and captures, Conditional and While in the compiled HLO, a loop whose
// condition depends on data, and errors for malformed subgraphs.
#include <memory>

#include "absl/strings/match.h"
#include "axle/frontends/graph/xla_compiler.h"
#include "axle/frontends/onnx/onnx_loader.h"
#include "axle/frontends/onnx/onnx_test_util.h"
#include "axle/frontends/onnx/session.h"
#include "gtest/gtest.h"

namespace axle::onnx {
namespace {

std::string TestData(const std::string& name) {
  return std::string(AXLE_ONNX_TESTDATA_SOURCE_DIR) + "/" + name;
}

graph::ValueInfo Scalar(std::string name, PrimitiveType type) {
  return {std::move(name), type, std::vector<graph::Dim>{}};
}

TEST(ControlFlowTest, ModelMatchesNumpyOnCpuAndInterpreter) {
  for (const char* platform : {"interpreter", "cpu"}) {
    CaseResult result = RunCase(TestData("control_flow"), platform);
    EXPECT_TRUE(result.status.ok()) << platform << ": " << result.status;
  }
}

TEST(ControlFlowTest, LoaderAppendsCapturesAndCompilerEmitsConditionalAndWhile) {
  absl::StatusOr<graph::Graph> g = LoadModel(TestData("control_flow/model.onnx"));
  ASSERT_TRUE(g.ok()) << g.status();
  ASSERT_EQ(g->nodes.size(), 4u);
  const graph::Node& if_node = g->nodes[2];
  // c, then the branches' reads of the outer scope, each once.
  EXPECT_EQ(if_node.inputs, (std::vector<std::string>{"c", "x", "w"}));
  const auto* then_branch =
      std::get_if<std::shared_ptr<const graph::Graph>>(&if_node.attrs.at("then_branch"));
  ASSERT_TRUE(then_branch && *then_branch);
  EXPECT_EQ((*then_branch)->captures, (std::vector<std::string>{"x", "w"}));
  EXPECT_EQ(g->nodes[3].inputs, (std::vector<std::string>{"trip", "", "y", "x"}));

  graph::XlaArgument x{ShapeUtil::MakeShape(F32, {3}), {}};
  absl::StatusOr<graph::XlaCompilationResult> result = graph::XlaCompiler({}).Compile(*g, {x});
  ASSERT_TRUE(result.ok()) << result.status();
  std::string hlo = result->computation.ToString();
  EXPECT_TRUE(absl::StrContains(hlo, "conditional(")) << hlo;
  EXPECT_TRUE(absl::StrContains(hlo, "while(")) << hlo;
  EXPECT_EQ(result->output_shapes[1].dimensions(), (std::vector<int64_t>{3, 3}));
}

// x <- x * 2 while x < limit: a While whose condition depends on data (the
// body reads the outer `limit`).
graph::Graph DoublingLoop(bool with_scan_output) {
  auto body = std::make_shared<graph::Graph>();
  body->opsets[""] = 13;
  body->inputs = {Scalar("i", S64), Scalar("cond_in", PRED), Scalar("x_in", F32)};
  body->nodes = {MakeNode("double", "Add", {"x_in", "x_in"}, {"x_out"}),
                 MakeNode("less", "Less", {"x_out", "limit"}, {"cond_out"})};
  body->outputs = {{"cond_out"}, {"x_out"}};
  if (with_scan_output) body->outputs.push_back({"x_out"});
  body->captures = {"limit"};
  graph::Graph g;
  g.opsets[""] = 13;
  g.inputs = {Scalar("x", F32), Scalar("limit", F32)};
  g.initializers["go"] = LiteralUtil::CreateR0<bool>(true);
  graph::Node loop = MakeNode("loop", "Loop", {"", "go", "x", "limit"}, {"y"});
  if (with_scan_output) {
    g.initializers["trip"] = LiteralUtil::CreateR0<int64_t>(10);
    loop.inputs[0] = "trip";
    loop.outputs.push_back("ys");
  }
  loop.attrs["body"] = std::shared_ptr<const graph::Graph>(body);
  g.nodes = {loop};
  g.outputs = {{"y"}};
  if (with_scan_output) g.outputs.push_back({"ys"});
  return g;
}

TEST(ControlFlowTest, LoopWithADataDependentConditionIsAWhile) {
  for (const char* platform : {"interpreter", "cpu"}) {
    Session::Options options;
    options.platform = platform;
    absl::StatusOr<std::unique_ptr<Session>> session =
        Session::FromGraph(DoublingLoop(false), options);
    ASSERT_TRUE(session.ok()) << session.status();
    for (auto [x, limit, want] :
         {std::tuple<float, float, float>{1, 100, 128}, {3, 20, 24}, {5, 1, 10}}) {
      absl::StatusOr<std::vector<Literal>> y =
          (*session)->Run({LiteralUtil::CreateR0<float>(x), LiteralUtil::CreateR0<float>(limit)});
      ASSERT_TRUE(y.ok()) << y.status();
      EXPECT_EQ((*y)[0], LiteralUtil::CreateR0<float>(want))
          << platform << " " << x << " " << limit;
    }
    // One signature: the loop is not specialized on the data.
    EXPECT_EQ((*session)->metrics().compiles, 1) << platform;
  }
}

TEST(ControlFlowTest, ScanOutputsOfALoopOfDataDependentLengthAreUnimplemented) {
  graph::XlaArgument scalar{ShapeUtil::MakeShape(F32, {}), {}};
  absl::StatusOr<graph::XlaCompilationResult> result =
      graph::XlaCompiler({}).Compile(DoublingLoop(true), {scalar, scalar});
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kUnimplemented) << result.status();
  EXPECT_TRUE(absl::StrContains(result.status().message(), "node 'loop' (Loop)"))
      << result.status();
  EXPECT_TRUE(absl::StrContains(result.status().message(), "scan outputs")) << result.status();
}

TEST(ControlFlowTest, MalformedSubgraphsAreErrorsNamingTheNode) {
  graph::XlaArgument scalar{ShapeUtil::MakeShape(F32, {}), {}};
  // Loop: a body without the iteration number and condition inputs.
  graph::Graph loop = DoublingLoop(false);
  auto body = std::make_shared<graph::Graph>(
      *std::get<std::shared_ptr<const graph::Graph>>(loop.nodes[0].attrs.at("body")));
  body->inputs.erase(body->inputs.begin(), body->inputs.begin() + 2);
  loop.nodes[0].attrs["body"] = std::shared_ptr<const graph::Graph>(body);
  absl::StatusOr<graph::XlaCompilationResult> result =
      graph::XlaCompiler({}).Compile(loop, {scalar, scalar});
  ASSERT_FALSE(result.ok());
  EXPECT_TRUE(absl::StrContains(result.status().message(),
                                "node 'loop' (Loop): the body must "
                                "have at least 2 inputs"))
      << result.status();

  // If: a branch with two outputs for a node with one; a missing branch.
  auto branch = std::make_shared<graph::Graph>();
  branch->opsets[""] = 13;
  branch->nodes = {MakeNode("neg", "Neg", {"x"}, {"n"})};
  branch->outputs = {{"n"}, {"x"}};
  branch->captures = {"x"};
  graph::Graph g;
  g.opsets[""] = 13;
  g.inputs = {Scalar("c", PRED), Scalar("x", F32)};
  graph::Node if_node = MakeNode("choose", "If", {"c", "x"}, {"y"});
  if_node.attrs["then_branch"] = std::shared_ptr<const graph::Graph>(branch);
  g.nodes = {if_node};
  g.outputs = {{"y"}};
  graph::XlaArgument pred{ShapeUtil::MakeShape(PRED, {}), {}};
  result = graph::XlaCompiler({}).Compile(g, {pred, scalar});
  ASSERT_FALSE(result.ok());
  EXPECT_TRUE(absl::StrContains(result.status().message(),
                                "node 'choose' (If): attribute 'then_branch' has 2 outputs but 1"))
      << result.status();
  g.nodes[0].attrs.erase("then_branch");
  g.nodes[0].attrs["else_branch"] = std::shared_ptr<const graph::Graph>(branch);
  result = graph::XlaCompiler({}).Compile(g, {pred, scalar});
  ASSERT_FALSE(result.ok());
  EXPECT_TRUE(absl::StrContains(result.status().message(),
                                "node 'choose' (If): attribute 'then_branch' is required"))
      << result.status();
}

}  // namespace
}  // namespace axle::onnx
