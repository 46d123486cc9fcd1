#include "axle/core/shape.h"

#include <ostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace axle {

std::string ShapeIndexToString(const ShapeIndex& index) {
  return absl::StrCat("{", absl::StrJoin(index, ","), "}");
}

Shape::Shape(PrimitiveType element_type, absl::Span<const int64_t> dimensions)
    : element_type_(element_type),
      dimensions_(dimensions.begin(), dimensions.end()),
      dynamic_dimensions_(dimensions.size(), false) {
  for (size_t i = 0; i < dimensions_.size(); ++i) {
    if (dimensions_[i] == kUnboundedSize) dynamic_dimensions_[i] = true;
  }
}

Shape Shape::MakeTuple(std::vector<Shape> elements) {
  Shape shape;
  shape.element_type_ = TUPLE;
  shape.tuple_shapes_ = std::move(elements);
  return shape;
}

Shape Shape::MakeBuffer(Shape array) {
  Shape shape;
  shape.element_type_ = BUFFER;
  shape.tuple_shapes_.push_back(std::move(array));
  return shape;
}

void Shape::add_dimension(int64_t size, bool dynamic) {
  dimensions_.push_back(size);
  dynamic_dimensions_.push_back(dynamic || size == kUnboundedSize);
}

void Shape::clear_dimensions() {
  dimensions_.clear();
  dynamic_dimensions_.clear();
}

bool Shape::is_static() const {
  if (IsTuple() || IsBuffer()) {
    for (const Shape& s : tuple_shapes_) {
      if (!s.is_static()) return false;
    }
    return true;
  }
  for (bool d : dynamic_dimensions_) {
    if (d) return false;
  }
  return true;
}

Layout* Shape::mutable_layout() {
  if (!layout_) layout_.emplace();
  return &*layout_;
}

int64_t Shape::num_elements() const {
  int64_t n = 1;
  for (int64_t d : dimensions_) n *= (d == kUnboundedSize ? 0 : d);
  return n;
}

std::string Shape::ToString(bool print_layout) const {
  if (IsTuple()) {
    std::string out = "(";
    for (size_t i = 0; i < tuple_shapes_.size(); ++i) {
      if (i) out += ", ";
      out += tuple_shapes_[i].ToString(print_layout);
    }
    return out + ")";
  }
  if (IsBuffer()) return absl::StrCat("b(", buffer_shape().ToString(print_layout), ")");
  std::string out(primitive_util::LowercasePrimitiveTypeName(element_type_));
  out += "[";
  for (size_t i = 0; i < dimensions_.size(); ++i) {
    if (i) out += ",";
    if (dimensions_[i] == kUnboundedSize) {
      out += "?";
    } else {
      if (dynamic_dimensions_[i]) out += "<=";
      absl::StrAppend(&out, dimensions_[i]);
    }
  }
  out += "]";
  if (print_layout && layout_ && IsArray()) {
    std::string layout = layout_->ToString();
    // XLA does not print "{}" for scalars.
    if (!(IsScalar() && layout == "{}")) out += layout;
  }
  return out;
}

bool Shape::operator==(const Shape& other) const {
  if (element_type_ != other.element_type_) return false;
  if (IsTuple() || IsBuffer()) return tuple_shapes_ == other.tuple_shapes_;
  if (dimensions_ != other.dimensions_ || dynamic_dimensions_ != other.dynamic_dimensions_) {
    return false;
  }
  if (!IsArray()) return true;
  if (layout_.has_value() != other.layout_.has_value()) return false;
  return !layout_ || *layout_ == *other.layout_;
}

std::ostream& operator<<(std::ostream& os, const Shape& shape) { return os << shape.ToString(); }

std::string ProgramShape::ToString() const {
  std::vector<std::string> params;
  for (const Shape& p : parameters_) params.push_back(p.ToString(true));
  return absl::StrCat("(", absl::StrJoin(params, ", "), ")->", result_.ToString(true));
}

}  // namespace axle
