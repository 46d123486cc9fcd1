// Bidirectional RNN, GRU and LSTM nodes (which run both directions in one
// loop, kernels/rnn_ops.cc) against a forward and a reverse node of the
// same op, each given one direction's weights: with sequence_lens, initial
// states, peepholes, and with the same or different activations in the two
// directions, on the cpu and interpreter platforms.
#include <cstdint>

#include "axle/core/literal_comparison.h"
#include "axle/frontends/onnx/session.h"
#include "gtest/gtest.h"

namespace axle::onnx {
namespace {

constexpr int64_t kSteps = 5, kBatch = 3, kInput = 4, kHidden = 6, kDirs = 2;

graph::ValueInfo In(std::string name, PrimitiveType type, const std::vector<int64_t>& dims) {
  std::vector<graph::Dim> d(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) d[i].size = dims[i];
  return {std::move(name), type, d};
}

// Deterministic values in [-1, 1).
std::vector<float> Values(int64_t n, uint32_t seed) {
  std::vector<float> v(n);
  for (float& x : v) {
    seed = seed * 1664525u + 1013904223u;
    x = static_cast<float>(seed >> 8) / static_cast<float>(1 << 23) - 1.0f;
  }
  return v;
}

// `v`, [dirs, rest...] flattened, restricted to direction d.
std::vector<float> Direction(const std::vector<float>& v, int64_t dirs, int64_t d) {
  int64_t n = static_cast<int64_t>(v.size()) / dirs;
  return std::vector<float>(v.begin() + d * n, v.begin() + (d + 1) * n);
}

struct RnnCase {
  std::string op;
  int64_t gates;
  std::vector<std::string> activations;  // per direction, for the two directions
};

absl::StatusOr<std::vector<Literal>> Run(const RnnCase& c, const std::string& direction,
                                         const std::vector<std::string>& activations,
                                         const std::vector<std::vector<float>>& values,
                                         const std::string& platform) {
  int64_t dirs = direction == "bidirectional" ? 2 : 1, g = c.gates, h = kHidden;
  std::vector<std::vector<int64_t>> dims = {{kSteps, kBatch, kInput},
                                            {dirs, g * h, kInput},
                                            {dirs, g * h, h},
                                            {dirs, 2 * g * h},
                                            {kBatch},
                                            {dirs, kBatch, h}};
  std::vector<std::string> names = {"X", "W", "R", "B", "sequence_lens", "initial_h"};
  if (c.op == "LSTM") {
    dims.push_back({dirs, kBatch, h});
    dims.push_back({dirs, 3 * h});
    names.push_back("initial_c");
    names.push_back("P");
  }
  graph::Graph graph;
  graph.opsets[""] = 17;
  graph::Node node;
  node.name = "rnn";
  node.op_type = c.op;
  std::vector<Literal> args;
  for (size_t i = 0; i < names.size(); ++i) {
    bool lens = names[i] == "sequence_lens";
    graph.inputs.push_back(In(names[i], lens ? S32 : F32, dims[i]));
    node.inputs.push_back(names[i]);
    if (lens) {
      args.push_back(LiteralUtil::CreateR1<int32_t>({kSteps, 3, 1}));
    } else {
      args.push_back(LiteralUtil::CreateFromDimensions<float>(dims[i], values[i]));
    }
  }
  int outputs = c.op == "LSTM" ? 3 : 2;
  for (int i = 0; i < outputs; ++i) {
    node.outputs.push_back("y" + std::to_string(i));
    graph.outputs.push_back({"y" + std::to_string(i)});
  }
  node.attrs["hidden_size"] = int64_t{kHidden};
  node.attrs["direction"] = direction;
  node.attrs["activations"] = activations;
  graph.nodes = {node};
  Session::Options options;
  options.platform = platform;
  absl::StatusOr<std::unique_ptr<Session>> session = Session::FromGraph(graph, options);
  if (!session.ok()) return session.status();
  return (*session)->Run(args);
}

void ExpectBidirectionalIsForwardAndReverse(const RnnCase& c) {
  int64_t g = c.gates, h = kHidden;
  // The bidirectional node's inputs, [2, ...] where a direction is first.
  std::vector<std::vector<float>> values = {Values(kSteps * kBatch * kInput, 1),
                                            Values(kDirs * g * h * kInput, 2),
                                            Values(kDirs * g * h * h, 3),
                                            Values(kDirs * 2 * g * h, 4),
                                            {},
                                            Values(kDirs * kBatch * h, 5),
                                            Values(kDirs * kBatch * h, 6),
                                            Values(kDirs * 3 * h, 7)};
  size_t per_dir = c.activations.size() / 2;
  for (const char* platform : {"cpu", "interpreter"}) {
    absl::StatusOr<std::vector<Literal>> both =
        Run(c, "bidirectional", c.activations, values, platform);
    ASSERT_TRUE(both.ok()) << both.status();
    for (int64_t d = 0; d < 2; ++d) {
      std::vector<std::vector<float>> one = values;
      for (size_t i : {1, 2, 3, 5, 6, 7}) one[i] = Direction(values[i], 2, d);
      std::vector<std::string> acts(c.activations.begin() + d * per_dir,
                                    c.activations.begin() + (d + 1) * per_dir);
      absl::StatusOr<std::vector<Literal>> single =
          Run(c, d == 0 ? "forward" : "reverse", acts, one, platform);
      ASSERT_TRUE(single.ok()) << single.status();
      // Y [T, D, B, H]: direction d of the bidirectional node.
      std::vector<float> y((*both)[0].data<float>().begin(), (*both)[0].data<float>().end());
      std::vector<float> y_d;
      for (int64_t t = 0; t < kSteps; ++t) {
        auto first = y.begin() + (t * 2 + d) * kBatch * h;
        y_d.insert(y_d.end(), first, first + kBatch * h);
      }
      std::vector<Literal> expected = {
          LiteralUtil::CreateFromDimensions<float>({kSteps, 1, kBatch, h}, y_d)};
      for (size_t k = 1; k < both->size(); ++k) {
        std::vector<float> state((*both)[k].data<float>().begin(), (*both)[k].data<float>().end());
        expected.push_back(
            LiteralUtil::CreateFromDimensions<float>({1, kBatch, h}, Direction(state, 2, d)));
      }
      for (size_t k = 0; k < expected.size(); ++k) {
        absl::Status near = LiteralsNear(expected[k], (*single)[k], ErrorSpec(1e-5, 1e-4));
        EXPECT_TRUE(near.ok()) << c.op << " on " << platform << ", direction " << d << ", output "
                               << k << ": " << near;
      }
    }
  }
}

TEST(OnnxRnnTest, BidirectionalLstmIsForwardAndReverse) {
  ExpectBidirectionalIsForwardAndReverse(
      {"LSTM", 4, {"Sigmoid", "Tanh", "Tanh", "Sigmoid", "Tanh", "Tanh"}});
  ExpectBidirectionalIsForwardAndReverse(
      {"LSTM", 4, {"Sigmoid", "Tanh", "Tanh", "HardSigmoid", "Tanh", "Relu"}});
}

TEST(OnnxRnnTest, BidirectionalGruAndRnnAreForwardAndReverse) {
  ExpectBidirectionalIsForwardAndReverse({"GRU", 3, {"Sigmoid", "Tanh", "Sigmoid", "Tanh"}});
  ExpectBidirectionalIsForwardAndReverse(
      {"GRU", 3, {"Sigmoid", "Tanh", "HardSigmoid", "Softsign"}});
  ExpectBidirectionalIsForwardAndReverse({"RNN", 1, {"Tanh", "Relu"}});
}

}  // namespace
}  // namespace axle::onnx
