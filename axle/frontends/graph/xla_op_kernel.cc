//===- xla_op_kernel.cc - XlaOpKernelContext --------------------------------===//
#include "axle/frontends/graph/xla_op_kernel.h"

#include "absl/strings/str_join.h"

namespace axle::graph {

XlaOpKernelContext::XlaOpKernelContext(XlaBuilder* builder, const Node& node, int64_t opset,
                                       const std::string& device_type,
                                       std::vector<XlaExpression*> inputs)
    : builder_(builder),
      node_(node),
      opset_(opset),
      device_type_(device_type),
      inputs_(std::move(inputs)),
      outputs_(node.outputs.size()) {}

XlaExpression XlaExpression::Sequence(std::vector<XlaExpression> elements,
                                      PrimitiveType element_type) {
  XlaExpression e;
  e.kind = ValueKind::kSequence;
  std::vector<Shape> shapes;
  for (const XlaExpression& element : elements) {
    shapes.push_back(element.shape);
    if (element_type == PRIMITIVE_TYPE_INVALID) element_type = element.shape.element_type();
  }
  e.shape = ShapeUtil::MakeTupleShape(shapes);
  e.elements = std::move(elements);
  e.element_type = element_type;
  return e;
}

XlaExpression XlaExpression::Optional(std::optional<XlaExpression> value, bool of_sequence) {
  XlaExpression e;
  e.kind = of_sequence ? ValueKind::kOptionalSequence : ValueKind::kOptionalTensor;
  std::vector<Shape> shapes;
  if (value) {
    shapes.push_back(value->shape);
    e.element_type = value->is_tensor() ? value->shape.element_type() : value->element_type;
    e.elements.push_back(std::move(*value));
  }
  e.shape = ShapeUtil::MakeTupleShape(shapes);
  return e;
}

const XlaExpression& XlaOpKernelContext::InputExpression(int i) const {
  CHECK(HasInput(i)) << node_.Describe() << " input " << i;
  return *inputs_[i];
}

void XlaOpKernelContext::SetOutputExpression(int i, XlaExpression e) {
  CHECK_LT(i, num_outputs()) << node_.Describe();
  outputs_[i] = std::move(e);
}

XlaOp XlaOpKernelContext::Input(int i) {
  CHECK(HasInput(i)) << node_.Describe() << " input " << i;
  XlaExpression& e = *inputs_[i];
  CHECK(e.is_tensor()) << node_.Describe() << " input " << i << " is not a tensor";
  if (!e.op) {
    CHECK(e.constant.has_value());
    e.op = ConstantLiteral(builder_, *e.constant);
  }
  return *e.op;
}

const Shape& XlaOpKernelContext::InputShape(int i) const {
  CHECK(HasInput(i)) << node_.Describe() << " input " << i;
  return inputs_[i]->shape;
}

absl::StatusOr<Literal> XlaOpKernelContext::ConstantInput(int i) const {
  if (!HasInput(i)) return Error("input ", i, " is required");
  if (!inputs_[i]->is_tensor()) {
    return Error("input ", i, " ('", node_.inputs[i], "') must be a tensor, it is a ",
                 ValueKindName(inputs_[i]->kind));
  }
  if (!inputs_[i]->constant) {
    return Error("input ", i, " ('", node_.inputs[i],
                 "') must be a compile-time constant but depends on a runtime input");
  }
  return *inputs_[i]->constant;
}

absl::StatusOr<std::vector<int64_t>> XlaOpKernelContext::ConstantInputAsIntVector(int i) const {
  absl::StatusOr<Literal> value = ConstantInput(i);
  if (!value.ok()) return value.status();
  if (!primitive_util::IsIntegralType(value->shape().element_type())) {
    return Error("input ", i, " ('", node_.inputs[i], "') must be integers, got ",
                 value->shape().ToString(false));
  }
  std::vector<int64_t> out(value->element_count());
  for (int64_t k = 0; k < static_cast<int64_t>(out.size()); ++k) {
    out[k] = *value->GetIntegralAsS64(k);
  }
  return out;
}

const AttrValue* XlaOpKernelContext::FindAttr(const std::string& name) const {
  auto it = node_.attrs.find(name);
  return it == node_.attrs.end() ? nullptr : &it->second;
}

namespace {
template <typename T>
absl::StatusOr<T> Typed(const XlaOpKernelContext& ctx, const AttrValue* v, const std::string& name,
                        const char* type) {
  if (!v) return ctx.Error("attribute '", name, "' is required");
  if (const T* t = std::get_if<T>(v)) return *t;
  return ctx.Error("attribute '", name, "' must be ", type);
}
}  // namespace

absl::StatusOr<int64_t> XlaOpKernelContext::GetAttrInt(const std::string& name) const {
  return Typed<int64_t>(*this, FindAttr(name), name, "an int");
}
absl::StatusOr<int64_t> XlaOpKernelContext::GetAttrInt(const std::string& name, int64_t def) const {
  return HasAttr(name) ? GetAttrInt(name) : def;
}
absl::StatusOr<float> XlaOpKernelContext::GetAttrFloat(const std::string& name, float def) const {
  if (!HasAttr(name)) return def;
  return Typed<float>(*this, FindAttr(name), name, "a float");
}
absl::StatusOr<std::string> XlaOpKernelContext::GetAttrString(const std::string& name,
                                                              std::string def) const {
  if (!HasAttr(name)) return def;
  return Typed<std::string>(*this, FindAttr(name), name, "a string");
}
absl::StatusOr<std::vector<int64_t>> XlaOpKernelContext::GetAttrInts(
    const std::string& name) const {
  return Typed<std::vector<int64_t>>(*this, FindAttr(name), name, "a list of ints");
}
absl::StatusOr<std::vector<float>> XlaOpKernelContext::GetAttrFloats(
    const std::string& name) const {
  return Typed<std::vector<float>>(*this, FindAttr(name), name, "a list of floats");
}
absl::StatusOr<Literal> XlaOpKernelContext::GetAttrTensor(const std::string& name) const {
  return Typed<Literal>(*this, FindAttr(name), name, "a tensor");
}

void XlaOpKernelContext::SetOutput(int i, XlaOp op) {
  CHECK_LT(i, num_outputs()) << node_.Describe();
  XlaExpression e;
  absl::StatusOr<Shape> shape = builder_->GetShape(op);
  if (shape.ok()) e.shape = *shape;
  e.op = op;
  outputs_[i] = std::move(e);
}

void XlaOpKernelContext::SetConstantOutput(int i, Literal value) {
  CHECK_LT(i, num_outputs()) << node_.Describe();
  XlaExpression e;
  e.shape = value.shape();
  e.constant = std::move(value);
  outputs_[i] = std::move(e);
}

}  // namespace axle::graph
