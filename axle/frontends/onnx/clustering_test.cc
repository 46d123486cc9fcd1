// Clustering and host fallbacks end to end: the usual models are one
// cluster; models with data-dependent shapes (testdata/make_models.py:
// MatMul -> NonZero -> Gather, a Resize whose sizes come from the data,
// Compress -> Unique) run as clusters with host kernels between them, agree
// with numpy on cpu and the interpreter, compile each cluster per its own
// signature, and report the fallbacks.
#include <thread>

#include "absl/strings/match.h"
#include "axle/frontends/onnx/onnx_test_util.h"
#include "axle/frontends/onnx/session.h"
#include "gtest/gtest.h"

namespace axle::onnx {
namespace {

std::string TestData(const std::string& name) {
  return std::string(AXLE_ONNX_TESTDATA_SOURCE_DIR) + "/" + name;
}

std::unique_ptr<Session> LoadSession(const std::string& model, const char* platform) {
  Session::Options options;
  options.platform = platform;
  absl::StatusOr<std::unique_ptr<Session>> s =
      Session::Load(TestData(model + "/model.onnx"), options);
  CHECK(s.ok()) << s.status();
  return std::move(*s);
}

Literal R4(const std::vector<int64_t>& dims, const std::vector<float>& values) {
  Literal l(ShapeUtil::MakeShape(F32, dims));
  for (size_t i = 0; i < values.size(); ++i) l.SetFromDouble(static_cast<int64_t>(i), values[i]);
  return l;
}

TEST(ClusteringTest, UsualModelsAreOneCluster) {
  for (const char* model : {"mlp", "cnn"}) {
    std::unique_ptr<Session> session = LoadSession(model, "cpu");
    ClusteringReport report = session->Clustering();
    EXPECT_EQ(report.clusters.size(), 1u) << model << "\n" << report.ToString();
    EXPECT_TRUE(report.fallbacks.empty()) << model << "\n" << report.ToString();
    EXPECT_EQ(report.clusters[0].nodes.size(), session->graph().nodes.size()) << model;
    EXPECT_EQ(session->metrics().clusters, 1) << model;
  }
}

class ClusteredModelTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ClusteredModelTest, MatchesNumpyOnCpuAndInterpreter) {
  for (const char* platform : {"interpreter", "cpu"}) {
    CaseResult result = RunCase(TestData(GetParam()), platform);
    EXPECT_TRUE(result.status.ok()) << platform << ": " << result.status;
  }
}

INSTANTIATE_TEST_SUITE_P(Models, ClusteredModelTest,
                         ::testing::Values("nonzero_gather", "dynamic_resize", "unique_compress"));

TEST(ClusteringTest, NonZeroRunsOnTheHostBetweenTwoClusters) {
  std::unique_ptr<Session> session = LoadSession("nonzero_gather", "cpu");
  ClusteringReport report = session->Clustering();
  ASSERT_EQ(report.clusters.size(), 2u) << report.ToString();
  ASSERT_EQ(report.fallbacks.size(), 1u) << report.ToString();
  EXPECT_EQ(report.fallbacks[0].node, "node 'nz' (NonZero)");
  EXPECT_EQ(report.fallbacks[0].reason, "its output shape depends on the data");
  EXPECT_EQ(report.clusters[0].nodes.size(), 3u);  // MatMul, ReduceSum, Greater
  EXPECT_EQ(report.clusters[0].outputs, (std::vector<std::string>{"positive"}));
  EXPECT_EQ(report.clusters[1].inputs, (std::vector<std::string>{"nz", "x"}));

  // The rows of x are unit vectors: row i is selected when w1's row i sums
  // to more than 0, and x2 repeats x's rows twice.
  std::vector<float> eye(16, 0);
  for (int i = 0; i < 4; ++i) eye[i * 4 + i] = 1;
  Literal x = R4({4, 4}, eye);
  absl::StatusOr<std::vector<Literal>> y = session->Run({x});
  ASSERT_TRUE(y.ok()) << y.status();
  int64_t selected = (*y)[0].shape().dimensions(0);
  // Another batch size: cluster 0 compiles again; the same K reuses cluster 1.
  Literal x2 = R4({8, 4}, {});
  for (int64_t i = 0; i < 8; ++i) x2.SetFromDouble(i * 4 + i % 4, 1);
  y = session->Run({x2});
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ((*y)[0].shape().dimensions(0), 2 * selected);
  ASSERT_TRUE(session->Run({x}).ok());
  SessionMetrics m = session->metrics();
  EXPECT_EQ(m.runs, 3);
  EXPECT_EQ(m.host_kernel_runs, 3);
  EXPECT_EQ(m.compiles, 4);    // cluster 0 at N = 4, 8; cluster 1 at K = k, 2k
  EXPECT_EQ(m.cache_hits, 2);  // the third run
  EXPECT_EQ(session->Clustering().fallbacks[0].runs, 3);
}

TEST(ClusteringTest, DynamicResizeCompilesPerFactorNotPerValue) {
  std::unique_ptr<Session> session = LoadSession("dynamic_resize", "cpu");
  ClusteringReport report = session->Clustering();
  ASSERT_EQ(report.clusters.size(), 2u) << report.ToString();
  EXPECT_TRUE(report.fallbacks.empty());
  EXPECT_EQ(report.clusters[1].nodes, (std::vector<std::string>{"resize"}));
  ASSERT_EQ(report.clusters[1].constant_cuts.size(), 1u);
  EXPECT_TRUE(absl::StrContains(report.clusters[1].constant_cuts[0],
                                "node 'resize' (Resize) needs input 3 ('sizes') at compile time"))
      << report.ToString();

  Literal a = R4({1, 1, 2, 2}, {0.5, 1.5, 0.25, 1});   // factor 2
  Literal b = R4({1, 1, 2, 2}, {0.5, 1.25, 0.75, 1});  // factor 2, other values
  Literal c = R4({1, 1, 2, 2}, {0.5, 2.5, 0.25, 1});   // factor 3
  for (const Literal* x : {&a, &b, &c}) {
    absl::StatusOr<std::vector<Literal>> y = session->Run({*x});
    ASSERT_TRUE(y.ok()) << y.status();
    int64_t k = x == &c ? 3 : 2;
    ASSERT_EQ((*y)[0].shape().dimensions(), (std::vector<int64_t>{1, 1, 2 * k, 2 * k}));
    EXPECT_EQ((*y)[0].GetAsDouble(2 * k * k + k), x->GetAsDouble(3));  // nearest, floor
  }
  // Cluster 0 once (one shape); the Resize once per factor.
  EXPECT_EQ(session->metrics().compiles, 3);
  std::string hlo = *session->HloText({a});
  EXPECT_TRUE(absl::StrContains(hlo, "// cluster 1")) << hlo;
  EXPECT_TRUE(absl::StrContains(hlo, "f32[1,1,4,4]")) << hlo;
}

TEST(ClusteringTest, CompressAndUniqueAreFallbacksInOrder) {
  std::unique_ptr<Session> session = LoadSession("unique_compress", "interpreter");
  ClusteringReport report = session->Clustering();
  ASSERT_EQ(report.fallbacks.size(), 2u) << report.ToString();
  EXPECT_EQ(report.fallbacks[0].node, "node 'compress' (Compress)");
  EXPECT_EQ(report.fallbacks[1].node, "node 'unique' (Unique)");
  EXPECT_EQ(report.clusters.size(), 2u);
  Literal x = LiteralUtil::CreateR1<float>({1, -1, 2, 1, 0, 2, 1});
  absl::StatusOr<std::vector<Literal>> y = session->Run({x});
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ((*y)[0], LiteralUtil::CreateR1<float>({2, 4}));
  EXPECT_EQ((*y)[1], LiteralUtil::CreateR1<int64_t>({3, 2}));
  EXPECT_GT(session->metrics().host_kernel_time, absl::ZeroDuration());
  EXPECT_TRUE(absl::StrContains(session->Clustering().ToString(),
                                "host: node 'unique' (Unique): its output shape depends on the "
                                "data; 1 runs"))
      << session->Clustering().ToString();
}

TEST(ClusteringTest, ConcurrentRunsAgree) {
  std::unique_ptr<Session> session = LoadSession("nonzero_gather", "cpu");
  Literal x = R4({6, 4}, {});
  for (int64_t i = 0; i < 24; ++i) x.SetFromDouble(i, (i % 7) * 0.3 - 0.9);
  absl::StatusOr<std::vector<Literal>> expected = session->Run({x});
  ASSERT_TRUE(expected.ok()) << expected.status();
  std::vector<std::thread> threads;
  threads.reserve(4);
  std::vector<char> agree(4, 0);  // not vector<bool>: threads write apart
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      bool all = true;
      for (int i = 0; i < 10; ++i) {
        absl::StatusOr<std::vector<Literal>> y = session->Run({x});
        all &= y.ok() && (*y)[0] == (*expected)[0];
      }
      agree[t] = all ? 1 : 0;
    });
  }
  for (std::thread& t : threads) t.join();
  for (int t = 0; t < 4; ++t) EXPECT_TRUE(agree[t]) << "thread " << t;
  EXPECT_EQ(session->metrics().runs, 41);
  EXPECT_EQ(session->metrics().host_kernel_runs, 41);
  EXPECT_EQ(session->metrics().compiles, 2);
}

TEST(ClusteringTest, HostKernelErrorsNameTheNode) {
  graph::Graph g;
  g.opsets[""] = 13;
  g.inputs = {{"x", F32, std::nullopt}, {"keep", PRED, std::nullopt}};
  graph::Node compress;
  compress.name = "c";
  compress.op_type = "Compress";
  compress.inputs = {"x", "keep"};
  compress.outputs = {"y"};
  compress.attrs["axis"] = int64_t{0};
  g.nodes = {compress};
  g.outputs = {{"y"}};
  Session::Options options;
  absl::StatusOr<std::unique_ptr<Session>> session = Session::FromGraph(std::move(g), options);
  ASSERT_TRUE(session.ok()) << session.status();
  Literal x = LiteralUtil::CreateR1<float>({1, 2});
  Literal keep = LiteralUtil::CreateR1<bool>({true, false, true});
  absl::Status s = (*session)->Run({x, keep}).status();
  EXPECT_TRUE(absl::StrContains(s.message(),
                                "node 'c' (Compress): condition has 3 elements but the axis has "
                                "only 2"))
      << s;
  absl::StatusOr<std::vector<Literal>> y =
      (*session)->Run({x, LiteralUtil::CreateR1<bool>({false, true})});
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ((*y)[0], LiteralUtil::CreateR1<float>({2}));
  EXPECT_EQ((*session)->metrics().clusters, 0);
}

}  // namespace
}  // namespace axle::onnx
