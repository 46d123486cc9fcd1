// Whole models end to end (testdata/make_models.py: an MLP whose reshape is
// computed in the graph, and a small CNN), against numpy's outputs, on cpu
// and the interpreter, and how XlaCompiler lowers them.
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

class ModelTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ModelTest, MatchesNumpyOnCpuAndInterpreter) {
  for (const char* platform : {"interpreter", "cpu"}) {
    CaseResult result = RunCase(TestData(GetParam()), platform);
    EXPECT_TRUE(result.status.ok()) << platform << ": " << result.status;
  }
}

INSTANTIATE_TEST_SUITE_P(Models, ModelTest, ::testing::Values("mlp", "cnn"));

TEST(ModelCompileTest, MlpFoldsItsShapeChainAndPassesWeightsAsParameters) {
  absl::StatusOr<graph::Graph> g = LoadModel(TestData("mlp/model.onnx"));
  ASSERT_TRUE(g.ok()) << g.status();
  graph::XlaArgument x{ShapeUtil::MakeShape(F32, {7, 4, 4}), {}};
  absl::StatusOr<graph::XlaCompilationResult> result = graph::XlaCompiler({}).Compile(*g, {x});
  ASSERT_TRUE(result.ok()) << result.status();
  // x, then w1 (1536 elements > 1024); b1, w2, b2 are constants.
  ASSERT_EQ(result->parameters.size(), 2u);
  EXPECT_EQ(result->parameters[0].kind, graph::XlaCompilationResult::Parameter::kInput);
  EXPECT_EQ(result->parameters[1].initializer, "w1");
  // Shape -> Gather -> Unsqueeze -> Concat folded: [7, -1] became [7, 16].
  EXPECT_EQ(result->folded_nodes, 3);
  EXPECT_EQ(result->output_shapes[0].dimensions(), (std::vector<int64_t>{7, 10}));
  EXPECT_TRUE(absl::StrContains(result->computation.ToString(), "f32[7,16]"));
}

TEST(ModelCompileTest, CnnRunsAtAnotherBatchSize) {
  Session::Options options;
  options.platform = "cpu";
  absl::StatusOr<std::unique_ptr<Session>> session =
      Session::Load(TestData("cnn/model.onnx"), options);
  ASSERT_TRUE(session.ok()) << session.status();
  Literal x(ShapeUtil::MakeShape(F32, {5, 3, 8, 8}));
  for (int64_t i = 0; i < x.element_count(); ++i) x.SetFromDouble(i, (i % 17) * 0.1 - 0.8);
  absl::StatusOr<std::vector<Literal>> y = (*session)->Run({x});
  ASSERT_TRUE(y.ok()) << y.status();
  ASSERT_EQ(y->size(), 1u);
  EXPECT_EQ((*y)[0].shape().dimensions(), (std::vector<int64_t>{5, 5}));
  for (int64_t n = 0; n < 5; ++n) {  // softmax rows sum to 1
    double sum = 0;
    for (int64_t k = 0; k < 5; ++k) sum += (*y)[0].GetAsDouble(n * 5 + k);
    EXPECT_NEAR(sum, 1.0, 1e-5);
  }
}

}  // namespace
}  // namespace axle::onnx
