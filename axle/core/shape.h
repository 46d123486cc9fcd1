//===- shape.h - Array, tuple and token shapes -----------------------------===//
//
// XLA's Shape: an element type with dimensions (each static, bounded-dynamic
// `<=N`, or unbounded `?`) and an optional layout, or a tuple of shapes, or a
// token/opaque, or a buffer `b(f32[16])` (an array held by reference: element
// type BUFFER, the array in the one tuple_shapes entry, as in XLA's proto).
// Printing follows XLA's text format exactly.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_CORE_SHAPE_H_
#define AXLE_CORE_SHAPE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/types/span.h"
#include "axle/core/layout.h"
#include "axle/core/primitive_type.h"

namespace axle {

// A path into a (nested) tuple shape: {} is the whole shape, {1, 0} is
// element 0 of element 1.
using ShapeIndex = std::vector<int64_t>;
std::string ShapeIndexToString(const ShapeIndex& index);  // "{1,0}"

class Shape {
 public:
  // The size printed as `?`: a dimension with no static bound.
  static constexpr int64_t kUnboundedSize = INT64_MIN;

  Shape() = default;
  Shape(PrimitiveType element_type, absl::Span<const int64_t> dimensions);
  static Shape MakeTuple(std::vector<Shape> elements);
  static Shape MakeBuffer(Shape array);

  PrimitiveType element_type() const { return element_type_; }
  void set_element_type(PrimitiveType type) { element_type_ = type; }

  bool IsArray() const { return primitive_util::IsArrayType(element_type_); }
  bool IsTuple() const { return element_type_ == TUPLE; }
  bool IsToken() const { return element_type_ == TOKEN; }
  bool IsOpaque() const { return element_type_ == OPAQUE_TYPE; }
  bool IsBuffer() const { return element_type_ == BUFFER; }
  bool IsScalar() const { return IsArray() && dimensions_.empty(); }

  // Arrays: the dimension sizes (the bound for a bounded-dynamic dimension,
  // kUnboundedSize for `?`).
  int64_t rank() const { return static_cast<int64_t>(dimensions_.size()); }
  const std::vector<int64_t>& dimensions() const { return dimensions_; }
  int64_t dimensions(int64_t i) const { return dimensions_[i]; }
  void set_dimensions(int64_t i, int64_t size) { dimensions_[i] = size; }
  void add_dimension(int64_t size, bool dynamic = false);
  void clear_dimensions();

  bool is_dynamic_dimension(int64_t i) const { return dynamic_dimensions_[i]; }
  void set_dynamic_dimension(int64_t i, bool dynamic) { dynamic_dimensions_[i] = dynamic; }
  const std::vector<bool>& dynamic_dimensions() const { return dynamic_dimensions_; }
  bool is_unbounded_dynamic_dimension(int64_t i) const { return dimensions_[i] == kUnboundedSize; }
  bool is_static() const;  // no dynamic dimension anywhere (incl. tuple elements)
  bool is_dynamic() const { return !is_static(); }

  // Tuples.
  int64_t tuple_shapes_size() const { return static_cast<int64_t>(tuple_shapes_.size()); }
  const std::vector<Shape>& tuple_shapes() const { return tuple_shapes_; }
  std::vector<Shape>* mutable_tuple_shapes() { return &tuple_shapes_; }
  const Shape& tuple_shapes(int64_t i) const { return tuple_shapes_[i]; }
  Shape* mutable_tuple_shapes(int64_t i) { return &tuple_shapes_[i]; }

  // Buffers: the array shape the buffer holds.
  const Shape& buffer_shape() const { return tuple_shapes_.at(0); }

  // Layout (arrays only).
  bool has_layout() const { return layout_.has_value(); }
  const Layout& layout() const { return *layout_; }
  Layout* mutable_layout();
  void set_layout(Layout layout) { layout_ = std::move(layout); }
  void clear_layout() { layout_.reset(); }

  // Elements in an array shape (product of dimensions; bounds for dynamic).
  int64_t num_elements() const;

  // XLA's text: "f32[2,<=3]{1,0}", "(f32[], s32[4]{0})", "token[]", "b(f32[2])".
  std::string ToString(bool print_layout = true) const;

  // Equality including layouts and dynamic dimensions.
  bool operator==(const Shape& other) const;
  bool operator!=(const Shape& other) const { return !(*this == other); }

 private:
  PrimitiveType element_type_ = PRIMITIVE_TYPE_INVALID;
  std::vector<int64_t> dimensions_;
  std::vector<bool> dynamic_dimensions_;
  std::vector<Shape> tuple_shapes_;
  std::optional<Layout> layout_;
};

std::ostream& operator<<(std::ostream& os, const Shape& shape);

// Parameter shapes and result shape: `(f32[2]{0}, s32[])->f32[2]{0}`, with
// XLA's accessors (they mirror ProgramShapeProto's generated code).
class ProgramShape {
 public:
  ProgramShape() = default;
  ProgramShape(std::vector<Shape> parameters, Shape result)
      : parameters_(std::move(parameters)), result_(std::move(result)) {}

  int parameters_size() const { return static_cast<int>(parameters_.size()); }
  const Shape& parameters(int index) const { return parameters_.at(index); }
  Shape* mutable_parameters(int index) { return &parameters_.at(index); }
  Shape* add_parameters() { return &parameters_.emplace_back(); }
  void clear_parameters() { parameters_.clear(); }
  const std::vector<Shape>& parameters() const { return parameters_; }
  std::vector<Shape>* mutable_parameters() { return &parameters_; }

  const Shape& result() const { return result_; }
  Shape* mutable_result() { return &result_; }

  int parameter_names_size() const { return static_cast<int>(parameter_names_.size()); }
  const std::string& parameter_names(int index) const { return parameter_names_.at(index); }
  void set_parameter_names(int index, std::string value) {
    parameter_names_.at(index) = std::move(value);
  }
  std::string* add_parameter_names() { return &parameter_names_.emplace_back(); }
  void clear_parameter_names() { parameter_names_.clear(); }
  const std::vector<std::string>& parameter_names() const { return parameter_names_; }
  std::vector<std::string>* mutable_parameter_names() { return &parameter_names_; }

  // "(f32[2]{0}, s32[])->f32[2]{0}"
  std::string ToString() const;
  bool operator==(const ProgramShape&) const = default;

 private:
  std::vector<Shape> parameters_;
  std::vector<std::string> parameter_names_;
  Shape result_;
};

}  // namespace axle

#endif  // AXLE_CORE_SHAPE_H_
