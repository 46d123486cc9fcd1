// Models whose tensors live in a separate file (external data): the
// testdata/external_data model (every tensor in weights.bin: initializers,
// a Constant node's attribute, the If branches' initializers) loads and runs
// as its inline twin does; each way the external data can be wrong is a clear
// error naming the tensor (and its node), never a crash.
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "axle/frontends/onnx/onnx_loader.h"
#include "axle/frontends/onnx/onnx_test_util.h"
#include "axle/frontends/onnx/session.h"
#include "gtest/gtest.h"
#include "onnx/onnx_pb.h"

namespace axle::onnx {
namespace {

namespace fs = std::filesystem;

std::string TestData(const std::string& name) {
  return std::string(AXLE_ONNX_TESTDATA_SOURCE_DIR) + "/external_data/" + name;
}

std::string Read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void Write(const fs::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out << bytes;
}

const graph::Node& NodeNamed(const graph::Graph& g, const std::string& name) {
  for (const graph::Node& n : g.nodes) {
    if (n.name == name) return n;
  }
  ADD_FAILURE() << "no node " << name;
  return g.nodes.front();
}

TEST(ExternalDataTest, LoadsAsTheInlineModelDoes) {
  absl::StatusOr<graph::Graph> ext = LoadModel(TestData("model.onnx"));
  ASSERT_TRUE(ext.ok()) << ext.status();
  absl::StatusOr<graph::Graph> inl = LoadModel(TestData("inline.onnx"));
  ASSERT_TRUE(inl.ok()) << inl.status();
  ASSERT_EQ(ext->initializers.size(), 3u);
  for (const auto& [name, literal] : inl->initializers) {
    EXPECT_EQ(ext->initializers.at(name), literal) << name;
  }
  EXPECT_EQ(ext->initializers.at("w").shape().ToString(false), "f32[4,3]");
  EXPECT_EQ(ext->initializers.at("shape"), LiteralUtil::CreateR1<int64_t>({3, 2}));
  // The Constant node's tensor attribute.
  EXPECT_EQ(std::get<Literal>(NodeNamed(*ext, "bias").attrs.at("value")),
            std::get<Literal>(NodeNamed(*inl, "bias").attrs.at("value")));
  // The If branches' own initializers.
  for (const char* branch : {"then_branch", "else_branch"}) {
    const auto& e =
        std::get<std::shared_ptr<const graph::Graph>>(NodeNamed(*ext, "if").attrs.at(branch));
    const auto& i =
        std::get<std::shared_ptr<const graph::Graph>>(NodeNamed(*inl, "if").attrs.at(branch));
    ASSERT_EQ(e->initializers.size(), 1u) << branch;
    EXPECT_EQ(e->initializers.begin()->second, i->initializers.begin()->second) << branch;
  }
}

TEST(ExternalDataTest, RunsAsTheInlineModelDoes) {
  for (const char* platform : {"cpu", "interpreter"}) {
    CaseResult result = RunCase(TestData(""), platform);  // model.onnx against numpy
    ASSERT_TRUE(result.status.ok()) << platform << ": " << result.status;
    Session::Options options;
    options.platform = platform;
    absl::StatusOr<std::unique_ptr<Session>> inl = Session::Load(TestData("inline.onnx"), options);
    ASSERT_TRUE(inl.ok()) << inl.status();
    absl::StatusOr<Literal> x = LoadTensor(TestData("test_data_set_0/input_0.pb"));
    ASSERT_TRUE(x.ok()) << x.status();
    absl::StatusOr<std::vector<Literal>> y = (*inl)->Run({*x});
    ASSERT_TRUE(y.ok()) << y.status();
    ASSERT_EQ(result.outputs.size(), 1u);
    EXPECT_EQ(result.outputs[0], (*y)[0]) << platform;
  }
}

TEST(ExternalDataTest, BytesNeedADirectory) {
  std::string bytes = Read(TestData("model.onnx"));
  absl::Status s = ParseModel(bytes, "mem.onnx").status();
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_TRUE(absl::StrContains(s.message(),
                                "mem.onnx: tensor 'w' keeps its data in the external "
                                "file 'weights.bin', and a model read from bytes"))
      << s;
  absl::StatusOr<graph::Graph> g = ParseModel(bytes, "mem.onnx", TestData(""));
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->initializers.at("w"), LoadModel(TestData("inline.onnx"))->initializers.at("w"));
}

// The model rewritten by `edit` in a fresh folder beside a copy of
// weights.bin; returns the load's status.
class Corrupted : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) /
           absl::StrCat("external_data_",
                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "model");
    fs::copy_file(TestData("weights.bin"), dir_ / "model" / "weights.bin");
    ASSERT_TRUE(model_.ParseFromString(Read(TestData("model.onnx"))));
  }
  void TearDown() override { fs::remove_all(dir_); }

  // The external_data entry `key` of `t` (added when missing).
  static void Set(::onnx::TensorProto* t, const std::string& key, const std::string& value) {
    for (auto& e : *t->mutable_external_data()) {
      if (e.key() == key) {
        e.set_value(value);
        return;
      }
    }
    auto* e = t->add_external_data();
    e->set_key(key);
    e->set_value(value);
  }
  ::onnx::TensorProto* Initializer(const std::string& name) {
    for (auto& t : *model_.mutable_graph()->mutable_initializer()) {
      if (t.name() == name) return &t;
    }
    ADD_FAILURE() << "no initializer " << name;
    return nullptr;
  }
  absl::Status Load() {
    std::string path = (dir_ / "model" / "model.onnx").string();
    Write(path, model_.SerializeAsString());
    return LoadModel(path).status();
  }
  // The load fails with `code` and a message holding each of `parts`.
  void ExpectError(absl::StatusCode code, const std::vector<std::string>& parts) {
    absl::Status s = Load();
    EXPECT_EQ(s.code(), code) << s;
    for (const std::string& part : parts) {
      EXPECT_TRUE(absl::StrContains(s.message(), part)) << "want '" << part << "' in " << s;
    }
  }

  fs::path dir_;
  ::onnx::ModelProto model_;
};

TEST_F(Corrupted, TheCopyLoads) { EXPECT_TRUE(Load().ok()); }

TEST_F(Corrupted, ALocationInASubfolderLoads) {
  fs::create_directories(dir_ / "model" / "sub");
  fs::copy_file(dir_ / "model" / "weights.bin", dir_ / "model" / "sub" / "w.bin");
  Set(Initializer("w"), "location", "sub/./w.bin");
  EXPECT_TRUE(Load().ok());
}

TEST_F(Corrupted, AbsoluteLocation) {
  Set(Initializer("w"), "location", (dir_ / "model" / "weights.bin").string());
  ExpectError(absl::StatusCode::kInvalidArgument,
              {"tensor 'w' has external data at the absolute location", "relative"});
}

TEST_F(Corrupted, LocationsOutsideTheDirectory) {
  fs::copy_file(dir_ / "model" / "weights.bin", dir_ / "outside.bin");
  for (const char* location : {"../outside.bin", "sub/../../outside.bin", "..", "."}) {
    Set(Initializer("w"), "location", location);
    ExpectError(absl::StatusCode::kInvalidArgument,
                {"tensor 'w' has external data at '", "outside the model's directory"});
  }
}

TEST_F(Corrupted, ASymlinkLeadingOutside) {
  fs::copy_file(dir_ / "model" / "weights.bin", dir_ / "outside.bin");
  fs::create_symlink(dir_ / "outside.bin", dir_ / "model" / "link.bin");
  Set(Initializer("w"), "location", "link.bin");
  ExpectError(absl::StatusCode::kInvalidArgument, {"tensor 'w'", "leads outside"});
}

TEST_F(Corrupted, MissingFile) {
  Set(Initializer("shape"), "location", "nope.bin");
  ExpectError(absl::StatusCode::kNotFound, {"tensor 'shape' keeps its data in '",
                                            "nope.bin', "
                                            "which does not exist"});
}

TEST_F(Corrupted, ADirectory) {
  fs::create_directories(dir_ / "model" / "sub");
  Set(Initializer("w"), "location", "sub");
  ExpectError(absl::StatusCode::kInvalidArgument, {"tensor 'w'", "not a regular file"});
}

TEST_F(Corrupted, PastTheEndOfTheFile) {
  Set(Initializer("w"), "offset", "100");  // 100 + 48 > 128
  ExpectError(absl::StatusCode::kInvalidArgument,
              {"tensor 'w' has external data at offset 100 of length 48 in '",
               "past the end of that file (128 bytes)"});
  Set(Initializer("w"), "offset", "999999999999999999");
  ExpectError(absl::StatusCode::kInvalidArgument, {"past the end of that file"});
}

TEST_F(Corrupted, TruncatedFile) {
  std::string bytes = Read(TestData("weights.bin"));
  Write(dir_ / "model" / "weights.bin", bytes.substr(0, 40));
  ExpectError(absl::StatusCode::kInvalidArgument,
              {"tensor 'w'", "past the end of that file (40 bytes)"});
}

TEST_F(Corrupted, LengthDisagreesWithTheShape) {
  Set(Initializer("w"), "length", "44");
  ExpectError(absl::StatusCode::kInvalidArgument,
              {"tensor 'w' has external data of length 44 bytes, but its shape and type need 48"});
  // A huge shape: an error before anything that size is allocated.
  ::onnx::TensorProto* w = Initializer("w");
  w->set_dims(0, int64_t{1} << 30);
  w->set_dims(1, int64_t{1} << 9);
  Set(w, "length", "48");
  ExpectError(absl::StatusCode::kInvalidArgument,
              {"length 48 bytes, but its shape and type need 2199023255552"});
  w->mutable_external_data()->RemoveLast();  // no length: the tensor's size is read
  ExpectError(absl::StatusCode::kInvalidArgument, {"of length 2199023255552", "past the end"});
}

TEST_F(Corrupted, BadNumbersAndKeys) {
  for (const char* offset : {"-4", "12abc", "", " 1", "+1", "99999999999999999999"}) {
    Set(Initializer("w"), "offset", offset);
    ExpectError(absl::StatusCode::kInvalidArgument, {"tensor 'w' has external data whose offset"});
  }
  Set(Initializer("w"), "offset", "0");
  Set(Initializer("w"), "basepath", "/tmp");
  ExpectError(absl::StatusCode::kInvalidArgument, {"unknown key 'basepath'"});
}

TEST_F(Corrupted, NoLocation) {
  Initializer("zero")->mutable_external_data()->DeleteSubrange(0, 1);  // "location" comes first
  ExpectError(absl::StatusCode::kInvalidArgument,
              {"tensor 'zero' has external data without a 'location'"});
}

TEST_F(Corrupted, DataOfItsOwnAsWell) {
  Initializer("zero")->set_raw_data(std::string(4, '\0'));
  ExpectError(absl::StatusCode::kInvalidArgument, {"tensor 'zero'", "data of its own as well"});
}

TEST_F(Corrupted, AStringTensor) {
  Initializer("zero")->set_data_type(::onnx::TensorProto::STRING);
  ExpectError(absl::StatusCode::kInvalidArgument, {"tensor 'zero'", "string tensor"});
}

TEST_F(Corrupted, ErrorsNameTheNode) {
  for (auto& node : *model_.mutable_graph()->mutable_node()) {
    for (auto& a : *node.mutable_attribute()) {
      if (node.name() == "bias") Set(a.mutable_t(), "location", "../weights.bin");
      if (a.name() == "then_branch") Set(a.mutable_g()->mutable_initializer(0), "offset", "120");
    }
  }
  ExpectError(absl::StatusCode::kInvalidArgument,
              {"node 'bias' (Constant): tensor 'c' has external data at '../weights.bin'"});
  for (auto& node : *model_.mutable_graph()->mutable_node()) {
    if (node.name() == "bias")
      Set(node.mutable_attribute(0)->mutable_t(), "location", "weights.bin");
  }
  ExpectError(
      absl::StatusCode::kInvalidArgument,
      {"node 'if' (If): attribute 'then_branch': tensor 'tb' has external data at offset 120"});
}

TEST_F(Corrupted, SessionLoadReportsIt) {
  Set(Initializer("w"), "location", "gone.bin");
  std::string path = (dir_ / "model" / "model.onnx").string();
  Write(path, model_.SerializeAsString());
  absl::Status s = Session::Load(path, Session::Options()).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "tensor 'w' keeps its data in")) << s;
}

}  // namespace
}  // namespace axle::onnx
