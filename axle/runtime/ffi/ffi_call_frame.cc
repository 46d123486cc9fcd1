//===- ffi_call_frame.cc - XLA FFI C API table and call frames on Axle -----===//
#include "axle/runtime/ffi/ffi_call_frame.h"

#include <cstdio>
#include <cstring>
#include <deque>
#include <limits>
#include <memory>
#include <type_traits>
#include <variant>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "axle/runtime/ffi/ffi_api.h"

// The C API's opaque error.
struct XLA_FFI_Error {
  XLA_FFI_Error_Code errc;
  std::string message;
};

// The C API's opaque execution context: what a call's Ctx<...> values are
// read from (only the platform stream on Axle).
struct XLA_FFI_ExecutionContext {
  void* stream = nullptr;
};

namespace axle::ffi {
namespace {

// --- The C API table ------------------------------------------------------------

XLA_FFI_Error* NewError(XLA_FFI_Error_Code errc, std::string message) {
  return new XLA_FFI_Error{errc, std::move(message)};
}

XLA_FFI_Error* ErrorCreate(XLA_FFI_Error_Create_Args* args) {
  return NewError(args->errc, args->message == nullptr ? "" : args->message);
}

void ErrorGetMessage(XLA_FFI_Error_GetMessage_Args* args) {
  args->message = args->error->message.c_str();
}

void ErrorDestroy(XLA_FFI_Error_Destroy_Args* args) { delete args->error; }

XLA_FFI_Error* StreamGet(XLA_FFI_Stream_Get_Args* args) {
  if (args->ctx == nullptr || args->ctx->stream == nullptr) {
    return NewError(XLA_FFI_Error_Code_FAILED_PRECONDITION,
                    "this call has no platform stream (it runs on the Host platform)");
  }
  args->stream = args->ctx->stream;
  return nullptr;
}

XLA_FFI_Error* HandlerRegister(XLA_FFI_Handler_Register_Args* args) {
  std::string name(args->name.ptr, args->name.len);
  std::string platform =
      CanonicalFfiPlatform(absl::string_view(args->platform.ptr, args->platform.len));
  const XLA_FFI_Handler_Bundle& bundle = args->bundle;
  XLA_FFI_Error* error = nullptr;
  if (bundle.instantiate != nullptr || bundle.prepare != nullptr || bundle.initialize != nullptr) {
    error = NewError(XLA_FFI_Error_Code_UNIMPLEMENTED,
                     absl::StrCat("FFI handler '", name, "' for platform \"", platform,
                                  "\": Axle runs only the execute stage (no instantiate, "
                                  "prepare or initialize handlers)"));
  } else if (bundle.execute == nullptr) {
    error = NewError(XLA_FFI_Error_Code_INVALID_ARGUMENT,
                     absl::StrCat("FFI handler '", name, "' for platform \"", platform,
                                  "\" has no execute handler"));
  } else {
    XLA_FFI_Handler* execute = bundle.execute;
    absl::Status status = FfiHandlerRegistry::Global()->Register(
        name, platform,
        [execute](const FfiCallFrame& call) { return CallXlaFfiHandler(execute, call); });
    if (!status.ok()) {
      error =
          NewError(static_cast<XLA_FFI_Error_Code>(status.code()), std::string(status.message()));
    }
  }
  if (error != nullptr) std::fprintf(stderr, "axle: warning: %s\n", error->message.c_str());
  return error;
}

const XLA_FFI_Api kApi = {
    XLA_FFI_Api_STRUCT_SIZE,
    nullptr,
    XLA_FFI_Api_Version{sizeof(XLA_FFI_Api_Version), nullptr, XLA_FFI_API_MAJOR, XLA_FFI_API_MINOR},
    nullptr,
    ErrorCreate,
    ErrorGetMessage,
    ErrorDestroy,
    HandlerRegister,
    StreamGet,
};

// --- Call frames -----------------------------------------------------------------

// The C-API dtype of an MLIR element type name ("i32", "ui8", "f32", ...);
// INVALID for names the C API has no scalar or array form for.
XLA_FFI_DataType DataTypeOfMlirType(absl::string_view type) {
  struct Entry {
    const char* name;
    XLA_FFI_DataType dtype;
  };
  static constexpr Entry kTypes[] = {
      {"i1", XLA_FFI_DataType_PRED},  {"i8", XLA_FFI_DataType_S8},
      {"si8", XLA_FFI_DataType_S8},   {"ui8", XLA_FFI_DataType_U8},
      {"i16", XLA_FFI_DataType_S16},  {"si16", XLA_FFI_DataType_S16},
      {"ui16", XLA_FFI_DataType_U16}, {"i32", XLA_FFI_DataType_S32},
      {"si32", XLA_FFI_DataType_S32}, {"ui32", XLA_FFI_DataType_U32},
      {"i64", XLA_FFI_DataType_S64},  {"si64", XLA_FFI_DataType_S64},
      {"ui64", XLA_FFI_DataType_U64}, {"index", XLA_FFI_DataType_S64},
      {"f32", XLA_FFI_DataType_F32},  {"f64", XLA_FFI_DataType_F64},
  };
  for (const Entry& entry : kTypes) {
    if (type == entry.name) return entry.dtype;
  }
  return XLA_FFI_DataType_INVALID;
}

template <typename T>
bool Fits(int64_t value) {
  if constexpr (std::is_same_v<T, bool>) {
    return value == 0 || value == 1;
  } else if constexpr (std::is_unsigned_v<T>) {
    return value >= 0 && static_cast<uint64_t>(value) <= std::numeric_limits<T>::max();
  } else {
    return value >= std::numeric_limits<T>::min() && value <= std::numeric_limits<T>::max();
  }
}

// Appends `values` as elements of type T to `bytes`; false if one does not fit.
template <typename T, typename V>
bool AppendAs(const std::vector<V>& values, std::vector<unsigned char>* bytes) {
  for (V v : values) {
    if constexpr (std::is_integral_v<V>) {
      if (!Fits<T>(v)) return false;
    }
    T t = static_cast<T>(v);
    const auto* p = reinterpret_cast<const unsigned char*>(&t);
    bytes->insert(bytes->end(), p, p + sizeof(T));
  }
  return true;
}

// Encodes values of a (scalar or array) attribute in `dtype`.
template <typename V>
bool Encode(const std::vector<V>& values, XLA_FFI_DataType dtype,
            std::vector<unsigned char>* bytes) {
  switch (dtype) {
    case XLA_FFI_DataType_PRED:
      return AppendAs<bool>(values, bytes);
    case XLA_FFI_DataType_S8:
      return AppendAs<int8_t>(values, bytes);
    case XLA_FFI_DataType_S16:
      return AppendAs<int16_t>(values, bytes);
    case XLA_FFI_DataType_S32:
      return AppendAs<int32_t>(values, bytes);
    case XLA_FFI_DataType_S64:
      return AppendAs<int64_t>(values, bytes);
    case XLA_FFI_DataType_U8:
      return AppendAs<uint8_t>(values, bytes);
    case XLA_FFI_DataType_U16:
      return AppendAs<uint16_t>(values, bytes);
    case XLA_FFI_DataType_U32:
      return AppendAs<uint32_t>(values, bytes);
    case XLA_FFI_DataType_U64:
      return AppendAs<uint64_t>(values, bytes);
    case XLA_FFI_DataType_F32:
      return AppendAs<float>(values, bytes);
    case XLA_FFI_DataType_F64:
      return AppendAs<double>(values, bytes);
    default:
      return false;
  }
}

class EncodedAttributes;

// One attribute in C-API form; its storage must not move while in use.
struct EncodedAttribute {
  XLA_FFI_ByteSpan name;
  XLA_FFI_AttrType type;
  XLA_FFI_Scalar scalar;
  XLA_FFI_Array array;
  XLA_FFI_ByteSpan string;
  std::vector<uint64_t> storage;  // scalar value or array elements, 8-aligned
  std::unique_ptr<EncodedAttributes> dictionary;

  void* pointer();
};

// A dictionary of attributes in C-API form (XLA_FFI_Attrs), name-sorted as
// FfiAttributes iterates.
class EncodedAttributes {
 public:
  absl::Status Build(const FfiAttributes& attributes, absl::string_view prefix) {
    for (const auto& [name, value] : attributes) {
      absl::Status status =
          Add(name, value, attributes.ElementType(name), absl::StrCat(prefix, name));
      if (!status.ok()) return status;
    }
    for (EncodedAttribute& attribute : attributes_) {
      types_.push_back(attribute.type);
      names_.push_back(&attribute.name);
      pointers_.push_back(attribute.pointer());
    }
    attrs_ = XLA_FFI_Attrs{XLA_FFI_Attrs_STRUCT_SIZE,
                           nullptr,
                           static_cast<int64_t>(pointers_.size()),
                           types_.data(),
                           names_.data(),
                           pointers_.data()};
    return absl::OkStatus();
  }

  XLA_FFI_Attrs* attrs() { return &attrs_; }

 private:
  absl::Status Add(const std::string& name, const FfiAttribute& value, absl::string_view mlir_type,
                   const std::string& path) {
    EncodedAttribute& attribute = attributes_.emplace_back();
    attribute.name = XLA_FFI_ByteSpan{name.data(), name.size()};
    XLA_FFI_DataType typed = DataTypeOfMlirType(mlir_type);
    auto bad = [&](absl::string_view why) {
      return absl::InvalidArgumentError(absl::StrCat("attribute '", path, "': ", why));
    };
    std::vector<unsigned char> bytes;
    bool ok = true;
    XLA_FFI_DataType dtype = XLA_FFI_DataType_INVALID;
    size_t count = 1;
    bool is_array = false;
    if (const bool* b = std::get_if<bool>(&value)) {
      dtype = XLA_FFI_DataType_PRED;
      ok = Encode(std::vector<int64_t>{*b}, dtype, &bytes);
    } else if (const int64_t* i = std::get_if<int64_t>(&value)) {
      dtype = typed == XLA_FFI_DataType_INVALID ? XLA_FFI_DataType_S64 : typed;
      ok = Encode(std::vector<int64_t>{*i}, dtype, &bytes);
      if (!ok) return bad(absl::StrCat(*i, " does not fit ", mlir_type));
    } else if (const double* d = std::get_if<double>(&value)) {
      dtype = typed == XLA_FFI_DataType_F32 ? XLA_FFI_DataType_F32 : XLA_FFI_DataType_F64;
      ok = Encode(std::vector<double>{*d}, dtype, &bytes);
    } else if (const std::string* s = std::get_if<std::string>(&value)) {
      attribute.type = XLA_FFI_AttrType_STRING;
      attribute.string = XLA_FFI_ByteSpan{s->data(), s->size()};
      return absl::OkStatus();
    } else if (const auto* ints = std::get_if<std::vector<int64_t>>(&value)) {
      dtype = typed == XLA_FFI_DataType_INVALID ? XLA_FFI_DataType_S64 : typed;
      count = ints->size();
      is_array = true;
      ok = Encode(*ints, dtype, &bytes);
      if (!ok) return bad(absl::StrCat("an element does not fit ", mlir_type));
    } else if (const auto* floats = std::get_if<std::vector<double>>(&value)) {
      dtype = typed == XLA_FFI_DataType_F32 ? XLA_FFI_DataType_F32 : XLA_FFI_DataType_F64;
      count = floats->size();
      is_array = true;
      ok = Encode(*floats, dtype, &bytes);
    } else {
      const auto& nested = std::get<std::shared_ptr<const FfiAttributes>>(value);
      attribute.type = XLA_FFI_AttrType_DICTIONARY;
      attribute.dictionary = std::make_unique<EncodedAttributes>();
      return attribute.dictionary->Build(*nested, absl::StrCat(path, "."));
    }
    if (!ok) return bad("cannot be passed through the FFI C API");
    attribute.storage.resize((bytes.size() + 7) / 8);
    if (!bytes.empty()) std::memcpy(attribute.storage.data(), bytes.data(), bytes.size());
    void* data = attribute.storage.empty() ? nullptr : attribute.storage.data();
    if (is_array) {
      attribute.type = XLA_FFI_AttrType_ARRAY;
      attribute.array = XLA_FFI_Array{dtype, count, data};
    } else {
      attribute.type = XLA_FFI_AttrType_SCALAR;
      attribute.scalar = XLA_FFI_Scalar{dtype, data};
    }
    return absl::OkStatus();
  }

  std::deque<EncodedAttribute> attributes_;
  std::vector<XLA_FFI_AttrType> types_;
  std::vector<XLA_FFI_ByteSpan*> names_;
  std::vector<void*> pointers_;
  XLA_FFI_Attrs attrs_;
};

void* EncodedAttribute::pointer() {
  switch (type) {
    case XLA_FFI_AttrType_SCALAR:
      return &scalar;
    case XLA_FFI_AttrType_ARRAY:
      return &array;
    case XLA_FFI_AttrType_DICTIONARY:
      return dictionary->attrs();
    default:
      return &string;
  }
}

// Everything an XLA_FFI_CallFrame points at.
class CallFrameStorage {
 public:
  absl::Status Build(const FfiCallFrame& call) {
    AddBuffers(call.args, &arg_buffers_, &arg_dims_);
    AddBuffers(call.rets, &ret_buffers_, &ret_dims_);
    for (XLA_FFI_Buffer& buffer : arg_buffers_) {
      arg_types_.push_back(XLA_FFI_ArgType_BUFFER);
      arg_pointers_.push_back(&buffer);
    }
    for (XLA_FFI_Buffer& buffer : ret_buffers_) {
      ret_types_.push_back(XLA_FFI_RetType_BUFFER);
      ret_pointers_.push_back(&buffer);
    }
    absl::Status status = attributes_.Build(call.attributes, "");
    if (!status.ok()) return status;

    frame_.struct_size = XLA_FFI_CallFrame_STRUCT_SIZE;
    frame_.extension_start = nullptr;
    frame_.api = GetXlaFfiApi();
    context_.stream = call.platform_stream;
    frame_.ctx = &context_;
    frame_.stage = XLA_FFI_ExecutionStage_EXECUTE;
    frame_.args =
        XLA_FFI_Args{XLA_FFI_Args_STRUCT_SIZE, nullptr, static_cast<int64_t>(arg_pointers_.size()),
                     arg_types_.data(), arg_pointers_.data()};
    frame_.rets =
        XLA_FFI_Rets{XLA_FFI_Rets_STRUCT_SIZE, nullptr, static_cast<int64_t>(ret_pointers_.size()),
                     ret_types_.data(), ret_pointers_.data()};
    frame_.attrs = *attributes_.attrs();
    return absl::OkStatus();
  }

  XLA_FFI_CallFrame* frame() { return &frame_; }

 private:
  static void AddBuffers(absl::Span<const FfiBuffer> buffers, std::vector<XLA_FFI_Buffer>* out,
                         std::deque<std::vector<int64_t>>* dims) {
    out->reserve(buffers.size());
    for (const FfiBuffer& buffer : buffers) {
      dims->push_back(buffer.dimensions);
      out->push_back(XLA_FFI_Buffer{
          XLA_FFI_Buffer_STRUCT_SIZE, nullptr, static_cast<XLA_FFI_DataType>(buffer.element_type),
          buffer.data, static_cast<int64_t>(buffer.dimensions.size()), dims->back().data()});
    }
  }

  std::vector<XLA_FFI_Buffer> arg_buffers_, ret_buffers_;
  std::deque<std::vector<int64_t>> arg_dims_, ret_dims_;
  std::vector<XLA_FFI_ArgType> arg_types_;
  std::vector<XLA_FFI_RetType> ret_types_;
  std::vector<void*> arg_pointers_, ret_pointers_;
  EncodedAttributes attributes_;
  XLA_FFI_ExecutionContext context_;
  XLA_FFI_CallFrame frame_;
};

}  // namespace

const XLA_FFI_Api* GetXlaFfiApi() { return &kApi; }

std::string CanonicalFfiPlatform(absl::string_view platform) {
  std::string lower = absl::AsciiStrToLower(platform);
  if (lower == "host" || lower == "cpu") return "Host";
  if (lower == "cuda" || lower == "gpu") return "CUDA";
  if (lower == "rocm") return "ROCM";
  return std::string(platform);
}

absl::Status CallXlaFfiHandler(XLA_FFI_Handler* handler, const FfiCallFrame& call) {
  CallFrameStorage storage;
  absl::Status status = storage.Build(call);
  if (!status.ok()) return status;
  XLA_FFI_Error* error = handler(storage.frame());
  if (error == nullptr) return absl::OkStatus();
  absl::StatusCode code = error->errc == XLA_FFI_Error_Code_OK
                              ? absl::StatusCode::kUnknown
                              : static_cast<absl::StatusCode>(error->errc);
  absl::Status result(code, error->message);
  delete error;
  return result;
}

}  // namespace axle::ffi
