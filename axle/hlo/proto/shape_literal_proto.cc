// Shapes and literals as XLA's ShapeProto and LiteralProto (see
// hlo_proto.h).
#include <algorithm>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "axle/base/status_macros.h"
#include "axle/core/shape_util.h"
#include "axle/hlo/proto/hlo_proto.h"

namespace axle {
namespace {

absl::Status Unimplemented(absl::string_view what) {
  return absl::UnimplementedError(absl::StrCat("HloModuleProto: ", what, " is not supported yet"));
}

absl::Status Invalid(absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("HloModuleProto: ", what));
}

// --- Shapes and literals ------------------------------------------------------

absl::Status LayoutToProto(const Layout& layout, proto::LayoutProto* out) {
  if (!layout.tiles().empty()) return Unimplemented("LayoutProto.tiles");
  if (!layout.dim_levels().empty()) return Unimplemented("LayoutProto.dim_level_types");
  if (!layout.split_configs().empty()) return Unimplemented("LayoutProto.split_configs");
  if (layout.physical_shape() != nullptr) return Unimplemented("LayoutProto.physical_shape");
  for (int64_t d : layout.minor_to_major()) out->add_minor_to_major(d);
  out->set_tail_padding_alignment_in_elements(layout.tail_padding_alignment_in_elements());
  out->set_element_size_in_bits(layout.element_size_in_bits());
  out->set_memory_space(layout.memory_space());
  out->set_index_primitive_type(layout.index_primitive_type());
  out->set_pointer_primitive_type(layout.pointer_primitive_type());
  out->set_dynamic_shape_metadata_prefix_bytes(layout.dynamic_shape_metadata_prefix_bytes());
  return absl::OkStatus();
}

absl::StatusOr<Layout> LayoutFromProto(const proto::LayoutProto& proto) {
  if (proto.tiles_size() > 0) return Unimplemented("LayoutProto.tiles");
  if (proto.dim_level_types_size() > 0) return Unimplemented("LayoutProto.dim_level_types");
  if (proto.split_configs_size() > 0) return Unimplemented("LayoutProto.split_configs");
  if (!proto.physical_shape().empty()) return Unimplemented("LayoutProto.physical_shape");
  Layout layout;
  for (int64_t d : proto.minor_to_major()) layout.mutable_minor_to_major()->push_back(d);
  // 0 (unset) means 1, as in XLA.
  layout.set_tail_padding_alignment_in_elements(
      std::max<int64_t>(1, proto.tail_padding_alignment_in_elements()));
  layout.set_element_size_in_bits(proto.element_size_in_bits());
  layout.set_memory_space(proto.memory_space());
  layout.set_index_primitive_type(static_cast<PrimitiveType>(proto.index_primitive_type()));
  layout.set_pointer_primitive_type(static_cast<PrimitiveType>(proto.pointer_primitive_type()));
  layout.set_dynamic_shape_metadata_prefix_bytes(proto.dynamic_shape_metadata_prefix_bytes());
  return layout;
}

bool IsKnownType(int type) {
  return type == TUPLE || type == TOKEN || type == OPAQUE_TYPE ||
         primitive_util::IsArrayType(static_cast<PrimitiveType>(type));
}

}  // namespace

absl::StatusOr<ShapeProto> ShapeToProto(const Shape& shape) {
  ShapeProto out;
  out.set_element_type(shape.element_type());
  if (shape.IsBuffer()) return Unimplemented("a buffer shape");
  if (shape.IsTuple()) {
    for (const Shape& element : shape.tuple_shapes()) {
      AXLE_ASSIGN_OR_RETURN(*out.add_tuple_shapes(), ShapeToProto(element));
    }
    return out;
  }
  for (int64_t i = 0; i < shape.rank(); ++i) {
    out.add_dimensions(shape.dimensions(i));
    out.add_is_dynamic_dimension(shape.is_dynamic_dimension(i));
  }
  if (shape.IsArray() && shape.has_layout()) {
    AXLE_RETURN_IF_ERROR(LayoutToProto(shape.layout(), out.mutable_layout()));
  }
  return out;
}

absl::StatusOr<Shape> ShapeFromProto(const ShapeProto& proto) {
  if (!IsKnownType(proto.element_type())) {
    return Invalid(absl::StrCat("ShapeProto.element_type ", proto.element_type(),
                                " is no primitive type Axle knows"));
  }
  const auto type = static_cast<PrimitiveType>(proto.element_type());
  if (type == TUPLE) {
    std::vector<Shape> elements;
    for (const ShapeProto& element : proto.tuple_shapes()) {
      AXLE_ASSIGN_OR_RETURN(Shape shape, ShapeFromProto(element));
      elements.push_back(std::move(shape));
    }
    return ShapeUtil::MakeTupleShape(std::move(elements));
  }
  if (type == TOKEN) return ShapeUtil::MakeTokenShape();
  if (type == OPAQUE_TYPE) return ShapeUtil::MakeOpaqueShape();
  if (proto.is_dynamic_dimension_size() != 0 &&
      proto.is_dynamic_dimension_size() != proto.dimensions_size()) {
    return Invalid("ShapeProto.is_dynamic_dimension does not match the dimensions");
  }
  std::vector<int64_t> dimensions(proto.dimensions().begin(), proto.dimensions().end());
  Shape shape = ShapeUtil::MakeShape(type, dimensions);
  for (int i = 0; i < proto.is_dynamic_dimension_size(); ++i) {
    shape.set_dynamic_dimension(i, proto.is_dynamic_dimension(i));
  }
  if (proto.has_layout()) {
    AXLE_ASSIGN_OR_RETURN(Layout layout, LayoutFromProto(proto.layout()));
    if (static_cast<int64_t>(layout.minor_to_major().size()) != shape.rank()) {
      return Invalid(absl::StrCat("LayoutProto.minor_to_major has ", layout.minor_to_major().size(),
                                  " entries for rank ", shape.rank()));
    }
    shape.set_layout(std::move(layout));
  }
  return shape;
}

namespace {

// Whether literals hold `shape`'s elements in row-major order (the order
// of their proto fields).
bool RowMajor(const Shape& shape) { return ShapeUtil::HasDescendingLayout(shape); }

template <typename T, typename Field>
void CopyElements(const Literal& literal, Field* field) {
  const T* data = static_cast<const T*>(literal.untyped_data());
  const int64_t count = literal.size_bytes() / static_cast<int64_t>(sizeof(T));
  field->Reserve(static_cast<int>(count));
  for (int64_t i = 0; i < count; ++i) field->Add(data[i]);
}

template <typename T, typename Field>
absl::Status ReadElements(const Field& field, Literal* literal, absl::string_view name) {
  const int64_t count = literal->size_bytes() / static_cast<int64_t>(sizeof(T));
  if (field.size() != count) {
    return Invalid(absl::StrCat("LiteralProto.", name, " holds ", field.size(), " values for ",
                                literal->shape().ToString(), " (", count, ")"));
  }
  T* data = static_cast<T*>(literal->untyped_data());
  for (int64_t i = 0; i < count; ++i) data[i] = static_cast<T>(field.Get(static_cast<int>(i)));
  return absl::OkStatus();
}

// The types whose literals a repeated number field holds: the type, the
// field's C++ element type (a complex number is two of them, real part
// first) and the field.
#define AXLE_LITERAL_NUMBER_FIELDS(V) \
  V(PRED, bool, preds)                \
  V(S32, int32_t, s32s)               \
  V(S64, int64_t, s64s)               \
  V(U32, uint32_t, u32s)              \
  V(U64, uint64_t, u64s)              \
  V(F32, float, f32s)                 \
  V(F64, double, f64s)                \
  V(C64, float, c64s)                 \
  V(C128, double, c128s)

// The `bytes` field holding literals of `type`, or null for the types with
// a repeated number field.
std::string* BytesField(PrimitiveType type, LiteralProto* proto) {
  switch (type) {
    case S1:
      return proto->mutable_s1s();
    case S2:
      return proto->mutable_s2s();
    case S4:
      return proto->mutable_s4s();
    case S8:
      return proto->mutable_s8s();
    case U1:
      return proto->mutable_u1s();
    case U2:
      return proto->mutable_u2s();
    case U4:
      return proto->mutable_u4s();
    case U8:
      return proto->mutable_u8s();
    case F16:
      return proto->mutable_f16s();
    case BF16:
      return proto->mutable_bf16s();
    case U16:
      return proto->mutable_u16s();
    case S16:
      return proto->mutable_s16s();
    case F4E2M1FN:
      return proto->mutable_f4e2m1fns();
    case F8E3M4:
      return proto->mutable_f8e3m4s();
    case F8E4M3B11FNUZ:
      return proto->mutable_f8e4m3b11fnuzs();
    case F8E4M3FN:
      return proto->mutable_f8e4m3fns();
    case F8E4M3FNUZ:
      return proto->mutable_f8e4m3fnuzs();
    case F8E4M3:
      return proto->mutable_f8e4m3s();
    case F8E5M2FNUZ:
      return proto->mutable_f8e5m2fnuzs();
    case F8E5M2:
      return proto->mutable_f8e5m2s();
    case F8E8M0FNU:
      return proto->mutable_f8e8m0fnus();
    default:
      return nullptr;
  }
}

}  // namespace

absl::StatusOr<LiteralProto> LiteralToProto(const Literal& literal) {
  LiteralProto out;
  AXLE_ASSIGN_OR_RETURN(*out.mutable_shape(), ShapeToProto(literal.shape()));
  const Shape& shape = literal.shape();
  if (shape.IsTuple()) {
    for (int64_t i = 0; i < literal.tuple_size(); ++i) {
      AXLE_ASSIGN_OR_RETURN(*out.add_tuple_literals(), LiteralToProto(literal.tuple_element(i)));
    }
    return out;
  }
  if (!shape.IsArray()) return out;
  if (!RowMajor(shape)) return Unimplemented("a literal in a non-default layout");
  switch (shape.element_type()) {
#define AXLE_COPY_ELEMENTS_(type, T, field)          \
  case type:                                         \
    CopyElements<T>(literal, out.mutable_##field()); \
    break;
    AXLE_LITERAL_NUMBER_FIELDS(AXLE_COPY_ELEMENTS_)
#undef AXLE_COPY_ELEMENTS_
    default: {
      // One element per byte for sub-byte types, as XLA writes them; 16-bit
      // types little-endian, as the host holds them.
      std::string* bytes = BytesField(shape.element_type(), &out);
      if (bytes == nullptr) return Unimplemented(absl::StrCat("a literal of ", shape.ToString()));
      bytes->assign(static_cast<const char*>(literal.untyped_data()),
                    static_cast<size_t>(literal.size_bytes()));
    }
  }
  return out;
}

absl::StatusOr<Literal> LiteralFromProto(const LiteralProto& proto) {
  AXLE_ASSIGN_OR_RETURN(Shape shape, ShapeFromProto(proto.shape()));
  if (shape.IsTuple()) {
    if (proto.tuple_literals_size() != shape.tuple_shapes_size()) {
      return Invalid("LiteralProto.tuple_literals does not match the tuple shape");
    }
    std::vector<Literal> elements;
    for (const LiteralProto& element : proto.tuple_literals()) {
      AXLE_ASSIGN_OR_RETURN(Literal literal, LiteralFromProto(element));
      elements.push_back(std::move(literal));
    }
    return Literal::MakeTuple(std::move(elements));
  }
  if (!RowMajor(shape)) return Unimplemented("a literal in a non-default layout");
  Literal literal(shape);
  if (!shape.IsArray()) return literal;
  switch (shape.element_type()) {
#define AXLE_READ_ELEMENTS_(type, T, field)                                 \
  case type:                                                                \
    AXLE_RETURN_IF_ERROR(ReadElements<T>(proto.field(), &literal, #field)); \
    break;
    AXLE_LITERAL_NUMBER_FIELDS(AXLE_READ_ELEMENTS_)
#undef AXLE_READ_ELEMENTS_
    default: {
      LiteralProto scratch = proto;
      const std::string* bytes = BytesField(shape.element_type(), &scratch);
      if (bytes == nullptr) return Unimplemented(absl::StrCat("a literal of ", shape.ToString()));
      if (static_cast<int64_t>(bytes->size()) != literal.size_bytes()) {
        return Invalid(absl::StrCat("a literal of ", shape.ToString(), " holds ", bytes->size(),
                                    " bytes; expected ", literal.size_bytes()));
      }
      std::memcpy(literal.untyped_data(), bytes->data(), bytes->size());
    }
  }
  return literal;
}

#undef AXLE_LITERAL_NUMBER_FIELDS

}  // namespace axle
