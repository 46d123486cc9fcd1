//===- xla_compiler.cc - Symbolic execution of a graph ----------------------===//
#include "axle/frontends/graph/xla_compiler.h"

#include <map>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "axle/eval/hlo_evaluator.h"
#include "axle/frontends/graph/string_tensor.h"

namespace axle::graph {
namespace {

// Whether `shape` holds any array (an empty sequence, or none, holds none).
bool HasArrays(const Shape& shape) {
  if (shape.IsArray()) return true;
  for (const Shape& s : shape.tuple_shapes()) {
    if (HasArrays(s)) return true;
  }
  return false;
}

// The expression of a graph input of `kind` whose value is `op` of `shape`
// (a tuple for the non-tensor kinds; `op` is absent when it holds no array).
XlaExpression Bind(const std::optional<XlaOp>& op, const Shape& shape, ValueKind kind,
                   PrimitiveType element_type) {
  auto element = [&](int64_t k) -> std::optional<XlaOp> {
    if (!op || !HasArrays(shape.tuple_shapes(k))) return std::nullopt;
    return GetTupleElement(*op, k);
  };
  switch (kind) {
    case ValueKind::kTensor:
    case ValueKind::kStringTensor:  // refused before binding (Compile)
      return XlaExpression{shape, op, std::nullopt};
    case ValueKind::kSequence: {
      std::vector<XlaExpression> elements;
      for (int64_t k = 0; k < static_cast<int64_t>(shape.tuple_shapes_size()); ++k) {
        elements.push_back(
            Bind(element(k), shape.tuple_shapes(k), ValueKind::kTensor, element_type));
      }
      return XlaExpression::Sequence(std::move(elements), element_type);
    }
    case ValueKind::kOptionalTensor:
    case ValueKind::kOptionalSequence: {
      bool of_sequence = kind == ValueKind::kOptionalSequence;
      if (shape.tuple_shapes_size() == 0) return XlaExpression::Optional(std::nullopt, of_sequence);
      XlaExpression value =
          Bind(element(0), shape.tuple_shapes(0),
               of_sequence ? ValueKind::kSequence : ValueKind::kTensor, element_type);
      return XlaExpression::Optional(std::move(value), of_sequence);
    }
  }
  return {};
}

// A graph output as one op: a tensor itself, a sequence or optional as the
// tuple of its elements.
XlaOp AsOutput(XlaBuilder* builder, const XlaExpression& e) {
  if (e.is_tensor()) return e.op ? *e.op : ConstantLiteral(builder, *e.constant);
  std::vector<XlaOp> elements;
  for (const XlaExpression& element : e.elements) elements.push_back(AsOutput(builder, element));
  return Tuple(builder, elements);
}

absl::Status WithNode(const Node& node, const absl::Status& status) {
  if (status.ok() || absl::StrContains(status.message(), node.Describe())) return status;
  return absl::Status(status.code(), absl::StrCat(node.Describe(), ": ", status.message()));
}

// Runs `node`'s kernel on constants only and evaluates it. nullopt when the
// results are too large to keep as constants (the caller compiles the node
// normally then).
absl::StatusOr<std::optional<std::vector<XlaExpression>>> Fold(
    const Node& node, int64_t opset, const std::string& device,
    const std::vector<XlaExpression*>& inputs, int64_t limit) {
  XlaBuilder scratch(absl::StrCat("fold_", node.name));
  std::vector<XlaExpression> copies;
  copies.reserve(inputs.size());
  std::vector<XlaExpression*> pointers;
  for (XlaExpression* in : inputs) {
    if (!in) {
      pointers.push_back(nullptr);
      continue;
    }
    copies.push_back({in->shape, std::nullopt, in->constant});
    pointers.push_back(&copies.back());
  }
  absl::StatusOr<std::unique_ptr<XlaOpKernel>> kernel =
      XlaOpRegistry::Global().CreateKernel(node, opset, device);
  if (!kernel.ok()) return kernel.status();
  XlaOpKernelContext ctx(&scratch, node, opset, device, pointers);
  if (absl::Status s = (*kernel)->Compile(&ctx); !s.ok()) return s;
  if (!scratch.first_error().ok()) return scratch.first_error();
  std::vector<XlaOp> ops;
  for (int i = 0; i < ctx.num_outputs(); ++i) {
    const std::optional<XlaExpression>& out = ctx.outputs()[i];
    // A sequence or optional stays a list of expressions (its tensors keep
    // their own constness); the node compiles normally.
    if (out && !out->is_tensor()) return std::nullopt;
    if (!ctx.HasOutput(i) || !out || out->constant) continue;
    if (out->shape.num_elements() > limit) return std::nullopt;
    ops.push_back(*out->op);
  }
  std::vector<XlaExpression> results(ctx.num_outputs());
  if (!ops.empty()) {
    absl::StatusOr<XlaComputation> computation = scratch.Build(Tuple(&scratch, ops));
    if (!computation.ok()) return computation.status();
    HloEvaluator evaluator(/*max_loop_iterations=*/1 << 20);
    absl::StatusOr<Literal> tuple = evaluator.Evaluate(computation->module(), {});
    if (!tuple.ok()) return tuple.status();
    int k = 0;
    for (int i = 0; i < ctx.num_outputs(); ++i) {
      const std::optional<XlaExpression>& out = ctx.outputs()[i];
      if (!ctx.HasOutput(i) || !out || out->constant) continue;
      Literal value = std::move(tuple->mutable_tuple_element(k++));
      results[i] = {value.shape(), std::nullopt, std::move(value)};
    }
  }
  for (int i = 0; i < ctx.num_outputs(); ++i) {
    std::optional<XlaExpression>& out = ctx.outputs()[i];
    if (ctx.HasOutput(i) && out && out->constant) results[i] = std::move(*out);
  }
  return results;
}

}  // namespace

absl::Status XlaCompiler::CheckSignature(const Graph& graph, absl::Span<const XlaArgument> args) {
  if (args.size() != graph.inputs.size()) {
    return absl::InvalidArgumentError(absl::StrCat("the graph has ", graph.inputs.size(),
                                                   " inputs but ", args.size(), " were given"));
  }
  std::map<std::string, std::pair<int64_t, std::string>> symbols;
  // One tensor of input `info` (the input itself, or a tensor of its
  // sequence or optional, `what` naming which). The tensors of a sequence
  // may differ in shape: a symbolic dimension there binds nothing.
  auto check_tensor = [&](const ValueInfo& info, const Shape& shape, const std::string& what,
                          bool bind_symbols = true) -> absl::Status {
    if (!shape.IsArray()) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, " must be an array, got ", shape.ToString(false)));
    }
    if (info.element_type != PRIMITIVE_TYPE_INVALID && shape.element_type() != info.element_type) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, " must have element type ",
                       primitive_util::LowercasePrimitiveTypeName(info.element_type), ", got ",
                       shape.ToString(false)));
    }
    if (!info.dims) return absl::OkStatus();
    if (static_cast<int64_t>(info.dims->size()) != shape.rank()) {
      return absl::InvalidArgumentError(absl::StrCat(what, " must have rank ", info.dims->size(),
                                                     ", got ", shape.ToString(false)));
    }
    for (int64_t d = 0; d < shape.rank(); ++d) {
      const Dim& dim = (*info.dims)[d];
      int64_t size = shape.dimensions(d);
      if (dim.size && *dim.size != size) {
        return absl::InvalidArgumentError(absl::StrCat(what, " dimension ", d, " must be ",
                                                       *dim.size, ", got ", shape.ToString(false)));
      }
      if (dim.symbol.empty() || !bind_symbols) continue;
      auto [it, inserted] = symbols.emplace(dim.symbol, std::make_pair(size, info.name));
      if (!inserted && it->second.first != size) {
        return absl::InvalidArgumentError(
            absl::StrCat("dimension '", dim.symbol, "' is ", it->second.first, " in input '",
                         it->second.second, "' but ", size, " in input '", info.name, "'"));
      }
    }
    return absl::OkStatus();
  };
  auto check_sequence = [&](const ValueInfo& info, const Shape& shape,
                            const std::string& what) -> absl::Status {
    if (!shape.IsTuple()) {
      return absl::InvalidArgumentError(absl::StrCat(
          what, " is a sequence and must be a tuple of tensors, got ", shape.ToString(false)));
    }
    for (int64_t k = 0; k < static_cast<int64_t>(shape.tuple_shapes_size()); ++k) {
      absl::Status s = check_tensor(info, shape.tuple_shapes(k), absl::StrCat(what, " element ", k),
                                    /*bind_symbols=*/false);
      if (!s.ok()) return s;
    }
    return absl::OkStatus();
  };
  for (size_t i = 0; i < args.size(); ++i) {
    const ValueInfo& info = graph.inputs[i];
    const Shape& shape = args[i].shape;
    std::string what = absl::StrCat("input '", info.name, "'");
    if (info.kind != ValueKind::kTensor && args[i].constant) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, " is a ", ValueKindName(info.kind), " and cannot be a constant"));
    }
    absl::Status s;
    switch (info.kind) {
      case ValueKind::kTensor:
        s = check_tensor(info, shape, what);
        break;
      case ValueKind::kStringTensor:
        if (!IsStringTensorShape(shape)) {
          s = absl::InvalidArgumentError(
              absl::StrCat(what, " is a string tensor and must be a tuple (u8[n], s64[...]), got ",
                           shape.ToString(false)));
        } else {
          ValueInfo ends = info;
          ends.element_type = S64;
          s = check_tensor(ends, shape.tuple_shapes(1), what);
        }
        break;
      case ValueKind::kSequence:
        s = check_sequence(info, shape, what);
        break;
      case ValueKind::kOptionalTensor:
      case ValueKind::kOptionalSequence:
        if (!shape.IsTuple() || shape.tuple_shapes_size() > 1) {
          return absl::InvalidArgumentError(
              absl::StrCat(what, " is an optional and must be a tuple of no element (none) or ",
                           "one (its value), got ", shape.ToString(false)));
        }
        if (shape.tuple_shapes_size() == 1) {
          s = info.kind == ValueKind::kOptionalTensor
                  ? check_tensor(info, shape.tuple_shapes(0), what)
                  : check_sequence(info, shape.tuple_shapes(0), what);
        }
        break;
    }
    if (!s.ok()) return s;
    if (args[i].constant && args[i].constant->shape().dimensions() != shape.dimensions()) {
      return absl::InvalidArgumentError(absl::StrCat(what, ": the constant's shape ",
                                                     args[i].constant->shape().ToString(false),
                                                     " differs from ", shape.ToString(false)));
    }
  }
  return absl::OkStatus();
}

absl::Status XlaCompiler::RunNodes(XlaBuilder* builder, const Graph& graph,
                                   const std::vector<int64_t>& order,
                                   std::map<std::string, XlaExpression>& values,
                                   int64_t* folded_nodes,
                                   XlaCompilationResult::LargestValue* largest) const {
  for (int64_t index : order) {
    const Node& node = graph.nodes[index];
    absl::StatusOr<int64_t> opset = graph.OpsetFor(node.domain);
    if (!opset.ok()) return WithNode(node, opset.status());
    std::vector<XlaExpression*> inputs;
    bool all_constant = !node.inputs.empty();
    const KernelDef* def = nullptr;
    for (const std::string& name : node.inputs) {
      XlaExpression* e = nullptr;
      if (!name.empty()) {
        auto it = values.find(name);
        if (it == values.end()) {
          return absl::InternalError(
              absl::StrCat(node.Describe(), ": input '", name, "' has no value"));
        }
        e = &it->second;
        if (!e->is_tensor()) {
          all_constant = false;
          if (!def) def = XlaOpRegistry::Global().FindKernelDef(node, *opset, options_.device_type);
          if (def && !def->non_tensor_inputs) {
            return absl::InvalidArgumentError(absl::StrCat(node.Describe(), ": input '", name,
                                                           "' is a ", ValueKindName(e->kind),
                                                           "; the op takes tensors"));
          }
        }
      }
      inputs.push_back(e);
      if (e && (!e->constant || e->shape.num_elements() > options_.constant_fold_limit)) {
        all_constant = false;
      }
    }
    std::vector<XlaExpression> outputs;
    bool folded = false;
    if (all_constant) {
      auto fold = Fold(node, *opset, options_.device_type, inputs, options_.constant_fold_limit);
      if (!fold.ok()) return WithNode(node, fold.status());
      if (fold->has_value()) {
        outputs = std::move(**fold);
        folded = true;
        ++*folded_nodes;
      }
    }
    if (!folded) {
      absl::StatusOr<std::unique_ptr<XlaOpKernel>> kernel =
          XlaOpRegistry::Global().CreateKernel(node, *opset, options_.device_type);
      if (!kernel.ok()) return kernel.status();
      OpMetadata metadata;
      metadata.set_op_type(node.op_type);
      metadata.set_op_name(node.name);
      builder->SetOpMetadata(metadata);
      XlaOpKernelContext ctx(builder, node, *opset, options_.device_type, inputs);
      if (absl::Status s = (*kernel)->Compile(&ctx); !s.ok()) return WithNode(node, s);
      if (!builder->first_error().ok()) return WithNode(node, builder->first_error());
      absl::StatusOr<std::vector<XlaExpression>> set =
          TakeKernelOutputs(node, ctx.outputs(), "kernel");
      if (!set.ok()) return set.status();
      outputs = *std::move(set);
    }
    for (int i = 0; i < static_cast<int>(node.outputs.size()); ++i) {
      if (node.outputs[i].empty()) continue;
      if (i >= static_cast<int>(outputs.size()) || !outputs[i].is_set()) {
        return absl::InternalError(
            absl::StrCat(node.Describe(), ": the kernel did not set output ", i));
      }
      const XlaExpression& e = outputs[i];
      if (largest && !folded && e.op && e.shape.IsArray() &&
          ShapeUtil::ByteSizeOfElements(e.shape) > largest->bytes) {
        *largest = {node.Describe(), e.shape, ShapeUtil::ByteSizeOfElements(e.shape)};
      }
      values[node.outputs[i]] = std::move(outputs[i]);
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<XlaExpression>> XlaCompiler::CompileSubgraph(
    XlaBuilder* builder, const Graph& graph, std::map<std::string, XlaExpression> values) const {
  for (const ValueInfo& input : graph.inputs) {
    if (!values.count(input.name)) {
      return absl::InternalError(absl::StrCat("subgraph input '", input.name, "' is not bound"));
    }
  }
  for (const std::string& name : graph.captures) {
    if (!values.count(name)) {
      return absl::InternalError(absl::StrCat("subgraph capture '", name, "' is not bound"));
    }
  }
  absl::StatusOr<std::vector<int64_t>> order = TopologicalOrder(graph);
  if (!order.ok()) return order.status();
  for (const auto& [name, literal] : graph.initializers) {
    if (!values.count(name)) values[name] = XlaExpression{literal.shape(), std::nullopt, literal};
  }
  int64_t folded = 0;
  if (absl::Status s = RunNodes(builder, graph, *order, values, &folded, nullptr); !s.ok()) {
    return s;
  }
  builder->ClearOpMetadata();
  std::vector<XlaExpression> outputs;
  for (const ValueInfo& out : graph.outputs) {
    auto it = values.find(out.name);
    if (it == values.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("subgraph output '", out.name, "' is not produced by anything"));
    }
    outputs.push_back(it->second);
  }
  return outputs;
}

absl::StatusOr<XlaCompilationResult> XlaCompiler::Compile(
    const Graph& graph, absl::Span<const XlaArgument> args) const {
  if (absl::Status s = CheckSignature(graph, args); !s.ok()) return s;
  absl::StatusOr<std::vector<int64_t>> order = TopologicalOrder(graph);
  if (!order.ok()) return order.status();

  XlaBuilder builder(graph.name.empty() ? "onnx_graph" : graph.name);
  XlaCompilationResult result;
  std::map<std::string, XlaExpression> values;
  for (size_t i = 0; i < args.size(); ++i) {
    const ValueInfo& info = graph.inputs[i];
    if (info.kind == ValueKind::kStringTensor) {
      return absl::UnimplementedError(
          absl::StrCat("input '", info.name,
                       "' is a string tensor; strings have no device type and only host "
                       "kernels read them"));
    }
    if (info.kind != ValueKind::kTensor) {
      // A sequence or optional: one tuple parameter (none when it holds no
      // tensor), its elements bound one by one.
      std::optional<XlaOp> op;
      if (HasArrays(args[i].shape)) {
        int64_t number = static_cast<int64_t>(result.parameters.size());
        op = Parameter(&builder, number, args[i].shape, info.name);
        result.parameters.push_back(
            {XlaCompilationResult::Parameter::kInput, static_cast<int64_t>(i), "", args[i].shape});
      }
      values[info.name] = Bind(op, args[i].shape, info.kind, info.element_type);
      continue;
    }
    XlaExpression e{args[i].shape, std::nullopt, args[i].constant};
    if (!args[i].constant) {
      int64_t number = static_cast<int64_t>(result.parameters.size());
      e.op = Parameter(&builder, number, args[i].shape, graph.inputs[i].name);
      result.parameters.push_back(
          {XlaCompilationResult::Parameter::kInput, static_cast<int64_t>(i), "", args[i].shape});
    }
    values[graph.inputs[i].name] = std::move(e);
  }
  // Initializers that something uses (a graph input of the same name wins).
  std::set<std::string> used;
  for (const Node& node : graph.nodes) used.insert(node.inputs.begin(), node.inputs.end());
  for (const ValueInfo& out : graph.outputs) used.insert(out.name);
  for (const auto& [name, literal] : graph.initializers) {
    if (!used.count(name) || values.count(name)) continue;
    XlaExpression e{literal.shape(), std::nullopt, literal};
    if (literal.element_count() > options_.initializer_constant_limit) {
      int64_t number = static_cast<int64_t>(result.parameters.size());
      e.op = Parameter(&builder, number, literal.shape(), name);
      result.parameters.push_back(
          {XlaCompilationResult::Parameter::kInitializer, -1, name, literal.shape()});
    }
    values[name] = std::move(e);
  }

  if (absl::Status s =
          RunNodes(&builder, graph, *order, values, &result.folded_nodes, &result.largest_value);
      !s.ok()) {
    return s;
  }
  builder.ClearOpMetadata();

  std::vector<XlaOp> roots;
  for (const ValueInfo& out : graph.outputs) {
    const XlaExpression& e = values.at(out.name);
    roots.push_back(AsOutput(&builder, e));
    result.output_shapes.push_back(e.shape);
  }
  absl::StatusOr<XlaComputation> computation = builder.Build(Tuple(&builder, roots));
  if (!computation.ok()) return computation.status();
  result.computation = std::move(*computation);
  return result;
}

}  // namespace axle::graph
