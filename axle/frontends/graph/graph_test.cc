// The graph front end without ONNX: graph checks (dangling edges, cycles),
// the kernel registry (opset ranges, devices, the missing-kernel error), the
// backwards constant analysis, and XlaCompiler (signatures, symbolic
// dimensions, the initializer policy, constant folding), with test kernels
// registered in the "axle.test" domain.
#include "axle/frontends/graph/graph.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "axle/eval/hlo_evaluator.h"
#include "axle/frontends/graph/graph_test_util.h"
#include "axle/frontends/graph/xla_compiler.h"
#include "axle/frontends/graph/xla_op_registry.h"
#include "gtest/gtest.h"

namespace axle::graph {
namespace {

constexpr char kDomain[] = "axle.test";

class AddOp : public XlaOpKernel {
 public:
  absl::Status Compile(XlaOpKernelContext* ctx) override {
    if (ctx->InputShape(0).dimensions() != ctx->InputShape(1).dimensions()) {
      return ctx->Error("shapes differ");
    }
    ctx->SetOutput(0, Add(ctx->Input(0), ctx->Input(1)));
    return absl::OkStatus();
  }
};
REGISTER_XLA_OP(Name("Add").Domain(kDomain), AddOp);

// Version 1..4 doubles, 5.. triples: picks the kernel by opset.
template <int kFactor>
class ScaleOp : public XlaOpKernel {
 public:
  absl::Status Compile(XlaOpKernelContext* ctx) override {
    ctx->SetOutput(0, Mul(ctx->Input(0), ConstantR0<float>(ctx->builder(), kFactor)));
    return absl::OkStatus();
  }
};
REGISTER_XLA_OP(Name("Scale").Domain(kDomain).UntilVersion(4), ScaleOp<2>);
REGISTER_XLA_OP(Name("Scale").Domain(kDomain).SinceVersion(5), ScaleOp<3>);

// Only on the interpreter.
REGISTER_XLA_OP(Name("InterpOnly").Domain(kDomain).Device(DEVICE_INTERPRETER), ScaleOp<1>);
// One kernel for the cpu and the interpreter, another for cuda alone, from
// opset 3 on.
REGISTER_XLA_OP(Name("PerDevice").Domain(kDomain).Device(DEVICE_CPU).Device(DEVICE_INTERPRETER),
                ScaleOp<2>);
REGISTER_XLA_OP(Name("PerDevice").Domain(kDomain).SinceVersion(3).Device(DEVICE_CUDA), ScaleOp<5>);

class ShapeOp : public XlaOpKernel {
 public:
  absl::Status Compile(XlaOpKernelContext* ctx) override {
    std::vector<int64_t> dims = ctx->InputShape(0).dimensions();
    ctx->SetConstantOutput(0, LiteralUtil::CreateR1<int64_t>(absl::MakeConstSpan(dims)));
    return absl::OkStatus();
  }
};
REGISTER_XLA_OP(Name("Shape").Domain(kDomain).MetadataOnly(), ShapeOp);

class ReshapeOp : public XlaOpKernel {
 public:
  absl::Status Compile(XlaOpKernelContext* ctx) override {
    absl::StatusOr<std::vector<int64_t>> dims = ctx->ConstantInputAsIntVector(1);
    if (!dims.ok()) return dims.status();
    ctx->SetOutput(0, Reshape(ctx->Input(0), *dims));
    return absl::OkStatus();
  }
};
REGISTER_XLA_OP(Name("Reshape").Domain(kDomain).CompileTimeConstantInput(1), ReshapeOp);

Node MakeNode(std::string name, std::string op, std::vector<std::string> in,
              std::vector<std::string> out) {
  return MakeTestNode(kDomain, std::move(name), std::move(op), std::move(in), std::move(out));
}

ValueInfo Input(std::string name, std::vector<Dim> dims) {
  return {std::move(name), F32, std::move(dims)};
}

Graph AddGraph() {
  Graph g;
  g.opsets[kDomain] = 1;
  g.inputs = {Input("a", {{std::nullopt, "N"}, {3, ""}}),
              Input("b", {{std::nullopt, "N"}, {3, ""}})};
  g.nodes = {MakeNode("sum", "Add", {"a", "b"}, {"c"})};
  g.outputs = {{"c"}};
  return g;
}

XlaArgument Arg(const std::vector<int64_t>& dims) { return {ShapeUtil::MakeShape(F32, dims), {}}; }

TEST(GraphTest, TopologicalOrderPutsProducersFirst) {
  Graph g = AddGraph();
  g.nodes.insert(g.nodes.begin(), MakeNode("late", "Add", {"c", "c"}, {"d"}));
  absl::StatusOr<std::vector<int64_t>> order = TopologicalOrder(g);
  ASSERT_TRUE(order.ok()) << order.status();
  EXPECT_EQ(*order, (std::vector<int64_t>{1, 0}));
}

TEST(GraphTest, DanglingEdgesAndCyclesAreErrors) {
  Graph g = AddGraph();
  g.nodes[0].inputs[1] = "nowhere";
  absl::Status s = TopologicalOrder(g).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(s.message(), "node 'sum' (axle.test.Add): input 'nowhere'")) << s;

  Graph cycle = AddGraph();
  cycle.nodes = {MakeNode("x", "Add", {"a", "y_out"}, {"x_out"}),
                 MakeNode("y", "Add", {"x_out", "b"}, {"y_out"})};
  cycle.outputs = {{"y_out"}};
  s = TopologicalOrder(cycle).status();
  EXPECT_TRUE(absl::StrContains(s.message(), "cycle")) << s;
}

TEST(GraphTest, RegistryPicksKernelsByOpsetAndDevice) {
  XlaOpRegistry& r = XlaOpRegistry::Global();
  EXPECT_TRUE(r.HasKernel("Scale", kDomain, 4, DEVICE_CPU));
  EXPECT_TRUE(r.HasKernel("Scale", kDomain, 5, DEVICE_CPU));
  EXPECT_TRUE(r.HasKernel("InterpOnly", kDomain, 1, DEVICE_INTERPRETER));
  EXPECT_FALSE(r.HasKernel("InterpOnly", kDomain, 1, DEVICE_CPU));

  Graph g;
  g.opsets[kDomain] = 7;
  g.inputs = {Input("x", {{2, ""}})};
  g.nodes = {MakeNode("s", "Scale", {"x"}, {"y"})};
  g.outputs = {{"y"}};
  XlaCompiler compiler({});
  absl::StatusOr<XlaCompilationResult> result = compiler.Compile(g, {Arg({2})});
  ASSERT_TRUE(result.ok()) << result.status();
  Literal x = LiteralUtil::CreateR1<float>({1, 2});
  HloEvaluator evaluator;
  absl::StatusOr<Literal> y = evaluator.Evaluate(result->computation.module(), {&x});
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(y->tuple_element(0), LiteralUtil::CreateR1<float>({3, 6}));  // opset 7: x3

  g.nodes[0].op_type = "InterpOnly";
  absl::Status s = compiler.Compile(g, {Arg({2})}).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented);
  EXPECT_TRUE(absl::StrContains(s.message(),
                                "node 's' (axle.test.InterpOnly): no kernel for op "
                                "'InterpOnly' at opset 7 on device 'cpu'"))
      << s;
}

// DEVICE_CUDA is a device type like the others: kernels without Device()
// serve it, a kernel may serve it alone, and a node whose op has no cuda
// kernel at the model's opset is an error naming op, opset, node and device.
TEST(GraphTest, RegistryServesTheCudaDeviceType) {
  XlaOpRegistry& r = XlaOpRegistry::Global();
  EXPECT_NE(std::find(AllDevices().begin(), AllDevices().end(), DEVICE_CUDA), AllDevices().end());
  EXPECT_TRUE(r.HasKernel("Scale", kDomain, 5, DEVICE_CUDA));
  EXPECT_FALSE(r.HasKernel("InterpOnly", kDomain, 1, DEVICE_CUDA));
  EXPECT_TRUE(r.HasKernel("PerDevice", kDomain, 1, DEVICE_CPU));
  EXPECT_FALSE(r.HasKernel("PerDevice", kDomain, 2, DEVICE_CUDA));
  EXPECT_TRUE(r.HasKernel("PerDevice", kDomain, 3, DEVICE_CUDA));

  Graph g;
  g.opsets[kDomain] = 7;
  g.inputs = {Input("x", {{2, ""}})};
  g.nodes = {MakeNode("p", "PerDevice", {"x"}, {"y"})};
  g.outputs = {{"y"}};
  Literal x = LiteralUtil::CreateR1<float>({1, 2});
  for (const auto& [device, factor] :
       std::vector<std::pair<std::string, float>>{{DEVICE_CPU, 2}, {DEVICE_CUDA, 5}}) {
    XlaCompiler compiler({.device_type = device});
    absl::StatusOr<XlaCompilationResult> result = compiler.Compile(g, {Arg({2})});
    ASSERT_TRUE(result.ok()) << device << ": " << result.status();
    HloEvaluator evaluator;
    absl::StatusOr<Literal> y = evaluator.Evaluate(result->computation.module(), {&x});
    ASSERT_TRUE(y.ok()) << y.status();
    EXPECT_EQ(y->tuple_element(0), LiteralUtil::CreateR1<float>({factor, 2 * factor})) << device;
  }

  g.opsets[kDomain] = 2;
  absl::Status s = XlaCompiler({.device_type = DEVICE_CUDA}).Compile(g, {Arg({2})}).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented);
  EXPECT_TRUE(absl::StrContains(s.message(),
                                "node 'p' (axle.test.PerDevice): no kernel for op "
                                "'PerDevice' at opset 2 on device 'cuda'"))
      << s;
}

TEST(GraphTest, SignatureChecksSymbolicAndFixedDimensions) {
  Graph g = AddGraph();
  XlaCompiler compiler({});
  EXPECT_TRUE(compiler.Compile(g, {Arg({5, 3}), Arg({5, 3})}).ok());
  absl::Status s = compiler.Compile(g, {Arg({5, 3}), Arg({4, 3})}).status();
  EXPECT_TRUE(absl::StrContains(s.message(), "dimension 'N' is 5 in input 'a' but 4 in input 'b'"))
      << s;
  s = compiler.Compile(g, {Arg({5, 2}), Arg({5, 2})}).status();
  EXPECT_TRUE(absl::StrContains(s.message(), "input 'a' dimension 1 must be 3")) << s;
  s = compiler.Compile(g, {Arg({5, 3})}).status();
  EXPECT_TRUE(absl::StrContains(s.message(), "2 inputs but 1 were given")) << s;
  s = compiler.Compile(g, {{ShapeUtil::MakeShape(S32, {5, 3}), {}}, Arg({5, 3})}).status();
  EXPECT_TRUE(absl::StrContains(s.message(), "input 'a' must have element type f32")) << s;
}

TEST(GraphTest, SmallInitializersBecomeConstantsLargeOnesParameters) {
  Graph g;
  g.opsets[kDomain] = 1;
  g.inputs = {Input("x", {{2000, ""}})};
  g.initializers["big"] = Literal(ShapeUtil::MakeShape(F32, {2000}));
  g.nodes = {MakeNode("add", "Add", {"x", "big"}, {"y"})};
  g.outputs = {{"y"}};
  XlaCompiler::Options options;
  options.initializer_constant_limit = 1999;
  absl::StatusOr<XlaCompilationResult> result = XlaCompiler(options).Compile(g, {Arg({2000})});
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(result->parameters.size(), 2u);
  EXPECT_EQ(result->parameters[1].kind, XlaCompilationResult::Parameter::kInitializer);
  EXPECT_EQ(result->parameters[1].initializer, "big");

  options.initializer_constant_limit = 2000;
  result = XlaCompiler(options).Compile(g, {Arg({2000})});
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->parameters.size(), 1u);
}

TEST(GraphTest, ShapeChainsFoldToConstants) {
  // y = Reshape(x, Shape(z)): the shape is known at compile time.
  Graph g;
  g.opsets[kDomain] = 1;
  g.inputs = {Input("x", {{6, ""}}), Input("z", {{2, ""}, {3, ""}})};
  g.nodes = {MakeNode("shape", "Shape", {"z"}, {"s"}),
             MakeNode("reshape", "Reshape", {"x", "s"}, {"y"})};
  g.outputs = {{"y"}};
  absl::StatusOr<XlaCompilationResult> result = XlaCompiler({}).Compile(g, {Arg({6}), Arg({2, 3})});
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->output_shapes[0].dimensions(), (std::vector<int64_t>{2, 3}));
  // Shape is metadata-only: z need not be constant, only a fed shape would.
  EXPECT_TRUE(ConstantGraphInputs(g, DEVICE_CPU).empty());

  g.nodes = {MakeNode("reshape", "Reshape", {"x", "z"}, {"y"})};
  EXPECT_EQ(ConstantGraphInputs(g, DEVICE_CPU), (std::vector<int>{1}));
  absl::Status s = XlaCompiler({}).Compile(g, {Arg({6}), Arg({2, 3})}).status();
  EXPECT_TRUE(absl::StrContains(s.message(),
                                "node 'reshape' (axle.test.Reshape): input 1 ('z') "
                                "must be a compile-time constant"))
      << s;
}

TEST(GraphTest, KernelErrorsNameTheNode) {
  Graph g = AddGraph();
  g.inputs[1].dims = std::nullopt;
  absl::Status s = XlaCompiler({}).Compile(g, {Arg({2, 3}), Arg({3, 2})}).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(s.message(), "node 'sum' (axle.test.Add): shapes differ")) << s;
}

}  // namespace
}  // namespace axle::graph
