// ONNX models on the cuda device type (axle/gpu/), with and without a GPU.
//
// Without a GPU: the kernels compile the test models for DEVICE_CUDA, and
// the CUDA backend's compile-only path (gpu::CompileGpuProgram: its passes,
// thunks and PTX, no device) accepts the result; a cuda Session fails at
// creation with the platform's Unavailable error naming CUDA, never later;
// and ONNX's node tests that pass on cpu compile for cuda too (893 of 925
// at this writing; the other 32 have host nodes).
// With one: the same models run on the cuda platform and agree with their
// expected outputs, one cluster each.
// AXLE_ONNX_TESTDATA_DIR (default: the source tree's testdata/) and
// AXLE_ONNX_NODE_TEST_DIR (default: libonnx-testdata's; the node tests skip
// where it is absent) say where the data is, for a binary run elsewhere
// (scripts/device-check carries testdata/'s models in its bundle).
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "axle/base/status_macros.h"
#include "axle/frontends/graph/xla_compiler.h"
#include "axle/frontends/graph/xla_op_registry.h"
#include "axle/frontends/onnx/kernels/kernels.h"
#include "axle/frontends/onnx/onnx_loader.h"
#include "axle/frontends/onnx/onnx_test_util.h"
#include "axle/frontends/onnx/session.h"
#include "axle/gpu/gpu_compiler.h"
#include "axle/runtime/local_client.h"
#include "gtest/gtest.h"

namespace axle::onnx {
namespace {

// testdata/, from the source tree, or from AXLE_ONNX_TESTDATA_DIR where the
// binary runs without it (scripts/device-check's bundle).
std::string TestData(const std::string& name) {
  const char* env = std::getenv("AXLE_ONNX_TESTDATA_DIR");
  return std::string(env ? env : AXLE_ONNX_TESTDATA_SOURCE_DIR) + "/" + name;
}

bool HaveGpu() { return PlatformUtil::GetPlatform("cuda").ok(); }

// The models of testdata/ that need no host kernel.
class CudaModelTest : public ::testing::TestWithParam<std::string> {};

TEST_P(CudaModelTest, CompilesForTheCudaBackend) {
  (void)LinkOnnxKernels();
  const std::string dir = TestData(GetParam());
  absl::StatusOr<graph::Graph> graph = LoadModel(dir + "/model.onnx");
  ASSERT_TRUE(graph.ok()) << graph.status();
  std::vector<graph::XlaArgument> args;
  for (size_t i = 0; i < graph->inputs.size(); ++i) {
    absl::StatusOr<Literal> input =
        LoadTensor(absl::StrCat(dir, "/test_data_set_0/input_", i, ".pb"));
    ASSERT_TRUE(input.ok()) << input.status();
    args.push_back({input->shape(), std::nullopt});
  }
  graph::XlaCompiler compiler({.device_type = graph::DEVICE_CUDA});
  absl::StatusOr<graph::XlaCompilationResult> result = compiler.Compile(*graph, args);
  ASSERT_TRUE(result.ok()) << result.status();
  absl::StatusOr<Literal> expected = LoadTensor(dir + "/test_data_set_0/output_0.pb");
  ASSERT_TRUE(expected.ok()) << expected.status();
  EXPECT_TRUE(ShapeUtil::Compatible(result->output_shapes[0], expected->shape()))
      << ShapeUtil::HumanString(result->output_shapes[0]);

  std::unique_ptr<HloModule> module = result->computation.CloneModule();
  absl::StatusOr<gpu::GpuProgram> program = gpu::CompileGpuProgram(module.get());
  ASSERT_TRUE(program.ok()) << program.status();
  EXPECT_FALSE(program->kernels.empty()) << gpu::GpuProgramToString(*program);
  for (const auto& kernel : program->kernels) {
    EXPECT_TRUE(absl::StrContains(kernel->ptx, ".entry")) << kernel->name;
  }
}

TEST_P(CudaModelTest, RunsOnTheCudaPlatformOrSaysWhyNot) {
  Session::Options options;
  options.platform = "cuda";
  absl::StatusOr<std::unique_ptr<Session>> session =
      Session::Load(TestData(GetParam() + "/model.onnx"), options);
  if (!HaveGpu()) {
    ASSERT_FALSE(session.ok());
    EXPECT_EQ(session.status().code(), absl::StatusCode::kUnavailable) << session.status();
    EXPECT_TRUE(absl::StrContains(session.status().message(), "CUDA")) << session.status();
    GTEST_SKIP() << "no GPU: " << session.status();
  }
  ASSERT_TRUE(session.ok()) << session.status();
  EXPECT_EQ((*session)->Clustering().clusters.size(), 1u);
  CaseResult result = RunCase(TestData(GetParam()), "cuda");
  EXPECT_TRUE(result.status.ok()) << result.status;
}

INSTANTIATE_TEST_SUITE_P(Models, CudaModelTest, ::testing::Values("mlp", "cnn", "control_flow"));

// A graph with a host node (NonZero) on cuda: the clusters around it are
// compiled for the cuda device type, as on cpu.
TEST(CudaClusteringTest, HostNodesSplitTheGraphAsOnCpu) {
  (void)LinkOnnxKernels();
  absl::StatusOr<graph::Graph> graph = LoadModel(TestData("nonzero_gather/model.onnx"));
  ASSERT_TRUE(graph.ok()) << graph.status();
  absl::StatusOr<graph::ClusteringPlan> cpu =
      graph::MarkForCompilation(*graph, graph::DEVICE_CPU, {});
  absl::StatusOr<graph::ClusteringPlan> cuda =
      graph::MarkForCompilation(*graph, graph::DEVICE_CUDA, {});
  ASSERT_TRUE(cpu.ok()) << cpu.status();
  ASSERT_TRUE(cuda.ok()) << cuda.status();
  EXPECT_EQ(cuda->clusters.size(), cpu->clusters.size());
  EXPECT_EQ(cuda->clusters.size(), 2u);
}

// ONNX's backend node tests that pass on cpu (testdata/node_tests_cpu.txt),
// compiled for DEVICE_CUDA and through the CUDA backend's compile-only path:
// every one-cluster case must compile (its kernels serve cuda, and the GPU
// backend takes the HLO they build). Cases with host nodes are counted
// apart. Failures are printed by op.
std::string NodeTestDir() {
  const char* env = std::getenv("AXLE_ONNX_NODE_TEST_DIR");
  return env ? env : AXLE_ONNX_NODE_TEST_DIR;
}

std::set<std::string> ReadList(const std::string& path) {
  std::set<std::string> out;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line[0] != '#') out.insert(line.substr(0, line.find(' ')));
  }
  return out;
}

// Compiles the case's one cluster for cuda with the inputs of its first
// data set (their values where the kernels need them at compile time).
absl::Status CompileCaseForCuda(const std::string& dir, bool* has_host_nodes) {
  AXLE_ASSIGN_OR_RETURN(graph::Graph g, LoadModel(dir + "/model.onnx"));
  AXLE_ASSIGN_OR_RETURN(graph::ClusteringPlan plan,
                        graph::MarkForCompilation(g, graph::DEVICE_CUDA, {}));
  *has_host_nodes = !plan.host_nodes.empty() || plan.clusters.size() != 1;
  if (*has_host_nodes) return absl::OkStatus();
  const graph::Graph& cluster = plan.clusters[0].graph;
  AXLE_ASSIGN_OR_RETURN(std::vector<Literal> values,
                        LoadValues(dir + "/test_data_set_0", "input_", g.inputs));
  std::map<std::string, const Literal*> inputs;
  for (size_t i = 0; i < g.inputs.size() && i < values.size(); ++i) {
    inputs[g.inputs[i].name] = &values[i];
  }
  std::vector<int> constant = graph::ConstantGraphInputs(cluster, graph::DEVICE_CUDA);
  std::vector<graph::XlaArgument> args;
  for (size_t i = 0; i < cluster.inputs.size(); ++i) {
    auto it = inputs.find(cluster.inputs[i].name);
    if (it == inputs.end()) return absl::NotFoundError("no data for " + cluster.inputs[i].name);
    const Literal& value = *it->second;
    graph::XlaArgument arg{value.shape(), std::nullopt};
    if (std::find(constant.begin(), constant.end(), static_cast<int>(i)) != constant.end()) {
      arg.constant = value.Clone();
    }
    args.push_back(std::move(arg));
  }
  graph::XlaCompiler compiler(
      {.device_type = graph::DEVICE_CUDA, .initializer_constant_limit = int64_t{1} << 26});
  AXLE_ASSIGN_OR_RETURN(graph::XlaCompilationResult result, compiler.Compile(cluster, args));
  std::unique_ptr<HloModule> module = result.computation.CloneModule();
  return gpu::CompileGpuProgram(module.get()).status();
}

TEST(CudaNodeTest, CpuPassingCasesCompileForCuda) {
  (void)LinkOnnxKernels();
  const std::string dir = NodeTestDir();
  if (!std::filesystem::exists(dir)) GTEST_SKIP() << "no ONNX node tests at " << dir;
  const std::set<std::string> cases = ReadList(TestData("node_tests_cpu.txt"));
  ASSERT_GT(cases.size(), 100u);
  int compiled = 0, host = 0;
  std::map<std::string, std::vector<std::string>> failures;  // by op
  std::vector<std::string> failed;
  for (const std::string& name : cases) {
    const std::string case_dir = absl::StrCat(dir, "/", name);
    bool has_host_nodes = false;
    absl::Status s = CompileCaseForCuda(case_dir, &has_host_nodes);
    if (s.ok()) {
      has_host_nodes ? ++host : ++compiled;
      continue;
    }
    std::string message(s.message().substr(0, s.message().find('\n')));
    failures[CaseOps(case_dir)].push_back(absl::StrCat(name, ": ", message.substr(0, 200)));
    failed.push_back(name);
  }
  std::cout << "cuda: " << compiled << " of " << cases.size()
            << " cpu-passing node tests compile through the CUDA backend; " << host
            << " have host nodes\n";
  for (const auto& [op, list] : failures) {
    std::cout << "  " << op << " (" << list.size() << ")\n";
    for (const std::string& f : list) std::cout << "    " << f << "\n";
  }
  EXPECT_TRUE(failed.empty()) << "node tests that do not compile for cuda: "
                              << absl::StrJoin(failed, " ");
}

}  // namespace
}  // namespace axle::onnx
