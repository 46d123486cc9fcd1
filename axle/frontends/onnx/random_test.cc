// The random ops (kernels/random_ops.cc) on models larger than ONNX's node
// tests: range and moments of RandomUniform and RandomNormal, Bernoulli's
// and Multinomial's frequencies, seeded determinism across sessions, fresh
// draws across runs, cpu against the interpreter bit for bit, and errors.
// Every draw is a fixed function of the seed and the run count, so the
// statistics are deterministic; their bounds are about 5 standard errors.
#include <cmath>

#include "absl/strings/match.h"
#include "axle/frontends/onnx/onnx_test_util.h"
#include "axle/frontends/onnx/session.h"
#include "gtest/gtest.h"

namespace axle::onnx {
namespace {

graph::Graph OneNode(graph::Node node, std::vector<graph::ValueInfo> inputs = {}) {
  graph::Graph g;
  g.opsets[""] = 15;
  g.inputs = std::move(inputs);
  g.outputs = {{node.outputs[0]}};
  g.nodes = {std::move(node)};
  return g;
}

graph::Node Generator(const std::string& op, std::vector<int64_t> shape, float seed) {
  graph::Node n = MakeNode("gen", op, {}, {"y"});
  n.attrs["shape"] = std::move(shape);
  n.attrs["seed"] = seed;
  return n;
}

std::unique_ptr<Session> Open(graph::Graph g, const char* platform = "cpu") {
  Session::Options options;
  options.platform = platform;
  absl::StatusOr<std::unique_ptr<Session>> s = Session::FromGraph(std::move(g), options);
  CHECK(s.ok()) << s.status();
  return std::move(*s);
}

Literal RunOnce(Session& s, const std::vector<Literal>& inputs = {}) {
  absl::StatusOr<std::vector<Literal>> y = s.Run(inputs);
  CHECK(y.ok()) << y.status();
  return std::move((*y)[0]);
}

struct Moments {
  double min = INFINITY, max = -INFINITY, mean = 0, variance = 0;
};
Moments MomentsOf(const Literal& x) {
  Moments m;
  const int64_t n = x.element_count();
  for (int64_t i = 0; i < n; ++i) {
    double v = x.GetAsDouble(i);
    m.min = std::min(m.min, v);
    m.max = std::max(m.max, v);
    m.mean += v / n;
  }
  for (int64_t i = 0; i < n; ++i) m.variance += std::pow(x.GetAsDouble(i) - m.mean, 2) / n;
  return m;
}

TEST(RandomOpsTest, UniformRangeAndMoments) {
  graph::Node n = Generator("RandomUniform", {200, 100}, 5);
  n.attrs["low"] = -2.0f;
  n.attrs["high"] = 3.0f;
  std::unique_ptr<Session> s = Open(OneNode(n));
  Literal y = RunOnce(*s);
  EXPECT_EQ(y.shape(), ShapeUtil::MakeShape(F32, {200, 100}));
  Moments m = MomentsOf(y);
  EXPECT_GE(m.min, -2);
  EXPECT_LT(m.max, 3);
  EXPECT_NEAR(m.mean, 0.5, 0.05);  // sd of the mean 0.010
  EXPECT_NEAR(m.variance, 25.0 / 12, 25.0 / 12 * 0.05);
}

TEST(RandomOpsTest, NormalMomentsInDouble) {
  graph::Node n = Generator("RandomNormal", {20000}, 1);
  n.attrs["mean"] = 1.0f;
  n.attrs["scale"] = 2.0f;
  n.attrs["dtype"] = int64_t{11};  // DOUBLE
  std::unique_ptr<Session> s = Open(OneNode(n));
  Literal y = RunOnce(*s);
  EXPECT_EQ(y.shape().element_type(), F64);
  Moments m = MomentsOf(y);
  EXPECT_NEAR(m.mean, 1, 0.07);  // sd of the mean 0.014
  EXPECT_NEAR(std::sqrt(m.variance), 2, 0.1);
  EXPECT_TRUE(std::isfinite(m.min) && std::isfinite(m.max));
}

TEST(RandomOpsTest, LikeTakesTheInputsShapeAndType) {
  graph::Node n = MakeNode("gen", "RandomNormalLike", {"x"}, {"y"});
  std::unique_ptr<Session> s =
      Open(OneNode(n, {{"x", F16, std::vector<graph::Dim>{{3, ""}, {4, ""}}}}));
  Literal x(ShapeUtil::MakeShape(F16, {3, 4}));
  Literal y = RunOnce(*s, {x.Clone()});
  EXPECT_EQ(y.shape(), ShapeUtil::MakeShape(F16, {3, 4}));
}

TEST(RandomOpsTest, SeededDrawsRepeatAcrossSessionsAndAdvanceAcrossRuns) {
  auto uniform = [](float seed) { return OneNode(Generator("RandomUniform", {64}, seed)); };
  std::unique_ptr<Session> a = Open(uniform(7)), b = Open(uniform(7)), c = Open(uniform(8));
  Literal a1 = RunOnce(*a), a2 = RunOnce(*a);
  Literal b1 = RunOnce(*b), b2 = RunOnce(*b);
  EXPECT_EQ(a1, b1);
  EXPECT_EQ(a2, b2);
  EXPECT_NE(a1, a2);           // each run draws afresh
  EXPECT_NE(a1, RunOnce(*c));  // another seed, other values
  // The interpreter draws the same bits.
  std::unique_ptr<Session> i = Open(uniform(7), "interpreter");
  EXPECT_EQ(RunOnce(*i), a1);
}

TEST(RandomOpsTest, BernoulliFrequency) {
  graph::Node n = MakeNode("coin", "Bernoulli", {"p"}, {"y"});
  n.attrs["seed"] = 3.0f;
  n.attrs["dtype"] = int64_t{6};  // INT32
  std::unique_ptr<Session> s =
      Open(OneNode(n, {{"p", F32, std::vector<graph::Dim>{{3, ""}, {8000, ""}}}}));
  Literal p(ShapeUtil::MakeShape(F32, {3, 8000}));
  const float probability[3] = {0, 0.25, 1};
  for (int64_t i = 0; i < p.element_count(); ++i) p.SetFromDouble(i, probability[i / 8000]);
  Literal y = RunOnce(*s, {p.Clone()});
  EXPECT_EQ(y.shape().element_type(), S32);
  int64_t ones[3] = {0, 0, 0};
  for (int64_t i = 0; i < y.element_count(); ++i) {
    double v = y.GetAsDouble(i);
    ASSERT_TRUE(v == 0 || v == 1) << v;
    ones[i / 8000] += v == 1;
  }
  EXPECT_EQ(ones[0], 0);
  EXPECT_NEAR(ones[1] / 8000.0, 0.25, 0.025);  // sd 0.005
  EXPECT_EQ(ones[2], 8000);
}

TEST(RandomOpsTest, MultinomialFrequencies) {
  graph::Node n = MakeNode("draw", "Multinomial", {"logits"}, {"y"});
  n.attrs["sample_size"] = int64_t{10000};
  n.attrs["seed"] = 2.0f;
  n.attrs["dtype"] = int64_t{7};  // INT64
  std::unique_ptr<Session> s =
      Open(OneNode(n, {{"logits", F32, std::vector<graph::Dim>{{2, ""}, {3, ""}}}}));
  // Row 0: probabilities 0.1, 0.2, 0.7 (as unnormalized logs); row 1: all
  // on class 2.
  Literal logits = LiteralUtil::CreateR2<float>(
      {{std::log(0.1f) + 4, std::log(0.2f) + 4, std::log(0.7f) + 4}, {-100, -100, 0}});
  Literal y = RunOnce(*s, {logits.Clone()});
  EXPECT_EQ(y.shape(), ShapeUtil::MakeShape(S64, {2, 10000}));
  int64_t count[2][3] = {};
  for (int64_t i = 0; i < y.element_count(); ++i) {
    int64_t k = static_cast<int64_t>(y.GetAsDouble(i));
    ASSERT_TRUE(k >= 0 && k < 3) << k;
    ++count[i / 10000][k];
  }
  EXPECT_NEAR(count[0][0] / 1e4, 0.1, 0.02);
  EXPECT_NEAR(count[0][1] / 1e4, 0.2, 0.02);
  EXPECT_NEAR(count[0][2] / 1e4, 0.7, 0.025);
  EXPECT_EQ(count[1][2], 10000);
}

TEST(RandomOpsTest, Errors) {
  graph::Node ints = Generator("RandomUniform", {4}, 1);
  ints.attrs["dtype"] = int64_t{6};
  absl::StatusOr<std::unique_ptr<Session>> s = Session::FromGraph(OneNode(ints), {});
  absl::StatusOr<std::vector<Literal>> y = s.ok() ? (*s)->Run({}) : s.status();
  ASSERT_FALSE(y.ok());
  EXPECT_EQ(y.status().code(), absl::StatusCode::kUnimplemented) << y.status();
  EXPECT_TRUE(absl::StrContains(y.status().message(), "RandomUniform")) << y.status();

  graph::Node range = Generator("RandomUniform", {4}, 1);
  range.attrs["low"] = 2.0f;
  range.attrs["high"] = 1.0f;
  s = Session::FromGraph(OneNode(range), {});
  y = s.ok() ? (*s)->Run({}) : s.status();
  ASSERT_FALSE(y.ok());
  EXPECT_TRUE(absl::StrContains(y.status().message(), "low 2 is above high 1")) << y.status();

  graph::Node no_shape = MakeNode("gen", "RandomNormal", {}, {"y"});
  s = Session::FromGraph(OneNode(no_shape), {});
  y = s.ok() ? (*s)->Run({}) : s.status();
  ASSERT_FALSE(y.ok());
  EXPECT_TRUE(absl::StrContains(y.status().message(), "shape")) << y.status();
}

}  // namespace
}  // namespace axle::onnx
