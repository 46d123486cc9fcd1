// The ONNX kernels added for the backend node tests: unsupported attribute
// values are Unimplemented errors naming the node, the op and the
// attribute; malformed inputs are InvalidArgument errors naming the node;
// and a few cases the node tests do not cover compute what ONNX says.
#include "absl/strings/match.h"
#include "axle/frontends/onnx/session.h"
#include "gtest/gtest.h"

namespace axle::onnx {
namespace {

struct NodeSpec {
  std::string op;
  std::vector<graph::ValueInfo> inputs;
  int outputs = 1;
  std::map<std::string, graph::AttrValue> attrs;
  int64_t opset = 17;
};

graph::Graph OneNode(const NodeSpec& spec) {
  graph::Graph g;
  g.opsets[""] = spec.opset;
  g.inputs = spec.inputs;
  graph::Node n;
  n.name = "n0";
  n.op_type = spec.op;
  for (const graph::ValueInfo& in : spec.inputs) n.inputs.push_back(in.name);
  for (int i = 0; i < spec.outputs; ++i) {
    n.outputs.push_back("y" + std::to_string(i));
    g.outputs.push_back({"y" + std::to_string(i)});
  }
  n.attrs = spec.attrs;
  g.nodes = {n};
  return g;
}

graph::ValueInfo In(std::string name, PrimitiveType type, const std::vector<int64_t>& dims) {
  std::vector<graph::Dim> d(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) d[i].size = dims[i];
  return {std::move(name), type, d};
}

absl::StatusOr<std::vector<Literal>> RunNode(const NodeSpec& spec, const std::vector<Literal>& args,
                                             const std::string& platform = "interpreter") {
  Session::Options options;
  options.platform = platform;
  absl::StatusOr<std::unique_ptr<Session>> s = Session::FromGraph(OneNode(spec), options);
  if (!s.ok()) return s.status();
  return (*s)->Run(args);
}

void ExpectError(const NodeSpec& spec, const std::vector<Literal>& args, absl::StatusCode code,
                 const std::vector<std::string>& words,
                 const std::string& platform = "interpreter") {
  absl::StatusOr<std::vector<Literal>> r = RunNode(spec, args, platform);
  ASSERT_FALSE(r.ok()) << spec.op;
  EXPECT_EQ(r.status().code(), code) << r.status();
  for (const std::string& w : words) {
    EXPECT_TRUE(absl::StrContains(r.status().message(), w)) << r.status() << " lacks " << w;
  }
}

Literal Zeros(PrimitiveType type, const std::vector<int64_t>& dims) {
  return Literal(ShapeUtil::MakeShape(type, dims));
}

TEST(OnnxKernelErrorsTest, UnsupportedAttributeValuesAreUnimplemented) {
  NodeSpec scatter{"ScatterElements",
                   {In("d", F32, {3}), In("i", S64, {1}), In("u", F32, {1})},
                   1,
                   {{"reduction", std::string("xor")}},
                   16};
  ExpectError(scatter, {Zeros(F32, {3}), Zeros(S64, {1}), Zeros(F32, {1})},
              absl::StatusCode::kUnimplemented, {"n0", "ScatterElements", "reduction", "xor"});

  NodeSpec rnn{"RNN",
               {In("x", F32, {2, 1, 3}), In("w", F32, {1, 4, 3}), In("r", F32, {1, 4, 4})},
               1,
               {{"hidden_size", int64_t{4}}, {"activations", std::vector<std::string>{"Swish"}}},
               14};
  ExpectError(rnn, {Zeros(F32, {2, 1, 3}), Zeros(F32, {1, 4, 3}), Zeros(F32, {1, 4, 4})},
              absl::StatusCode::kUnimplemented, {"n0", "RNN", "activation", "Swish"});

  NodeSpec grid{"GridSample",
                {In("x", F32, {1, 1, 2, 2}), In("g", F32, {1, 1, 1, 2})},
                1,
                {{"mode", std::string("area")}},
                16};
  ExpectError(grid, {Zeros(F32, {1, 1, 2, 2}), Zeros(F32, {1, 1, 1, 2})},
              absl::StatusCode::kUnimplemented, {"n0", "GridSample", "mode", "area"});
}

TEST(OnnxKernelErrorsTest, MalformedInputsNameTheNode) {
  NodeSpec gathernd{"GatherND", {In("d", F32, {2, 2}), In("i", S64, {1, 3})}, 1, {}, 13};
  ExpectError(gathernd, {Zeros(F32, {2, 2}), Zeros(S64, {1, 3})},
              absl::StatusCode::kInvalidArgument, {"n0", "GatherND", "indices"});

  NodeSpec einsum{"Einsum",
                  {In("a", F32, {2, 3}), In("b", F32, {4})},
                  1,
                  {{"equation", std::string("ij,j")}},
                  12};
  ExpectError(einsum, {Zeros(F32, {2, 3}), Zeros(F32, {4})}, absl::StatusCode::kInvalidArgument,
              {"n0", "Einsum", "label 'j'"});

  NodeSpec det{"Det", {In("x", F32, {2, 3})}, 1, {}, 11};
  ExpectError(det, {Zeros(F32, {2, 3})}, absl::StatusCode::kInvalidArgument, {"n0", "Det"});

  // 2^80 elements: an error, not a folded constant whose count wrapped to 0.
  NodeSpec constant_of_shape{"ConstantOfShape", {In("s", S64, {2})}, 1, {}, 13};
  std::vector<Literal> huge;
  huge.push_back(LiteralUtil::CreateR1<int64_t>({int64_t{1} << 40, int64_t{1} << 40}));
  ExpectError(constant_of_shape, huge, absl::StatusCode::kInvalidArgument,
              {"n0", "ConstantOfShape", "too large"});

  // A weight table of terabytes: an error before anything is allocated.
  NodeSpec resize{"Resize", {In("x", F32, {2, 4}), In("scales", F32, {2})}, 1, {}, 10};
  std::vector<Literal> resize_args;
  resize_args.push_back(Zeros(F32, {2, 4}));
  resize_args.push_back(LiteralUtil::CreateR1<float>({1e12f, 1e12f}));
  ExpectError(resize, resize_args, absl::StatusCode::kInvalidArgument,
              {"n0", "Resize", "weight table"});

  // 1e30 elements: an error, not a count cast past int64 (it was f32[0]).
  NodeSpec range{
      "Range", {In("start", F32, {}), In("limit", F32, {}), In("delta", F32, {})}, 1, {}, 11};
  std::vector<Literal> range_args;
  for (float v : {0.0f, 1e30f, 1.0f}) range_args.push_back(LiteralUtil::CreateR0<float>(v));
  ExpectError(range, range_args, absl::StatusCode::kInvalidArgument,
              {"n0", "Range", "at most 2^31"});

  // A window larger than the padded input (this compiled, and hung).
  NodeSpec pool{"AveragePool",
                {In("x", F32, {1, 1, 2, 2})},
                1,
                {{"kernel_shape", std::vector<int64_t>{int64_t{1} << 40, 1}}},
                13};
  ExpectError(pool, {Zeros(F32, {1, 1, 2, 2})}, absl::StatusCode::kInvalidArgument,
              {"n0", "AveragePool", "does not fit its size 2"});

  // Tables the kernels build on the host: errors, not std::bad_alloc.
  NodeSpec dft{"DFT", {In("x", F32, {1, 4, 1}), In("n", S64, {})}, 1, {}, 17};
  std::vector<Literal> dft_args;
  dft_args.push_back(Zeros(F32, {1, 4, 1}));
  dft_args.push_back(LiteralUtil::CreateR0<int64_t>(int64_t{1} << 40));
  ExpectError(dft, dft_args, absl::StatusCode::kInvalidArgument, {"n0", "DFT", "at most 2^28"});
}

// Outputs of hundreds of GiB: the allocation fails, and the error names the
// node and op that asked for it, the shape and the size.
TEST(OnnxKernelErrorsTest, OutOfMemoryNamesTheNode) {
  constexpr int64_t kHuge = int64_t{1} << 36;
  for (const char* platform : {"cpu", "interpreter"}) {
    NodeSpec pad{"Pad", {In("x", F32, {2}), In("pads", S64, {2})}, 1, {}, 13};
    std::vector<Literal> pad_args;
    pad_args.push_back(Zeros(F32, {2}));
    pad_args.push_back(LiteralUtil::CreateR1<int64_t>({0, kHuge}));
    ExpectError(pad, pad_args, absl::StatusCode::kResourceExhausted,
                {"node 'n0' (Pad): out of memory: its output f32[68719476738] takes 274877906952 "
                 "bytes",
                 "allocating"},
                platform);

    NodeSpec one_hot{
        "OneHot", {In("i", S64, {2}), In("depth", S64, {}), In("values", F32, {2})}, 1, {}, 11};
    std::vector<Literal> one_hot_args;
    one_hot_args.push_back(Zeros(S64, {2}));
    one_hot_args.push_back(LiteralUtil::CreateR0<int64_t>(kHuge));
    one_hot_args.push_back(LiteralUtil::CreateR1<float>({0, 1}));
    ExpectError(one_hot, one_hot_args, absl::StatusCode::kResourceExhausted,
                {"node 'n0' (OneHot): out of memory: its output f32[2,68719476736]"}, platform);

    NodeSpec hann{"HannWindow", {In("size", S64, {})}, 1, {}, 17};
    std::vector<Literal> hann_args;
    hann_args.push_back(LiteralUtil::CreateR0<int64_t>(kHuge));
    ExpectError(hann, hann_args, absl::StatusCode::kResourceExhausted,
                {"node 'n0' (HannWindow): out of memory: its output f32[68719476736]"}, platform);
  }
}

// Graphs built in code meet ONNX's schemas before any kernel sees them:
// a kernel may take its required inputs as present.
TEST(OnnxKernelErrorsTest, NodesOutsideTheirSchemaAreInvalid) {
  NodeSpec flatten{"Flatten", {}, 1, {}, 13};
  ExpectError(flatten, {}, absl::StatusCode::kInvalidArgument,
              {"n0", "Flatten", "opset 13", "0 inputs", "schema takes 1"});

  NodeSpec add{"Add", {In("a", F32, {2}), In("b", F32, {2}), In("c", F32, {2})}, 1, {}, 13};
  ExpectError(add, {Zeros(F32, {2}), Zeros(F32, {2}), Zeros(F32, {2})},
              absl::StatusCode::kInvalidArgument, {"n0", "Add", "3 inputs"});

  NodeSpec split{"Split", {In("x", F32, {4})}, 0, {}, 13};
  ExpectError(split, {Zeros(F32, {4})}, absl::StatusCode::kInvalidArgument,
              {"n0", "Split", "0 outputs", "1 or more"});

  NodeSpec cast{"Cast", {In("x", F32, {2})}, 1, {}, 13};
  ExpectError(cast, {Zeros(F32, {2})}, absl::StatusCode::kInvalidArgument,
              {"n0", "Cast", "required attribute 'to'"});

  NodeSpec transpose{"Transpose", {In("x", F32, {2})}, 1, {{"perm", float{0}}}, 13};
  ExpectError(transpose, {Zeros(F32, {2})}, absl::StatusCode::kInvalidArgument,
              {"n0", "Transpose", "'perm'", "INTS"});
}

TEST(OnnxKernelErrorsTest, TopKBreaksTiesByPosition) {
  NodeSpec topk{"TopK", {In("x", F32, {5})}, 2, {{"k", int64_t{3}}}, 1};
  absl::StatusOr<std::vector<Literal>> r =
      RunNode(topk, {LiteralUtil::CreateR1<float>({1, 3, 3, 0, 3})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0], LiteralUtil::CreateR1<float>({3, 3, 3}));
  EXPECT_EQ((*r)[1], LiteralUtil::CreateR1<int64_t>({1, 2, 4}));
}

TEST(OnnxKernelErrorsTest, DetPivotsAndEinsumContractsThreeOperands) {
  NodeSpec det{"Det", {In("x", F32, {3, 3})}, 1, {}, 11};
  // A zero leading entry needs a row swap: det = -(2 * 3 * 1) = -6.
  absl::StatusOr<std::vector<Literal>> d =
      RunNode(det, {LiteralUtil::CreateR2<float>({{0, 2, 0}, {3, 0, 0}, {0, 0, 1}})});
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ((*d)[0], LiteralUtil::CreateR0<float>(-6));

  NodeSpec einsum{"Einsum",
                  {In("a", F32, {2}), In("b", F32, {2, 2}), In("c", F32, {2})},
                  1,
                  {{"equation", std::string("i,ij,j->")}},
                  12};
  absl::StatusOr<std::vector<Literal>> e = RunNode(
      einsum, {LiteralUtil::CreateR1<float>({1, 2}), LiteralUtil::CreateR2<float>({{1, 2}, {3, 4}}),
               LiteralUtil::CreateR1<float>({1, 1})});
  ASSERT_TRUE(e.ok()) << e.status();
  // [1, 2] . [[1, 2], [3, 4]] = [7, 10]; . [1, 1] = 17.
  EXPECT_EQ((*e)[0], LiteralUtil::CreateR0<float>(17));
}

}  // namespace
}  // namespace axle::onnx
