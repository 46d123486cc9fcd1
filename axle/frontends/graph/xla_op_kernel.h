//===- xla_op_kernel.h - Op kernels that compile graph nodes to HLO ---------===//
//
// tf2xla's XlaOpKernel in Axle: a kernel lowers one graph node to HLO by
// "symbolic execution". Compile(ctx) reads the node's inputs as XlaOps with
// their static shapes, reads attributes, asks for compile-time constant
// inputs (shapes, axes, pads computed in the graph) and sets its outputs
// through the context's XlaBuilder.
//
// Constants: every value the compiler tracks is an XlaExpression, an XlaOp
// and/or a Literal known at compile time. Constant nodes, initializers and
// inputs the signature marks constant carry a literal; so does the output of
// any node whose inputs are all constants (the compiler runs the kernel on a
// scratch builder and evaluates it with the reference interpreter, see
// xla_compiler.cc). ConstantInput(i) returns that literal, or an error
// naming the node and the input when the value depends on a runtime input.
//
// Compile returns a Status (tf2xla's calls ctx->SetStatus); errors from
// attribute accessors and the Error() helper already name the node.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_FRONTENDS_GRAPH_XLA_OP_KERNEL_H_
#define AXLE_FRONTENDS_GRAPH_XLA_OP_KERNEL_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "axle/builder/xla_builder.h"
#include "axle/frontends/graph/graph.h"

namespace axle::graph {

// A value during compilation: the op that computes it (absent until a
// constant is first used as an op) and, when known, its value.
//
// Sequences and optionals (ONNX's non-tensor types) are compile-time lists,
// as tf2xla lowers a TensorList of static length: a sequence is the list of
// its tensors' expressions (`elements`; its length is known at compile
// time, each element may have its own shape), an optional is a list of
// zero elements (none) or one (a tensor or a sequence). Their `shape` is the
// tuple of the elements' shapes; `op` and `constant` are unset.
struct XlaExpression {
  Shape shape;
  std::optional<XlaOp> op;
  std::optional<Literal> constant;
  ValueKind kind = ValueKind::kTensor;
  std::vector<XlaExpression> elements;
  // A sequence's tensor type (what SequenceEmpty declares); may be invalid.
  PrimitiveType element_type = PRIMITIVE_TYPE_INVALID;

  bool is_tensor() const { return kind == ValueKind::kTensor; }
  bool is_sequence() const { return kind == ValueKind::kSequence; }
  bool is_optional() const {
    return kind == ValueKind::kOptionalTensor || kind == ValueKind::kOptionalSequence;
  }
  // Whether it holds a value (a tensor's op or constant; any list).
  bool is_set() const { return !is_tensor() || op.has_value() || constant.has_value(); }

  static XlaExpression Sequence(std::vector<XlaExpression> elements, PrimitiveType element_type);
  // An optional of `value` (a tensor or a sequence), or none.
  static XlaExpression Optional(std::optional<XlaExpression> value, bool of_sequence);
};

class XlaOpKernelContext {
 public:
  XlaOpKernelContext(XlaBuilder* builder, const Node& node, int64_t opset,
                     const std::string& device_type, std::vector<XlaExpression*> inputs);

  XlaBuilder* builder() const { return builder_; }
  const Node& node() const { return node_; }
  int64_t opset() const { return opset_; }
  const std::string& device_type() const { return device_type_; }

  // Inputs, counting omitted optional ones ("" in the graph).
  int num_inputs() const { return static_cast<int>(inputs_.size()); }
  bool HasInput(int i) const { return i < num_inputs() && inputs_[i] != nullptr; }
  // The input as an op (a constant input becomes a constant op).
  // Precondition: HasInput(i).
  XlaOp Input(int i);
  const Shape& InputShape(int i) const;
  PrimitiveType InputType(int i) const { return InputShape(i).element_type(); }
  bool IsConstantInput(int i) const { return HasInput(i) && inputs_[i]->constant.has_value(); }
  // The whole expression, for the kernels of sequences and optionals (whose
  // registration says TakesNonTensors); Input(i) and ConstantInput(i) are
  // for tensors only. Precondition: HasInput(i).
  const XlaExpression& InputExpression(int i) const;
  bool IsTensorInput(int i) const { return HasInput(i) && inputs_[i]->is_tensor(); }
  // The input's value at compile time.
  absl::StatusOr<Literal> ConstantInput(int i) const;
  // The same converted to int64 (shapes, axes, pads, ...).
  absl::StatusOr<std::vector<int64_t>> ConstantInputAsIntVector(int i) const;

  // Attributes. The typed getters fail (naming node and attribute) when the
  // attribute has another type; the defaulted ones return `def` when absent.
  bool HasAttr(const std::string& name) const { return node_.attrs.count(name) > 0; }
  absl::StatusOr<int64_t> GetAttrInt(const std::string& name) const;
  absl::StatusOr<int64_t> GetAttrInt(const std::string& name, int64_t def) const;
  absl::StatusOr<float> GetAttrFloat(const std::string& name, float def) const;
  absl::StatusOr<std::string> GetAttrString(const std::string& name, std::string def) const;
  absl::StatusOr<std::vector<int64_t>> GetAttrInts(const std::string& name) const;
  absl::StatusOr<std::vector<float>> GetAttrFloats(const std::string& name) const;
  absl::StatusOr<Literal> GetAttrTensor(const std::string& name) const;

  int num_outputs() const { return static_cast<int>(node_.outputs.size()); }
  // Whether output i is used (present in the node, not "").
  bool HasOutput(int i) const { return i < num_outputs() && !node_.outputs[i].empty(); }
  void SetOutput(int i, XlaOp op);
  // An output whose value is known now (Shape, Constant, ...).
  void SetConstantOutput(int i, Literal value);
  // Any expression: a tensor's op or constant, a sequence, an optional.
  void SetOutputExpression(int i, XlaExpression e);

  // An InvalidArgument error prefixed with the node ("node 'x' (Conv): ...").
  template <typename... Args>
  absl::Status Error(const Args&... args) const {
    return absl::InvalidArgumentError(absl::StrCat(node_.Describe(), ": ", args...));
  }
  template <typename... Args>
  absl::Status Unimplemented(const Args&... args) const {
    return absl::UnimplementedError(absl::StrCat(node_.Describe(), ": ", args...));
  }

  // For the compiler: the outputs the kernel set.
  std::vector<std::optional<XlaExpression>>& outputs() { return outputs_; }

 private:
  const AttrValue* FindAttr(const std::string& name) const;

  XlaBuilder* builder_;
  const Node& node_;
  int64_t opset_;
  std::string device_type_;
  std::vector<XlaExpression*> inputs_;
  std::vector<std::optional<XlaExpression>> outputs_;
};

class XlaOpKernel {
 public:
  virtual ~XlaOpKernel() = default;
  virtual absl::Status Compile(XlaOpKernelContext* ctx) = 0;
};

}  // namespace axle::graph

#endif  // AXLE_FRONTENDS_GRAPH_XLA_OP_KERNEL_H_
