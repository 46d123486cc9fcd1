//===- ffi_types.h - xla::ffi value types: DataType, buffers, Error --------===//
//
// The value types of XLA's typed FFI C++ API (see ffi_api.h, which users
// include): DataType, Span, Error/ErrorOr, AnyBuffer, Buffer<dtype, rank>,
// Result<T>, diagnostics, and the buffer decoders.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_RUNTIME_FFI_FFI_TYPES_H_
#define AXLE_RUNTIME_FFI_FFI_TYPES_H_

#include <algorithm>
#include <array>
#include <cassert>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <limits>
#include <memory>
#include <numeric>
#include <optional>
#include <ostream>
#include <sstream>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "axle/runtime/ffi/c_api.h"

#define XLA_FFI_ATTRIBUTE_ALWAYS_INLINE inline __attribute__((always_inline))
#define XLA_FFI_ATTRIBUTE_NEVER_INLINE __attribute__((noinline))
#define XLA_FFI_ATTRIBUTE_UNUSED __attribute__((unused))
#define XLA_FFI_PREDICT_FALSE(x) (__builtin_expect(false || (x), false))
#define XLA_FFI_PREDICT_TRUE(x) (__builtin_expect(false || (x), true))

// Printed in diagnostics ("expected scalar but got string"); global, as the
// C enum is, so that argument-dependent lookup finds it.
inline std::ostream& operator<<(std::ostream& os, XLA_FFI_AttrType type) {
  switch (type) {
    case XLA_FFI_AttrType_ARRAY:
      return os << "array";
    case XLA_FFI_AttrType_DICTIONARY:
      return os << "dictionary";
    case XLA_FFI_AttrType_SCALAR:
      return os << "scalar";
    case XLA_FFI_AttrType_STRING:
      return os << "string";
  }
  return os << "unknown attribute type";
}

namespace axle::ffi {

// The C API table of this process's runtime (ffi_call_frame.cc).
const XLA_FFI_Api* GetXlaFfiApi();

//===----------------------------------------------------------------------===//
// Data types
//===----------------------------------------------------------------------===//

enum class DataType : uint8_t {
  INVALID = XLA_FFI_DataType_INVALID,
  PRED = XLA_FFI_DataType_PRED,
  S1 = XLA_FFI_DataType_S1,
  S2 = XLA_FFI_DataType_S2,
  S4 = XLA_FFI_DataType_S4,
  S8 = XLA_FFI_DataType_S8,
  S16 = XLA_FFI_DataType_S16,
  S32 = XLA_FFI_DataType_S32,
  S64 = XLA_FFI_DataType_S64,
  U1 = XLA_FFI_DataType_U1,
  U2 = XLA_FFI_DataType_U2,
  U4 = XLA_FFI_DataType_U4,
  U8 = XLA_FFI_DataType_U8,
  U16 = XLA_FFI_DataType_U16,
  U32 = XLA_FFI_DataType_U32,
  U64 = XLA_FFI_DataType_U64,
  F16 = XLA_FFI_DataType_F16,
  F32 = XLA_FFI_DataType_F32,
  F64 = XLA_FFI_DataType_F64,
  BF16 = XLA_FFI_DataType_BF16,
  C64 = XLA_FFI_DataType_C64,
  C128 = XLA_FFI_DataType_C128,
  TOKEN = XLA_FFI_DataType_TOKEN,
  F8E5M2 = XLA_FFI_DataType_F8E5M2,
  F8E3M4 = XLA_FFI_DataType_F8E3M4,
  F8E4M3 = XLA_FFI_DataType_F8E4M3,
  F8E4M3FN = XLA_FFI_DataType_F8E4M3FN,
  F8E4M3B11FNUZ = XLA_FFI_DataType_F8E4M3B11FNUZ,
  F8E5M2FNUZ = XLA_FFI_DataType_F8E5M2FNUZ,
  F8E4M3FNUZ = XLA_FFI_DataType_F8E4M3FNUZ,
  F4E2M1FN = XLA_FFI_DataType_F4E2M1FN,
  F8E8M0FNU = XLA_FFI_DataType_F8E8M0FNU,
};

// XLA's short names, e.g. `ffi::F32`.
// clang-format off
#define AXLE_FFI_DATA_TYPE_LIST(V)                                                      \
  V(PRED) V(S1) V(S2) V(S4) V(S8) V(S16) V(S32) V(S64) V(U1) V(U2) V(U4) V(U8) V(U16)  \
  V(U32) V(U64) V(F16) V(F32) V(F64) V(BF16) V(C64) V(C128) V(TOKEN) V(F8E5M2)          \
  V(F8E3M4) V(F8E4M3) V(F8E4M3FN) V(F8E4M3B11FNUZ) V(F8E5M2FNUZ) V(F8E4M3FNUZ)          \
  V(F4E2M1FN) V(F8E8M0FNU)
// clang-format on
#define AXLE_FFI_DATA_TYPE_CONSTANT_(name) inline constexpr DataType name = DataType::name;
AXLE_FFI_DATA_TYPE_LIST(AXLE_FFI_DATA_TYPE_CONSTANT_)
#undef AXLE_FFI_DATA_TYPE_CONSTANT_

constexpr const char* DataTypeName(DataType dtype) {
  switch (dtype) {
#define AXLE_FFI_DATA_TYPE_NAME_(name) \
  case DataType::name:                 \
    return #name;
    AXLE_FFI_DATA_TYPE_LIST(AXLE_FFI_DATA_TYPE_NAME_)
#undef AXLE_FFI_DATA_TYPE_NAME_
    case DataType::INVALID:
      return "INVALID";
  }
  return "UNKNOWN";
}

inline std::ostream& operator<<(std::ostream& os, DataType dtype) {
  return os << DataTypeName(dtype);
}

// Bytes per element in Axle's host buffers (sub-byte types take a byte).
constexpr size_t ByteWidth(DataType dtype) {
  switch (dtype) {
    case DataType::INVALID:
    case DataType::TOKEN:
      return 0;
    case DataType::S16:
    case DataType::U16:
    case DataType::F16:
    case DataType::BF16:
      return 2;
    case DataType::S32:
    case DataType::U32:
    case DataType::F32:
      return 4;
    case DataType::S64:
    case DataType::U64:
    case DataType::F64:
    case DataType::C64:
      return 8;
    case DataType::C128:
      return 16;
    default:
      return 1;
  }
}

constexpr DataType ToComplex(DataType dtype) {
  return dtype == DataType::F32   ? DataType::C64
         : dtype == DataType::F64 ? DataType::C128
                                  : DataType::INVALID;
}
constexpr DataType ToReal(DataType dtype) {
  return dtype == DataType::C64 ? DataType::F32 : dtype == DataType::C128 ? DataType::F64 : dtype;
}
constexpr DataType ToImag(DataType dtype) { return ToReal(dtype); }

namespace internal {

template <DataType dtype>
struct always_false : std::false_type {};

template <DataType dtype>
struct DataTypeToNative {
  static_assert(always_false<dtype>::value, "unsupported data type");
};
#define AXLE_FFI_NATIVE_TYPE_(dtype, native) \
  template <>                                \
  struct DataTypeToNative<DataType::dtype> { \
    using type = native;                     \
  };
// The data types a native type stands for alone (NativeTypeToDataType maps
// it back); the ones after them share a native type.
#define AXLE_FFI_OWN_NATIVE_TYPES_(V) \
  V(PRED, bool)                       \
  V(S8, int8_t)                       \
  V(S16, int16_t)                     \
  V(S32, int32_t)                     \
  V(S64, int64_t)                     \
  V(U8, uint8_t)                      \
  V(U16, uint16_t)                    \
  V(U32, uint32_t)                    \
  V(U64, uint64_t)                    \
  V(F32, float)                       \
  V(F64, double)                      \
  V(C64, std::complex<float>)         \
  V(C128, std::complex<double>)
AXLE_FFI_OWN_NATIVE_TYPES_(AXLE_FFI_NATIVE_TYPE_)
AXLE_FFI_NATIVE_TYPE_(F16, uint16_t)
AXLE_FFI_NATIVE_TYPE_(BF16, uint16_t)
AXLE_FFI_NATIVE_TYPE_(TOKEN, void)
// Sub-byte and 8-bit float types: one byte per element, raw bits.
AXLE_FFI_NATIVE_TYPE_(S1, int8_t)
AXLE_FFI_NATIVE_TYPE_(S2, int8_t)
AXLE_FFI_NATIVE_TYPE_(S4, int8_t)
AXLE_FFI_NATIVE_TYPE_(U1, uint8_t)
AXLE_FFI_NATIVE_TYPE_(U2, uint8_t)
AXLE_FFI_NATIVE_TYPE_(U4, uint8_t)
AXLE_FFI_NATIVE_TYPE_(F8E5M2, uint8_t)
AXLE_FFI_NATIVE_TYPE_(F8E3M4, uint8_t)
AXLE_FFI_NATIVE_TYPE_(F8E4M3, uint8_t)
AXLE_FFI_NATIVE_TYPE_(F8E4M3FN, uint8_t)
AXLE_FFI_NATIVE_TYPE_(F8E4M3B11FNUZ, uint8_t)
AXLE_FFI_NATIVE_TYPE_(F8E5M2FNUZ, uint8_t)
AXLE_FFI_NATIVE_TYPE_(F8E4M3FNUZ, uint8_t)
AXLE_FFI_NATIVE_TYPE_(F4E2M1FN, uint8_t)
AXLE_FFI_NATIVE_TYPE_(F8E8M0FNU, uint8_t)
#undef AXLE_FFI_NATIVE_TYPE_

// The data type of a native element type (for AnyBuffer::typed_data and
// array attributes).
template <typename T>
constexpr DataType NativeTypeToDataType() {
#define AXLE_FFI_MATCH_NATIVE_(dtype, native) \
  if constexpr (std::is_same_v<T, native>) return DataType::dtype;
  AXLE_FFI_OWN_NATIVE_TYPES_(AXLE_FFI_MATCH_NATIVE_)
#undef AXLE_FFI_MATCH_NATIVE_
  return DataType::INVALID;
}
#undef AXLE_FFI_OWN_NATIVE_TYPES_

inline constexpr size_t kDynamicRank = std::numeric_limits<size_t>::max();

}  // namespace internal

template <DataType dtype>
using NativeType = typename internal::DataTypeToNative<dtype>::type;

template <DataType dtype>
constexpr bool IsComplexType() {
  return dtype == DataType::C64 || dtype == DataType::C128;
}

//===----------------------------------------------------------------------===//
// Span: a non-owning view of contiguous values
//===----------------------------------------------------------------------===//

template <typename T>
class Span {
 public:
  constexpr Span() : data_(nullptr), size_(0) {}
  Span(T* data, size_t size) : data_(data), size_(size) {}
  Span(const std::vector<std::remove_const_t<T>>& vec)  // NOLINT: implicit as in XLA
      : Span(vec.data(), vec.size()) {}

  T& operator[](size_t index) const { return data_[index]; }
  bool operator==(const Span<T>& other) const {
    return size() == other.size() && std::equal(begin(), end(), other.begin());
  }

  T& front() const { return data_[0]; }
  T& back() const { return data_[size_ - 1]; }
  Span<T> first(size_t n) const { return Span<T>(data_, n); }
  Span<T> last(size_t n) const { return Span<T>(data_ + size_ - n, n); }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

  T* begin() const { return data_; }
  T* end() const { return data_ + size_; }

 private:
  T* data_;
  size_t size_;
};

//===----------------------------------------------------------------------===//
// Error, Expected, ErrorOr
//===----------------------------------------------------------------------===//

// The codes are absl::StatusCode's.
enum class ErrorCode : uint8_t {
  kOk = XLA_FFI_Error_Code_OK,
  kCancelled = XLA_FFI_Error_Code_CANCELLED,
  kUnknown = XLA_FFI_Error_Code_UNKNOWN,
  kInvalidArgument = XLA_FFI_Error_Code_INVALID_ARGUMENT,
  kDeadlineExceeded = XLA_FFI_Error_Code_DEADLINE_EXCEEDED,
  kNotFound = XLA_FFI_Error_Code_NOT_FOUND,
  kAlreadyExists = XLA_FFI_Error_Code_ALREADY_EXISTS,
  kPermissionDenied = XLA_FFI_Error_Code_PERMISSION_DENIED,
  kResourceExhausted = XLA_FFI_Error_Code_RESOURCE_EXHAUSTED,
  kFailedPrecondition = XLA_FFI_Error_Code_FAILED_PRECONDITION,
  kAborted = XLA_FFI_Error_Code_ABORTED,
  kOutOfRange = XLA_FFI_Error_Code_OUT_OF_RANGE,
  kUnimplemented = XLA_FFI_Error_Code_UNIMPLEMENTED,
  kInternal = XLA_FFI_Error_Code_INTERNAL,
  kUnavailable = XLA_FFI_Error_Code_UNAVAILABLE,
  kDataLoss = XLA_FFI_Error_Code_DATA_LOSS,
  kUnauthenticated = XLA_FFI_Error_Code_UNAUTHENTICATED,
};

class Error {
 public:
  Error() = default;
  Error(ErrorCode errc, std::string message) : errc_(errc), message_(std::move(message)) {}
  Error(XLA_FFI_Error_Code errc, std::string message)
      : Error(static_cast<ErrorCode>(errc), std::move(message)) {}

  bool success() const { return errc_ == ErrorCode::kOk; }
  bool failure() const { return !success(); }

  std::optional<ErrorCode> errc() const { return errc_; }
  const std::string& message() const { return message_; }

  static Error Success() { return Error(); }
  static Error Internal(std::string message) {
    return Error(ErrorCode::kInternal, std::move(message));
  }
  static Error InvalidArgument(std::string message) {
    return Error(ErrorCode::kInvalidArgument, std::move(message));
  }

 private:
  ErrorCode errc_ = ErrorCode::kOk;
  std::string message_;
};

template <typename E>
class Unexpected;

template <typename T, typename E>
class Expected {
 public:
  constexpr Expected(T value) : data_(std::move(value)) {}  // NOLINT
  constexpr Expected(Unexpected<E> u);                      // NOLINT

  constexpr operator bool() const { return has_value(); }  // NOLINT

  constexpr T& operator*() & { return value(); }
  constexpr const T& operator*() const& { return value(); }
  constexpr T&& operator*() && { return std::move(value()); }
  constexpr T* operator->() { return &value(); }
  constexpr const T* operator->() const { return &value(); }

  constexpr bool has_value() const { return std::holds_alternative<T>(data_); }
  constexpr bool has_error() const { return std::holds_alternative<E>(data_); }

  constexpr T& value() & { return std::get<T>(data_); }
  constexpr const T& value() const& { return std::get<T>(data_); }
  constexpr T&& value() && { return std::get<T>(std::move(data_)); }

  constexpr E& error() & { return std::get<E>(data_); }
  constexpr const E& error() const& { return std::get<E>(data_); }
  constexpr E&& error() && { return std::get<E>(std::move(data_)); }

 private:
  std::variant<T, E> data_;
};

template <typename E>
class Unexpected {
 public:
  constexpr Unexpected(E error) : error_(std::move(error)) {}  // NOLINT

 private:
  template <typename, typename>
  friend class Expected;
  E error_;
};

Unexpected(const char*)->Unexpected<std::string>;

template <typename T, typename E>
constexpr Expected<T, E>::Expected(Unexpected<E> u) : data_(std::move(u.error_)) {}

template <typename T>
class ErrorOr : public Expected<T, Error> {
 public:
  using Expected<T, Error>::Expected;
};

//===----------------------------------------------------------------------===//
// Diagnostics
//===----------------------------------------------------------------------===//

class DiagnosticEngine;

// A message being built; appended to its engine when it goes away. Converts
// to an empty std::optional so that decoders can `return diagnostic.Emit(...)`.
class InFlightDiagnostic {
 public:
  InFlightDiagnostic(DiagnosticEngine* engine, std::string s) : engine_(engine) { stream_ << s; }
  InFlightDiagnostic(const InFlightDiagnostic&) = delete;
  InFlightDiagnostic& operator=(const InFlightDiagnostic&) = delete;
  ~InFlightDiagnostic();

  template <typename Arg>
  InFlightDiagnostic& operator<<(Arg&& arg) {
    stream_ << std::forward<Arg>(arg);
    return *this;
  }
  template <typename T>
  operator std::optional<T>() const {  // NOLINT
    return std::nullopt;
  }

 private:
  DiagnosticEngine* engine_;
  std::stringstream stream_;
};

class DiagnosticEngine {
 public:
  DiagnosticEngine() = default;
  DiagnosticEngine(const DiagnosticEngine&) = delete;
  DiagnosticEngine& operator=(const DiagnosticEngine&) = delete;

  InFlightDiagnostic Emit(std::string message) {
    return InFlightDiagnostic(this, std::move(message));
  }
  std::string Result() const { return acc_; }

 private:
  friend class InFlightDiagnostic;
  void append(const std::string& s) {
    if (!acc_.empty() && !s.empty()) acc_.append("; ");
    acc_.append(s);
  }
  std::string acc_;
};

inline InFlightDiagnostic::~InFlightDiagnostic() { engine_->append(stream_.str()); }

//===----------------------------------------------------------------------===//
// Buffers
//===----------------------------------------------------------------------===//

// A buffer of any data type and rank.
class AnyBuffer {
 public:
  using Dimensions = Span<const int64_t>;

  explicit AnyBuffer(const XLA_FFI_Buffer* buf) : buf_(buf) {}

  DataType element_type() const { return static_cast<DataType>(buf_->dtype); }
  Dimensions dimensions() const { return Dimensions(buf_->dims, buf_->rank); }
  size_t element_count() const {
    Dimensions dims = dimensions();
    return std::accumulate(dims.begin(), dims.end(), int64_t{1}, std::multiplies<>());
  }
  size_t size_bytes() const { return ByteWidth(element_type()) * element_count(); }
  void* untyped_data() const { return buf_->data; }

  template <typename T>
  T* typed_data() const {
    assert(internal::NativeTypeToDataType<T>() == element_type() &&
           "typed_data<T>: T does not match the buffer's dtype");
    return reinterpret_cast<T*>(buf_->data);
  }
  template <typename T>
  T* reinterpret_data() const {
    assert(sizeof(T) == ByteWidth(element_type()) && "reinterpret_data<T>: width mismatch");
    return reinterpret_cast<T*>(buf_->data);
  }

 private:
  const XLA_FFI_Buffer* buf_;
};

// A buffer whose dtype (and rank, unless dynamic) is checked when decoding.
template <DataType dtype, size_t rank = internal::kDynamicRank>
class Buffer {
 public:
  using Dimensions = AnyBuffer::Dimensions;

  explicit Buffer(const XLA_FFI_Buffer* buf) : buf_(buf) {}

  DataType element_type() const { return dtype; }
  Dimensions dimensions() const {
    return Dimensions(buf_->dims,
                      rank == internal::kDynamicRank ? static_cast<size_t>(buf_->rank) : rank);
  }
  size_t element_count() const {
    Dimensions dims = dimensions();
    return std::accumulate(dims.begin(), dims.end(), int64_t{1}, std::multiplies<>());
  }
  size_t size_bytes() const { return ByteWidth(dtype) * element_count(); }
  void* untyped_data() const { return buf_->data; }
  NativeType<dtype>* typed_data() const {
    return reinterpret_cast<NativeType<dtype>*>(untyped_data());
  }

 private:
  const XLA_FFI_Buffer* buf_;
};

// clang-format off
template <DataType dtype> using BufferR0 = Buffer<dtype, 0>;
template <DataType dtype> using BufferR1 = Buffer<dtype, 1>;
template <DataType dtype> using BufferR2 = Buffer<dtype, 2>;
template <DataType dtype> using BufferR3 = Buffer<dtype, 3>;
template <DataType dtype> using BufferR4 = Buffer<dtype, 4>;
// clang-format on

using Token = BufferR0<DataType::TOKEN>;

// A handler parameter bound to a result (destination-passing style).
template <typename T>
class Result {
 public:
  Result(T value) : value_(value) {}  // NOLINT
  T& operator*() { return value_; }
  T* operator->() { return &value_; }

 private:
  T value_;
};

template <DataType dtype, size_t rank = internal::kDynamicRank>
using ResultBuffer = Result<Buffer<dtype, rank>>;

// clang-format off
template <DataType dtype> using ResultBufferR0 = ResultBuffer<dtype, 0>;
template <DataType dtype> using ResultBufferR1 = ResultBuffer<dtype, 1>;
template <DataType dtype> using ResultBufferR2 = ResultBuffer<dtype, 2>;
template <DataType dtype> using ResultBufferR3 = ResultBuffer<dtype, 3>;
template <DataType dtype> using ResultBufferR4 = ResultBuffer<dtype, 4>;
// clang-format on

//===----------------------------------------------------------------------===//
// Decoding hooks (specialized below and by users)
//===----------------------------------------------------------------------===//

template <typename T>
struct ArgDecoding;
template <typename T>
struct RetDecoding;
template <typename T>
struct AttrDecoding;

template <typename T>
struct CtxDecoding {
  static_assert(sizeof(T) == 0,
                "Axle's FFI passes one execution-context value, the platform stream "
                "(Ctx<PlatformStream<T>>); user data, state, scratch memory and thread pools "
                "are not supported");
};

// The platform stream the call runs on, as T (cudaStream_t or CUstream on
// CUDA): Ctx<PlatformStream<cudaStream_t>>() in a binding. Decoding fails
// (the call's error names it) where the call has none (the Host platform).
template <typename T>
struct PlatformStream {};

template <typename T>
struct CtxDecoding<PlatformStream<T>> {
  using Type = T;
  static_assert(std::is_pointer_v<T>, "a platform stream type is a pointer (a stream handle)");

  static std::optional<Type> Decode(const XLA_FFI_Api* api, XLA_FFI_ExecutionContext* ctx,
                                    DiagnosticEngine& diagnostic) {
    XLA_FFI_Stream_Get_Args args;
    args.struct_size = XLA_FFI_Stream_Get_Args_STRUCT_SIZE;
    args.extension_start = nullptr;
    args.ctx = ctx;
    args.stream = nullptr;
    if (XLA_FFI_Error* error = api->XLA_FFI_Stream_Get(&args)) {
      XLA_FFI_Error_GetMessage_Args message;
      message.struct_size = XLA_FFI_Error_GetMessage_Args_STRUCT_SIZE;
      message.extension_start = nullptr;
      message.error = error;
      message.message = nullptr;
      api->XLA_FFI_Error_GetMessage(&message);
      std::string text = message.message != nullptr ? message.message : "";
      XLA_FFI_Error_Destroy_Args destroy;
      destroy.struct_size = XLA_FFI_Error_Destroy_Args_STRUCT_SIZE;
      destroy.extension_start = nullptr;
      destroy.error = error;
      api->XLA_FFI_Error_Destroy(&destroy);
      return diagnostic.Emit("Failed to get the platform stream: ") << text;
    }
    return reinterpret_cast<T>(args.stream);
  }
};

enum class ExecutionStage : uint8_t {
  kInstantiate = XLA_FFI_ExecutionStage_INSTANTIATE,
  kPrepare = XLA_FFI_ExecutionStage_PREPARE,
  kInitialize = XLA_FFI_ExecutionStage_INITIALIZE,
  kExecute = XLA_FFI_ExecutionStage_EXECUTE,
};

enum class Traits : uint32_t {
  kCmdBufferCompatible = XLA_FFI_HANDLER_TRAITS_COMMAND_BUFFER_COMPATIBLE,
};

template <ExecutionStage stage, typename T>
struct ResultEncoding;

namespace internal {

template <DataType dtype, size_t rank>
std::optional<Buffer<dtype, rank>> DecodeBuffer(const XLA_FFI_Buffer* buf,
                                                DiagnosticEngine& diagnostic) {
  if (auto buf_dtype = static_cast<DataType>(buf->dtype); XLA_FFI_PREDICT_FALSE(buf_dtype != dtype))
    return diagnostic.Emit("Wrong buffer dtype: expected ") << dtype << " but got " << buf_dtype;
  if constexpr (rank != kDynamicRank) {
    if (XLA_FFI_PREDICT_FALSE(static_cast<size_t>(buf->rank) != rank))
      return diagnostic.Emit("Wrong buffer rank: expected ") << rank << " but got " << buf->rank;
  }
  return Buffer<dtype, rank>(buf);
}

}  // namespace internal

template <>
struct ArgDecoding<AnyBuffer> {
  static std::optional<AnyBuffer> Decode(XLA_FFI_ArgType type, void* arg,
                                         DiagnosticEngine& diagnostic) {
    if (XLA_FFI_PREDICT_FALSE(type != XLA_FFI_ArgType_BUFFER))
      return diagnostic.Emit("Wrong argument type: expected a buffer");
    return AnyBuffer(static_cast<const XLA_FFI_Buffer*>(arg));
  }
};

template <DataType dtype, size_t rank>
struct ArgDecoding<Buffer<dtype, rank>> {
  static std::optional<Buffer<dtype, rank>> Decode(XLA_FFI_ArgType type, void* arg,
                                                   DiagnosticEngine& diagnostic) {
    if (XLA_FFI_PREDICT_FALSE(type != XLA_FFI_ArgType_BUFFER))
      return diagnostic.Emit("Wrong argument type: expected a buffer");
    return internal::DecodeBuffer<dtype, rank>(static_cast<const XLA_FFI_Buffer*>(arg), diagnostic);
  }
};

template <>
struct RetDecoding<AnyBuffer> {
  static std::optional<Result<AnyBuffer>> Decode(XLA_FFI_RetType type, void* ret,
                                                 DiagnosticEngine& diagnostic) {
    if (XLA_FFI_PREDICT_FALSE(type != XLA_FFI_RetType_BUFFER))
      return diagnostic.Emit("Wrong result type: expected a buffer");
    return Result<AnyBuffer>(AnyBuffer(static_cast<const XLA_FFI_Buffer*>(ret)));
  }
};

template <DataType dtype, size_t rank>
struct RetDecoding<Buffer<dtype, rank>> {
  static std::optional<Result<Buffer<dtype, rank>>> Decode(XLA_FFI_RetType type, void* ret,
                                                           DiagnosticEngine& diagnostic) {
    if (XLA_FFI_PREDICT_FALSE(type != XLA_FFI_RetType_BUFFER))
      return diagnostic.Emit("Wrong result type: expected a buffer");
    std::optional<Buffer<dtype, rank>> buffer =
        internal::DecodeBuffer<dtype, rank>(static_cast<const XLA_FFI_Buffer*>(ret), diagnostic);
    if (!buffer) return std::nullopt;
    return Result<Buffer<dtype, rank>>(*buffer);
  }
};

}  // namespace axle::ffi

#endif  // AXLE_RUNTIME_FFI_FFI_TYPES_H_
