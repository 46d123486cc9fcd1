//===- schema_check.cc - Nodes against ONNX's operator schemas --------------===//
#include "axle/frontends/onnx/schema_check.h"

#include <algorithm>
#include <limits>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "absl/strings/str_cat.h"
#include "onnx/defs/schema.h"

namespace axle::onnx {
namespace {

using ::onnx::AttributeProto;
using ::onnx::OpSchema;

// The AttributeProto type a graph::AttrValue alternative comes from (the
// loader's ToAttr); TYPE_PROTO attributes arrive as strings.
bool AttrTypeMatches(const graph::AttrValue& value, AttributeProto::AttributeType type) {
  switch (type) {
    case AttributeProto::INT:
      return std::holds_alternative<int64_t>(value);
    case AttributeProto::FLOAT:
      return std::holds_alternative<float>(value);
    case AttributeProto::STRING:
    case AttributeProto::TYPE_PROTO:
      return std::holds_alternative<std::string>(value);
    case AttributeProto::TENSOR:
      return std::holds_alternative<Literal>(value);
    case AttributeProto::GRAPH:
      return std::holds_alternative<std::shared_ptr<const graph::Graph>>(value);
    // An empty list attribute has no element type of its own.
    case AttributeProto::INTS:
    case AttributeProto::FLOATS:
    case AttributeProto::STRINGS: {
      const auto* ints = std::get_if<std::vector<int64_t>>(&value);
      const auto* floats = std::get_if<std::vector<float>>(&value);
      const auto* strings = std::get_if<std::vector<std::string>>(&value);
      bool empty =
          (ints && ints->empty()) || (floats && floats->empty()) || (strings && strings->empty());
      if (empty) return true;
      if (type == AttributeProto::INTS) return ints != nullptr;
      if (type == AttributeProto::FLOATS) return floats != nullptr;
      return strings != nullptr;
    }
    default:
      return true;  // sparse tensors, lists of tensors and graphs: not checked here
  }
}

// The node's own inputs: the loader appends the names its subgraphs read
// from enclosing scopes (each once) after them.
size_t OwnInputs(const graph::Node& node) {
  std::set<std::string> captured;
  for (const auto& [name, value] : node.attrs) {
    const auto* sub = std::get_if<std::shared_ptr<const graph::Graph>>(&value);
    if (!sub || !*sub) continue;
    captured.insert((*sub)->captures.begin(), (*sub)->captures.end());
  }
  return node.inputs.size() - std::min(captured.size(), node.inputs.size());
}

// Arity and empty names of one side (inputs or outputs) against its formal
// parameters.
absl::Status CheckArity(const std::string& where, const char* side,
                        const std::vector<std::string>& names, size_t count,
                        const std::vector<OpSchema::FormalParameter>& formals, int min, int max) {
  if (count < static_cast<size_t>(min) || count > static_cast<size_t>(max)) {
    std::string range = min == max ? absl::StrCat(min) : absl::StrCat(min, " to ", max);
    if (max == std::numeric_limits<int>::max()) range = absl::StrCat(min, " or more");
    return absl::InvalidArgumentError(absl::StrCat(
        where, " has ", count, " ", side, count == 1 ? "" : "s", "; ONNX's schema takes ", range));
  }
  for (size_t i = 0; i < count && !formals.empty(); ++i) {
    const OpSchema::FormalParameter& formal = formals[std::min(i, formals.size() - 1)];
    if (formal.GetOption() == OpSchema::Optional) continue;
    if (names[i].empty()) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": ", side, " ", i, " ('",
                                                     formal.GetName(),
                                                     "') is required but its name is empty"));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckNode(const graph::Graph& graph, const graph::Node& node) {
  absl::StatusOr<int64_t> opset = graph.OpsetFor(node.domain);
  if (!opset.ok()) return absl::OkStatus();  // the kernel lookup names the domain
  // An opset newer than libonnx knows may have changed the op: no check.
  const auto& known = ::onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  auto range = known.find(node.domain);
  if (range == known.end() || *opset > range->second.second) return absl::OkStatus();
  const OpSchema* schema =
      ::onnx::OpSchemaRegistry::Schema(node.op_type, static_cast<int>(*opset), node.domain);
  if (schema == nullptr) return absl::OkStatus();
  std::string where = absl::StrCat(node.Describe(), " at opset ", *opset);
  if (schema->deprecated()) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, " is deprecated at opset ", *opset, " of the model"));
  }
  size_t inputs = OwnInputs(node);
  if (absl::Status s = CheckArity(where, "input", node.inputs, inputs, schema->inputs(),
                                  schema->min_input(), schema->max_input());
      !s.ok()) {
    return s;
  }
  if (absl::Status s = CheckArity(where, "output", node.outputs, node.outputs.size(),
                                  schema->outputs(), schema->min_output(), schema->max_output());
      !s.ok()) {
    return s;
  }
  for (const auto& [name, attr] : schema->attributes()) {
    auto it = node.attrs.find(name);
    if (it == node.attrs.end()) {
      if (attr.required) {
        return absl::InvalidArgumentError(
            absl::StrCat(where, ": the required attribute '", name, "' is missing"));
      }
      continue;
    }
    if (!AttrTypeMatches(it->second, attr.type)) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": attribute '", name, "' must be of type ",
                       AttributeProto::AttributeType_Name(attr.type)));
    }
  }
  for (const auto& [name, value] : node.attrs) {
    const auto* sub = std::get_if<std::shared_ptr<const graph::Graph>>(&value);
    if (!sub || !*sub) continue;
    if (absl::Status s = CheckAgainstSchemas(**sub); !s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckAgainstSchemas(const graph::Graph& graph) {
  for (const graph::Node& node : graph.nodes) {
    if (absl::Status s = CheckNode(graph, node); !s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace axle::onnx
