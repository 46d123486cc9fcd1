// The ONNX loader on good and bad bytes: every malformed file is a clear
// error, never a crash.
#include "axle/frontends/onnx/onnx_loader.h"

#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace axle::onnx {
namespace {

std::string TestData(const std::string& name) {
  return std::string(AXLE_ONNX_TESTDATA_SOURCE_DIR) + "/" + name;
}

std::string Read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(OnnxLoaderTest, LoadsAModel) {
  absl::StatusOr<graph::Graph> g = LoadModel(TestData("mlp/model.onnx"));
  ASSERT_TRUE(g.ok()) << g.status();
  ASSERT_EQ(g->inputs.size(), 1u);  // initializers are not inputs
  EXPECT_EQ(g->inputs[0].name, "x");
  EXPECT_EQ(g->inputs[0].element_type, F32);
  ASSERT_TRUE(g->inputs[0].dims.has_value());
  EXPECT_EQ((*g->inputs[0].dims)[0].symbol, "N");
  EXPECT_EQ((*g->inputs[0].dims)[1].size, 4);
  EXPECT_EQ(g->opsets.at(""), 13);
  EXPECT_EQ(g->initializers.at("w1").shape().dimensions(), (std::vector<int64_t>{16, 96}));
  EXPECT_EQ(g->nodes.size(), 10u);
}

TEST(OnnxLoaderTest, MissingFileIsNotFound) {
  absl::Status s = LoadModel("/nonexistent/model.onnx").status();
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(absl::StrContains(s.message(), "/nonexistent/model.onnx")) << s;
}

TEST(OnnxLoaderTest, GarbageAndTruncatedModelsAreErrors) {
  absl::Status s = ParseModel("this is not a protobuf \xff\xff\xff", "junk.onnx").status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(s.message(), "junk.onnx: not a valid ONNX model")) << s;

  s = ParseModel("", "empty.onnx").status();
  EXPECT_TRUE(absl::StrContains(s.message(), "empty.onnx: the model has no graph")) << s;

  std::string bytes = Read(TestData("cnn/model.onnx"));
  ASSERT_GT(bytes.size(), 100u);
  // Every prefix either parses to something or fails cleanly.
  int errors = 0;
  for (size_t n = 1; n < bytes.size(); n += 37) {
    absl::StatusOr<graph::Graph> g = ParseModel(bytes.substr(0, n), "cut.onnx");
    if (!g.ok()) ++errors;
  }
  EXPECT_GT(errors, 0);
  // Flipped bytes: no crash either.
  for (size_t i = 0; i < bytes.size(); i += 53) {
    std::string damaged = bytes;
    damaged[i] = static_cast<char>(damaged[i] ^ 0x5a);
    (void)ParseModel(damaged, "flipped.onnx");
  }
}

TEST(OnnxLoaderTest, TensorsConvert) {
  absl::StatusOr<Literal> t = LoadTensor(TestData("mlp/test_data_set_0/input_0.pb"));
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->shape().ToString(false), "f32[3,4,4]");
  absl::Status s = ParseTensor("\x08\x05\x08\x05\x10\x01", "small.pb").status();  // dims 5x5 f32
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(s.message(), "needs 25 elements but holds 0")) << s;
  s = ParseTensor("\x10\x08", "string.pb").status();  // a STRING scalar without its string
  EXPECT_TRUE(absl::StrContains(s.message(), "string tensor of 1 elements but holds 0 strings"))
      << s;
  // dims [2], STRING, "ab", "": a string tensor (graph/string_tensor.h).
  absl::StatusOr<Literal> strings = ParseTensor(std::string("\x08\x02\x10\x08\x32\x02"
                                                            "ab"
                                                            "\x32\x00",
                                                            10),
                                                "strings.pb");
  ASSERT_TRUE(strings.ok()) << strings.status();
  EXPECT_EQ(strings->shape().ToString(false), "(u8[2], s64[2])");
}

}  // namespace
}  // namespace axle::onnx
