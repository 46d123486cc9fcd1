#include "axle/core/shape_util.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "axle/base/logging.h"

namespace axle {

Shape ShapeUtil::MakeShape(PrimitiveType type, absl::Span<const int64_t> dimensions) {
  Shape shape(type, dimensions);
  if (shape.IsArray()) shape.set_layout(MakeDescendingLayout(shape.rank()));
  return shape;
}

Shape ShapeUtil::MakeShapeWithDenseLayout(PrimitiveType type, absl::Span<const int64_t> dimensions,
                                          absl::Span<const int64_t> minor_to_major) {
  Shape shape(type, dimensions);
  shape.set_layout(Layout(minor_to_major));
  return shape;
}

Shape ShapeUtil::MakeTokenShape() { return Shape(TOKEN, {}); }
Shape ShapeUtil::MakeOpaqueShape() { return Shape(OPAQUE_TYPE, {}); }

Shape ShapeUtil::ChangeElementType(const Shape& shape, PrimitiveType type) {
  Shape out = shape;
  out.set_element_type(type);
  if (out.IsArray() && !out.has_layout()) out.set_layout(MakeDescendingLayout(out.rank()));
  return out;
}

Layout ShapeUtil::MakeDescendingLayout(int64_t rank) {
  std::vector<int64_t> minor_to_major(rank);
  for (int64_t i = 0; i < rank; ++i) minor_to_major[i] = rank - 1 - i;
  return Layout(minor_to_major);
}

void ShapeUtil::SetToDefaultLayoutIfMissing(Shape* shape) {
  ForEachMutableSubshape(shape, [](Shape* s, const ShapeIndex&) {
    if (s->IsArray() && !s->has_layout()) s->set_layout(MakeDescendingLayout(s->rank()));
  });
}

void ShapeUtil::SetToDefaultLayout(Shape* shape) {
  ForEachMutableSubshape(shape, [](Shape* s, const ShapeIndex&) {
    if (s->IsArray()) s->set_layout(MakeDescendingLayout(s->rank()));
  });
}

bool ShapeUtil::HasDescendingLayout(const Shape& shape) {
  if (!shape.IsArray() || !shape.has_layout()) return true;
  const auto& m2m = shape.layout().minor_to_major();
  for (size_t i = 0; i < m2m.size(); ++i) {
    if (m2m[i] != static_cast<int64_t>(m2m.size() - 1 - i)) return false;
  }
  return true;
}

void ShapeUtil::ClearLayouts(Shape* shape) {
  ForEachMutableSubshape(shape, [](Shape* s, const ShapeIndex&) { s->clear_layout(); });
}

int64_t ShapeUtil::ByteSizeOfElements(const Shape& shape) {
  return shape.num_elements() * primitive_util::ByteWidth(shape.element_type());
}

bool ShapeUtil::IsNestedTuple(const Shape& shape) {
  if (!shape.IsTuple()) return false;
  for (const Shape& s : shape.tuple_shapes()) {
    if (s.IsTuple()) return true;
  }
  return false;
}

namespace {

bool CompatibleImpl(const Shape& a, const Shape& b, bool check_type, bool ignore_fp) {
  if (a.IsTuple() || b.IsTuple()) {
    if (!a.IsTuple() || !b.IsTuple() || a.tuple_shapes_size() != b.tuple_shapes_size())
      return false;
    for (int64_t i = 0; i < a.tuple_shapes_size(); ++i) {
      if (!CompatibleImpl(a.tuple_shapes(i), b.tuple_shapes(i), check_type, ignore_fp))
        return false;
    }
    return true;
  }
  if (a.IsBuffer() && b.IsBuffer()) {
    return CompatibleImpl(a.buffer_shape(), b.buffer_shape(), check_type, ignore_fp);
  }
  if (!a.IsArray() || !b.IsArray()) return a.element_type() == b.element_type();
  if (check_type && a.element_type() != b.element_type()) {
    bool both_fp = primitive_util::IsFloatingPointType(a.element_type()) &&
                   primitive_util::IsFloatingPointType(b.element_type());
    if (!(ignore_fp && both_fp)) return false;
  }
  return a.dimensions() == b.dimensions() && a.dynamic_dimensions() == b.dynamic_dimensions();
}

}  // namespace

bool ShapeUtil::Compatible(const Shape& a, const Shape& b) {
  return CompatibleImpl(a, b, true, false);
}
bool ShapeUtil::CompatibleIgnoringElementType(const Shape& a, const Shape& b) {
  return CompatibleImpl(a, b, false, false);
}
bool ShapeUtil::CompatibleIgnoringFpPrecision(const Shape& a, const Shape& b) {
  return CompatibleImpl(a, b, true, true);
}
bool ShapeUtil::SameDimensions(const Shape& a, const Shape& b) {
  return a.dimensions() == b.dimensions();
}

bool ShapeUtil::IndexIsValid(const Shape& shape, const ShapeIndex& index) {
  const Shape* s = &shape;
  for (int64_t i : index) {
    if (!s->IsTuple() || i < 0 || i >= s->tuple_shapes_size()) return false;
    s = &s->tuple_shapes(i);
  }
  return true;
}

const Shape& ShapeUtil::GetSubshape(const Shape& shape, const ShapeIndex& index) {
  const Shape* s = &shape;
  for (int64_t i : index) {
    CHECK(s->IsTuple() && i >= 0 && i < s->tuple_shapes_size())
        << "invalid index " << ShapeIndexToString(index) << " into " << shape.ToString();
    s = &s->tuple_shapes(i);
  }
  return *s;
}

Shape* ShapeUtil::GetMutableSubshape(Shape* shape, const ShapeIndex& index) {
  Shape* s = shape;
  for (int64_t i : index) {
    CHECK(s->IsTuple() && i >= 0 && i < s->tuple_shapes_size());
    s = s->mutable_tuple_shapes(i);
  }
  return s;
}

absl::StatusOr<const Shape*> ShapeUtil::TryGetSubshape(const Shape& shape,
                                                       const ShapeIndex& index) {
  if (!IndexIsValid(shape, index)) {
    return absl::InvalidArgumentError(absl::StrCat("shape index ", ShapeIndexToString(index),
                                                   " is not valid for shape ", shape.ToString()));
  }
  return &GetSubshape(shape, index);
}

namespace {

void ForEachSubshapeImpl(const Shape& shape, ShapeIndex* index,
                         const std::function<void(const Shape&, const ShapeIndex&)>& fn) {
  fn(shape, *index);
  if (!shape.IsTuple()) return;
  for (int64_t i = 0; i < shape.tuple_shapes_size(); ++i) {
    index->push_back(i);
    ForEachSubshapeImpl(shape.tuple_shapes(i), index, fn);
    index->pop_back();
  }
}

void ForEachMutableSubshapeImpl(Shape* shape, ShapeIndex* index,
                                const std::function<void(Shape*, const ShapeIndex&)>& fn) {
  fn(shape, *index);
  if (!shape->IsTuple()) return;
  for (int64_t i = 0; i < shape->tuple_shapes_size(); ++i) {
    index->push_back(i);
    ForEachMutableSubshapeImpl(shape->mutable_tuple_shapes(i), index, fn);
    index->pop_back();
  }
}

}  // namespace

void ShapeUtil::ForEachSubshape(const Shape& shape,
                                const std::function<void(const Shape&, const ShapeIndex&)>& fn) {
  ShapeIndex index;
  ForEachSubshapeImpl(shape, &index, fn);
}

void ShapeUtil::ForEachMutableSubshape(Shape* shape,
                                       const std::function<void(Shape*, const ShapeIndex&)>& fn) {
  ShapeIndex index;
  ForEachMutableSubshapeImpl(shape, &index, fn);
}

void ShapeUtil::ForEachLeafShape(const Shape& shape,
                                 const std::function<void(const Shape&, const ShapeIndex&)>& fn) {
  ForEachSubshape(shape, [&](const Shape& s, const ShapeIndex& index) {
    if (!s.IsTuple()) fn(s, index);
  });
}

int64_t ShapeUtil::GetLeafCount(const Shape& shape) {
  int64_t count = 0;
  ForEachLeafShape(shape, [&](const Shape&, const ShapeIndex&) { ++count; });
  return count;
}

std::vector<int64_t> ShapeUtil::RowMajorStrides(absl::Span<const int64_t> dimensions) {
  std::vector<int64_t> strides(dimensions.size());
  int64_t stride = 1;
  for (int64_t i = static_cast<int64_t>(dimensions.size()) - 1; i >= 0; --i) {
    strides[i] = stride;
    stride *= dimensions[i];
  }
  return strides;
}

std::vector<int64_t> ShapeUtil::StridesInLayout(absl::Span<const int64_t> dimensions,
                                                absl::Span<const int64_t> minor_to_major) {
  std::vector<int64_t> strides(dimensions.size(), 1);
  int64_t stride = 1;
  for (int64_t dimension : minor_to_major) {
    strides[dimension] = stride;
    stride *= dimensions[dimension];
  }
  return strides;
}

std::vector<int64_t> ShapeUtil::LayoutStrides(const Shape& shape) {
  if (!shape.has_layout() ||
      static_cast<int64_t>(shape.layout().minor_to_major().size()) != shape.rank()) {
    return RowMajorStrides(shape.dimensions());
  }
  return StridesInLayout(shape.dimensions(), shape.layout().minor_to_major());
}

void ShapeUtil::ForEachIndex(absl::Span<const int64_t> dimensions,
                             const std::function<bool(absl::Span<const int64_t>)>& fn) {
  for (int64_t d : dimensions) {
    if (d <= 0) return;
  }
  std::vector<int64_t> index(dimensions.size(), 0);
  while (true) {
    if (!fn(index)) return;
    int64_t i = static_cast<int64_t>(dimensions.size()) - 1;
    for (; i >= 0; --i) {
      if (++index[i] < dimensions[i]) break;
      index[i] = 0;
    }
    if (i < 0) return;
  }
}

Shape ShapeUtil::DeleteDimensions(absl::Span<const int64_t> dims_to_delete, const Shape& shape) {
  return FilterDimensions(
      [&](int64_t d) {
        return std::find(dims_to_delete.begin(), dims_to_delete.end(), d) == dims_to_delete.end();
      },
      shape);
}

Shape ShapeUtil::FilterDimensions(const std::function<bool(int64_t)>& keep, const Shape& shape) {
  Shape out(shape.element_type(), {});
  for (int64_t i = 0; i < shape.rank(); ++i) {
    if (keep(i)) out.add_dimension(shape.dimensions(i), shape.is_dynamic_dimension(i));
  }
  out.set_layout(MakeDescendingLayout(out.rank()));
  return out;
}

Shape ShapeUtil::PermuteDimensions(absl::Span<const int64_t> permutation, const Shape& shape) {
  // XLA's convention: output dimension i is input dimension permutation[i].
  Shape out(shape.element_type(), {});
  for (int64_t p : permutation)
    out.add_dimension(shape.dimensions(p), shape.is_dynamic_dimension(p));
  out.set_layout(MakeDescendingLayout(out.rank()));
  return out;
}

}  // namespace axle
