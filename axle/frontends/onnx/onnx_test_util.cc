//===- onnx_test_util.cc - Running ONNX test cases in tests -----------------===//
#include "axle/frontends/onnx/onnx_test_util.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <memory>
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

}  // namespace

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

namespace {

bool IsRandomOp(const graph::Node& node) {
  static const std::set<std::string> kOps = {"Bernoulli",         "RandomUniform",
                                             "RandomUniformLike", "RandomNormal",
                                             "RandomNormalLike",  "Multinomial"};
  return kOps.count(node.op_type) > 0;
}

absl::Status Fail(const std::string& what) { return absl::InternalError(what); }

// The random-case checks of one model; `runs[r][k]` is output k of run r.
absl::Status CheckRandomRuns(const graph::Graph& graph, const std::vector<Literal>& inputs,
                             const std::vector<Literal>& expected,
                             const std::vector<std::vector<Literal>>& runs) {
  for (const std::vector<Literal>& run : runs) {
    if (run.size() != expected.size()) {
      return Fail(absl::StrCat(run.size(), " outputs, expected ", expected.size()));
    }
    for (size_t k = 0; k < run.size(); ++k) {
      if (!ShapeUtil::Compatible(run[k].shape(), expected[k].shape())) {
        return Fail(absl::StrCat("output ", k, " is ", ShapeUtil::HumanString(run[k].shape()),
                                 ", expected ", ShapeUtil::HumanString(expected[k].shape())));
      }
    }
  }
  bool differ = false;
  for (size_t r = 1; r < runs.size() && !differ; ++r) differ = !(runs[r][0] == runs[0][0]);
  if (!differ) return Fail(absl::StrCat("all ", runs.size(), " runs drew the same values"));
  const bool bernoulli = std::any_of(graph.nodes.begin(), graph.nodes.end(), [](const auto& n) {
    return n.op_type == "Bernoulli" || n.op_type == "RandomUniformLike";
  });
  const bool expanded = std::any_of(graph.nodes.begin(), graph.nodes.end(),
                                    [](const auto& n) { return n.op_type == "RandomUniformLike"; });
  const int64_t n = runs[0][0].element_count();
  if (bernoulli) {
    const Literal& p = inputs[0];
    for (int64_t i = 0; i < n; ++i) {
      double ones = 0;
      for (const auto& run : runs) {
        double v = run[0].GetAsDouble(i);
        if (v != 0 && v != 1) return Fail(absl::StrCat("element ", i, " is ", v, ", not 0 or 1"));
        ones += v;
      }
      double want = expanded ? 1 - p.GetAsDouble(i) : p.GetAsDouble(i);
      double freq = ones / static_cast<double>(runs.size());
      if (std::abs(freq - want) > 0.1) {
        return Fail(
            absl::StrCat("element ", i, " is 1 in ", freq, " of the runs, expected ", want));
      }
    }
    return absl::OkStatus();
  }
  // Dropout (x, ratio, training_mode) -> y[, mask].
  const Literal& x = inputs[0];
  double ratio = inputs.size() > 1 ? inputs[1].GetAsDouble(0) : 0.5;
  double kept = 0;
  for (const auto& run : runs) {
    for (int64_t i = 0; i < n; ++i) {
      double y = run[0].GetAsDouble(i), scaled = x.GetAsDouble(i) / (1 - ratio);
      // Kept: the mask when the node outputs it, else y != 0.
      bool keep = run.size() > 1 ? run[1].GetAsDouble(i) != 0 : y != 0;
      if (keep ? std::abs(y - scaled) > 1e-5 + 1e-5 * std::abs(scaled) : y != 0) {
        return Fail(absl::StrCat("y[", i, "] = ", y, " where the element is ",
                                 keep ? "kept: expected x / (1 - ratio) = " : "dropped: expected ",
                                 keep ? scaled : 0));
      }
      kept += keep ? 1 : 0;
    }
  }
  double freq = kept / static_cast<double>(n * runs.size());
  if (std::abs(freq - (1 - ratio)) > 0.03) {
    return Fail(absl::StrCat("kept ", freq, " of the elements, expected ", 1 - ratio));
  }
  return absl::OkStatus();
}

}  // namespace

bool IsRandomCase(const std::string& dir) {
  absl::StatusOr<graph::Graph> g = LoadModel(dir + "/model.onnx");
  if (!g.ok()) return false;
  if (std::any_of(g->nodes.begin(), g->nodes.end(), IsRandomOp)) return true;
  // Dropout in training mode (its third input) with a ratio above 0.
  return fs::path(dir).filename().string().rfind("test_training_dropout", 0) == 0 &&
         fs::path(dir).filename().string().find("zero_ratio") == std::string::npos;
}

CaseResult RunRandomCase(const std::string& dir, const std::string& platform, int runs) {
  CaseResult result;
  Session::Options options;
  options.platform = platform;
  absl::StatusOr<graph::Graph> graph = LoadModel(dir + "/model.onnx");
  if (!graph.ok()) {
    result.status = graph.status();
    return result;
  }
  std::vector<std::string> sets = ListDirs(dir);
  if (sets.empty()) {
    result.status = Fail("no data sets");
    return result;
  }
  std::string set_dir = absl::StrCat(dir, "/", sets[0]);
  absl::StatusOr<std::vector<Literal>> inputs = LoadValues(set_dir, "input_", graph->inputs);
  absl::StatusOr<std::vector<Literal>> expected = LoadValues(set_dir, "output_", graph->outputs);
  if (!inputs.ok() || !expected.ok()) {
    result.status = inputs.ok() ? expected.status() : inputs.status();
    return result;
  }
  std::vector<std::vector<Literal>> outs[2];
  for (int s = 0; s < 2; ++s) {
    absl::StatusOr<std::unique_ptr<Session>> session = Session::Load(dir + "/model.onnx", options);
    if (!session.ok()) {
      result.status = session.status();
      return result;
    }
    for (int r = 0; r < (s == 0 ? runs : 3); ++r) {
      absl::StatusOr<std::vector<Literal>> y = (*session)->Run(*inputs);
      if (!y.ok()) {
        result.status = y.status();
        return result;
      }
      outs[s].push_back(std::move(*y));
    }
  }
  for (size_t r = 0; r < outs[1].size(); ++r) {
    for (size_t k = 0; k < outs[1][r].size(); ++k) {
      if (!(outs[1][r][k] == outs[0][r][k])) {
        result.status = Fail(absl::StrCat("a second session's run ", r, " output ", k,
                                          " differs from the first session's"));
        return result;
      }
    }
  }
  result.status = CheckRandomRuns(*graph, *inputs, *expected, outs[0]);
  result.outputs = std::move(outs[0][0]);
  return result;
}

}  // namespace axle::onnx
