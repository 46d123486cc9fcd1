//===- graph.cc - Graph checks and topological order ------------------------===//
#include "axle/frontends/graph/graph.h"

#include <set>

#include "absl/strings/str_cat.h"

namespace axle::graph {

const char* ValueKindName(ValueKind kind) {
  switch (kind) {
    case ValueKind::kTensor:
      return "tensor";
    case ValueKind::kSequence:
      return "sequence";
    case ValueKind::kOptionalTensor:
      return "optional(tensor)";
    case ValueKind::kOptionalSequence:
      return "optional(sequence)";
    case ValueKind::kStringTensor:
      return "tensor(string)";
  }
  return "?";
}

std::string Node::Describe() const {
  std::string op = domain.empty() ? op_type : absl::StrCat(domain, ".", op_type);
  return absl::StrCat("node '", name, "' (", op, ")");
}

absl::StatusOr<int64_t> Graph::OpsetFor(const std::string& domain) const {
  auto it = opsets.find(domain);
  if (it == opsets.end() && domain == "ai.onnx") it = opsets.find("");
  if (it == opsets.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the model imports no opset for domain '", domain, "'"));
  }
  return it->second;
}

absl::StatusOr<std::vector<int64_t>> TopologicalOrder(const Graph& graph) {
  // producer[value] = node index, or -1 for graph inputs and initializers.
  std::map<std::string, int64_t> producer;
  for (const ValueInfo& input : graph.inputs) {
    if (!producer.emplace(input.name, -1).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("graph input '", input.name, "' is declared twice"));
    }
  }
  for (const auto& [name, literal] : graph.initializers) producer.emplace(name, -1);
  for (const std::string& name : graph.captures) producer.emplace(name, -1);
  for (int64_t i = 0; i < static_cast<int64_t>(graph.nodes.size()); ++i) {
    for (const std::string& out : graph.nodes[i].outputs) {
      if (out.empty()) continue;
      if (!producer.emplace(out, i).second) {
        return absl::InvalidArgumentError(absl::StrCat(graph.nodes[i].Describe(), ": output '", out,
                                                       "' is already produced elsewhere"));
      }
    }
  }
  for (const Node& node : graph.nodes) {
    for (const std::string& in : node.inputs) {
      if (!in.empty() && !producer.count(in)) {
        return absl::InvalidArgumentError(
            absl::StrCat(node.Describe(), ": input '", in,
                         "' is not a graph input, an initializer or any node's output"));
      }
    }
  }
  for (const ValueInfo& out : graph.outputs) {
    if (!producer.count(out.name)) {
      return absl::InvalidArgumentError(
          absl::StrCat("graph output '", out.name, "' is not produced by anything"));
    }
  }
  // Depth-first post-order; state 1 = on the stack, 2 = done.
  std::vector<int> state(graph.nodes.size(), 0);
  std::vector<int64_t> order;
  order.reserve(graph.nodes.size());
  for (int64_t root = 0; root < static_cast<int64_t>(graph.nodes.size()); ++root) {
    if (state[root]) continue;
    std::vector<std::pair<int64_t, size_t>> stack = {{root, 0}};
    state[root] = 1;
    while (!stack.empty()) {
      auto& [n, next] = stack.back();
      const Node& node = graph.nodes[n];
      if (next < node.inputs.size()) {
        const std::string& in = node.inputs[next++];
        if (in.empty()) continue;
        int64_t p = producer.at(in);
        if (p < 0 || state[p] == 2) continue;
        if (state[p] == 1) {
          return absl::InvalidArgumentError(absl::StrCat(
              "the graph has a cycle through ", graph.nodes[p].Describe(), " (value '", in, "')"));
        }
        state[p] = 1;
        stack.push_back({p, 0});
        continue;
      }
      state[n] = 2;
      order.push_back(n);
      stack.pop_back();
    }
  }
  return order;
}

}  // namespace axle::graph
