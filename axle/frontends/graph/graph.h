//===- graph.h - The front end's dataflow graph -----------------------------===//
//
// The graph the op kernels compile: what TensorFlow's GraphDef is to tf2xla,
// in a form that does not depend on any one format. The ONNX loader
// (axle/frontends/onnx/onnx_loader.h) fills it from a ModelProto.
//
//   Graph      inputs (name, element type, dimensions that may be symbolic),
//              initializers (named constant tensors), nodes, outputs, and
//              the opset of each domain the nodes use.
//   Node       op type + domain, input and output value names ("" marks an
//              omitted optional input), attributes.
//   AttrValue  one attribute: int, float, string, tensor, lists of them, or
//              a subgraph (ONNX's GRAPH attribute: If's branches, the body
//              of Loop and Scan). ONNX's TYPE_PROTO attribute (Optional's
//              `type`) is a string in ONNX's type notation, "tensor(float)"
//              or "seq(tensor(int64))".
//
// Subgraphs: a subgraph's inputs are its formal parameters and its
// `captures` the values of enclosing scopes it reads. The loader appends
// the captures of a node's subgraphs to the node's inputs (after its own,
// each name once), so the outer graph's dataflow, topological order and
// clustering see them; a control-flow kernel binds a capture to the node
// input of the same name.
//
// Values are named by strings as in ONNX. TopologicalOrder() checks the graph
// (every input produced once, no cycles) and returns the nodes in an order
// where producers come before consumers.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_FRONTENDS_GRAPH_GRAPH_H_
#define AXLE_FRONTENDS_GRAPH_GRAPH_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "axle/core/literal.h"

namespace axle::graph {

struct Graph;

// One attribute value. Which alternative is held is the attribute's type.
using AttrValue =
    std::variant<int64_t, float, std::string, Literal, std::vector<int64_t>, std::vector<float>,
                 std::vector<std::string>, std::shared_ptr<const Graph>>;

// A dimension of a declared input: a size, a symbol (ONNX's dim_param), or
// unknown (neither).
struct Dim {
  std::optional<int64_t> size;
  std::string symbol;
};

// What a value is: a tensor, or one of ONNX's non-tensor types, a sequence
// of tensors or an optional (a tensor, a sequence, or nothing). For the
// non-tensor kinds, element_type and dims describe the tensors inside.
// A caller passes a sequence as a tuple literal of its tensors, and an
// optional as a tuple of zero elements (none) or one (its value). A string
// tensor (ONNX's tensor(string)) has no device type: host kernels alone
// read and write it, as the tuple of string_tensor.h (element_type U8).
enum class ValueKind { kTensor, kSequence, kOptionalTensor, kOptionalSequence, kStringTensor };

// "sequence", "optional(tensor)"...: how errors name a kind.
const char* ValueKindName(ValueKind kind);

struct ValueInfo {
  std::string name;
  PrimitiveType element_type = PRIMITIVE_TYPE_INVALID;
  // nullopt: the rank is not declared.
  std::optional<std::vector<Dim>> dims;
  ValueKind kind = ValueKind::kTensor;
};

struct Node {
  std::string name;  // may be empty in the source; the loader names such nodes
  std::string op_type;
  std::string domain;  // "" is ONNX's default domain ("ai.onnx")
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  std::map<std::string, AttrValue> attrs;

  // "node 'conv1' (Conv)": how errors name a node.
  std::string Describe() const;
};

// The values a `kernel` ("kernel", "host kernel") set for `node`'s outputs
// (`set`: one per output), taken in order. An output the node leaves
// unnamed stays a default T; a named one the kernel did not set is an
// InternalError.
template <typename T>
absl::StatusOr<std::vector<T>> TakeKernelOutputs(const Node& node,
                                                 std::vector<std::optional<T>>& set,
                                                 absl::string_view kernel) {
  std::vector<T> outputs;
  for (size_t i = 0; i < node.outputs.size(); ++i) {
    if (node.outputs[i].empty()) {
      outputs.emplace_back();
      continue;
    }
    if (!set[i]) {
      return absl::InternalError(
          absl::StrCat(node.Describe(), ": the ", kernel, " did not set output ", i));
    }
    outputs.push_back(std::move(*set[i]));
  }
  return outputs;
}

struct Graph {
  std::string name;
  // Inputs the caller feeds, in order; initializers are not among them.
  std::vector<ValueInfo> inputs;
  std::vector<ValueInfo> outputs;
  // A subgraph's reads of enclosing scopes (empty for a top-level graph);
  // they count as produced in TopologicalOrder.
  std::vector<std::string> captures;
  std::map<std::string, Literal> initializers;
  std::vector<Node> nodes;
  // Opset version per domain ("" for the default domain).
  std::map<std::string, int64_t> opsets;

  // The opset the graph imports for `domain`, or an error naming it.
  absl::StatusOr<int64_t> OpsetFor(const std::string& domain) const;
};

// Indices into graph.nodes, producers first. Errors: a node input that no
// input, initializer or node produces (a dangling edge), a value produced
// twice, a cycle (naming a node on it), a graph output nobody produces.
absl::StatusOr<std::vector<int64_t>> TopologicalOrder(const Graph& graph);

}  // namespace axle::graph

#endif  // AXLE_FRONTENDS_GRAPH_GRAPH_H_
