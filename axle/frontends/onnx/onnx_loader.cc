//===- onnx_loader.cc - ModelProto / TensorProto conversion -----------------===//
#include "axle/frontends/onnx/onnx_loader.h"

#include <cctype>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <set>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "axle/frontends/graph/string_tensor.h"
#include "axle/frontends/onnx/external_data_internal.h"
#include "axle/frontends/onnx/schema_check.h"
#include "onnx/onnx-data_pb.h"
#include "onnx/onnx_pb.h"

namespace axle::onnx {
namespace {

using ::onnx::AttributeProto;
using ::onnx::ModelProto;
using ::onnx::TensorProto;

// The directory external tensor data is read from: the model's (or the
// tensor file's); none for bytes (external_data_internal.h).
using DataDir = std::optional<std::filesystem::path>;

DataDir DirOf(const std::string& path) {
  std::filesystem::path dir = std::filesystem::path(path).parent_path();
  return dir.empty() ? std::filesystem::path(".") : dir;
}

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open '", path, "'"));
  std::ostringstream data;
  data << in.rdbuf();
  if (in.bad()) return absl::DataLossError(absl::StrCat("cannot read '", path, "'"));
  return data.str();
}

struct TypeRow {
  int onnx;
  PrimitiveType type;
};
constexpr TypeRow kTypes[] = {
    {TensorProto::FLOAT, F32},     {TensorProto::UINT8, U8},        {TensorProto::INT8, S8},
    {TensorProto::UINT16, U16},    {TensorProto::INT16, S16},       {TensorProto::INT32, S32},
    {TensorProto::INT64, S64},     {TensorProto::BOOL, PRED},       {TensorProto::FLOAT16, F16},
    {TensorProto::DOUBLE, F64},    {TensorProto::UINT32, U32},      {TensorProto::UINT64, U64},
    {TensorProto::COMPLEX64, C64}, {TensorProto::COMPLEX128, C128}, {TensorProto::BFLOAT16, BF16},
};

absl::StatusOr<Literal> ToLiteral(const TensorProto& t, const std::string& what,
                                  const DataDir& data_dir) {
  std::string name = absl::StrCat(what, ": tensor '", t.name(), "'");
  if (t.segment().end() != 0) {
    return absl::UnimplementedError(absl::StrCat(name, " is segmented"));
  }
  std::vector<int64_t> dims;
  int64_t count = 1;
  for (int64_t d : t.dims()) {
    if (d < 0 || (d > 0 && count > (int64_t{1} << 40) / d)) {
      return absl::InvalidArgumentError(absl::StrCat(name, " has a bad dimension ", d));
    }
    dims.push_back(d);
    count *= d;
  }
  if (t.data_type() == TensorProto::STRING && HasExternalData(t)) {
    return absl::InvalidArgumentError(absl::StrCat(
        name, " has external data but is a string tensor (strings cannot be stored externally)"));
  }
  if (t.data_type() == TensorProto::STRING) {  // graph/string_tensor.h
    if (t.string_data_size() != count) {
      return absl::InvalidArgumentError(absl::StrCat(name, " is a string tensor of ", count,
                                                     " elements but holds ", t.string_data_size(),
                                                     " strings"));
    }
    return graph::MakeStringTensor({t.string_data().begin(), t.string_data().end()}, dims);
  }
  absl::StatusOr<PrimitiveType> type = ElementTypeFromOnnx(t.data_type());
  if (!type.ok())
    return absl::Status(type.status().code(), absl::StrCat(name, ": ", type.status().message()));
  PrimitiveType p = *type;
  Shape shape = ShapeUtil::MakeShape(p, dims);
  int64_t bytes = count * primitive_util::ByteWidth(p);
  // The data's size is checked before the literal is allocated, so that a
  // huge shape with little data is an error, not an allocation failure.
  auto size_error = [&](int64_t got) {
    return absl::InvalidArgumentError(absl::StrCat(name, " of shape ", shape.ToString(false),
                                                   " needs ", count, " elements but holds ", got));
  };
  if (HasExternalData(t) || t.has_raw_data()) {
    std::string external;
    if (HasExternalData(t)) {
      absl::StatusOr<std::string> data = ReadExternalData(t, bytes, data_dir, name);
      if (!data.ok()) return data.status();
      external = std::move(*data);
    }
    const std::string& raw = HasExternalData(t) ? external : t.raw_data();
    if (static_cast<int64_t>(raw.size()) != bytes) {
      return size_error(static_cast<int64_t>(raw.size()) /
                        std::max(1, primitive_util::ByteWidth(p)));
    }
    Literal literal(shape);
    if (bytes) std::memcpy(literal.untyped_data(), raw.data(), bytes);
    return literal;
  }
  if (p == F32 || p == C64) {
    int64_t n = t.float_data_size();
    if (n != bytes / 4) return size_error(p == C64 ? n / 2 : n);
    Literal literal(shape);
    if (bytes) std::memcpy(literal.untyped_data(), t.float_data().data(), bytes);
    return literal;
  }
  if (p == F64 || p == C128) {
    int64_t n = t.double_data_size();
    if (n != bytes / 8) return size_error(p == C128 ? n / 2 : n);
    Literal literal(shape);
    if (bytes) std::memcpy(literal.untyped_data(), t.double_data().data(), bytes);
    return literal;
  }
  if (p == S64) {
    if (t.int64_data_size() != count) return size_error(t.int64_data_size());
    Literal literal(shape);
    if (bytes) std::memcpy(literal.untyped_data(), t.int64_data().data(), bytes);
    return literal;
  }
  if (p == U32 || p == U64) {
    if (t.uint64_data_size() != count) return size_error(t.uint64_data_size());
    Literal literal(shape);
    for (int64_t i = 0; i < count; ++i) literal.SetIntegral(i, t.uint64_data(i));
    return literal;
  }
  if (t.int32_data_size() != count) return size_error(t.int32_data_size());
  Literal literal(shape);
  if (p == F16 || p == BF16) {
    auto* out = static_cast<uint16_t*>(literal.untyped_data());
    for (int64_t i = 0; i < count; ++i) out[i] = static_cast<uint16_t>(t.int32_data(i));
  } else {
    for (int64_t i = 0; i < count; ++i) literal.SetIntegral(i, t.int32_data(i));
  }
  return literal;
}

absl::Status ConvertGraph(const ::onnx::GraphProto& g, const std::string& what,
                          const DataDir& data_dir, graph::Graph* out);
absl::StatusOr<std::string> TypeString(const ::onnx::TypeProto& t, const std::string& what);

// A subgraph (GRAPH attribute): converted like the main graph, with the
// opsets of `parent`; its captures are the names it reads that it does not
// define (inputs, initializers, node outputs).
absl::StatusOr<std::shared_ptr<const graph::Graph>> ToSubgraph(const ::onnx::GraphProto& g,
                                                               const std::string& what,
                                                               const DataDir& data_dir,
                                                               const graph::Graph& parent) {
  auto sub = std::make_shared<graph::Graph>();
  sub->opsets = parent.opsets;
  if (absl::Status s = ConvertGraph(g, what, data_dir, sub.get()); !s.ok()) return s;
  std::set<std::string> defined;
  for (const graph::ValueInfo& v : sub->inputs) defined.insert(v.name);
  for (const auto& [name, literal] : sub->initializers) defined.insert(name);
  for (const graph::Node& node : sub->nodes)
    defined.insert(node.outputs.begin(), node.outputs.end());
  std::set<std::string> seen;
  auto read = [&](const std::string& name) {
    if (!name.empty() && !defined.count(name) && seen.insert(name).second) {
      sub->captures.push_back(name);
    }
  };
  for (const graph::Node& node : sub->nodes) {
    for (const std::string& in : node.inputs) read(in);
  }
  for (const graph::ValueInfo& v : sub->outputs) read(v.name);
  return std::shared_ptr<const graph::Graph>(std::move(sub));
}

absl::StatusOr<graph::AttrValue> ToAttr(const AttributeProto& a, const std::string& what,
                                        const DataDir& data_dir, const graph::Graph& parent) {
  switch (a.type()) {
    case AttributeProto::GRAPH: {
      absl::StatusOr<std::shared_ptr<const graph::Graph>> sub =
          ToSubgraph(a.g(), absl::StrCat(what, ": attribute '", a.name(), "'"), data_dir, parent);
      if (!sub.ok()) return sub.status();
      return graph::AttrValue(std::move(*sub));
    }
    case AttributeProto::INT:
      return graph::AttrValue(static_cast<int64_t>(a.i()));
    case AttributeProto::FLOAT:
      return graph::AttrValue(a.f());
    case AttributeProto::STRING:
      return graph::AttrValue(a.s());
    case AttributeProto::TYPE_PROTO: {
      absl::StatusOr<std::string> t =
          TypeString(a.tp(), absl::StrCat(what, ": attribute '", a.name(), "'"));
      if (!t.ok()) return t.status();
      return graph::AttrValue(std::move(*t));
    }
    case AttributeProto::TENSOR: {
      absl::StatusOr<Literal> t = ToLiteral(a.t(), what, data_dir);
      if (!t.ok()) return t.status();
      return graph::AttrValue(std::move(*t));
    }
    case AttributeProto::INTS:
      return graph::AttrValue(std::vector<int64_t>(a.ints().begin(), a.ints().end()));
    case AttributeProto::FLOATS:
      return graph::AttrValue(std::vector<float>(a.floats().begin(), a.floats().end()));
    case AttributeProto::STRINGS:
      return graph::AttrValue(std::vector<std::string>(a.strings().begin(), a.strings().end()));
    default:
      return absl::UnimplementedError(absl::StrCat(what, ": attribute '", a.name(), "' has type ",
                                                   AttributeProto::AttributeType_Name(a.type()),
                                                   ", which is not supported"));
  }
}

absl::StatusOr<graph::ValueInfo> ToValueInfo(const ::onnx::ValueInfoProto& v,
                                             const std::string& what) {
  graph::ValueInfo info;
  info.name = v.name();
  if (!v.has_type()) return info;
  // Sequences of tensors and optionals of a tensor or a sequence of
  // tensors; maps, sparse tensors and deeper nesting are not supported.
  const ::onnx::TypeProto* type = &v.type();
  auto unsupported = [&] {
    return absl::UnimplementedError(absl::StrCat(
        what, ": '", v.name(),
        "' has a type other than a tensor, a sequence of tensors or an optional of either "
        "(maps, sparse tensors and nested sequences are not supported)"));
  };
  if (type->has_optional_type()) {
    type = &type->optional_type().elem_type();
    info.kind = graph::ValueKind::kOptionalTensor;
  }
  if (type->has_sequence_type()) {
    info.kind = info.kind == graph::ValueKind::kOptionalTensor ? graph::ValueKind::kOptionalSequence
                                                               : graph::ValueKind::kSequence;
    type = &type->sequence_type().elem_type();
  }
  if (!type->has_tensor_type()) return unsupported();
  const auto& tensor = type->tensor_type();
  if (tensor.elem_type() == TensorProto::STRING && info.kind == graph::ValueKind::kTensor) {
    info.kind = graph::ValueKind::kStringTensor;
    info.element_type = U8;
  } else if (tensor.elem_type() != 0) {
    absl::StatusOr<PrimitiveType> type = ElementTypeFromOnnx(tensor.elem_type());
    if (!type.ok()) {
      return absl::Status(type.status().code(),
                          absl::StrCat(what, ": '", v.name(), "': ", type.status().message()));
    }
    info.element_type = *type;
  }
  if (tensor.has_shape()) {
    info.dims.emplace();
    for (const auto& d : tensor.shape().dim()) {
      graph::Dim dim;
      if (d.has_dim_value()) dim.size = d.dim_value();
      if (d.has_dim_param()) dim.symbol = d.dim_param();
      info.dims->push_back(dim);
    }
  }
  return info;
}

// A TYPE_PROTO attribute in ONNX's type notation: "tensor(float)",
// "seq(tensor(int64))", "optional(tensor(float))".
absl::StatusOr<std::string> TypeString(const ::onnx::TypeProto& t, const std::string& what) {
  if (t.has_tensor_type()) {
    std::string name =
        TensorProto::DataType_Name(static_cast<TensorProto::DataType>(t.tensor_type().elem_type()));
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return absl::StrCat("tensor(", name, ")");
  }
  const ::onnx::TypeProto* inner = nullptr;
  const char* kind = nullptr;
  if (t.has_sequence_type()) {
    inner = &t.sequence_type().elem_type();
    kind = "seq";
  } else if (t.has_optional_type()) {
    inner = &t.optional_type().elem_type();
    kind = "optional";
  } else {
    return absl::UnimplementedError(
        absl::StrCat(what, ": a type attribute other than a tensor, sequence or optional"));
  }
  absl::StatusOr<std::string> s = TypeString(*inner, what);
  if (!s.ok()) return s.status();
  return absl::StrCat(kind, "(", *s, ")");
}

absl::Status ConvertGraph(const ::onnx::GraphProto& g, const std::string& what,
                          const DataDir& data_dir, graph::Graph* out) {
  out->name = g.name();
  for (const TensorProto& t : g.initializer()) {
    absl::StatusOr<Literal> literal = ToLiteral(t, what, data_dir);
    if (!literal.ok()) return literal.status();
    out->initializers[t.name()] = std::move(*literal);
  }
  if (g.sparse_initializer_size() > 0) {
    return absl::UnimplementedError(absl::StrCat(what, ": sparse initializers are not supported"));
  }
  for (const auto& v : g.input()) {
    // Older models list initializers among the inputs too: they are not fed.
    if (out->initializers.count(v.name())) continue;
    absl::StatusOr<graph::ValueInfo> info = ToValueInfo(v, what);
    if (!info.ok()) return info.status();
    out->inputs.push_back(std::move(*info));
  }
  for (const auto& v : g.output()) {
    absl::StatusOr<graph::ValueInfo> info = ToValueInfo(v, what);
    if (!info.ok()) return info.status();
    out->outputs.push_back(std::move(*info));
  }
  for (int i = 0; i < g.node_size(); ++i) {
    const ::onnx::NodeProto& n = g.node(i);
    graph::Node node;
    node.name = n.name().empty() ? absl::StrCat(n.op_type(), "_", i) : n.name();
    node.op_type = n.op_type();
    node.domain = n.domain() == "ai.onnx" ? "" : n.domain();
    node.inputs.assign(n.input().begin(), n.input().end());
    node.outputs.assign(n.output().begin(), n.output().end());
    std::string where = absl::StrCat(what, ": ", node.Describe());
    for (const AttributeProto& a : n.attribute()) {
      if (!a.ref_attr_name().empty()) {
        return absl::UnimplementedError(
            absl::StrCat(where, ": attribute references (functions) are not supported"));
      }
      absl::StatusOr<graph::AttrValue> value = ToAttr(a, where, data_dir, *out);
      if (!value.ok()) return value.status();
      node.attrs[a.name()] = std::move(*value);
    }
    // The subgraphs' reads of this scope and above become inputs of the
    // node (after its own, each once), so the dataflow sees them.
    std::set<std::string> appended;
    for (const auto& [attr, value] : node.attrs) {
      const auto* sub = std::get_if<std::shared_ptr<const graph::Graph>>(&value);
      if (!sub) continue;
      for (const std::string& name : (*sub)->captures) {
        if (appended.insert(name).second) node.inputs.push_back(name);
      }
    }
    out->nodes.push_back(std::move(node));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<PrimitiveType> ElementTypeFromOnnx(int data_type) {
  for (const TypeRow& row : kTypes) {
    if (row.onnx == data_type) return row.type;
  }
  std::string name = TensorProto::DataType_IsValid(data_type)
                         ? TensorProto::DataType_Name(static_cast<TensorProto::DataType>(data_type))
                         : absl::StrCat(data_type);
  return absl::InvalidArgumentError(absl::StrCat("element type ", name, " is not supported"));
}

int OnnxFromElementType(PrimitiveType type) {
  for (const TypeRow& row : kTypes) {
    if (row.type == type) return row.onnx;
  }
  return 0;
}

namespace {

absl::StatusOr<graph::Graph> ParseModelIn(absl::string_view bytes, const std::string& what,
                                          const DataDir& data_dir) {
  ModelProto model;
  if (bytes.size() > static_cast<size_t>(INT32_MAX) ||
      !model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": not a valid ONNX model (the protobuf does not parse)"));
  }
  if (!model.has_graph()) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": the model has no graph"));
  }
  graph::Graph out;
  for (const auto& opset : model.opset_import()) {
    std::string domain = opset.domain() == "ai.onnx" ? "" : opset.domain();
    out.opsets[domain] = opset.version();
  }
  // IR version 3 has no opset_import: opset 1.
  if (out.opsets.empty()) out.opsets[""] = 1;
  if (absl::Status s = ConvertGraph(model.graph(), what, data_dir, &out); !s.ok()) return s;
  if (absl::Status s = CheckAgainstSchemas(out); !s.ok()) {
    return absl::Status(s.code(), absl::StrCat(what, ": ", s.message()));
  }
  return out;
}

absl::StatusOr<Literal> ParseTensorIn(absl::string_view bytes, const std::string& what,
                                      const DataDir& data_dir) {
  TensorProto t;
  if (bytes.size() > static_cast<size_t>(INT32_MAX) ||
      !t.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": not a valid ONNX TensorProto (the protobuf does not parse)"));
  }
  return ToLiteral(t, what, data_dir);
}

template <typename Proto>
absl::Status ParseProto(absl::string_view bytes, const std::string& what, const char* type,
                        Proto* out) {
  if (bytes.size() > static_cast<size_t>(INT32_MAX) ||
      !out->ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": not a valid ONNX ", type, " (the protobuf does not parse)"));
  }
  return absl::OkStatus();
}

absl::StatusOr<Literal> FromSequence(const ::onnx::SequenceProto& s, const std::string& what,
                                     const DataDir& data_dir) {
  if (s.elem_type() != ::onnx::SequenceProto::TENSOR &&
      !(s.tensor_values().empty() && s.sequence_values().empty() && s.map_values().empty() &&
        s.optional_values().empty())) {
    return absl::UnimplementedError(absl::StrCat(
        what, ": only sequences of tensors are supported, this one has elem_type ", s.elem_type()));
  }
  std::vector<Literal> elements;
  for (const TensorProto& t : s.tensor_values()) {
    absl::StatusOr<Literal> l = ToLiteral(t, what, data_dir);
    if (!l.ok()) return l.status();
    elements.push_back(std::move(*l));
  }
  return Literal::MakeTuple(std::move(elements));
}

absl::StatusOr<Literal> ParseValueIn(absl::string_view bytes, const graph::ValueInfo& info,
                                     const std::string& what, const DataDir& data_dir) {
  switch (info.kind) {
    case graph::ValueKind::kTensor:
    case graph::ValueKind::kStringTensor:
      return ParseTensorIn(bytes, what, data_dir);
    case graph::ValueKind::kSequence: {
      ::onnx::SequenceProto s;
      if (absl::Status st = ParseProto(bytes, what, "SequenceProto", &s); !st.ok()) return st;
      return FromSequence(s, what, data_dir);
    }
    case graph::ValueKind::kOptionalTensor:
    case graph::ValueKind::kOptionalSequence: {
      ::onnx::OptionalProto o;
      if (absl::Status st = ParseProto(bytes, what, "OptionalProto", &o); !st.ok()) return st;
      std::vector<Literal> value;
      if (o.elem_type() == ::onnx::OptionalProto::UNDEFINED) {
        // none
      } else if (o.elem_type() == ::onnx::OptionalProto::TENSOR &&
                 info.kind == graph::ValueKind::kOptionalTensor) {
        absl::StatusOr<Literal> t = ToLiteral(o.tensor_value(), what, data_dir);
        if (!t.ok()) return t.status();
        value.push_back(std::move(*t));
      } else if (o.elem_type() == ::onnx::OptionalProto::SEQUENCE &&
                 info.kind == graph::ValueKind::kOptionalSequence) {
        absl::StatusOr<Literal> t = FromSequence(o.sequence_value(), what, data_dir);
        if (!t.ok()) return t.status();
        value.push_back(std::move(*t));
      } else {
        return absl::InvalidArgumentError(
            absl::StrCat(what, ": the optional holds elem_type ", o.elem_type(), " but '",
                         info.name, "' is declared ", graph::ValueKindName(info.kind)));
      }
      return Literal::MakeTuple(std::move(value));
    }
  }
  return absl::InternalError("unknown value kind");
}

}  // namespace

absl::StatusOr<graph::Graph> ParseModel(absl::string_view bytes, const std::string& what) {
  return ParseModelIn(bytes, what, std::nullopt);
}

absl::StatusOr<graph::Graph> ParseModel(absl::string_view bytes, const std::string& what,
                                        const std::string& external_data_dir) {
  return ParseModelIn(bytes, what, std::filesystem::path(external_data_dir));
}

absl::StatusOr<graph::Graph> LoadModel(const std::string& path) {
  absl::StatusOr<std::string> bytes = ReadFile(path);
  if (!bytes.ok()) return bytes.status();
  return ParseModelIn(*bytes, path, DirOf(path));
}

absl::StatusOr<Literal> ParseTensor(absl::string_view bytes, const std::string& what) {
  return ParseTensorIn(bytes, what, std::nullopt);
}

absl::StatusOr<Literal> LoadTensor(const std::string& path) {
  absl::StatusOr<std::string> bytes = ReadFile(path);
  if (!bytes.ok()) return bytes.status();
  return ParseTensorIn(*bytes, path, DirOf(path));
}

absl::StatusOr<Literal> ParseValue(absl::string_view bytes, const graph::ValueInfo& info,
                                   const std::string& what) {
  return ParseValueIn(bytes, info, what, std::nullopt);
}

absl::StatusOr<Literal> LoadValue(const std::string& path, const graph::ValueInfo& info) {
  absl::StatusOr<std::string> bytes = ReadFile(path);
  if (!bytes.ok()) return bytes.status();
  return ParseValueIn(*bytes, info, path, DirOf(path));
}

}  // namespace axle::onnx
