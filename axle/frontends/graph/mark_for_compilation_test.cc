// MarkForCompilation on small graphs with test kernels in the
// "axle.cluster_test" domain: device ops (Neg, Dims: a data-dependent
// integer vector, Shape: metadata-only, Reshape: a compile-time constant
// input), a host-only op (Filter), and an op with no kernel at all. Checks
// levels (clusters, host steps, their order), cluster inputs and outputs,
// and the cuts before nodes whose constant input is computed from data.
#include "axle/frontends/graph/mark_for_compilation.h"

#include "absl/strings/match.h"
#include "axle/frontends/graph/graph_test_util.h"
#include "axle/frontends/graph/host_kernel.h"
#include "axle/frontends/graph/xla_op_registry.h"
#include "gtest/gtest.h"

namespace axle::graph {
namespace {

constexpr char kDomain[] = "axle.cluster_test";

class NegOp : public XlaOpKernel {
 public:
  absl::Status Compile(XlaOpKernelContext* ctx) override {
    ctx->SetOutput(0, Neg(ctx->Input(0)));
    return absl::OkStatus();
  }
};
REGISTER_XLA_OP(Name("Neg").Domain(kDomain), NegOp);
REGISTER_XLA_OP(Name("Dims").Domain(kDomain), NegOp);
REGISTER_XLA_OP(Name("Shape").Domain(kDomain).MetadataOnly(), NegOp);
REGISTER_XLA_OP(Name("Reshape").Domain(kDomain).CompileTimeConstantInput(1), NegOp);

absl::Status Filter(HostKernelContext* ctx) {
  ctx->SetOutput(0, ctx->Input(0).Clone());
  return absl::OkStatus();
}
REGISTER_HOST_KERNEL(Name("Filter").Domain(kDomain), kDataDependentShape, Filter);

Node MakeNode(std::string name, std::string op, std::vector<std::string> in,
              std::vector<std::string> out) {
  return MakeTestNode(kDomain, std::move(name), std::move(op), std::move(in), std::move(out));
}

Graph MakeGraph(std::vector<Node> nodes, std::vector<std::string> outputs) {
  Graph g;
  g.opsets[kDomain] = 1;
  g.inputs = {{"x", F32, std::nullopt}, {"s", S64, std::nullopt}};
  g.nodes = std::move(nodes);
  for (std::string& out : outputs) g.outputs.push_back({std::move(out)});
  return g;
}

std::vector<std::string> NodeNames(const Cluster& c) {
  std::vector<std::string> out;
  for (const Node& n : c.graph.nodes) out.push_back(n.name);
  return out;
}
std::vector<std::string> Names(const std::vector<ValueInfo>& values) {
  std::vector<std::string> out;
  out.reserve(values.size());
  for (const ValueInfo& v : values) out.push_back(v.name);
  return out;
}

ClusteringPlan Plan(const Graph& g) {
  absl::StatusOr<ClusteringPlan> plan = MarkForCompilation(g, DEVICE_CPU, {});
  CHECK(plan.ok()) << plan.status();
  return std::move(*plan);
}

TEST(MarkForCompilationTest, DeviceOnlyGraphIsOneCluster) {
  // Reshape's shape from Shape (metadata) and from the integer input s.
  Graph g = MakeGraph({MakeNode("a", "Neg", {"x"}, {"a"}), MakeNode("sh", "Shape", {"a"}, {"sh"}),
                       MakeNode("r1", "Reshape", {"a", "sh"}, {"r1"}),
                       MakeNode("r2", "Reshape", {"r1", "s"}, {"y"})},
                      {"y"});
  g.name = "model";
  ClusteringPlan plan = Plan(g);
  ASSERT_EQ(plan.clusters.size(), 1u);
  EXPECT_TRUE(plan.host_nodes.empty());
  ASSERT_EQ(plan.steps.size(), 1u);
  EXPECT_EQ(plan.clusters[0].graph.name, "model");
  EXPECT_EQ(Names(plan.clusters[0].graph.inputs), (std::vector<std::string>{"x", "s"}));
  EXPECT_EQ(Names(plan.clusters[0].graph.outputs), (std::vector<std::string>{"y"}));
  EXPECT_TRUE(plan.clusters[0].constant_cuts.empty());
}

TEST(MarkForCompilationTest, HostNodeSplitsTheChain) {
  Graph g = MakeGraph({MakeNode("a", "Neg", {"x"}, {"a"}), MakeNode("f", "Filter", {"a"}, {"f"}),
                       MakeNode("b", "Neg", {"f"}, {"b"}), MakeNode("c", "Neg", {"b"}, {"y"})},
                      {"y", "a"});
  ClusteringPlan plan = Plan(g);
  ASSERT_EQ(plan.clusters.size(), 2u);
  EXPECT_EQ(plan.host_nodes, (std::vector<int64_t>{1}));
  ASSERT_EQ(plan.steps.size(), 3u);
  EXPECT_EQ(plan.steps[0].kind, ExecutionStep::kCluster);
  EXPECT_EQ(plan.steps[1].kind, ExecutionStep::kHost);
  EXPECT_EQ(plan.steps[1].index, 1);
  EXPECT_EQ(plan.steps[2].kind, ExecutionStep::kCluster);
  EXPECT_EQ(Names(plan.clusters[0].graph.outputs), (std::vector<std::string>{"a"}));
  EXPECT_EQ(Names(plan.clusters[1].graph.inputs), (std::vector<std::string>{"f"}));
  EXPECT_EQ(NodeNames(plan.clusters[1]), (std::vector<std::string>{"b", "c"}));
  EXPECT_EQ(plan.clusters[1].graph.inputs[0].element_type, PRIMITIVE_TYPE_INVALID);
}

TEST(MarkForCompilationTest, IndependentBranchesMergeAroundTheHost) {
  // f reads a graph input, so it runs first; a and b share one cluster.
  Graph g = MakeGraph({MakeNode("a", "Neg", {"x"}, {"a"}), MakeNode("f", "Filter", {"x"}, {"f"}),
                       MakeNode("b", "Neg", {"f"}, {"b"})},
                      {"a", "b"});
  ClusteringPlan plan = Plan(g);
  ASSERT_EQ(plan.clusters.size(), 1u);
  ASSERT_EQ(plan.steps.size(), 2u);
  EXPECT_EQ(plan.steps[0].kind, ExecutionStep::kHost);
  EXPECT_EQ(NodeNames(plan.clusters[0]), (std::vector<std::string>{"a", "b"}));
}

TEST(MarkForCompilationTest, ConstantInputComputedFromDataMovesToTheNextCluster) {
  Graph g = MakeGraph({MakeNode("d", "Dims", {"x"}, {"d"}), MakeNode("n", "Neg", {"x"}, {"n"}),
                       MakeNode("r", "Reshape", {"n", "d"}, {"y"})},
                      {"y"});
  ClusteringPlan plan = Plan(g);
  ASSERT_EQ(plan.clusters.size(), 2u);
  EXPECT_EQ(NodeNames(plan.clusters[0]), (std::vector<std::string>{"d", "n"}));
  EXPECT_EQ(NodeNames(plan.clusters[1]), (std::vector<std::string>{"r"}));
  EXPECT_EQ(Names(plan.clusters[1].graph.inputs), (std::vector<std::string>{"n", "d"}));
  ASSERT_EQ(plan.clusters[1].constant_cuts.size(), 1u);
  EXPECT_EQ(plan.clusters[1].constant_cuts[0],
            "node 'r' (axle.cluster_test.Reshape) needs input 1 ('d') at compile time; it is "
            "computed from data");
  // Named as constant, x is static and one cluster does.
  absl::StatusOr<ClusteringPlan> keyed = MarkForCompilation(g, DEVICE_CPU, {"x"});
  ASSERT_TRUE(keyed.ok());
  EXPECT_EQ(keyed->clusters.size(), 1u);
}

TEST(MarkForCompilationTest, NodesWithoutAnyKernelStayInAClusterAndBadGraphsFail) {
  Graph g =
      MakeGraph({MakeNode("a", "Neg", {"x"}, {"a"}), MakeNode("u", "Nope", {"a"}, {"y"})}, {"y"});
  ClusteringPlan plan = Plan(g);
  ASSERT_EQ(plan.clusters.size(), 1u);
  EXPECT_EQ(NodeNames(plan.clusters[0]), (std::vector<std::string>{"a", "u"}));
  g.nodes[0].inputs = {"y"};  // a cycle
  EXPECT_FALSE(MarkForCompilation(g, DEVICE_CPU, {}).ok());
  g = MakeGraph({MakeNode("a", "Neg", {"x"}, {"y"})}, {"y"});
  g.nodes[0].domain = "elsewhere";
  absl::Status s = MarkForCompilation(g, DEVICE_CPU, {}).status();
  EXPECT_TRUE(
      absl::StrContains(s.message(), "node 'a' (elsewhere.Neg): the model imports no opset"))
      << s;
}

TEST(HostKernelTest, RunHostKernelNamesTheNode) {
  Node n = MakeNode("m", "Missing", {"x"}, {"y"});
  Literal x = LiteralUtil::CreateR1<float>({1});
  absl::Status s = RunHostKernel(n, 1, {&x}).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented);
  EXPECT_TRUE(
      absl::StrContains(s.message(), "node 'm' (axle.cluster_test.Missing): no host kernel"))
      << s;
  n.op_type = "Filter";
  absl::StatusOr<std::vector<Literal>> y = RunHostKernel(n, 1, {&x});
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ((*y)[0], x);
}

}  // namespace
}  // namespace axle::graph
