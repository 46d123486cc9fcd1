//===- ffi_api.h - XLA's typed FFI C++ API (xla::ffi) on Axle --------------===//
//
// XLA's header-only C++ binding for typed FFI handlers (xla/ffi/api/api.h and
// xla/ffi/api/ffi.h), with XLA's names and semantics, so that handlers
// written for XLA compile unchanged against compat/include:
//
//   static ffi::Error AddImpl(ffi::Buffer<ffi::F32> x, ffi::ResultBuffer<ffi::F32> out,
//                             float alpha) { ...; return ffi::Error::Success(); }
//   XLA_FFI_DEFINE_HANDLER_SYMBOL(kAdd, AddImpl, ffi::Ffi::Bind()
//       .Arg<ffi::Buffer<ffi::F32>>().Ret<ffi::Buffer<ffi::F32>>().Attr<float>("alpha"));
//   XLA_FFI_REGISTER_HANDLER(ffi::GetXlaFfiApi(), "add", "Host", kAdd);
//
// A binding (`Ffi::Bind()...`) lists the handler's parameters in order:
// `Arg<T>` (AnyBuffer, Buffer<dtype, rank>), `Ret<T>` (passed as Result<T>),
// `OptionalArg<T>/OptionalRet<T>`, `RemainingArgs()/RemainingRets()`,
// `Attr<T>(name)`, and `Attrs<T>()` (all attributes, as a Dictionary or a
// struct registered with XLA_FFI_REGISTER_STRUCT_ATTR_DECODING). The handler
// checks the call frame against it and reports every mismatch (dtype, rank,
// operand counts, missing, extra or mistyped attributes) as an
// INVALID_ARGUMENT error naming the operand and what was expected.
//
// Registration (XLA_FFI_REGISTER_HANDLER) puts the handler into Axle's
// FfiHandlerRegistry (host_ffi.h) through GetXlaFfiApi(); custom calls with
// api_version=API_VERSION_TYPED_FFI then reach it (host_custom_call.h).
// Platform names: "Host"/"cpu" are Host, "CUDA"/"gpu" are CUDA.
//
// Attribute values come from backend_config (host_ffi.h). Scalars decode
// leniently: any integer scalar into any integer type when the value fits,
// f32/f64 into float or double. Arrays must have the element type asked for
// (`array<i32: ...>` for Span<const int32_t>), as in XLA.
//
// Execution context: `Ctx<PlatformStream<T>>()` is the stream the call runs
// on (a CUstream / cudaStream_t on CUDA; on the Host the call fails naming
// it). Not supported on Axle: the other execution-context values
// (UserData, State, ScratchAllocator, ThreadPool; a compile-time error),
// futures and result types other than Error (compile-time), stages other than
// execute (registering such a handler fails with UNIMPLEMENTED). Nested
// dictionaries (`range = {lo = 0 : i64, hi = 8 : i64}`) decode as Dictionary
// or as a registered struct with Attr<T>(name). The macros that specialize
// decoders (XLA_FFI_REGISTER_STRUCT_ATTR_DECODING,
// XLA_FFI_REGISTER_ENUM_ATTR_DECODING) are used at global scope, as in
// current XLA.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_RUNTIME_FFI_FFI_API_H_
#define AXLE_RUNTIME_FFI_FFI_API_H_

#include "axle/runtime/ffi/ffi_attributes.h"
#include "axle/runtime/ffi/ffi_types.h"

namespace axle::ffi {

template <ExecutionStage stage, typename... Ts>
class Binding;
template <ExecutionStage stage, typename Fn, typename... Ts>
class Handler;
class Dictionary;

//===----------------------------------------------------------------------===//
// Ffi: the base of every handler
//===----------------------------------------------------------------------===//

class Ffi {
 public:
  // An empty binding; add parameters with Arg, Ret, Attr, ... and bind a
  // function with To(fn).
  template <ExecutionStage stage = ExecutionStage::kExecute>
  static Binding<stage> Bind();
  static Binding<ExecutionStage::kInstantiate> BindInstantiate();

  // A binding inferred from `fn`'s parameter types.
  template <typename Fn, ExecutionStage stage = ExecutionStage::kExecute>
  static auto BindTo(Fn fn, std::initializer_list<Traits> traits = {});

  virtual ~Ffi() = default;
  virtual XLA_FFI_Error* Call(XLA_FFI_CallFrame* call_frame) const = 0;

  static XLA_FFI_Error* RegisterStaticHandler(const XLA_FFI_Api* api, std::string_view name,
                                              std::string_view platform,
                                              XLA_FFI_Handler_Bundle bundle,
                                              XLA_FFI_Handler_Traits traits = 0) {
    XLA_FFI_Handler_Register_Args args;
    args.struct_size = XLA_FFI_Handler_Register_Args_STRUCT_SIZE;
    args.extension_start = nullptr;
    args.name = XLA_FFI_ByteSpan{name.data(), name.size()};
    args.platform = XLA_FFI_ByteSpan{platform.data(), platform.size()};
    args.bundle = bundle;
    args.traits = traits;
    return api->XLA_FFI_Handler_Register(&args);
  }
  static XLA_FFI_Error* RegisterStaticHandler(const XLA_FFI_Api* api, std::string_view name,
                                              std::string_view platform, XLA_FFI_Handler* execute,
                                              XLA_FFI_Handler_Traits traits = 0) {
    return RegisterStaticHandler(
        api, name, platform, XLA_FFI_Handler_Bundle{nullptr, nullptr, nullptr, execute}, traits);
  }

 protected:
  template <typename... Args>
  static std::string StrCat(Args... args) {
    std::stringstream ss;
    (ss << ... << args);
    return ss.str();
  }
  static XLA_FFI_Error* MakeError(const XLA_FFI_Api* api, XLA_FFI_Error_Code errc,
                                  const std::string& message) {
    XLA_FFI_Error_Create_Args args;
    args.struct_size = XLA_FFI_Error_Create_Args_STRUCT_SIZE;
    args.extension_start = nullptr;
    args.errc = errc;
    args.message = message.c_str();
    return api->XLA_FFI_Error_Create(&args);
  }
  static XLA_FFI_Error* InvalidArgument(const XLA_FFI_Api* api, const std::string& message) {
    return MakeError(api, XLA_FFI_Error_Code_INVALID_ARGUMENT, message);
  }
};

//===----------------------------------------------------------------------===//
// Type tags for the parameters of a binding
//===----------------------------------------------------------------------===//

namespace internal {

template <typename T>
struct OptionalArgTag {};
struct RemainingArgsTag {};
template <typename T>
struct RetTag {};
template <typename T>
struct OptionalRetTag {};
struct RemainingRetsTag {};
template <typename T>
struct AttrTag {};
template <typename T = Dictionary>
struct AttrsTag {};
template <typename T>
struct CtxTag {};

template <template <typename> class Tag, typename T>
struct IsTag : std::false_type {};
template <template <typename> class Tag, typename T>
struct IsTag<Tag, Tag<T>> : std::true_type {};

template <template <typename> class Tag, typename... Ts>
inline constexpr int64_t kNumTagged = (int64_t{IsTag<Tag, Ts>::value} + ... + 0);

template <typename T>
inline constexpr bool kIsTagged =
    IsTag<OptionalArgTag, T>::value || IsTag<RetTag, T>::value || IsTag<OptionalRetTag, T>::value ||
    IsTag<AttrTag, T>::value || IsTag<AttrsTag, T>::value || IsTag<CtxTag, T>::value ||
    std::is_same_v<T, RemainingArgsTag> || std::is_same_v<T, RemainingRetsTag>;

// Plain (required) arguments.
template <typename... Ts>
inline constexpr int64_t kNumArgs = (int64_t{!kIsTagged<Ts>} + ... + 0);

template <typename... Ts>
inline constexpr bool kHasRemainingArgs = (std::is_same_v<Ts, RemainingArgsTag> || ...);
template <typename... Ts>
inline constexpr bool kHasRemainingRets = (std::is_same_v<Ts, RemainingRetsTag> || ...);

struct DecodingOffsets {
  int64_t args = 0;
  int64_t rets = 0;
  int64_t attrs = 0;
};

struct DecodingContext {
  const XLA_FFI_CallFrame* call_frame;
  const std::string* attrs_names;  // the binding's Attr names, in order
};

}  // namespace internal

//===----------------------------------------------------------------------===//
// Variadic arguments and results
//===----------------------------------------------------------------------===//

class RemainingArgs {
 public:
  RemainingArgs(const XLA_FFI_Args* args, size_t offset) : args_(args), offset_(offset) {}

  size_t size() const { return args_->size - offset_; }
  bool empty() const { return size() == 0; }

  template <typename T>
  ErrorOr<T> get(size_t index) const {
    size_t idx = offset_ + index;
    if (XLA_FFI_PREDICT_FALSE(idx >= static_cast<size_t>(args_->size)))
      return Unexpected(Error::InvalidArgument(IndexError(index)));
    DiagnosticEngine diagnostic;
    std::optional<T> value =
        ArgDecoding<T>::Decode(args_->types[idx], args_->args[idx], diagnostic);
    if (!value) {
      return Unexpected(
          Error::InvalidArgument(internal::StrCat("argument ", idx, ": ", diagnostic.Result())));
    }
    return *value;
  }

 private:
  std::string IndexError(size_t index) const {
    return internal::StrCat("remaining argument ", index, " is out of range (there are ", size(),
                            ")");
  }
  const XLA_FFI_Args* args_;
  size_t offset_;
};

class RemainingRets {
 public:
  RemainingRets(const XLA_FFI_Rets* rets, size_t offset) : rets_(rets), offset_(offset) {}

  size_t size() const { return rets_->size - offset_; }
  bool empty() const { return size() == 0; }

  template <typename T>
  ErrorOr<Result<T>> get(size_t index) const {
    size_t idx = offset_ + index;
    if (XLA_FFI_PREDICT_FALSE(idx >= static_cast<size_t>(rets_->size))) {
      return Unexpected(Error::InvalidArgument(internal::StrCat(
          "remaining result ", index, " is out of range (there are ", size(), ")")));
    }
    DiagnosticEngine diagnostic;
    std::optional<Result<T>> value =
        RetDecoding<T>::Decode(rets_->types[idx], rets_->rets[idx], diagnostic);
    if (!value) {
      return Unexpected(
          Error::InvalidArgument(internal::StrCat("result ", idx, ": ", diagnostic.Result())));
    }
    return *value;
  }

 private:
  const XLA_FFI_Rets* rets_;
  size_t offset_;
};

//===----------------------------------------------------------------------===//
// Decoding each kind of parameter
//===----------------------------------------------------------------------===//

namespace internal {

// A plain argument.
template <typename T>
struct Decode {
  static std::string Describe(const DecodingOffsets& offsets, const DecodingContext&) {
    return StrCat("argument ", offsets.args);
  }
  static std::optional<T> call(DecodingOffsets& offsets, DecodingContext& ctx,
                               DiagnosticEngine& diagnostic) {
    int64_t idx = offsets.args++;
    return ArgDecoding<T>::Decode(ctx.call_frame->args.types[idx], ctx.call_frame->args.args[idx],
                                  diagnostic);
  }
};

template <typename T>
struct Decode<OptionalArgTag<T>> {
  static std::string Describe(const DecodingOffsets& offsets, const DecodingContext& ctx) {
    return Decode<T>::Describe(offsets, ctx);
  }
  static std::optional<std::optional<T>> call(DecodingOffsets& offsets, DecodingContext& ctx,
                                              DiagnosticEngine& diagnostic) {
    if (offsets.args >= ctx.call_frame->args.size) return std::optional<T>(std::nullopt);
    std::optional<T> value = Decode<T>::call(offsets, ctx, diagnostic);
    if (!value) return std::nullopt;
    return value;
  }
};

template <typename T>
struct Decode<RetTag<T>> {
  static std::string Describe(const DecodingOffsets& offsets, const DecodingContext&) {
    return StrCat("result ", offsets.rets);
  }
  static std::optional<Result<T>> call(DecodingOffsets& offsets, DecodingContext& ctx,
                                       DiagnosticEngine& diagnostic) {
    int64_t idx = offsets.rets++;
    return RetDecoding<T>::Decode(ctx.call_frame->rets.types[idx], ctx.call_frame->rets.rets[idx],
                                  diagnostic);
  }
};

template <typename T>
struct Decode<OptionalRetTag<T>> {
  static std::string Describe(const DecodingOffsets& offsets, const DecodingContext& ctx) {
    return Decode<RetTag<T>>::Describe(offsets, ctx);
  }
  static std::optional<std::optional<Result<T>>> call(DecodingOffsets& offsets,
                                                      DecodingContext& ctx,
                                                      DiagnosticEngine& diagnostic) {
    if (offsets.rets >= ctx.call_frame->rets.size) return std::optional<Result<T>>(std::nullopt);
    std::optional<Result<T>> value = Decode<RetTag<T>>::call(offsets, ctx, diagnostic);
    if (!value) return std::nullopt;
    return value;
  }
};

template <>
struct Decode<RemainingArgsTag> {
  static std::string Describe(const DecodingOffsets&, const DecodingContext&) {
    return "remaining arguments";
  }
  static std::optional<RemainingArgs> call(DecodingOffsets& offsets, DecodingContext& ctx,
                                           DiagnosticEngine&) {
    return RemainingArgs(&ctx.call_frame->args, offsets.args);
  }
};

template <>
struct Decode<RemainingRetsTag> {
  static std::string Describe(const DecodingOffsets&, const DecodingContext&) {
    return "remaining results";
  }
  static std::optional<RemainingRets> call(DecodingOffsets& offsets, DecodingContext& ctx,
                                           DiagnosticEngine&) {
    return RemainingRets(&ctx.call_frame->rets, offsets.rets);
  }
};

template <typename T>
struct Decode<AttrTag<T>> {
  using R = typename AttrDecoding<T>::Type;
  static std::string Describe(const DecodingOffsets& offsets, const DecodingContext& ctx) {
    return StrCat("attribute '", ctx.attrs_names[offsets.attrs], "'");
  }
  static std::optional<R> call(DecodingOffsets& offsets, DecodingContext& ctx,
                               DiagnosticEngine& diagnostic) {
    const std::string& name = ctx.attrs_names[offsets.attrs++];
    return Dictionary(&ctx.call_frame->attrs).get<T>(name, diagnostic);
  }
};

template <typename T>
struct Decode<AttrsTag<T>> {
  static std::string Describe(const DecodingOffsets&, const DecodingContext&) {
    return "attributes";
  }
  static std::optional<T> call(DecodingOffsets&, DecodingContext& ctx,
                               DiagnosticEngine& diagnostic) {
    return AttrDecoding<T>::Decode(XLA_FFI_AttrType_DICTIONARY,
                                   const_cast<XLA_FFI_Attrs*>(&ctx.call_frame->attrs), diagnostic);
  }
};

template <typename T>
struct Decode<CtxTag<T>> {
  using R = typename CtxDecoding<T>::Type;
  static std::string Describe(const DecodingOffsets&, const DecodingContext&) { return "context"; }
  static std::optional<R> call(DecodingOffsets&, DecodingContext& ctx,
                               DiagnosticEngine& diagnostic) {
    return CtxDecoding<T>::Decode(ctx.call_frame->api, ctx.call_frame->ctx, diagnostic);
  }
};

// The handler parameter type of each binding entry.
template <typename T>
struct FnArgType {
  using Type = T;
};
template <typename T>
struct FnArgType<OptionalArgTag<T>> {
  using Type = std::optional<T>;
};
template <>
struct FnArgType<RemainingArgsTag> {
  using Type = RemainingArgs;
};
template <typename T>
struct FnArgType<RetTag<T>> {
  using Type = Result<T>;
};
template <typename T>
struct FnArgType<OptionalRetTag<T>> {
  using Type = std::optional<Result<T>>;
};
template <>
struct FnArgType<RemainingRetsTag> {
  using Type = RemainingRets;
};
template <typename T>
struct FnArgType<AttrTag<T>> {
  using Type = typename AttrDecoding<T>::Type;
};
template <typename T>
struct FnArgType<AttrsTag<T>> {
  using Type = T;
};
template <typename T>
struct FnArgType<CtxTag<T>> {
  using Type = typename CtxDecoding<T>::Type;
};

}  // namespace internal

//===----------------------------------------------------------------------===//
// Result encoding
//===----------------------------------------------------------------------===//

template <ExecutionStage stage>
struct ResultEncoding<stage, Error> {
  static XLA_FFI_Error* Encode(const XLA_FFI_Api* api, XLA_FFI_ExecutionContext*, Error error) {
    if (XLA_FFI_PREDICT_TRUE(error.success())) return nullptr;
    XLA_FFI_Error_Create_Args args;
    args.struct_size = XLA_FFI_Error_Create_Args_STRUCT_SIZE;
    args.extension_start = nullptr;
    args.errc = static_cast<XLA_FFI_Error_Code>(*error.errc());
    args.message = error.message().c_str();
    return api->XLA_FFI_Error_Create(&args);
  }
};

//===----------------------------------------------------------------------===//
// Binding
//===----------------------------------------------------------------------===//

template <ExecutionStage stage, typename... Ts>
class Binding {
 public:
  template <typename T>
  Binding<stage, Ts..., T> Arg() && {
    static_assert(internal::kNumTagged<internal::OptionalArgTag, Ts...> == 0,
                  "argument can't be passed after optional argument");
    static_assert(!internal::kHasRemainingArgs<Ts...>,
                  "argument can't be passed after remaining arguments");
    return {std::move(*this)};
  }
  template <typename T>
  Binding<stage, Ts..., internal::RetTag<T>> Ret() && {
    static_assert(internal::kNumTagged<internal::OptionalRetTag, Ts...> == 0,
                  "result can't be passed after optional result");
    static_assert(!internal::kHasRemainingRets<Ts...>,
                  "result can't be passed after remaining results");
    return {std::move(*this)};
  }
  template <typename T>
  Binding<stage, Ts..., internal::OptionalArgTag<T>> OptionalArg() && {
    static_assert(!internal::kHasRemainingArgs<Ts...>,
                  "optional argument can't be passed after remaining arguments");
    return {std::move(*this)};
  }
  template <typename T>
  Binding<stage, Ts..., internal::OptionalRetTag<T>> OptionalRet() && {
    static_assert(!internal::kHasRemainingRets<Ts...>,
                  "optional result can't be passed after remaining results");
    return {std::move(*this)};
  }
  Binding<stage, Ts..., internal::RemainingArgsTag> RemainingArgs() && {
    static_assert(!internal::kHasRemainingArgs<Ts...>,
                  "remaining arguments can be passed just once");
    return {std::move(*this)};
  }
  Binding<stage, Ts..., internal::RemainingRetsTag> RemainingRets() && {
    static_assert(!internal::kHasRemainingRets<Ts...>, "remaining results can be passed just once");
    return {std::move(*this)};
  }
  template <typename T>
  Binding<stage, Ts..., internal::CtxTag<T>> Ctx() && {
    return {std::move(*this)};
  }
  template <typename T>
  Binding<stage, Ts..., internal::AttrTag<T>> Attr(std::string attr) && {
    static_assert(internal::kNumTagged<internal::AttrsTag, Ts...> == 0,
                  "dictionary attributes can't be mixed with regular ones");
    attrs_.push_back(std::move(attr));
    return {std::move(*this)};
  }
  template <typename T = Dictionary>
  Binding<stage, Ts..., internal::AttrsTag<T>> Attrs() && {
    static_assert(internal::kNumTagged<internal::AttrTag, Ts...> == 0,
                  "dictionary attributes can't be mixed with regular ones");
    return {std::move(*this)};
  }

  template <typename Fn>
  std::unique_ptr<Handler<stage, Fn, Ts...>> To(Fn fn, std::initializer_list<Traits> traits = {}) {
    return std::unique_ptr<Handler<stage, Fn, Ts...>>(
        new Handler<stage, Fn, Ts...>(std::move(fn), attrs_));
  }

 private:
  template <ExecutionStage, typename...>
  friend class Binding;
  friend class Ffi;

  Binding() { static_assert(sizeof...(Ts) == 0, "arguments must be empty"); }
  template <typename... TTs>
  Binding(Binding<stage, TTs...>&& other) : attrs_(std::move(other.attrs_)) {}  // NOLINT
  Binding(Binding&) = delete;

  std::vector<std::string> attrs_;  // names of bound attributes, in order
};

template <ExecutionStage stage>
Binding<stage> Ffi::Bind() {
  return Binding<stage>();
}
inline Binding<ExecutionStage::kInstantiate> Ffi::BindInstantiate() {
  return Bind<ExecutionStage::kInstantiate>();
}

//===----------------------------------------------------------------------===//
// Handler: decodes a call frame and calls the function
//===----------------------------------------------------------------------===//

template <ExecutionStage stage, typename Fn, typename... Ts>
class Handler : public Ffi {
  static constexpr int64_t kSize = sizeof...(Ts);
  static constexpr int64_t kNumArgs = internal::kNumArgs<Ts...>;
  static constexpr int64_t kNumOptionalArgs = internal::kNumTagged<internal::OptionalArgTag, Ts...>;
  static constexpr int64_t kNumRets = internal::kNumTagged<internal::RetTag, Ts...>;
  static constexpr int64_t kNumOptionalRets = internal::kNumTagged<internal::OptionalRetTag, Ts...>;
  static constexpr int64_t kNumAttrs = internal::kNumTagged<internal::AttrTag, Ts...>;
  static constexpr int64_t kNumDictAttrs = internal::kNumTagged<internal::AttrsTag, Ts...>;
  static_assert(kNumAttrs == 0 || kNumDictAttrs == 0,
                "dictionary attributes can't be mixed with regular ones");

  template <typename T>
  using FnArgType = typename internal::FnArgType<T>::Type;
  static_assert(std::is_invocable_v<Fn, FnArgType<Ts>...>,
                "FFI binding signature is not compatible with a function type");
  using ResultType = std::invoke_result_t<Fn, FnArgType<Ts>...>;

 public:
  XLA_FFI_Error* Call(XLA_FFI_CallFrame* call_frame) const override {
    const XLA_FFI_Api* api = call_frame->api;
    if (call_frame->struct_size != XLA_FFI_CallFrame_STRUCT_SIZE) {
      return InvalidArgument(
          api, StrCat("Unexpected XLA_FFI_CallFrame size: expected ", XLA_FFI_CallFrame_STRUCT_SIZE,
                      " got ", call_frame->struct_size));
    }
    if (call_frame->stage != static_cast<XLA_FFI_ExecutionStage>(stage)) {
      return InvalidArgument(
          api, StrCat("Wrong execution stage: expected ", static_cast<int>(stage), " but got ",
                      static_cast<int>(call_frame->stage)));
    }
    if (XLA_FFI_Error* error = CheckCount(api, "arguments", call_frame->args.size, kNumArgs,
                                          kNumOptionalArgs, internal::kHasRemainingArgs<Ts...>)) {
      return error;
    }
    if (XLA_FFI_Error* error = CheckCount(api, "results", call_frame->rets.size, kNumRets,
                                          kNumOptionalRets, internal::kHasRemainingRets<Ts...>)) {
      return error;
    }
    // Dictionary attributes are checked by whoever decodes them.
    if (kNumDictAttrs == 0 && call_frame->attrs.size != static_cast<int64_t>(unique_attrs_)) {
      std::string expected;
      for (size_t i = 0; i < attrs_.size(); ++i) expected += StrCat(i > 0 ? ", " : "", attrs_[i]);
      return InvalidArgument(
          api, StrCat("Wrong number of attributes: expected ", unique_attrs_, " (",
                      expected.empty() ? "none" : expected, ") but got ", call_frame->attrs.size,
                      " (", internal::AttrNames(&call_frame->attrs), ")"));
    }
    return Call(call_frame, std::make_index_sequence<kSize>{});
  }

 private:
  template <ExecutionStage, typename...>
  friend class Binding;

  Handler(Fn fn, std::vector<std::string> attrs) : fn_(std::move(fn)), attrs_(std::move(attrs)) {
    std::vector<std::string> sorted = attrs_;
    std::sort(sorted.begin(), sorted.end());
    unique_attrs_ = std::unique(sorted.begin(), sorted.end()) - sorted.begin();
  }

  static XLA_FFI_Error* CheckCount(const XLA_FFI_Api* api, const char* what, int64_t got,
                                   int64_t required, int64_t optional, bool remaining) {
    if (remaining ? got >= required : (got >= required && got <= required + optional))
      return nullptr;
    std::string expected = std::to_string(required);
    if (remaining) {
      expected = StrCat("at least ", required);
    } else if (optional > 0) {
      expected = StrCat("between ", required, " and ", required + optional);
    }
    return InvalidArgument(
        api, StrCat("Wrong number of ", what, ": expected ", expected, " but got ", got,
                    " (tuple operands and results count as their leaf "
                    "buffers)"));
  }

  template <typename T>
  static std::optional<FnArgType<T>> DecodeOne(internal::DecodingOffsets& offsets,
                                               internal::DecodingContext& ctx, std::string* error) {
    // Described only when decoding fails: a description costs a stream.
    const internal::DecodingOffsets before = offsets;
    DiagnosticEngine diagnostic;
    std::optional<FnArgType<T>> value = internal::Decode<T>::call(offsets, ctx, diagnostic);
    if (!value) {
      *error =
          internal::StrCat(internal::Decode<T>::Describe(before, ctx), ": ", diagnostic.Result());
    }
    return value;
  }

  template <size_t... Is>
  XLA_FFI_Error* Call(XLA_FFI_CallFrame* call_frame, std::index_sequence<Is...>) const {
    internal::DecodingOffsets offsets;
    internal::DecodingContext ctx = {call_frame, attrs_.data()};
    std::array<std::string, kSize> errors;
    // Braced initialization decodes left to right, as the offsets require.
    std::tuple<std::optional<FnArgType<Ts>>...> args = {
        DecodeOne<Ts>(offsets, ctx, &errors[Is])...};
    if (!(std::get<Is>(args).has_value() && ...)) {
      std::string bad, diagnostics;
      for (size_t i = 0; i < static_cast<size_t>(kSize); ++i) {
        if (errors[i].empty()) continue;
        bad += internal::StrCat(bad.empty() ? "" : ", ", i);
        diagnostics.append("\n").append(errors[i]);
      }
      return InvalidArgument(call_frame->api,
                             StrCat("Failed to decode all FFI handler operands (bad operands at: ",
                                    bad, ")", diagnostics));
    }
    return ResultEncoding<stage, ResultType>::Encode(call_frame->api, call_frame->ctx,
                                                     fn_(std::move(*std::get<Is>(args))...));
  }

  Fn fn_;
  std::vector<std::string> attrs_;
  size_t unique_attrs_ = 0;
};

//===----------------------------------------------------------------------===//
// Bindings inferred from a function's parameter types (Ffi::BindTo)
//===----------------------------------------------------------------------===//

template <typename T>
struct ArgBinding {
  using Arg = void;
};
template <typename T>
struct RetBinding {
  using Ret = void;
};
template <typename T>
struct AttrBinding {
  using Attr = void;
};
template <typename T>
struct AttrsBinding {
  using Attrs = void;
};
template <typename T>
struct CtxBinding {
  using Ctx = void;
};

template <>
struct ArgBinding<AnyBuffer> {
  using Arg = AnyBuffer;
};
template <DataType dtype, size_t rank>
struct ArgBinding<Buffer<dtype, rank>> {
  using Arg = Buffer<dtype, rank>;
};
template <>
struct RetBinding<Result<AnyBuffer>> {
  using Ret = AnyBuffer;
};
template <DataType dtype, size_t rank>
struct RetBinding<Result<Buffer<dtype, rank>>> {
  using Ret = Buffer<dtype, rank>;
};
template <>
struct AttrsBinding<Dictionary> {
  using Attrs = Dictionary;
};

// A parameter bound to the attribute named by a compile-time string.
template <typename T, const char* attr_name>
class Attr {
 public:
  Attr(T value) : value_(value) {}  // NOLINT
  T& operator*() { return value_; }
  T* operator->() { return &value_; }

 private:
  T value_;
};

template <typename T, const char* attr_name>
struct AttrBinding<Attr<T, attr_name>> {
  using Attr = T;
  static constexpr std::string_view name() { return attr_name; }
};

namespace internal {

template <typename Fn, typename... Params>
struct BindOne;

template <typename Fn, typename Param, typename... Params>
struct BindOne<Fn, Param, Params...> {
  template <typename InFlightBinding>
  static auto To(Fn fn, InFlightBinding binding, std::initializer_list<Traits> traits) {
    if constexpr (!std::is_void_v<typename ArgBinding<Param>::Arg>) {
      return BindOne<Fn, Params...>::To(
          std::move(fn), std::move(binding).template Arg<typename ArgBinding<Param>::Arg>(),
          traits);
    } else if constexpr (!std::is_void_v<typename RetBinding<Param>::Ret>) {
      return BindOne<Fn, Params...>::To(
          std::move(fn), std::move(binding).template Ret<typename RetBinding<Param>::Ret>(),
          traits);
    } else if constexpr (!std::is_void_v<typename AttrBinding<Param>::Attr>) {
      return BindOne<Fn, Params...>::To(
          std::move(fn),
          std::move(binding).template Attr<typename AttrBinding<Param>::Attr>(
              std::string(AttrBinding<Param>::name())),
          traits);
    } else if constexpr (!std::is_void_v<typename AttrsBinding<Param>::Attrs>) {
      return BindOne<Fn, Params...>::To(
          std::move(fn), std::move(binding).template Attrs<typename AttrsBinding<Param>::Attrs>(),
          traits);
    } else if constexpr (std::is_same_v<Param, ::axle::ffi::RemainingArgs>) {
      return BindOne<Fn, Params...>::To(std::move(fn), std::move(binding).RemainingArgs(), traits);
    } else if constexpr (std::is_same_v<Param, ::axle::ffi::RemainingRets>) {
      return BindOne<Fn, Params...>::To(std::move(fn), std::move(binding).RemainingRets(), traits);
    } else {
      static_assert(sizeof(Param) == 0, "parameter is not supported for binding");
    }
  }
};

template <typename Fn>
struct BindOne<Fn> {
  template <typename InFlightBinding>
  static auto To(Fn fn, InFlightBinding binding, std::initializer_list<Traits> traits) {
    return binding.To(std::move(fn), traits);
  }
};

template <ExecutionStage stage, typename Fn>
struct Bind;

template <ExecutionStage stage, typename ResultType, typename... Params>
struct Bind<stage, ResultType (*)(Params...)> {
  using Fn = ResultType (*)(Params...);
  static auto To(Fn fn, std::initializer_list<Traits> traits) {
    return BindOne<Fn, Params...>::To(fn, Ffi::Bind<stage>(), traits);
  }
};

template <ExecutionStage stage, typename ResultType, typename Fn, typename... Params>
struct Bind<stage, ResultType (Fn::*)(Params...) const> {
  static auto To(Fn fn, std::initializer_list<Traits> traits) {
    return BindOne<Fn, Params...>::To(std::move(fn), Ffi::Bind<stage>(), traits);
  }
};

}  // namespace internal

template <typename Fn, ExecutionStage stage>
auto Ffi::BindTo(Fn fn, std::initializer_list<Traits> traits) {
  if constexpr (std::is_pointer_v<Fn>) {
    return internal::Bind<stage, Fn>::To(fn, traits);
  } else if constexpr (std::is_function_v<Fn>) {
    return internal::Bind<stage, Fn*>::To(fn, traits);
  } else {
    return internal::Bind<stage, decltype(&Fn::operator())>::To(std::move(fn), traits);
  }
}

}  // namespace axle::ffi

//===----------------------------------------------------------------------===//
// Macros
//===----------------------------------------------------------------------===//

// A static XLA_FFI_Handler* `fn` that decodes frames per `binding` and calls
// `impl`; without a binding, it is inferred from impl's signature.
#define XLA_FFI_DEFINE_HANDLER_EXPLICIT(fn, impl, binding)                    \
  static constexpr XLA_FFI_Handler* fn = +[](XLA_FFI_CallFrame* call_frame) { \
    static auto* handler = binding.To(impl).release();                        \
    return handler->Call(call_frame);                                         \
  }
#define XLA_FFI_DEFINE_HANDLER_AUTO(fn, impl)                                 \
  static constexpr XLA_FFI_Handler* fn = +[](XLA_FFI_CallFrame* call_frame) { \
    static auto* handler = ::axle::ffi::Ffi::BindTo(impl).release();          \
    return handler->Call(call_frame);                                         \
  }
#define XLA_FFI_DEFINE_HANDLER_X(x, fn, impl, binding, FUNC, ...) FUNC
#define XLA_FFI_DEFINE_HANDLER(fn, impl, ...)                                      \
  XLA_FFI_DEFINE_HANDLER_X(, fn, impl, ##__VA_ARGS__,                              \
                           XLA_FFI_DEFINE_HANDLER_EXPLICIT(fn, impl, __VA_ARGS__), \
                           XLA_FFI_DEFINE_HANDLER_AUTO(fn, impl))

// An exported C function `fn` implementing the handler.
#define XLA_FFI_DECLARE_HANDLER_SYMBOL(fn) \
  extern "C" XLA_FFI_Error* fn(XLA_FFI_CallFrame* call_frame)
#define XLA_FFI_DEFINE_HANDLER_SYMBOL(fn, impl, ...)                                     \
  extern "C" XLA_FFI_Error* fn(XLA_FFI_CallFrame* call_frame) {                          \
    XLA_FFI_DEFINE_HANDLER(handler, impl, ##__VA_ARGS__);                                \
    return (*handler)(call_frame);                                                       \
  }                                                                                      \
  static_assert(std::is_invocable_r_v<XLA_FFI_Error*, decltype(fn), XLA_FFI_CallFrame*>, \
                "FFI handler must return XLA_FFI_Error* and accept XLA_FFI_CallFrame*")

// Registers a handler from a static initializer: XLA_FFI_REGISTER_HANDLER(api,
// name, platform, handler[, traits]). A failure (a duplicate name, an
// unsupported stage) is reported on stderr; the first handler stays.
#define XLA_FFI_REGISTER_HANDLER(API, NAME, PLATFORM, FUNC, ...) \
  XLA_FFI_REGISTER_HANDLER_(API, NAME, PLATFORM, FUNC, __COUNTER__, ##__VA_ARGS__)
#define XLA_FFI_REGISTER_HANDLER_(API, NAME, PLATFORM, FUNC, N, ...) \
  XLA_FFI_REGISTER_HANDLER__(API, NAME, PLATFORM, FUNC, N, ##__VA_ARGS__)
#define XLA_FFI_REGISTER_HANDLER__(API, NAME, PLATFORM, FUNC, N, ...)                             \
  XLA_FFI_ATTRIBUTE_UNUSED static const XLA_FFI_Error* xla_ffi_static_handler_##N##_registered_ = \
      [] {                                                                                        \
        return ::axle::ffi::Ffi::RegisterStaticHandler(API, NAME, PLATFORM, FUNC, ##__VA_ARGS__); \
      }()

#endif  // AXLE_RUNTIME_FFI_FFI_API_H_
