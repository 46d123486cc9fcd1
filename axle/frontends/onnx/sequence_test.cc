// Sequences and optionals (kernels/sequence_ops.cc, the compiler's lists):
// the ops without an ONNX node test of their own (SplitToSequence,
// SequenceErase, SequenceAt at a runtime position, ConcatFromSequence,
// SequenceLength), a Loop carrying a sequence, sequence inputs and outputs
// through the Session, and the errors.
#include <memory>

#include "absl/strings/match.h"
#include "axle/core/literal_comparison.h"
#include "axle/frontends/graph/xla_compiler.h"
#include "axle/frontends/onnx/onnx_test_util.h"
#include "axle/frontends/onnx/session.h"
#include "gtest/gtest.h"

namespace axle::onnx {
namespace {

graph::ValueInfo Tensor(std::string name, PrimitiveType type, const std::vector<int64_t>& dims) {
  std::vector<graph::Dim> d;
  d.reserve(dims.size());
  for (int64_t size : dims) d.push_back({size, ""});
  return {std::move(name), type, d};
}

graph::ValueInfo Sequence(std::string name, PrimitiveType type) {
  graph::ValueInfo info{std::move(name), type, std::nullopt};
  info.kind = graph::ValueKind::kSequence;
  return info;
}

Literal Seq(std::vector<Literal> elements) { return Literal::MakeTuple(std::move(elements)); }

std::unique_ptr<Session> Load(graph::Graph g, const char* platform) {
  Session::Options options;
  options.platform = platform;
  absl::StatusOr<std::unique_ptr<Session>> session = Session::FromGraph(std::move(g), options);
  EXPECT_TRUE(session.ok()) << session.status();
  return session.ok() ? std::move(*session) : nullptr;
}

// x f32[4,2] -> rows as a sequence, row 1 erased, y inserted in front; its
// length, its tensors stacked, the tensor at runtime position p, and the
// sequence itself.
graph::Graph RowsGraph() {
  graph::Graph g;
  g.opsets[""] = 17;
  g.inputs = {Tensor("x", F32, {4, 2}), Tensor("y", F32, {2}), Tensor("p", S64, {})};
  g.initializers["one"] = LiteralUtil::CreateR0<int64_t>(1);
  g.initializers["zero"] = LiteralUtil::CreateR0<int64_t>(0);
  graph::Node split = MakeNode("split", "SplitToSequence", {"x"}, {"rows"});
  split.attrs["keepdims"] = int64_t{0};
  graph::Node concat = MakeNode("concat", "ConcatFromSequence", {"s2"}, {"stacked"});
  concat.attrs["axis"] = int64_t{0};
  concat.attrs["new_axis"] = int64_t{1};
  g.nodes = {split,
             MakeNode("erase", "SequenceErase", {"rows", "one"}, {"s1"}),
             MakeNode("insert", "SequenceInsert", {"s1", "y", "zero"}, {"s2"}),
             MakeNode("length", "SequenceLength", {"s2"}, {"n"}),
             concat,
             MakeNode("at", "SequenceAt", {"s2", "p"}, {"picked"})};
  g.outputs = {{"n"}, {"stacked"}, {"picked"}, Sequence("s2", F32)};
  return g;
}

TEST(SequenceTest, SplitEraseInsertAtConcatOnCpuAndInterpreter) {
  Literal x = LiteralUtil::CreateR2<float>({{0, 1}, {2, 3}, {4, 5}, {6, 7}});
  Literal y = LiteralUtil::CreateR1<float>({10, 11});
  for (const char* platform : {"interpreter", "cpu"}) {
    std::unique_ptr<Session> session = Load(RowsGraph(), platform);
    ASSERT_TRUE(session);
    for (int64_t p : {-1, 0, 2}) {
      absl::StatusOr<std::vector<Literal>> out =
          session->Run({x.Clone(), y.Clone(), LiteralUtil::CreateR0<int64_t>(p)});
      ASSERT_TRUE(out.ok()) << platform << ": " << out.status();
      ASSERT_EQ(out->size(), 4u);
      EXPECT_EQ((*out)[0], LiteralUtil::CreateR0<int64_t>(4)) << platform;
      EXPECT_EQ((*out)[1], LiteralUtil::CreateR2<float>({{10, 11}, {0, 1}, {4, 5}, {6, 7}}))
          << platform;
      Literal rows[] = {LiteralUtil::CreateR1<float>({10, 11}),
                        LiteralUtil::CreateR1<float>({0, 1}), LiteralUtil::CreateR1<float>({4, 5}),
                        LiteralUtil::CreateR1<float>({6, 7})};
      EXPECT_EQ((*out)[2], rows[p < 0 ? p + 4 : p]) << platform << " p=" << p;
      std::vector<Literal> elements;
      for (const Literal& r : rows) elements.push_back(r.Clone());
      EXPECT_TRUE(LiteralsEqual(Seq(std::move(elements)), (*out)[3]).ok()) << platform;
    }
    // The runtime position selects inside one executable.
    EXPECT_EQ(session->metrics().compiles, 1) << platform;
  }
}

// Loop(trip, "", SequenceEmpty) whose body appends the iteration number:
// the sequence's length grows per iteration, so the loop unrolls.
graph::Graph AppendLoop() {
  auto body = std::make_shared<graph::Graph>();
  body->opsets[""] = 17;
  body->inputs = {Tensor("i", S64, {}), Tensor("cond_in", PRED, {}), Sequence("seq_in", S64)};
  body->nodes = {MakeNode("keep", "Identity", {"cond_in"}, {"cond_out"}),
                 MakeNode("append", "SequenceInsert", {"seq_in", "i"}, {"seq_out"})};
  body->outputs = {{"cond_out"}, Sequence("seq_out", S64)};
  graph::Graph g;
  g.opsets[""] = 17;
  g.inputs = {Tensor("trip", S64, {})};
  graph::Node empty = MakeNode("empty", "SequenceEmpty", {}, {"e"});
  empty.attrs["dtype"] = int64_t{7};  // INT64
  graph::Node loop = MakeNode("loop", "Loop", {"trip", "", "e"}, {"out"});
  loop.attrs["body"] = std::shared_ptr<const graph::Graph>(body);
  g.nodes = {empty, loop};
  g.outputs = {Sequence("out", S64)};
  return g;
}

TEST(SequenceTest, LoopCarryingASequenceUnrollsPerTripCount) {
  for (const char* platform : {"interpreter", "cpu"}) {
    std::unique_ptr<Session> session = Load(AppendLoop(), platform);
    ASSERT_TRUE(session);
    for (int64_t trip : {3, 1}) {
      absl::StatusOr<std::vector<Literal>> out =
          session->Run({LiteralUtil::CreateR0<int64_t>(trip)});
      ASSERT_TRUE(out.ok()) << platform << ": " << out.status();
      std::vector<Literal> want;
      for (int64_t i = 0; i < trip; ++i) want.push_back(LiteralUtil::CreateR0<int64_t>(i));
      EXPECT_TRUE(LiteralsEqual(Seq(std::move(want)), (*out)[0]).ok())
          << platform << " trip=" << trip << ": " << (*out)[0].ToString();
    }
    // The trip count is a compile-time constant input: one compile per value.
    EXPECT_EQ(session->metrics().compiles, 2) << platform;
  }
}

TEST(SequenceTest, LoopCarryingASequenceWithARuntimeTripCountIsUnimplemented) {
  graph::XlaArgument trip{ShapeUtil::MakeShape(S64, {}), {}};
  absl::StatusOr<graph::XlaCompilationResult> result =
      graph::XlaCompiler({}).Compile(AppendLoop(), {trip});
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kUnimplemented) << result.status();
  EXPECT_TRUE(absl::StrContains(result.status().message(), "node 'loop' (Loop)"))
      << result.status();
  EXPECT_TRUE(absl::StrContains(result.status().message(), "trip count")) << result.status();
}

TEST(SequenceTest, SequenceInputPassesThroughAndMapsToTensors) {
  // seq -> Identity -> out; SequenceAt(seq, 1) -> second.
  graph::Graph g;
  g.opsets[""] = 17;
  g.inputs = {Sequence("seq", F32)};
  g.initializers["one"] = LiteralUtil::CreateR0<int64_t>(1);
  g.nodes = {MakeNode("id", "Identity", {"seq"}, {"out"}),
             MakeNode("at", "SequenceAt", {"seq", "one"}, {"second"})};
  g.outputs = {Sequence("out", F32), {"second"}};
  std::unique_ptr<Session> session = Load(std::move(g), "cpu");
  ASSERT_TRUE(session);
  std::vector<Literal> elements;
  elements.push_back(LiteralUtil::CreateR1<float>({1, 2, 3}));
  elements.push_back(LiteralUtil::CreateR2<float>({{4}, {5}}));
  Literal seq = Seq(std::move(elements));
  absl::StatusOr<std::vector<Literal>> out = session->Run({seq.Clone()});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE(LiteralsEqual(seq, (*out)[0]).ok()) << (*out)[0].ToString();
  EXPECT_EQ((*out)[1], LiteralUtil::CreateR2<float>({{4}, {5}}));

  // A tensor where the graph declares a sequence.
  absl::StatusOr<std::vector<Literal>> bad = session->Run({LiteralUtil::CreateR1<float>({1})});
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(absl::StrContains(bad.status().message(), "input 'seq'")) << bad.status();
  EXPECT_TRUE(absl::StrContains(bad.status().message(), "sequence")) << bad.status();
}

TEST(SequenceTest, ErrorsNameTheNode) {
  struct Case {
    const char* what;
    std::vector<graph::Node> nodes;
    const char* message;
    absl::StatusCode code;
  };
  graph::Node none = MakeNode("none", "Optional", {}, {"o"});
  none.attrs["type"] = std::string("tensor(float)");
  std::vector<Case> cases = {
      {"a sequence into Add",
       {MakeNode("seq", "SequenceConstruct", {"x"}, {"s"}),
        MakeNode("add", "Add", {"s", "x"}, {"y"})},
       "node 'add' (Add): input 's' is a sequence",
       absl::StatusCode::kInvalidArgument},
      {"the element of an empty optional",
       {none, MakeNode("get", "OptionalGetElement", {"o"}, {"y"})},
       "node 'get' (OptionalGetElement): the optional input 'o' holds no value",
       absl::StatusCode::kInvalidArgument},
      {"SequenceAt out of range",
       {MakeNode("seq", "SequenceConstruct", {"x"}, {"s"}),
        MakeNode("at", "SequenceAt", {"s", "five"}, {"y"})},
       "node 'at' (SequenceAt): position 5 is out of range",
       absl::StatusCode::kInvalidArgument},
      {"a position that depends on data",
       {MakeNode("seq", "SequenceConstruct", {"x"}, {"s"}), MakeNode("neg", "Neg", {"x"}, {"nx"}),
        MakeNode("cast", "Cast", {"nx"}, {"pos"}),
        MakeNode("erase", "SequenceErase", {"s", "pos"}, {"y"})},
       "",
       absl::StatusCode::kInvalidArgument},
  };
  cases.back().nodes[2].attrs["to"] = int64_t{7};
  for (Case& c : cases) {
    graph::Graph g;
    g.opsets[""] = 17;
    g.inputs = {Tensor("x", F32, {})};
    g.initializers["five"] = LiteralUtil::CreateR0<int64_t>(5);
    g.nodes = c.nodes;
    g.outputs = {{"y"}};
    graph::XlaArgument x{ShapeUtil::MakeShape(F32, {}), {}};
    absl::StatusOr<graph::XlaCompilationResult> result = graph::XlaCompiler({}).Compile(g, {x});
    ASSERT_FALSE(result.ok()) << c.what;
    if (std::string(c.message).empty()) {
      // SequenceErase's position computed from a runtime input.
      EXPECT_EQ(result.status().code(), absl::StatusCode::kUnimplemented) << result.status();
      EXPECT_TRUE(absl::StrContains(result.status().message(),
                                    "node 'erase' (SequenceErase): the position"))
          << result.status();
      continue;
    }
    EXPECT_EQ(result.status().code(), c.code) << c.what << ": " << result.status();
    EXPECT_TRUE(absl::StrContains(result.status().message(), c.message))
        << c.what << ": " << result.status();
  }
}

}  // namespace
}  // namespace axle::onnx
