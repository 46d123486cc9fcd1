//===- host_ffi.h - Typed custom calls (API_VERSION_TYPED_FFI) on the host -===//
//
// Axle's native form of XLA's typed FFI for platform "Host": a handler gets
// a call frame with typed buffers and the attributes of the custom call's
// backend_config, and returns an absl::Status. The frame follows XLA:CPU's:
//   * `args`: the leaf buffers of every operand, operand by operand, each
//     tuple in pre-order (tuples are flattened, as XLA's FFI does);
//   * `rets`: the leaf buffers of the result, likewise;
//   * `attributes`: backend_config parsed as an MLIR dictionary attribute
//     (`{value = 2 : i32, name = "x", scale = 0.5 : f32, flag = true,
//     sizes = array<i64: 1, 2>, range = {lo = 0 : i64}}`); an empty config or
//     `{}` has none.
// Arrays are dense, in the layouts host_custom_call.h describes: row-major
// unless the custom call has operand_layout_constraints, in which case each
// operand is in its constraint's layout and each result in the instruction's
// (jaxlib's LAPACK targets take column-major matrices this way). `dimensions`
// are always the logical ones. Tokens have a null `data` and TOKEN type.
// A non-OK status aborts the run and keeps its code; the message is
// prefixed with the custom call's target and name.
//
// XLA's header-only C++ binding (xla::ffi::Ffi::Bind(), XLA_FFI_DEFINE_HANDLER)
// over the FFI C API is a separate layer; this is what it would sit on.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_RUNTIME_HOST_FFI_H_
#define AXLE_RUNTIME_HOST_FFI_H_

#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "axle/core/primitive_type.h"

namespace axle {

// One leaf buffer of a call.
struct FfiBuffer {
  PrimitiveType element_type = PRIMITIVE_TYPE_INVALID;
  std::vector<int64_t> dimensions;
  void* data = nullptr;

  int64_t element_count() const {
    int64_t n = 1;
    for (int64_t d : dimensions) n *= d;
    return n;
  }
  template <typename T>
  T* typed_data() const {
    return static_cast<T*>(data);
  }
};

class FfiAttributes;

// An attribute value: bool, integer, float, string, an array of integers or
// floats, or a nested dictionary (`{lo = 1, hi = 2}`).
using FfiAttribute = std::variant<bool, int64_t, double, std::string, std::vector<int64_t>,
                                  std::vector<double>, std::shared_ptr<const FfiAttributes>>;

class FfiAttributes {
 public:
  void Set(std::string name, FfiAttribute value) { values_[std::move(name)] = std::move(value); }
  const FfiAttribute* Find(absl::string_view name) const;
  size_t size() const { return values_.size(); }

  // The attributes in name order (pairs of name and value).
  auto begin() const { return values_.begin(); }
  auto end() const { return values_.end(); }

  // The MLIR element type written for attribute `name` ("i32" in `2 : i32`
  // and `array<i32: 1>`, "" when none was written); the typed FFI API
  // (ffi/ffi_api.h) passes values with these types.
  void SetElementType(const std::string& name, std::string type) {
    element_types_[name] = std::move(type);
  }
  absl::string_view ElementType(absl::string_view name) const;

  // The attribute `name` as T (bool, an integer type, float, double,
  // std::string, std::vector<int64_t>, std::vector<double>): InvalidArgument
  // if it is missing, of another kind, or out of T's range.
  template <typename T>
  absl::StatusOr<T> Get(absl::string_view name) const;

 private:
  std::map<std::string, FfiAttribute, std::less<>> values_;
  std::map<std::string, std::string, std::less<>> element_types_;
};

// Parses an MLIR dictionary attribute (the subset described above).
absl::StatusOr<FfiAttributes> ParseFfiAttributes(absl::string_view backend_config);

struct FfiCallFrame {
  absl::Span<const FfiBuffer> args;
  absl::Span<const FfiBuffer> rets;
  const FfiAttributes& attributes;
  // The stream the call runs on (a CUstream on CUDA; null on the Host),
  // what Ctx<PlatformStream<T>> decodes.
  void* platform_stream = nullptr;
};

using FfiHandler = std::function<absl::Status(const FfiCallFrame& call)>;

// Typed-FFI handlers by (target name, platform name).
class FfiHandlerRegistry {
 public:
  static FfiHandlerRegistry* Global();

  // AlreadyExists if (name, platform) already has a handler.
  absl::Status Register(const std::string& name, const std::string& platform, FfiHandler handler);
  // NotFound naming the target and the platform.
  absl::StatusOr<FfiHandler> Find(const std::string& name, const std::string& platform) const;

 private:
  mutable std::mutex mu_;
  std::map<std::pair<std::string, std::string>, FfiHandler> handlers_;
};

// Registers `handler` from a static initializer; a duplicate is reported on
// stderr and the first handler stays.
class RegisterFfiHandler {
 public:
  RegisterFfiHandler(const std::string& name, const std::string& platform, FfiHandler handler);
};

#define AXLE_FFI_REGISTER_HANDLER_CONCAT_(a, b) a##b
#define AXLE_FFI_REGISTER_HANDLER_HELPER_(name, platform, handler, counter)                        \
  static ::axle::RegisterFfiHandler AXLE_FFI_REGISTER_HANDLER_CONCAT_(axle_ffi_handler_, counter)( \
      name, platform, handler)
#define AXLE_FFI_REGISTER_HANDLER(name, platform, handler) \
  AXLE_FFI_REGISTER_HANDLER_HELPER_(name, platform, handler, __COUNTER__)

// --- Implementation --------------------------------------------------------

template <typename T>
absl::StatusOr<T> FfiAttributes::Get(absl::string_view name) const {
  const FfiAttribute* value = Find(name);
  if (value == nullptr)
    return absl::InvalidArgumentError(absl::StrCat("missing attribute '", name, "'"));
  auto wrong = [&](absl::string_view want) {
    return absl::InvalidArgumentError(absl::StrCat("attribute '", name, "' is not ", want));
  };
  if constexpr (std::is_same_v<T, bool>) {
    if (const bool* b = std::get_if<bool>(value)) return *b;
    return wrong("a boolean");
  } else if constexpr (std::is_integral_v<T>) {
    const int64_t* i = std::get_if<int64_t>(value);
    if (i == nullptr) return wrong("an integer");
    if (*i < static_cast<int64_t>(std::numeric_limits<T>::min()) ||
        (*i > 0 &&
         static_cast<uint64_t>(*i) > static_cast<uint64_t>(std::numeric_limits<T>::max()))) {
      return absl::InvalidArgumentError(
          absl::StrCat("attribute '", name, "' = ", *i, " is out of range"));
    }
    return static_cast<T>(*i);
  } else if constexpr (std::is_floating_point_v<T>) {
    if (const double* d = std::get_if<double>(value)) return static_cast<T>(*d);
    return wrong("a float");
  } else {
    if (const T* v = std::get_if<T>(value)) return *v;
    return wrong("of the requested kind");
  }
}

}  // namespace axle

#endif  // AXLE_RUNTIME_HOST_FFI_H_
