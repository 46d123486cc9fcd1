// Session: one compile per signature and never again for a repeated one,
// metrics, constant inputs found by the backwards constant analysis, and
// clear errors for bad inputs and unsupported ops.
#include "axle/frontends/onnx/session.h"

#include <cstdlib>
#include <filesystem>

#include "absl/strings/match.h"
#include "axle/core/literal_comparison.h"
#include "axle/frontends/onnx/onnx_test_util.h"
#include "axle/runtime/compilation_cache.h"
#include "gtest/gtest.h"

namespace axle::onnx {
namespace {

// y = Relu(a + b) with numpy broadcasting; a is [N, 3], b is [3].
graph::Graph AddRelu() {
  graph::Graph g;
  g.opsets[""] = 13;
  g.inputs = {{"a", F32, std::vector<graph::Dim>{{std::nullopt, "N"}, {3, ""}}},
              {"b", F32, std::vector<graph::Dim>{{3, ""}}}};
  g.nodes = {MakeNode("add", "Add", {"a", "b"}, {"s"}), MakeNode("relu", "Relu", {"s"}, {"y"})};
  g.outputs = {{"y"}};
  return g;
}

Literal Iota(const std::vector<int64_t>& dims, float offset) {
  Literal l(ShapeUtil::MakeShape(F32, dims));
  for (int64_t i = 0; i < l.element_count(); ++i) l.SetFromDouble(i, i + offset);
  return l;
}

std::unique_ptr<Session> MakeSession(graph::Graph g, const char* platform) {
  Session::Options options;
  options.platform = platform;
  absl::StatusOr<std::unique_ptr<Session>> s = Session::FromGraph(std::move(g), options);
  CHECK(s.ok()) << s.status();
  return std::move(*s);
}

TEST(SessionTest, CompilesOncePerSignature) {
  std::unique_ptr<Session> session = MakeSession(AddRelu(), "cpu");
  Literal b = LiteralUtil::CreateR1<float>({-1, 0, -10});
  Literal a2 = Iota({2, 3}, -2), a4 = Iota({4, 3}, 0);
  absl::StatusOr<std::vector<Literal>> y = session->Run({a2, b});
  ASSERT_TRUE(y.ok()) << y.status();
  // a2 = [[-2,-1,0],[1,2,3]] + [-1,0,-10] -> relu
  EXPECT_EQ((*y)[0], LiteralUtil::CreateR2<float>({{0, 0, 0}, {0, 2, 0}}));
  EXPECT_EQ(session->metrics().compiles, 1);
  EXPECT_EQ(session->metrics().cache_hits, 0);

  ASSERT_TRUE(session->Run({a2, b}).ok());
  ASSERT_TRUE(session->Run({a4, b}).ok());
  EXPECT_EQ(session->metrics().compiles, 2);
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(session->Run({a2, b}).ok());
    ASSERT_TRUE(session->Run({a4, b}).ok());
  }
  SessionMetrics m = session->metrics();
  EXPECT_EQ(m.compiles, 2);  // a repeated signature never compiles again
  EXPECT_EQ(m.cache_hits, 11);
  EXPECT_EQ(m.runs, 13);
  EXPECT_GT(m.compile_time, absl::ZeroDuration());
}

TEST(SessionTest, CpuAgreesWithInterpreter) {
  std::unique_ptr<Session> cpu = MakeSession(AddRelu(), "cpu");
  std::unique_ptr<Session> interpreter = MakeSession(AddRelu(), "interpreter");
  Literal a = Iota({5, 3}, -7.5), b = LiteralUtil::CreateR1<float>({0.5, -2, 3});
  absl::StatusOr<std::vector<Literal>> y1 = cpu->Run({a, b});
  absl::StatusOr<std::vector<Literal>> y2 = interpreter->Run({a, b});
  ASSERT_TRUE(y1.ok()) << y1.status();
  ASSERT_TRUE(y2.ok()) << y2.status();
  EXPECT_TRUE(LiteralsNear((*y2)[0], (*y1)[0], ErrorSpec(1e-6, 1e-6)).ok());
}

// A linear layer's MatMul (x [2, 3, 4] by a matrix w [4, 5]) is one
// unbatched dot over x's leading dims, without broadcasting w.
TEST(SessionTest, MatMulByAMatrixIsOneUnbatchedDot) {
  graph::Graph g;
  g.opsets[""] = 13;
  g.inputs = {{"x", F32, std::vector<graph::Dim>{{2, ""}, {3, ""}, {4, ""}}},
              {"w", F32, std::vector<graph::Dim>{{4, ""}, {5, ""}}}};
  g.nodes = {MakeNode("matmul", "MatMul", {"x", "w"}, {"y"})};
  g.outputs = {{"y"}};
  Literal x = Iota({2, 3, 4}, -11.5), w = Iota({4, 5}, -9);
  Literal want(ShapeUtil::MakeShape(F32, {2, 3, 5}));
  for (int64_t r = 0; r < 6; ++r) {
    for (int64_t j = 0; j < 5; ++j) {
      double sum = 0;
      for (int64_t k = 0; k < 4; ++k) sum += (r * 4 + k - 11.5) * (k * 5 + j - 9);
      want.SetFromDouble(r * 5 + j, sum);
    }
  }
  for (const char* platform : {"cpu", "interpreter"}) {
    std::unique_ptr<Session> session = MakeSession(g, platform);
    absl::StatusOr<std::string> hlo = session->HloText({x, w});
    ASSERT_TRUE(hlo.ok()) << hlo.status();
    EXPECT_FALSE(absl::StrContains(*hlo, "broadcast")) << *hlo;
    EXPECT_FALSE(absl::StrContains(*hlo, "batch_dims")) << *hlo;
    absl::StatusOr<std::vector<Literal>> y = session->Run({x, w});
    ASSERT_TRUE(y.ok()) << y.status();
    EXPECT_TRUE(LiteralsNear(want, (*y)[0], ErrorSpec(1e-5, 1e-5)).ok()) << platform;
  }
}

// An AveragePool without padding divides its window sums by the kernel's
// size, a scalar, not by a second reduce-window counting the elements of
// each window (an array the channels-last transposes of a CNN cannot move
// past).
TEST(SessionTest, UnpaddedAveragePoolDividesByTheKernelSize) {
  graph::Graph g;
  g.opsets[""] = 13;
  g.inputs = {{"x", F32, std::vector<graph::Dim>{{1, ""}, {2, ""}, {4, ""}, {6, ""}}}};
  graph::Node pool = MakeNode("pool", "AveragePool", {"x"}, {"y"});
  pool.attrs["kernel_shape"] = std::vector<int64_t>{2, 3};
  pool.attrs["strides"] = std::vector<int64_t>{2, 3};
  g.nodes = {pool};
  g.outputs = {{"y"}};
  Literal x = Iota({1, 2, 4, 6}, -20);
  // Window (c, i, j) covers rows 2i, 2i + 1 and columns 3j .. 3j + 2: its
  // mean is the element at row 2i + 0.5, column 3j + 1.
  Literal want(ShapeUtil::MakeShape(F32, {1, 2, 2, 2}));
  for (int64_t c = 0; c < 2; ++c) {
    for (int64_t i = 0; i < 2; ++i) {
      for (int64_t j = 0; j < 2; ++j) {
        want.SetFromDouble((c * 2 + i) * 2 + j, c * 24 + (2 * i + 0.5) * 6 + 3 * j + 1 - 20);
      }
    }
  }
  for (const char* platform : {"cpu", "interpreter"}) {
    std::unique_ptr<Session> session = MakeSession(g, platform);
    absl::StatusOr<std::string> hlo = session->HloText({x});
    ASSERT_TRUE(hlo.ok()) << hlo.status();
    size_t windows = 0;
    for (size_t at = hlo->find("reduce-window("); at != std::string::npos;
         at = hlo->find("reduce-window(", at + 1)) {
      ++windows;
    }
    EXPECT_EQ(windows, 1u) << *hlo;
    absl::StatusOr<std::vector<Literal>> y = session->Run({x});
    ASSERT_TRUE(y.ok()) << y.status();
    EXPECT_TRUE(LiteralsNear(want, (*y)[0], ErrorSpec(1e-5, 1e-5)).ok()) << platform;
  }
}

TEST(SessionTest, FedShapesAreCompileTimeConstantsKeyedByValue) {
  graph::Graph g;
  g.opsets[""] = 13;
  g.inputs = {{"x", F32, std::nullopt}, {"shape", S64, std::nullopt}};
  g.nodes = {MakeNode("reshape", "Reshape", {"x", "shape"}, {"y"})};
  g.outputs = {{"y"}};
  std::unique_ptr<Session> session = MakeSession(std::move(g), "interpreter");
  Literal x = Iota({6}, 0);
  Literal s23 = LiteralUtil::CreateR1<int64_t>({2, 3}),
          s32 = LiteralUtil::CreateR1<int64_t>({3, -1});
  absl::StatusOr<std::vector<Literal>> y = session->Run({x, s23});
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ((*y)[0].shape().dimensions(), (std::vector<int64_t>{2, 3}));
  y = session->Run({x, s32});
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ((*y)[0].shape().dimensions(), (std::vector<int64_t>{3, 2}));
  ASSERT_TRUE(session->Run({x, s23}).ok());
  EXPECT_EQ(session->metrics().compiles, 2);
  EXPECT_EQ(session->metrics().cache_hits, 1);
  absl::Status bad = session->Run({x, LiteralUtil::CreateR1<int64_t>({4, -1})}).status();
  EXPECT_TRUE(absl::StrContains(bad.message(), "node 'reshape' (Reshape): cannot reshape f32[6]"))
      << bad;
}

TEST(SessionTest, BadInputsAreErrors) {
  std::unique_ptr<Session> session = MakeSession(AddRelu(), "cpu");
  Literal b = LiteralUtil::CreateR1<float>({1, 2, 3});
  absl::Status s = session->Run({b}).status();
  EXPECT_TRUE(absl::StrContains(s.message(), "2 inputs but 1 were given")) << s;
  s = session->Run({Iota({2, 4}, 0), b}).status();
  EXPECT_TRUE(absl::StrContains(s.message(), "input 'a' dimension 1 must be 3")) << s;
  s = session->Run({LiteralUtil::CreateR2<int32_t>({{1, 2, 3}}), b}).status();
  EXPECT_TRUE(absl::StrContains(s.message(), "input 'a' must have element type f32")) << s;
  EXPECT_EQ(session->metrics().compiles, 0);
}

TEST(SessionTest, UnsupportedOpNamesOpOpsetAndNode) {
  graph::Graph g = AddRelu();
  g.nodes[1].op_type = "NoSuchOp";
  std::unique_ptr<Session> session = MakeSession(std::move(g), "cpu");
  absl::Status s =
      session->Run({Iota({1, 3}, 0), LiteralUtil::CreateR1<float>({1, 2, 3})}).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented);
  EXPECT_TRUE(absl::StrContains(
      s.message(),
      "node 'relu' (NoSuchOp): no kernel for op 'NoSuchOp' at opset 13 on device 'cpu'"))
      << s;
}

TEST(SessionTest, UnknownPlatformAndBadGraphsFailAtCreation) {
  Session::Options options;
  options.platform = "tpu";
  EXPECT_FALSE(Session::FromGraph(AddRelu(), options).ok());
  graph::Graph g = AddRelu();
  g.nodes[1].inputs = {"missing"};
  absl::Status s = Session::FromGraph(std::move(g), {}).status();
  EXPECT_TRUE(absl::StrContains(s.message(), "input 'missing'")) << s;
}

// With AXLE_CACHE_DIR, a session compiles to a file there, and a later
// session with the in-memory cache empty (as in a fresh process; the tool
// test, tests/onnx_tool_test.sh, uses two processes) loads it.
TEST(SessionTest, AxleCacheDirKeepsCompiledCode) {
  std::string dir = ::testing::TempDir() + "/onnx_session_cache";
  std::filesystem::remove_all(dir);
  setenv("AXLE_CACHE_DIR", dir.c_str(), 1);
  Literal a = Iota({3, 3}, -4), b = LiteralUtil::CreateR1<float>({1, 2, 3});
  CompilationCache::Global().Clear();
  std::unique_ptr<Session> first = MakeSession(AddRelu(), "cpu");
  absl::StatusOr<std::vector<Literal>> y1 = first->Run({a, b});
  ASSERT_TRUE(y1.ok()) << y1.status();
  EXPECT_EQ(first->metrics().disk_cache_hits, 0);
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    files += entry.path().extension() == ".axle-exe";
  }
  EXPECT_EQ(files, 1);
  CompilationCache::Global().Clear();
  std::unique_ptr<Session> second = MakeSession(AddRelu(), "cpu");
  absl::StatusOr<std::vector<Literal>> y2 = second->Run({a, b});
  unsetenv("AXLE_CACHE_DIR");
  ASSERT_TRUE(y2.ok()) << y2.status();
  EXPECT_EQ(second->metrics().compiles, 1);
  EXPECT_EQ(second->metrics().disk_cache_hits, 1);
  EXPECT_EQ((*y1)[0], (*y2)[0]);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace axle::onnx
