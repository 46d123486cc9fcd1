//===- onnx_test_util.cc - Running ONNX test cases in tests -----------------===//
#include "axle/frontends/onnx/onnx_test_util.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "axle/core/literal_comparison.h"
#include "axle/frontends/onnx/onnx_loader.h"
#include "axle/frontends/onnx/session.h"

namespace axle::onnx {

namespace fs = std::filesystem;

graph::Node MakeNode(std::string name, std::string op, std::vector<std::string> in,
                     std::vector<std::string> out) {
  graph::Node n;
  n.name = std::move(name);
  n.op_type = std::move(op);
  n.inputs = std::move(in);
  n.outputs = std::move(out);
  return n;
}

std::vector<std::string> ListDirs(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.is_directory()) out.push_back(entry.path().filename().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

namespace {
// libonnx-testdata (1.12) stores BFLOAT16 tensors as UINT16 (data_type 4)
// holding the bf16 bits; such a tensor is read as the graph declares it.
Literal AsDeclared(Literal t, const std::vector<graph::ValueInfo>& declared, size_t k) {
  if (k >= declared.size() || declared[k].element_type != BF16 || t.shape().element_type() != U16) {
    return t;
  }
  Literal out(ShapeUtil::MakeShape(BF16, t.shape().dimensions()));
  std::memcpy(out.untyped_data(), t.untyped_data(), t.size_bytes());
  return out;
}

std::vector<std::string> Tensors(const std::string& dir, const std::string& prefix) {
  std::vector<std::string> out;
  for (int k = 0;; ++k) {
    std::string path = absl::StrCat(dir, "/", prefix, k, ".pb");
    if (!fs::exists(path)) break;
    out.push_back(path);
  }
  return out;
}
// PREFIX0.pb, PREFIX1.pb, ... of `dir`, each as its declared value.
absl::StatusOr<std::vector<Literal>> LoadValues(const std::string& dir, const std::string& prefix,
                                                const std::vector<graph::ValueInfo>& declared) {
  std::vector<Literal> out;
  for (const std::string& path : Tensors(dir, prefix)) {
    size_t k = out.size();
    absl::StatusOr<Literal> t =
        k < declared.size() ? LoadValue(path, declared[k]) : LoadTensor(path);
    if (!t.ok()) return t.status();
    out.push_back(AsDeclared(std::move(*t), declared, k));
  }
  return out;
}

}  // namespace

std::string CaseOps(const std::string& dir) {
  absl::StatusOr<graph::Graph> g = LoadModel(dir + "/model.onnx");
  if (!g.ok()) return "?";
  std::set<std::string> ops;
  for (const graph::Node& n : g->nodes) ops.insert(n.op_type);
  return absl::StrJoin(ops, "+");
}

CaseResult RunCase(const std::string& dir, const std::string& platform) {
  CaseResult result;
  Session::Options options;
  options.platform = platform;
  absl::StatusOr<std::unique_ptr<Session>> session = Session::Load(dir + "/model.onnx", options);
  if (!session.ok()) {
    result.status = session.status();
    return result;
  }
  absl::StatusOr<graph::Graph> graph = LoadModel(dir + "/model.onnx");
  if (!graph.ok()) {
    result.status = graph.status();
    return result;
  }
  std::vector<std::string> sets = ListDirs(dir);
  for (const std::string& set : sets) {
    std::string set_dir = absl::StrCat(dir, "/", set);
    absl::StatusOr<std::vector<Literal>> inputs = LoadValues(set_dir, "input_", graph->inputs);
    if (!inputs.ok()) {
      result.status = inputs.status();
      return result;
    }
    absl::StatusOr<std::vector<Literal>> expected_or =
        LoadValues(set_dir, "output_", graph->outputs);
    if (!expected_or.ok()) {
      result.status = expected_or.status();
      return result;
    }
    std::vector<Literal>& expected = *expected_or;
    absl::StatusOr<std::vector<Literal>> outputs = (*session)->Run(*inputs);
    if (!outputs.ok()) {
      result.status = outputs.status();
      return result;
    }
    if (outputs->size() != expected.size()) {
      result.status = absl::InternalError(
          absl::StrCat(set, ": ", outputs->size(), " outputs, expected ", expected.size()));
      return result;
    }
    for (size_t i = 0; i < expected.size(); ++i) {
      ErrorSpec spec(1e-5, 1e-3);
      absl::Status s = LiteralsNear(expected[i], (*outputs)[i], spec);
      if (!s.ok()) {
        result.status = absl::InternalError(absl::StrCat(set, " output ", i, ": ", s.message()));
        return result;
      }
    }
    result.outputs = std::move(*outputs);
  }
  return result;
}

}  // namespace axle::onnx
