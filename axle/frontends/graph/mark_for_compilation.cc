//===- mark_for_compilation.cc - Levels, clusters, schedule -----------------===//
#include "axle/frontends/graph/mark_for_compilation.h"

#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"
#include "axle/frontends/graph/host_kernel.h"
#include "axle/frontends/graph/string_tensor.h"
#include "axle/frontends/graph/xla_op_registry.h"

namespace axle::graph {
namespace {

struct Value {
  int64_t producer = -1;  // node index; -1 for graph inputs and initializers
  bool is_static = false;
  bool is_string = false;  // a string tensor (string_tensor.h)
};

// Whether `node`, which reads strings when `reads_strings`, makes string
// tensors: ONNX's string ops, Cast to STRING (8), CastLike to a string, and
// the ops that pass their input through.
bool MakesStrings(const Node& node, const std::vector<bool>& input_is_string) {
  auto reads = [&](size_t k) { return k < input_is_string.size() && input_is_string[k]; };
  if (node.op_type == "Cast") {
    auto to = node.attrs.find("to");
    return to != node.attrs.end() && std::holds_alternative<int64_t>(to->second) &&
           std::get<int64_t>(to->second) == 8;
  }
  if (node.op_type == "CastLike") return reads(1);
  if (node.op_type == "StringNormalizer") return true;
  if (node.op_type == "Identity") return reads(0);
  return false;
}

bool IsConstantInput(const KernelDef* def, int input) {
  return def && std::find(def->constant_inputs.begin(), def->constant_inputs.end(), input) !=
                    def->constant_inputs.end();
}

// The cluster's own graph: what it reads from outside, its initializers,
// its nodes, the values read after it.
Graph ClusterGraph(const Graph& graph, const std::vector<int64_t>& nodes,
                   const std::vector<int64_t>& node_cluster, int64_t cluster,
                   const std::string& name) {
  Graph g;
  g.name = name;
  g.opsets = graph.opsets;
  std::map<std::string, const ValueInfo*> graph_inputs;
  for (const ValueInfo& info : graph.inputs) graph_inputs[info.name] = &info;
  std::set<std::string> produced_here, declared;
  for (int64_t index : nodes) {
    const Node& node = graph.nodes[index];
    for (const std::string& in : node.inputs) {
      if (in.empty() || produced_here.count(in) || declared.count(in)) continue;
      declared.insert(in);
      auto input = graph_inputs.find(in);
      if (input != graph_inputs.end()) {
        g.inputs.push_back(*input->second);
      } else if (auto init = graph.initializers.find(in); init != graph.initializers.end()) {
        g.initializers.emplace(in, init->second);
      } else {
        g.inputs.push_back({in, PRIMITIVE_TYPE_INVALID, std::nullopt});
      }
    }
    for (const std::string& out : node.outputs) {
      if (!out.empty()) produced_here.insert(out);
    }
    g.nodes.push_back(node);
  }
  // Outputs: values made here that a graph output or another step reads.
  std::set<std::string> read_outside;
  for (const ValueInfo& out : graph.outputs) read_outside.insert(out.name);
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    if (node_cluster[i] == cluster) continue;
    for (const std::string& in : graph.nodes[i].inputs) read_outside.insert(in);
  }
  for (const Node& node : g.nodes) {
    for (const std::string& out : node.outputs) {
      if (!out.empty() && read_outside.count(out)) g.outputs.push_back({out});
    }
  }
  return g;
}

}  // namespace

absl::StatusOr<ClusteringPlan> MarkForCompilation(const Graph& graph, const std::string& device,
                                                  const std::set<std::string>& constant_inputs) {
  absl::StatusOr<std::vector<int64_t>> order = TopologicalOrder(graph);
  if (!order.ok()) return order.status();
  std::map<std::string, Value> values;
  for (const auto& [name, literal] : graph.initializers) values[name].is_static = true;
  for (const auto& [name, literal] : graph.initializers) {
    values[name].is_string = IsStringTensorShape(literal.shape());
  }
  for (const ValueInfo& info : graph.inputs) {
    values[info.name].is_static = primitive_util::IsIntegralType(info.element_type) ||
                                  info.element_type == PRED || constant_inputs.count(info.name);
    values[info.name].is_string = info.kind == ValueKind::kStringTensor;
  }

  int64_t n = static_cast<int64_t>(graph.nodes.size());
  std::vector<int64_t> level(n, 0);
  std::vector<bool> host(n, false);
  std::map<int64_t, std::vector<std::string>> cuts;  // by level
  for (int64_t index : *order) {
    const Node& node = graph.nodes[index];
    absl::StatusOr<int64_t> opset = graph.OpsetFor(node.domain);
    if (!opset.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(node.Describe(), ": ", opset.status().message()));
    }
    const KernelDef* def = XlaOpRegistry::Global().FindKernelDef(node, *opset, device);
    // Strings have no device type: a node that reads or makes them runs on
    // the host, and needs a host kernel.
    std::vector<bool> input_is_string;
    for (const std::string& in : node.inputs) {
      input_is_string.push_back(!in.empty() && values.at(in).is_string);
    }
    const bool makes_strings = MakesStrings(node, input_is_string);
    const bool strings = makes_strings || std::find(input_is_string.begin(), input_is_string.end(),
                                                    true) != input_is_string.end();
    const bool has_host_kernel = HostKernelRegistry::Global().Find(node, *opset) != nullptr;
    if (strings && !has_host_kernel) {
      return absl::UnimplementedError(absl::StrCat(node.Describe(), ": no host kernel for op '",
                                                   node.op_type, "' at opset ", *opset,
                                                   " on string tensors"));
    }
    if (strings) def = nullptr;
    bool on_host = !def && has_host_kernel;
    int64_t at = on_host ? -1 : 0;
    bool all_static = true;
    std::string cut;
    for (int k = 0; k < static_cast<int>(node.inputs.size()); ++k) {
      if (node.inputs[k].empty()) continue;
      const Value& v = values.at(node.inputs[k]);
      all_static &= v.is_static;
      if (v.producer < 0) continue;
      int64_t p = v.producer;
      int64_t need = level[p];
      if (on_host) {
        need = host[p] ? level[p] : level[p] + 1;
      } else if (host[p]) {
        need = level[p] + 1;
      } else if (IsConstantInput(def, k) && !v.is_static) {
        need = level[p] + 2;
        if (need > at) {
          cut = absl::StrCat(node.Describe(), " needs input ", k, " ('", node.inputs[k],
                             "') at compile time; it is computed from data");
        }
      }
      at = std::max(at, need);
    }
    level[index] = at;
    host[index] = on_host;
    if (!cut.empty() && at % 2 == 0) cuts[at].push_back(cut);
    bool outputs_static = def && (def->metadata_only || all_static);
    for (const std::string& out : node.outputs) {
      if (out.empty()) continue;
      values[out] = {index, outputs_static, makes_strings};
    }
  }

  // Even levels in use become clusters, in order.
  std::map<int64_t, std::vector<int64_t>> device_levels, host_levels;
  for (int64_t index : *order) {
    (host[index] ? host_levels : device_levels)[level[index]].push_back(index);
  }
  ClusteringPlan plan;
  std::vector<int64_t> node_cluster(n, -1);
  for (const auto& [at, nodes] : device_levels) {
    for (int64_t index : nodes) node_cluster[index] = static_cast<int64_t>(plan.clusters.size());
    plan.clusters.emplace_back();
    plan.clusters.back().nodes = nodes;
    plan.clusters.back().constant_cuts = cuts[at];
  }
  std::string base = graph.name.empty() ? "onnx_graph" : graph.name;
  for (int64_t c = 0; c < static_cast<int64_t>(plan.clusters.size()); ++c) {
    std::string name = plan.clusters.size() == 1 ? base : absl::StrCat(base, "_cluster", c);
    plan.clusters[c].graph = ClusterGraph(graph, plan.clusters[c].nodes, node_cluster, c, name);
  }
  int64_t cluster = 0;
  auto host_it = host_levels.begin();
  for (const auto& [at, nodes] : device_levels) {
    for (; host_it != host_levels.end() && host_it->first < at; ++host_it) {
      for (int64_t index : host_it->second) {
        plan.steps.push_back({ExecutionStep::kHost, index});
        plan.host_nodes.push_back(index);
      }
    }
    plan.steps.push_back({ExecutionStep::kCluster, cluster++});
  }
  for (; host_it != host_levels.end(); ++host_it) {
    for (int64_t index : host_it->second) {
      plan.steps.push_back({ExecutionStep::kHost, index});
      plan.host_nodes.push_back(index);
    }
  }
  return plan;
}

}  // namespace axle::graph
