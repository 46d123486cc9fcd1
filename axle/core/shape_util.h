//===- shape_util.h - Making, comparing and walking shapes -----------------===//
#ifndef AXLE_CORE_SHAPE_UTIL_H_
#define AXLE_CORE_SHAPE_UTIL_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "axle/core/shape.h"

namespace axle {

class ShapeUtil {
 public:
  // An array shape with the default (descending, row-major) layout.
  static Shape MakeShape(PrimitiveType type, absl::Span<const int64_t> dimensions);
  static Shape MakeShapeWithDescendingLayout(PrimitiveType type,
                                             absl::Span<const int64_t> dimensions) {
    return MakeShape(type, dimensions);
  }
  static Shape MakeShapeWithDenseLayout(PrimitiveType type, absl::Span<const int64_t> dimensions,
                                        absl::Span<const int64_t> minor_to_major);
  static Shape MakeScalarShape(PrimitiveType type) { return MakeShape(type, {}); }
  static Shape MakeTupleShape(std::vector<Shape> shapes) {
    return Shape::MakeTuple(std::move(shapes));
  }
  static Shape MakeNil() { return Shape::MakeTuple({}); }
  static Shape MakeTokenShape();
  static Shape MakeOpaqueShape();

  // The same shape with another element type (layout kept).
  static Shape ChangeElementType(const Shape& shape, PrimitiveType type);

  // Gives every array subshape without a layout the default layout.
  static void SetToDefaultLayoutIfMissing(Shape* shape);
  static void SetToDefaultLayout(Shape* shape);
  static Layout MakeDescendingLayout(int64_t rank);
  static bool HasDescendingLayout(const Shape& shape);
  static void ClearLayouts(Shape* shape);

  static int64_t ElementsIn(const Shape& shape) { return shape.num_elements(); }
  // Bytes of an array's dense host storage (one byte per sub-byte element).
  static int64_t ByteSizeOfElements(const Shape& shape);
  static bool IsEmptyTuple(const Shape& shape) {
    return shape.IsTuple() && shape.tuple_shapes_size() == 0;
  }
  static bool IsZeroElementArray(const Shape& shape) {
    return shape.IsArray() && shape.num_elements() == 0;
  }
  static bool IsEffectiveScalar(const Shape& shape) {
    return shape.IsArray() && shape.num_elements() == 1;
  }
  static bool IsNestedTuple(const Shape& shape);

  // Comparisons. Compatible ignores layouts; "IgnoringFpPrecision" also lets
  // float types differ; "IgnoringElementType" compares dimensions only.
  static bool Equal(const Shape& a, const Shape& b) { return a == b; }
  static bool Compatible(const Shape& a, const Shape& b);
  static bool CompatibleIgnoringElementType(const Shape& a, const Shape& b);
  static bool CompatibleIgnoringFpPrecision(const Shape& a, const Shape& b);
  static bool SameDimensions(const Shape& a, const Shape& b);
  static bool SameElementType(const Shape& a, const Shape& b) {
    return a.element_type() == b.element_type();
  }

  // Subshapes.
  static bool IndexIsValid(const Shape& shape, const ShapeIndex& index);
  static const Shape& GetSubshape(const Shape& shape, const ShapeIndex& index);
  static Shape* GetMutableSubshape(Shape* shape, const ShapeIndex& index);
  static absl::StatusOr<const Shape*> TryGetSubshape(const Shape& shape, const ShapeIndex& index);
  // Pre-order: a tuple before its elements.
  static void ForEachSubshape(const Shape& shape,
                              const std::function<void(const Shape&, const ShapeIndex&)>& fn);
  static void ForEachMutableSubshape(Shape* shape,
                                     const std::function<void(Shape*, const ShapeIndex&)>& fn);
  static void ForEachLeafShape(const Shape& shape,
                               const std::function<void(const Shape&, const ShapeIndex&)>& fn);
  static int64_t GetLeafCount(const Shape& shape);

  // Without / with layouts: "f32[2,3]" / "f32[2,3]{1,0}".
  static std::string HumanString(const Shape& shape) { return shape.ToString(false); }
  static std::string HumanStringWithLayout(const Shape& shape) { return shape.ToString(true); }

  // Row-major strides (in elements) of `dimensions`.
  static std::vector<int64_t> RowMajorStrides(absl::Span<const int64_t> dimensions);
  // Strides (in elements) of `dimensions` stored densely in `minor_to_major`
  // order, its first dimension the fastest-varying; a dimension it does not
  // name gets stride 1.
  static std::vector<int64_t> StridesInLayout(absl::Span<const int64_t> dimensions,
                                              absl::Span<const int64_t> minor_to_major);
  // The strides of an array shape's dimensions in its own layout; row-major
  // when it has none or one that does not order every dimension.
  static std::vector<int64_t> LayoutStrides(const Shape& shape);

  // Calls fn for every multi-index of `dimensions` in row-major order; stops
  // early when fn returns false.
  static void ForEachIndex(absl::Span<const int64_t> dimensions,
                           const std::function<bool(absl::Span<const int64_t>)>& fn);

  // Removes / keeps the given dimensions of an array shape.
  static Shape DeleteDimensions(absl::Span<const int64_t> dims_to_delete, const Shape& shape);
  static Shape FilterDimensions(const std::function<bool(int64_t)>& keep, const Shape& shape);
  static Shape PermuteDimensions(absl::Span<const int64_t> permutation, const Shape& shape);
};

}  // namespace axle

#endif  // AXLE_CORE_SHAPE_UTIL_H_
