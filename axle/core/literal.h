//===- literal.h - Host values of any shape --------------------------------===//
//
// A Literal owns a value of a Shape: a dense array of elements, or a tuple of
// literals, or a token. Array elements are always stored in row-major
// (logical) order, one element per `ByteWidth` bytes (sub-byte types take a
// byte), 64-byte aligned. The shape's layout is kept for printing and for
// transfers; it never changes how the host storage is indexed.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_CORE_LITERAL_H_
#define AXLE_CORE_LITERAL_H_

#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "axle/base/logging.h"
#include "axle/core/shape.h"
#include "axle/core/shape_util.h"
#include "axle/core/types.h"

namespace axle {

class Literal {
 public:
  // A nil literal: the empty tuple.
  Literal();
  // Zero-filled storage for `shape` (array subshapes without a layout get the
  // default one).
  explicit Literal(const Shape& shape);

  Literal(const Literal& other);
  Literal& operator=(const Literal& other);
  Literal(Literal&& other) noexcept;
  Literal& operator=(Literal&& other) noexcept;
  ~Literal();

  Literal Clone() const { return *this; }

  const Shape& shape() const { return shape_; }

  // --- Arrays ---------------------------------------------------------------
  int64_t element_count(const ShapeIndex& index = {}) const;
  int64_t size_bytes(const ShapeIndex& index = {}) const;
  const void* untyped_data(const ShapeIndex& index = {}) const;
  void* untyped_data(const ShapeIndex& index = {});

  template <typename T>
  absl::Span<const T> data(const ShapeIndex& index = {}) const {
    const Literal& piece = GetSubliteral(index);
    CHECK(piece.shape_.element_type() == NativeToPrimitiveType<T>())
        << "literal of type " << piece.shape_.ToString() << " accessed with the wrong C++ type";
    return absl::Span<const T>(reinterpret_cast<const T*>(piece.buffer_), piece.element_count());
  }
  template <typename T>
  absl::Span<T> data(const ShapeIndex& index = {}) {
    Literal& piece = GetMutableSubliteral(index);
    CHECK(piece.shape_.element_type() == NativeToPrimitiveType<T>())
        << "literal of type " << piece.shape_.ToString() << " accessed with the wrong C++ type";
    return absl::Span<T>(reinterpret_cast<T*>(piece.buffer_), piece.element_count());
  }

  // Row-major linear index of a multi-index into this (array) literal.
  int64_t LinearIndex(absl::Span<const int64_t> multi_index) const;

  template <typename T>
  T Get(absl::Span<const int64_t> multi_index) const {
    return data<T>()[LinearIndex(multi_index)];
  }
  template <typename T>
  void Set(absl::Span<const int64_t> multi_index, T value) {
    data<T>()[LinearIndex(multi_index)] = value;
  }
  template <typename T>
  T GetFirstElement() const {
    return data<T>()[0];
  }

  // Type-generic element access by linear index (arrays only).
  // GetAsDouble: real value (pred 0/1, ints, floats; real part of complex).
  double GetAsDouble(int64_t linear_index) const;
  complex128 GetAsComplex128(int64_t linear_index) const;
  // Integers and pred; nullopt for other types.
  std::optional<int64_t> GetIntegralAsS64(int64_t linear_index) const;
  std::optional<uint64_t> GetIntegralAsU64(int64_t linear_index) const;
  // Stores `value` converted to the element type (integers truncate, floats
  // round to nearest even).
  void SetFromDouble(int64_t linear_index, double value);
  void SetFromComplex128(int64_t linear_index, complex128 value);
  void SetIntegral(int64_t linear_index, int64_t value);

  // --- Tuples ---------------------------------------------------------------
  int64_t tuple_size() const { return static_cast<int64_t>(elements_.size()); }
  const Literal& tuple_element(int64_t i) const { return elements_[i]; }
  Literal& mutable_tuple_element(int64_t i) { return elements_[i]; }
  const Literal& GetSubliteral(const ShapeIndex& index) const;
  Literal& GetMutableSubliteral(const ShapeIndex& index);
  // Splits a tuple literal into its elements; this becomes nil.
  std::vector<Literal> DecomposeTuple();
  static Literal MakeTuple(std::vector<Literal> elements);

  // Copies `src` into the subliteral at `index` (shapes must be compatible).
  absl::Status CopyFrom(const Literal& src, const ShapeIndex& dest_index = {});

  // --- Whole-value operations ------------------------------------------------
  // Same shape (ignoring layout) and bit-identical elements.
  bool operator==(const Literal& other) const;
  bool operator!=(const Literal& other) const { return !(*this == other); }

  // Converts every element to `type` (arrays, or tuples element-wise).
  absl::StatusOr<Literal> Convert(PrimitiveType type) const;
  // Same elements in row-major order under new dimensions.
  absl::StatusOr<Literal> Reshape(absl::Span<const int64_t> dimensions) const;

  // XLA's literal text (see literal_text.h): "f32[2] {1, 2}",
  // "(\nf32[] 1,\ns32[] 2\n)"; without the shapes: "{1, 2}". The Oneline
  // forms put everything on one line ("{ { 1, 2 }, { 3, 4 } }"), as the HLO
  // printer prints constants; WithLayout also prints the shapes' layouts.
  std::string ToString() const;
  std::string ToStringWithoutShape() const;
  std::string ToStringOneline() const;
  std::string ToStringWithoutShapeOneline() const;
  std::string ToStringWithLayout() const;
  std::string ToStringWithLayoutOneline() const;

  // Replaces the shape's layout (storage is unaffected).
  void set_layout(const Layout& layout) { shape_.set_layout(layout); }

 private:
  void Allocate();
  void Release();

  Shape shape_;
  uint8_t* buffer_ = nullptr;  // arrays: 64-byte aligned, row-major
  int64_t size_bytes_ = 0;
  std::vector<Literal> elements_;  // tuples
};

std::ostream& operator<<(std::ostream& os, const Literal& literal);

// Constructors in XLA's LiteralUtil style.
class LiteralUtil {
 public:
  template <typename T>
  static Literal CreateR0(T value) {
    Literal l(ShapeUtil::MakeShape(NativeToPrimitiveType<T>(), {}));
    l.data<T>()[0] = value;
    return l;
  }
  template <typename T>
  static Literal CreateR1(absl::Span<const T> values) {
    Literal l(
        ShapeUtil::MakeShape(NativeToPrimitiveType<T>(), {static_cast<int64_t>(values.size())}));
    std::copy(values.begin(), values.end(), l.data<T>().begin());
    return l;
  }
  template <typename T>
  static Literal CreateR1(std::initializer_list<T> values) {
    return CreateR1<T>(absl::Span<const T>(values.begin(), values.size()));
  }
  template <typename T>
  static Literal CreateR2(std::initializer_list<std::initializer_list<T>> values) {
    int64_t rows = values.size();
    int64_t cols = rows ? values.begin()->size() : 0;
    Literal l(ShapeUtil::MakeShape(NativeToPrimitiveType<T>(), {rows, cols}));
    int64_t i = 0;
    for (const auto& row : values) {
      CHECK_EQ(static_cast<int64_t>(row.size()), cols);
      for (const T& v : row) l.data<T>()[i++] = v;
    }
    return l;
  }
  // Dimensions + row-major values.
  template <typename T>
  static Literal CreateFromDimensions(absl::Span<const int64_t> dimensions,
                                      absl::Span<const T> values) {
    Literal l(ShapeUtil::MakeShape(NativeToPrimitiveType<T>(), dimensions));
    CHECK_EQ(static_cast<int64_t>(values.size()), l.element_count());
    std::copy(values.begin(), values.end(), l.data<T>().begin());
    return l;
  }

  static Literal MakeTuple(std::vector<Literal> elements) {
    return Literal::MakeTuple(std::move(elements));
  }
  static Literal MakeTupleOwned(std::vector<Literal> elements) {
    return Literal::MakeTuple(std::move(elements));
  }
  static Literal CreateToken() { return Literal(ShapeUtil::MakeTokenShape()); }

  // Scalars of `type` holding 0, 1, the lowest and the highest value.
  static Literal Zero(PrimitiveType type);
  static Literal One(PrimitiveType type);
  static Literal MinValue(PrimitiveType type);
  static Literal MaxValue(PrimitiveType type);
};

}  // namespace axle

#endif  // AXLE_CORE_LITERAL_H_
