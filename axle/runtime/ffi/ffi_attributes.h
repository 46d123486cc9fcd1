//===- ffi_attributes.h - xla::ffi attribute decoding ----------------------===//
//
// Decoding of custom-call attributes for XLA's typed FFI C++ API (see
// ffi_api.h): scalars, arrays (Span<const T>), strings, pointers, Dictionary,
// and structs and enums registered with XLA_FFI_REGISTER_STRUCT_ATTR_DECODING
// and XLA_FFI_REGISTER_ENUM_ATTR_DECODING (used at global scope).
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_RUNTIME_FFI_FFI_ATTRIBUTES_H_
#define AXLE_RUNTIME_FFI_FFI_ATTRIBUTES_H_

#include "axle/runtime/ffi/ffi_types.h"

namespace axle::ffi {

namespace internal {

// Concatenates anything streamable.
template <typename... Args>
std::string StrCat(const Args&... args) {
  std::ostringstream ss;
  (ss << ... << args);
  return ss.str();
}

inline std::string_view AttrName(const XLA_FFI_Attrs* attrs, int64_t i) {
  return std::string_view(attrs->names[i]->ptr, attrs->names[i]->len);
}

// The index of attribute `name`, if present.
inline std::optional<int64_t> FindAttr(const XLA_FFI_Attrs* attrs, std::string_view name) {
  for (int64_t i = 0; i < attrs->size; ++i) {
    if (AttrName(attrs, i) == name) return i;
  }
  return std::nullopt;
}

// "a, b, c" (or "none").
inline std::string AttrNames(const XLA_FFI_Attrs* attrs) {
  std::string names;
  for (int64_t i = 0; i < attrs->size; ++i) {
    if (i > 0) names += ", ";
    names += AttrName(attrs, i);
  }
  return names.empty() ? "none" : names;
}

}  // namespace internal

//===----------------------------------------------------------------------===//
// Attribute decoding
//===----------------------------------------------------------------------===//

namespace internal {

// Reads an integer scalar of any integer dtype (as int64 or, for unsigned
// dtypes, uint64); false if the dtype is not an integer type.
inline bool ReadIntegerScalar(const XLA_FFI_Scalar* scalar, int64_t* s, uint64_t* u,
                              bool* is_unsigned) {
  *is_unsigned = false;
  switch (scalar->dtype) {
    case XLA_FFI_DataType_S8:
      *s = *static_cast<const int8_t*>(scalar->value);
      return true;
    case XLA_FFI_DataType_S16:
      *s = *static_cast<const int16_t*>(scalar->value);
      return true;
    case XLA_FFI_DataType_S32:
      *s = *static_cast<const int32_t*>(scalar->value);
      return true;
    case XLA_FFI_DataType_S64:
      *s = *static_cast<const int64_t*>(scalar->value);
      return true;
    case XLA_FFI_DataType_U8:
      *u = *static_cast<const uint8_t*>(scalar->value);
      break;
    case XLA_FFI_DataType_U16:
      *u = *static_cast<const uint16_t*>(scalar->value);
      break;
    case XLA_FFI_DataType_U32:
      *u = *static_cast<const uint32_t*>(scalar->value);
      break;
    case XLA_FFI_DataType_U64:
      *u = *static_cast<const uint64_t*>(scalar->value);
      break;
    default:
      return false;
  }
  *is_unsigned = true;
  return true;
}

template <typename T>
std::optional<T> DecodeScalar(XLA_FFI_AttrType type, void* attr, DiagnosticEngine& diagnostic) {
  constexpr DataType kWant = NativeTypeToDataType<T>();
  if (XLA_FFI_PREDICT_FALSE(type != XLA_FFI_AttrType_SCALAR))
    return diagnostic.Emit("Wrong attribute type: expected scalar but got ") << type;
  const auto* scalar = static_cast<const XLA_FFI_Scalar*>(attr);
  const DataType got = static_cast<DataType>(scalar->dtype);
  if constexpr (std::is_same_v<T, bool>) {
    if (got != DataType::PRED)
      return diagnostic.Emit("Wrong scalar data type: expected PRED but got ") << got;
    return *static_cast<const bool*>(scalar->value);
  } else if constexpr (std::is_integral_v<T>) {
    int64_t s = 0;
    uint64_t u = 0;
    bool is_unsigned = false;
    if (!ReadIntegerScalar(scalar, &s, &u, &is_unsigned))
      return diagnostic.Emit("Wrong scalar data type: expected ") << kWant << " but got " << got;
    constexpr uint64_t kMax = static_cast<uint64_t>(std::numeric_limits<T>::max());
    constexpr int64_t kMin = static_cast<int64_t>(std::numeric_limits<T>::min());
    bool fits =
        is_unsigned ? u <= kMax : (s >= kMin && (s < 0 || static_cast<uint64_t>(s) <= kMax));
    if (!fits) {
      InFlightDiagnostic message = diagnostic.Emit("Scalar value ");
      if (is_unsigned) {
        message << u;
      } else {
        message << s;
      }
      message << " (" << got << ") is out of range for " << kWant;
      return std::nullopt;
    }
    return is_unsigned ? static_cast<T>(u) : static_cast<T>(s);
  } else {
    static_assert(std::is_floating_point_v<T>, "unsupported scalar attribute type");
    if (got == DataType::F32) return static_cast<T>(*static_cast<const float*>(scalar->value));
    if (got == DataType::F64) return static_cast<T>(*static_cast<const double*>(scalar->value));
    return diagnostic.Emit("Wrong scalar data type: expected ") << kWant << " but got " << got;
  }
}

}  // namespace internal

#define AXLE_FFI_SCALAR_ATTR_DECODING_(T)                             \
  template <>                                                         \
  struct AttrDecoding<T> {                                            \
    using Type = T;                                                   \
    static std::optional<T> Decode(XLA_FFI_AttrType type, void* attr, \
                                   DiagnosticEngine& diagnostic) {    \
      return internal::DecodeScalar<T>(type, attr, diagnostic);       \
    }                                                                 \
  };
AXLE_FFI_SCALAR_ATTR_DECODING_(bool)
AXLE_FFI_SCALAR_ATTR_DECODING_(int8_t)
AXLE_FFI_SCALAR_ATTR_DECODING_(int16_t)
AXLE_FFI_SCALAR_ATTR_DECODING_(int32_t)
AXLE_FFI_SCALAR_ATTR_DECODING_(int64_t)
AXLE_FFI_SCALAR_ATTR_DECODING_(uint8_t)
AXLE_FFI_SCALAR_ATTR_DECODING_(uint16_t)
AXLE_FFI_SCALAR_ATTR_DECODING_(uint32_t)
AXLE_FFI_SCALAR_ATTR_DECODING_(uint64_t)
AXLE_FFI_SCALAR_ATTR_DECODING_(float)
AXLE_FFI_SCALAR_ATTR_DECODING_(double)
#undef AXLE_FFI_SCALAR_ATTR_DECODING_

// Arrays: `array<i64: 1, 2>` as Span<const int64_t>, and so on.
template <typename T>
struct AttrDecoding<Span<const T>> {
  static_assert(internal::NativeTypeToDataType<T>() != DataType::INVALID &&
                    !std::is_same_v<T, bool>,
                "array attributes hold integers or floats");
  using Type = Span<const T>;
  static std::optional<Type> Decode(XLA_FFI_AttrType type, void* attr,
                                    DiagnosticEngine& diagnostic) {
    if (XLA_FFI_PREDICT_FALSE(type != XLA_FFI_AttrType_ARRAY))
      return diagnostic.Emit("Wrong attribute type: expected array but got ") << type;
    const auto* array = static_cast<const XLA_FFI_Array*>(attr);
    constexpr DataType kWant = internal::NativeTypeToDataType<T>();
    if (XLA_FFI_PREDICT_FALSE(static_cast<DataType>(array->dtype) != kWant)) {
      return diagnostic.Emit("Wrong array data type: expected ")
             << kWant << " but got " << static_cast<DataType>(array->dtype);
    }
    return Span<const T>(static_cast<const T*>(array->data), array->size);
  }
};

template <>
struct AttrDecoding<std::string_view> {
  using Type = std::string_view;
  static std::optional<Type> Decode(XLA_FFI_AttrType type, void* attr,
                                    DiagnosticEngine& diagnostic) {
    if (XLA_FFI_PREDICT_FALSE(type != XLA_FFI_AttrType_STRING))
      return diagnostic.Emit("Wrong attribute type: expected string but got ") << type;
    const auto* span = static_cast<const XLA_FFI_ByteSpan*>(attr);
    return std::string_view(span->ptr, span->len);
  }
};

// An i64 attribute read as a pointer to T.
template <typename T>
struct Pointer {};

template <typename T>
struct AttrDecoding<Pointer<T>> {
  using Type = T*;
  static std::optional<Type> Decode(XLA_FFI_AttrType type, void* attr,
                                    DiagnosticEngine& diagnostic) {
    std::optional<int64_t> value = internal::DecodeScalar<int64_t>(type, attr, diagnostic);
    if (!value) return std::nullopt;
    return reinterpret_cast<Type>(static_cast<uintptr_t>(*value));
  }
};

// A dictionary of attributes: all of a call's (Attrs<Dictionary>()), or one
// dictionary-valued attribute.
class Dictionary {
 public:
  explicit Dictionary(const XLA_FFI_Attrs* attrs) : attrs_(attrs) {}

  size_t size() const { return attrs_->size; }
  bool contains(std::string_view name) const {
    return internal::FindAttr(attrs_, name).has_value();
  }

  template <typename T>
  ErrorOr<typename AttrDecoding<T>::Type> get(std::string_view name) const {
    DiagnosticEngine diagnostic;
    std::optional<typename AttrDecoding<T>::Type> value = get<T>(name, diagnostic);
    if (!value) {
      return Unexpected(Error::InvalidArgument(
          internal::StrCat("attribute '", name, "': ", diagnostic.Result())));
    }
    return *std::move(value);
  }

  template <typename T>
  std::optional<typename AttrDecoding<T>::Type> get(std::string_view name,
                                                    DiagnosticEngine& diagnostic) const {
    std::optional<int64_t> index = internal::FindAttr(attrs_, name);
    if (!index) {
      return diagnostic.Emit("missing (the attributes are: ") << internal::AttrNames(attrs_) << ")";
    }
    return AttrDecoding<T>::Decode(attrs_->types[*index], attrs_->attrs[*index], diagnostic);
  }

 private:
  const XLA_FFI_Attrs* attrs_;
};

template <>
struct AttrDecoding<Dictionary> {
  using Type = Dictionary;
  static std::optional<Type> Decode(XLA_FFI_AttrType type, void* attr,
                                    DiagnosticEngine& diagnostic) {
    if (XLA_FFI_PREDICT_FALSE(type != XLA_FFI_AttrType_DICTIONARY))
      return diagnostic.Emit("Wrong attribute type: expected dictionary but got ") << type;
    return Dictionary(static_cast<const XLA_FFI_Attrs*>(attr));
  }
};

// Struct attributes: XLA_FFI_REGISTER_STRUCT_ATTR_DECODING(T, StructMember<int64_t>("a"), ...)
// decodes a dictionary into T{a, ...}.
template <typename T>
struct StructMember {
  using Type = T;
  explicit StructMember(std::string_view name) : name(name) {}
  std::string_view name;
};

namespace internal {

template <typename T, typename... Ts>
struct DecodeDictionaryAttr {
  static constexpr size_t kSize = sizeof...(Ts);

  static std::optional<T> Decode(const XLA_FFI_Attrs* attrs,
                                 std::array<std::string_view, kSize> names,
                                 DiagnosticEngine& diagnostic) {
    return Decode(attrs, names, std::make_index_sequence<kSize>{}, diagnostic);
  }

  template <size_t... Is>
  static std::optional<T> Decode(const XLA_FFI_Attrs* attrs,
                                 std::array<std::string_view, kSize> names,
                                 std::index_sequence<Is...>, DiagnosticEngine& diagnostic) {
    if (XLA_FFI_PREDICT_FALSE(static_cast<int64_t>(kSize) != attrs->size)) {
      InFlightDiagnostic message = diagnostic.Emit("Wrong number of attributes: expected ");
      message << kSize << " (";
      for (size_t i = 0; i < kSize; ++i) message << (i > 0 ? ", " : "") << names[i];
      message << ") but got " << attrs->size << " (" << AttrNames(attrs) << ")";
      return std::nullopt;
    }
    Dictionary dict(attrs);
    std::tuple<std::optional<Ts>...> members = {DecodeMember<Ts>(dict, names[Is], diagnostic)...};
    if (!(std::get<Is>(members).has_value() && ...)) return std::nullopt;
    return T{std::move(*std::get<Is>(members))...};
  }

  template <typename M>
  static std::optional<M> DecodeMember(const Dictionary& dict, std::string_view name,
                                       DiagnosticEngine& diagnostic) {
    DiagnosticEngine member;
    std::optional<M> value = dict.get<M>(name, member);
    if (!value) diagnostic.Emit("member '") << name << "': " << member.Result();
    return value;
  }
};

template <typename... Members>
auto StructMemberNames(Members... m) {
  return std::array<std::string_view, sizeof...(Members)>{m.name...};
}

template <typename T, typename... Members>
auto DictionaryDecoder(Members... m) {
  return DecodeDictionaryAttr<T, typename Members::Type...>();
}

}  // namespace internal

}  // namespace axle::ffi

// Decoding for a struct from a dictionary of attributes (use at global scope):
//   XLA_FFI_REGISTER_STRUCT_ATTR_DECODING(Range, StructMember<int64_t>("lo"), ...);
#define XLA_FFI_REGISTER_STRUCT_ATTR_DECODING(T, ...)                                         \
  namespace axle::ffi {                                                                       \
  template <>                                                                                 \
  struct AttrsBinding<T> {                                                                    \
    using Attrs = T;                                                                          \
  };                                                                                          \
  template <>                                                                                 \
  struct AttrDecoding<T> {                                                                    \
    using Type = T;                                                                           \
    static std::optional<T> Decode(XLA_FFI_AttrType type, void* attr,                         \
                                   DiagnosticEngine& diagnostic) {                            \
      if (XLA_FFI_PREDICT_FALSE(type != XLA_FFI_AttrType_DICTIONARY))                         \
        return diagnostic.Emit("Wrong attribute type: expected dictionary but got ") << type; \
      auto decoder = internal::DictionaryDecoder<T>(__VA_ARGS__);                             \
      return decltype(decoder)::Decode(static_cast<const XLA_FFI_Attrs*>(attr),               \
                                       internal::StructMemberNames(__VA_ARGS__), diagnostic); \
    }                                                                                         \
  };                                                                                          \
  }                                                                                           \
  static_assert(std::is_class_v<::axle::ffi::AttrDecoding<T>>)

// Decoding for an enum from an integer scalar (use at global scope).
#define XLA_FFI_REGISTER_ENUM_ATTR_DECODING(T)                                       \
  namespace axle::ffi {                                                              \
  template <>                                                                        \
  struct AttrDecoding<T> {                                                           \
    using Type = T;                                                                  \
    static_assert(std::is_enum_v<T>, "Expected enum class");                         \
    static std::optional<T> Decode(XLA_FFI_AttrType type, void* attr,                \
                                   DiagnosticEngine& diagnostic) {                   \
      std::optional<std::underlying_type_t<T>> value =                               \
          internal::DecodeScalar<std::underlying_type_t<T>>(type, attr, diagnostic); \
      if (!value) return std::nullopt;                                               \
      return static_cast<T>(*value);                                                 \
    }                                                                                \
  };                                                                                 \
  }                                                                                  \
  static_assert(std::is_class_v<::axle::ffi::AttrDecoding<T>>)

#endif  // AXLE_RUNTIME_FFI_FFI_ATTRIBUTES_H_
