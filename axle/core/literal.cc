#include "axle/core/literal.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "axle/base/alignment.h"
#include "axle/base/status_macros.h"

namespace axle {
Literal::Literal() : shape_(ShapeUtil::MakeNil()) {}

Literal::Literal(const Shape& shape) : shape_(shape) {
  ShapeUtil::SetToDefaultLayoutIfMissing(&shape_);
  Allocate();
}

void Literal::Allocate() {
  if (shape_.IsTuple()) {
    elements_.reserve(shape_.tuple_shapes_size());
    for (const Shape& s : shape_.tuple_shapes()) elements_.emplace_back(s);
    return;
  }
  if (!shape_.IsArray()) return;
  size_bytes_ = ShapeUtil::ByteSizeOfElements(shape_);
  size_t allocated = RoundUpToAlignment(std::max<int64_t>(1, size_bytes_));
  buffer_ = static_cast<uint8_t*>(std::aligned_alloc(kBufferAlignment, allocated));
  CHECK(buffer_ != nullptr) << "out of memory allocating " << allocated << " bytes";
  std::memset(buffer_, 0, allocated);
}

void Literal::Release() {
  std::free(buffer_);
  buffer_ = nullptr;
  size_bytes_ = 0;
  elements_.clear();
}

Literal::Literal(const Literal& other) { *this = other; }

Literal& Literal::operator=(const Literal& other) {
  if (this == &other) return *this;
  Release();
  shape_ = other.shape_;
  if (shape_.IsTuple()) {
    elements_ = other.elements_;
  } else if (shape_.IsArray()) {
    Allocate();
    std::memcpy(buffer_, other.buffer_, size_bytes_);
  }
  return *this;
}

Literal::Literal(Literal&& other) noexcept { *this = std::move(other); }

Literal& Literal::operator=(Literal&& other) noexcept {
  if (this == &other) return *this;
  Release();
  shape_ = std::move(other.shape_);
  buffer_ = other.buffer_;
  size_bytes_ = other.size_bytes_;
  elements_ = std::move(other.elements_);
  other.buffer_ = nullptr;
  other.size_bytes_ = 0;
  other.elements_.clear();
  other.shape_ = ShapeUtil::MakeNil();
  return *this;
}

Literal::~Literal() { Release(); }

int64_t Literal::element_count(const ShapeIndex& index) const {
  return GetSubliteral(index).shape_.num_elements();
}

int64_t Literal::size_bytes(const ShapeIndex& index) const {
  return GetSubliteral(index).size_bytes_;
}

const void* Literal::untyped_data(const ShapeIndex& index) const {
  return GetSubliteral(index).buffer_;
}

void* Literal::untyped_data(const ShapeIndex& index) { return GetMutableSubliteral(index).buffer_; }

int64_t Literal::LinearIndex(absl::Span<const int64_t> multi_index) const {
  CHECK_EQ(static_cast<int64_t>(multi_index.size()), shape_.rank());
  int64_t linear = 0;
  for (int64_t i = 0; i < shape_.rank(); ++i) {
    DCHECK(multi_index[i] >= 0 && multi_index[i] < shape_.dimensions(i));
    linear = linear * shape_.dimensions(i) + multi_index[i];
  }
  return linear;
}

double Literal::GetAsDouble(int64_t i) const {
  return PrimitiveTypeSwitch(
      [&]<typename T>() -> double {
        return ConvertValue<double>(reinterpret_cast<const T*>(buffer_)[i]);
      },
      shape_.element_type());
}

complex128 Literal::GetAsComplex128(int64_t i) const {
  return PrimitiveTypeSwitch(
      [&]<typename T>() -> complex128 {
        return ConvertValue<complex128>(reinterpret_cast<const T*>(buffer_)[i]);
      },
      shape_.element_type());
}

std::optional<int64_t> Literal::GetIntegralAsS64(int64_t i) const {
  PrimitiveType type = shape_.element_type();
  if (!primitive_util::IsIntegralType(type) && type != PRED) return std::nullopt;
  return PrimitiveTypeSwitch(
      [&]<typename T>() -> int64_t {
        if constexpr (is_integer_v<T> || std::is_same_v<T, bool>) {
          return ConvertValue<int64_t>(reinterpret_cast<const T*>(buffer_)[i]);
        } else {
          return 0;
        }
      },
      type);
}

std::optional<uint64_t> Literal::GetIntegralAsU64(int64_t i) const {
  PrimitiveType type = shape_.element_type();
  if (!primitive_util::IsIntegralType(type) && type != PRED) return std::nullopt;
  return PrimitiveTypeSwitch(
      [&]<typename T>() -> uint64_t {
        if constexpr (is_integer_v<T> || std::is_same_v<T, bool>) {
          return ConvertValue<uint64_t>(reinterpret_cast<const T*>(buffer_)[i]);
        } else {
          return 0;
        }
      },
      type);
}

void Literal::SetFromDouble(int64_t i, double value) {
  PrimitiveTypeSwitch(
      [&]<typename T>() { reinterpret_cast<T*>(buffer_)[i] = ConvertValue<T>(value); },
      shape_.element_type());
}

void Literal::SetFromComplex128(int64_t i, complex128 value) {
  PrimitiveTypeSwitch(
      [&]<typename T>() { reinterpret_cast<T*>(buffer_)[i] = ConvertValue<T>(value); },
      shape_.element_type());
}

void Literal::SetIntegral(int64_t i, int64_t value) {
  PrimitiveTypeSwitch(
      [&]<typename T>() { reinterpret_cast<T*>(buffer_)[i] = ConvertValue<T>(value); },
      shape_.element_type());
}

const Literal& Literal::GetSubliteral(const ShapeIndex& index) const {
  const Literal* l = this;
  for (int64_t i : index) {
    CHECK(i >= 0 && i < l->tuple_size()) << "bad tuple index " << ShapeIndexToString(index);
    l = &l->elements_[i];
  }
  return *l;
}

Literal& Literal::GetMutableSubliteral(const ShapeIndex& index) {
  return const_cast<Literal&>(static_cast<const Literal*>(this)->GetSubliteral(index));
}

std::vector<Literal> Literal::DecomposeTuple() {
  std::vector<Literal> out = std::move(elements_);
  Release();
  shape_ = ShapeUtil::MakeNil();
  return out;
}

Literal Literal::MakeTuple(std::vector<Literal> elements) {
  std::vector<Shape> shapes;
  shapes.reserve(elements.size());
  for (const Literal& e : elements) shapes.push_back(e.shape());
  Literal out;
  out.shape_ = Shape::MakeTuple(std::move(shapes));
  out.elements_ = std::move(elements);
  return out;
}

absl::Status Literal::CopyFrom(const Literal& src, const ShapeIndex& dest_index) {
  Literal& dest = GetMutableSubliteral(dest_index);
  if (!ShapeUtil::Compatible(dest.shape_, src.shape_)) {
    return absl::InvalidArgumentError(absl::StrCat("cannot copy a literal of shape ",
                                                   src.shape_.ToString(), " into one of shape ",
                                                   dest.shape_.ToString()));
  }
  Layout layout;
  bool has_layout = dest.shape_.IsArray() && dest.shape_.has_layout();
  if (has_layout) layout = dest.shape_.layout();
  dest = src;
  if (has_layout) dest.shape_.set_layout(layout);
  return absl::OkStatus();
}

bool Literal::operator==(const Literal& other) const {
  if (!ShapeUtil::Compatible(shape_, other.shape_)) return false;
  if (shape_.IsTuple()) return elements_ == other.elements_;
  if (!shape_.IsArray()) return true;
  return std::memcmp(buffer_, other.buffer_, size_bytes_) == 0;
}

absl::StatusOr<Literal> Literal::Convert(PrimitiveType type) const {
  if (shape_.IsTuple()) {
    std::vector<Literal> elements;
    for (const Literal& e : elements_) {
      AXLE_ASSIGN_OR_RETURN(Literal converted, e.Convert(type));
      elements.push_back(std::move(converted));
    }
    return MakeTuple(std::move(elements));
  }
  if (!shape_.IsArray() || !primitive_util::IsArrayType(type)) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot convert ", shape_.ToString(), " to ",
                     primitive_util::LowercasePrimitiveTypeName(type)));
  }
  Literal out(ShapeUtil::ChangeElementType(shape_, type));
  int64_t n = element_count();
  PrimitiveTypeSwitch(
      [&]<typename From>() {
        const From* src = reinterpret_cast<const From*>(buffer_);
        PrimitiveTypeSwitch(
            [&]<typename To>() {
              To* dst = reinterpret_cast<To*>(out.buffer_);
              for (int64_t i = 0; i < n; ++i) dst[i] = ConvertValue<To>(src[i]);
            },
            type);
      },
      shape_.element_type());
  return out;
}

absl::StatusOr<Literal> Literal::Reshape(absl::Span<const int64_t> dimensions) const {
  if (!shape_.IsArray()) return absl::InvalidArgumentError("only arrays can be reshaped");
  Shape shape = ShapeUtil::MakeShape(shape_.element_type(), dimensions);
  if (shape.num_elements() != shape_.num_elements()) {
    return absl::InvalidArgumentError(absl::StrCat("cannot reshape ", shape_.ToString(), " to ",
                                                   shape.ToString(), ": element counts differ"));
  }
  Literal out(shape);
  std::memcpy(out.buffer_, buffer_, size_bytes_);
  return out;
}

std::ostream& operator<<(std::ostream& os, const Literal& literal) {
  return os << literal.ToString();
}

namespace {

template <typename T>
T Lowest() {
  if constexpr (is_intn_v<T>)
    return T(T::kMin);
  else if constexpr (std::is_same_v<T, bool>)
    return false;
  else if constexpr (is_narrow_float_v<T>) {
    return T::kHasInfinity ? T(-std::numeric_limits<double>::infinity()) : T::Lowest();
  } else if constexpr (std::is_floating_point_v<T>) {
    return -std::numeric_limits<T>::infinity();
  } else {
    return std::numeric_limits<T>::lowest();
  }
}

template <typename T>
T Highest() {
  if constexpr (is_intn_v<T>)
    return T(T::kMax);
  else if constexpr (std::is_same_v<T, bool>)
    return true;
  else if constexpr (is_narrow_float_v<T>) {
    return T::kHasInfinity ? T(std::numeric_limits<double>::infinity()) : T::Highest();
  } else if constexpr (std::is_floating_point_v<T>) {
    return std::numeric_limits<T>::infinity();
  } else {
    return std::numeric_limits<T>::max();
  }
}

}  // namespace

Literal LiteralUtil::Zero(PrimitiveType type) { return Literal(ShapeUtil::MakeScalarShape(type)); }

Literal LiteralUtil::One(PrimitiveType type) {
  Literal l(ShapeUtil::MakeScalarShape(type));
  l.SetFromDouble(0, 1.0);
  return l;
}

// The lowest value: -inf for floats that have it, else their lowest finite
// value (2^-127 for the unsigned e8m0fnu); the minimum integer; false.
Literal LiteralUtil::MinValue(PrimitiveType type) {
  Literal l(ShapeUtil::MakeScalarShape(type));
  PrimitiveTypeSwitch(
      [&]<typename T>() {
        if constexpr (!is_complex_v<T>) l.data<T>()[0] = Lowest<T>();
      },
      type);
  return l;
}

Literal LiteralUtil::MaxValue(PrimitiveType type) {
  Literal l(ShapeUtil::MakeScalarShape(type));
  PrimitiveTypeSwitch(
      [&]<typename T>() {
        if constexpr (!is_complex_v<T>) l.data<T>()[0] = Highest<T>();
      },
      type);
  return l;
}

}  // namespace axle
