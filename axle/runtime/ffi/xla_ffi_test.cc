//===- xla_ffi_test.cc - XLA's typed FFI C++ API, run from HLO text --------===//
//
// Handlers written against xla::ffi's API (Axle's axle::ffi), bound with
// Ffi::Bind(), called from custom calls with api_version=API_VERSION_TYPED_FFI
// through the HloEvaluator, and checked against hand-computed values and
// expected binding errors.
//
//===----------------------------------------------------------------------===//
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "axle/hlo/text/hlo_parser.h"
#include "axle/runtime/ffi/ffi_api.h"
#include "axle/runtime/ffi/ffi_call_frame.h"
#include "axle/runtime/host_custom_call.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ffi = ::axle::ffi;

// --- Handlers at global scope, as user code writes them -----------------------

struct Range {
  int64_t lo;
  int64_t hi;
};
XLA_FFI_REGISTER_STRUCT_ATTR_DECODING(Range, ::axle::ffi::StructMember<int64_t>("lo"),
                                      ::axle::ffi::StructMember<int64_t>("hi"));

enum class Mode : int32_t { kAdd = 1, kMul = 2 };
XLA_FFI_REGISTER_ENUM_ATTR_DECODING(Mode);

// out = alpha * x + y, registered globally as in XLA's documentation.
static ffi::Error AxpyImpl(ffi::Buffer<ffi::F32> x, ffi::BufferR1<ffi::F32> y,
                           ffi::ResultBuffer<ffi::F32> out, float alpha) {
  for (size_t i = 0; i < x.element_count(); ++i) {
    out->typed_data()[i] = alpha * x.typed_data()[i] + y.typed_data()[i];
  }
  return ffi::Error::Success();
}
XLA_FFI_DEFINE_HANDLER_SYMBOL(axle_ffi_test_axpy, AxpyImpl,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Arg<ffi::BufferR1<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>()
                                  .Attr<float>("alpha"));
XLA_FFI_REGISTER_HANDLER(ffi::GetXlaFfiApi(), "axle_ffi_test.axpy", "cpu", axle_ffi_test_axpy);

namespace axle {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Runs `hlo` with `handler` registered (in a registry of its own) as `target`.
absl::StatusOr<Literal> RunFfi(XLA_FFI_Handler* handler, absl::string_view target,
                               absl::string_view hlo,
                               const std::vector<const Literal*>& args = {}) {
  FfiHandlerRegistry handlers;
  absl::Status registered = handlers.Register(
      std::string(target), "Host",
      [handler](const FfiCallFrame& call) { return ffi::CallXlaFfiHandler(handler, call); });
  if (!registered.ok()) return registered;
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseAndReturnUnverifiedModule(hlo);
  if (!module.ok()) return module.status();
  CustomCallTargetRegistry targets;
  HloEvaluator evaluator;
  evaluator.set_custom_call_handler(MakeHostCustomCallHandler(&targets, &handlers));
  return evaluator.Evaluate(**module, args);
}

TEST(XlaFfi, GloballyRegisteredHandlerRunsThroughTheInterpreter) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseAndReturnUnverifiedModule(R"(
    HloModule m
    ENTRY e {
      x = f32[3] constant({1, 2, 3})
      y = f32[3] constant({10, 20, 30})
      ROOT r = f32[3] custom-call(x, y), custom_call_target="axle_ffi_test.axpy",
               api_version=API_VERSION_TYPED_FFI, backend_config="{alpha = 2.0 : f32}"
    })");
  ASSERT_TRUE(module.ok()) << module.status();
  HloEvaluator evaluator;
  InstallHostCustomCalls(&evaluator);
  absl::StatusOr<Literal> result = evaluator.Evaluate(**module, {});
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(*result, LiteralUtil::CreateR1<float>({12, 24, 36}));
}

TEST(XlaFfi, DuplicateRegistrationIsAnError) {
  XLA_FFI_Error* error = ffi::Ffi::RegisterStaticHandler(ffi::GetXlaFfiApi(), "axle_ffi_test.axpy",
                                                         "Host", axle_ffi_test_axpy);
  ASSERT_NE(error, nullptr);
  XLA_FFI_Error_GetMessage_Args get{XLA_FFI_Error_GetMessage_Args_STRUCT_SIZE, nullptr, error,
                                    nullptr};
  ffi::GetXlaFfiApi()->XLA_FFI_Error_GetMessage(&get);
  EXPECT_THAT(get.message, HasSubstr("'axle_ffi_test.axpy' on platform \"Host\" is already"));
  XLA_FFI_Error_Destroy_Args destroy{XLA_FFI_Error_Destroy_Args_STRUCT_SIZE, nullptr, error};
  ffi::GetXlaFfiApi()->XLA_FFI_Error_Destroy(&destroy);
}

TEST(XlaFfi, StagesOtherThanExecuteAreUnimplemented) {
  XLA_FFI_Handler_Bundle bundle{axle_ffi_test_axpy, nullptr, nullptr, axle_ffi_test_axpy};
  XLA_FFI_Error* error =
      ffi::Ffi::RegisterStaticHandler(ffi::GetXlaFfiApi(), "axle_ffi_test.staged", "Host", bundle);
  ASSERT_NE(error, nullptr);
  XLA_FFI_Error_Destroy_Args destroy{XLA_FFI_Error_Destroy_Args_STRUCT_SIZE, nullptr, error};
  ffi::GetXlaFfiApi()->XLA_FFI_Error_Destroy(&destroy);
  EXPECT_FALSE(FfiHandlerRegistry::Global()->Find("axle_ffi_test.staged", "Host").ok());
}

TEST(XlaFfi, PlatformNamesAreCanonical) {
  EXPECT_EQ(ffi::CanonicalFfiPlatform("cpu"), "Host");
  EXPECT_EQ(ffi::CanonicalFfiPlatform("gpu"), "CUDA");
  EXPECT_EQ(ffi::CanonicalFfiPlatform("Interpreter"), "Interpreter");
}

// --- Buffers -------------------------------------------------------------------

// out (s64[6]) = rank, element count, bytes, dtype of `in`, then the result's
// rank and dtype.
XLA_FFI_DEFINE_HANDLER(
    kDescribe,
    [](ffi::AnyBuffer in, ffi::Result<ffi::AnyBuffer> out) {
      int64_t* o = out->typed_data<int64_t>();
      o[0] = static_cast<int64_t>(in.dimensions().size());
      o[1] = static_cast<int64_t>(in.element_count());
      o[2] = static_cast<int64_t>(in.size_bytes());
      o[3] = static_cast<int64_t>(in.element_type());
      o[4] = static_cast<int64_t>(out->dimensions().size());
      o[5] = static_cast<int64_t>(out->element_type());
      return ffi::Error::Success();
    },
    ffi::Ffi::Bind().Arg<ffi::AnyBuffer>().Ret<ffi::AnyBuffer>());

TEST(XlaFfi, AnyBufferSeesShapeAndType) {
  Literal p(ShapeUtil::MakeShape(S16, {2, 3, 4}));
  absl::StatusOr<Literal> result = RunFfi(kDescribe, "describe", R"(
    HloModule m
    ENTRY e {
      p = s16[2,3,4] parameter(0)
      ROOT r = s64[6] custom-call(p), custom_call_target="describe", api_version=API_VERSION_TYPED_FFI
    })",
                                          {&p});
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(*result, LiteralUtil::CreateR1<int64_t>({3, 24, 48, S16, 1, S64}));
}

// Rank-2 matrix transpose with ranked buffers.
XLA_FFI_DEFINE_HANDLER(
    kTranspose,
    [](ffi::BufferR2<ffi::S32> in, ffi::ResultBufferR2<ffi::S32> out) {
      auto dims = in.dimensions();
      for (int64_t i = 0; i < dims[0]; ++i) {
        for (int64_t j = 0; j < dims[1]; ++j) {
          out->typed_data()[j * dims[0] + i] = in.typed_data()[i * dims[1] + j];
        }
      }
      return ffi::Error::Success();
    },
    ffi::Ffi::Bind().Arg<ffi::BufferR2<ffi::S32>>().Ret<ffi::BufferR2<ffi::S32>>());

constexpr absl::string_view kTransposeHlo = R"(
    HloModule m
    ENTRY e {
      c = s32[2,3] constant({{1, 2, 3}, {4, 5, 6}})
      ROOT r = s32[3,2] custom-call(c), custom_call_target="transpose", api_version=API_VERSION_TYPED_FFI
    })";

TEST(XlaFfi, RankedBuffers) {
  absl::StatusOr<Literal> result = RunFfi(kTranspose, "transpose", kTransposeHlo);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(*result, LiteralUtil::CreateR2<int32_t>({{1, 4}, {2, 5}, {3, 6}}));
}

TEST(XlaFfi, WrongDtypeOrRankNamesTheOperand) {
  absl::StatusOr<Literal> result = RunFfi(kTranspose, "transpose", R"(
    HloModule m
    ENTRY e {
      c = f32[2,3] constant({{1, 2, 3}, {4, 5, 6}})
      ROOT r = s32[6] custom-call(c), custom_call_target="transpose", api_version=API_VERSION_TYPED_FFI
    })");
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(result.status().message(), HasSubstr("custom-call 'transpose'"));
  EXPECT_THAT(result.status().message(),
              HasSubstr("argument 0: Wrong buffer dtype: expected S32 but got F32"));
  EXPECT_THAT(result.status().message(),
              HasSubstr("result 0: Wrong buffer rank: expected 2 but got 1"));
  EXPECT_THAT(result.status().message(), HasSubstr("bad operands at: 0, 1"));
}

TEST(XlaFfi, WrongOperandCountsAreErrors) {
  absl::StatusOr<Literal> result = RunFfi(kTranspose, "transpose", R"(
    HloModule m
    ENTRY e {
      c = s32[2,3] constant({{1, 2, 3}, {4, 5, 6}})
      ROOT r = s32[3,2] custom-call(c, c), custom_call_target="transpose", api_version=API_VERSION_TYPED_FFI
    })");
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(result.status().message(),
              HasSubstr("Wrong number of arguments: expected 1 but got 2"));
  result = RunFfi(kTranspose, "transpose", R"(
    HloModule m
    ENTRY e {
      c = s32[2,3] constant({{1, 2, 3}, {4, 5, 6}})
      ROOT r = (s32[3,2], s32[3,2]) custom-call(c), custom_call_target="transpose", api_version=API_VERSION_TYPED_FFI
    })");
  EXPECT_THAT(result.status().message(),
              HasSubstr("Wrong number of results: expected 1 but got 2"));
}

// Tuples are flattened: ((f32[2], s32[1]), f32[2]) is three buffers.
XLA_FFI_DEFINE_HANDLER(
    kTupleSum,
    [](ffi::BufferR1<ffi::F32> a, ffi::BufferR1<ffi::S32> n, ffi::BufferR1<ffi::F32> b,
       ffi::ResultBufferR1<ffi::F32> sum, ffi::ResultBufferR0<ffi::S32> count) {
      for (int i = 0; i < 2; ++i) {
        sum->typed_data()[i] = a.typed_data()[i] + b.typed_data()[i];
      }
      *count->typed_data() = n.typed_data()[0] + 1;
      return ffi::Error::Success();
    },
    ffi::Ffi::Bind()
        .Arg<ffi::BufferR1<ffi::F32>>()
        .Arg<ffi::BufferR1<ffi::S32>>()
        .Arg<ffi::BufferR1<ffi::F32>>()
        .Ret<ffi::BufferR1<ffi::F32>>()
        .Ret<ffi::BufferR0<ffi::S32>>());

TEST(XlaFfi, TupleOperandsAndResultsAreFlattened) {
  absl::StatusOr<Literal> result = RunFfi(kTupleSum, "tuple_sum", R"(
    HloModule m
    ENTRY e {
      a = f32[2] constant({1, 2})
      n = s32[1] constant({41})
      t = (f32[2], s32[1]) tuple(a, n)
      b = f32[2] constant({0.5, 0.25})
      ROOT r = (f32[2], (s32[])) custom-call(t, b), custom_call_target="tuple_sum",
               api_version=API_VERSION_TYPED_FFI
    })");
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->GetSubliteral({0}), LiteralUtil::CreateR1<float>({1.5f, 2.25f}));
  EXPECT_EQ(result->GetSubliteral({1, 0}), LiteralUtil::CreateR0<int32_t>(42));
}

// Remaining args and results: copies each remaining argument, doubled, into
// the matching remaining result; the first argument is a scale.
XLA_FFI_DEFINE_HANDLER(
    kScaleAll,
    [](ffi::BufferR0<ffi::F32> scale, ffi::RemainingArgs args,
       ffi::RemainingRets rets) -> ffi::Error {
      if (args.size() != rets.size()) {
        return ffi::Error::InvalidArgument("args and results differ in number");
      }
      for (size_t i = 0; i < args.size(); ++i) {
        ffi::ErrorOr<ffi::AnyBuffer> in = args.get<ffi::AnyBuffer>(i);
        ffi::ErrorOr<ffi::Result<ffi::Buffer<ffi::F32>>> out = rets.get<ffi::Buffer<ffi::F32>>(i);
        if (!in) return in.error();
        if (!out) return out.error();
        const float* src = in->typed_data<float>();
        for (size_t j = 0; j < in->element_count(); ++j) {
          (*out)->typed_data()[j] = *scale.typed_data() * src[j];
        }
      }
      // Out of range is an error, not a crash.
      if (args.get<ffi::AnyBuffer>(args.size()).has_value()) {
        return ffi::Error::Internal("index past the end decoded");
      }
      return ffi::Error::Success();
    },
    ffi::Ffi::Bind().Arg<ffi::BufferR0<ffi::F32>>().RemainingArgs().RemainingRets());

TEST(XlaFfi, RemainingArgsAndRets) {
  absl::StatusOr<Literal> result = RunFfi(kScaleAll, "scale_all", R"(
    HloModule m
    ENTRY e {
      s = f32[] constant(3)
      a = f32[2] constant({1, 2})
      b = f32[1] constant({5})
      ROOT r = (f32[2], f32[1]) custom-call(s, a, b), custom_call_target="scale_all",
               api_version=API_VERSION_TYPED_FFI
    })");
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->GetSubliteral({0}), LiteralUtil::CreateR1<float>({3, 6}));
  EXPECT_EQ(result->GetSubliteral({1}), LiteralUtil::CreateR1<float>({15}));

  // A remaining result of the wrong dtype comes back from get() as an error.
  result = RunFfi(kScaleAll, "scale_all", R"(
    HloModule m
    ENTRY e {
      s = f32[] constant(3)
      a = f32[2] constant({1, 2})
      ROOT r = s32[2] custom-call(s, a), custom_call_target="scale_all",
               api_version=API_VERSION_TYPED_FFI
    })");
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(result.status().message(),
              HasSubstr("result 0: Wrong buffer dtype: expected F32 but got S32"));
}

// An optional second operand: out = x (+ y when given).
XLA_FFI_DEFINE_HANDLER(
    kMaybeAdd,
    [](ffi::BufferR1<ffi::S32> x, std::optional<ffi::BufferR1<ffi::S32>> y,
       ffi::ResultBufferR1<ffi::S32> out) {
      for (size_t i = 0; i < x.element_count(); ++i) {
        out->typed_data()[i] = x.typed_data()[i] + (y ? y->typed_data()[i] : 0);
      }
      return ffi::Error::Success();
    },
    ffi::Ffi::Bind()
        .Arg<ffi::BufferR1<ffi::S32>>()
        .OptionalArg<ffi::BufferR1<ffi::S32>>()
        .Ret<ffi::BufferR1<ffi::S32>>());

TEST(XlaFfi, OptionalArguments) {
  absl::StatusOr<Literal> result = RunFfi(kMaybeAdd, "maybe_add", R"(
    HloModule m
    ENTRY e {
      x = s32[2] constant({1, 2})
      ROOT r = s32[2] custom-call(x), custom_call_target="maybe_add", api_version=API_VERSION_TYPED_FFI
    })");
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(*result, LiteralUtil::CreateR1<int32_t>({1, 2}));
  result = RunFfi(kMaybeAdd, "maybe_add", R"(
    HloModule m
    ENTRY e {
      x = s32[2] constant({1, 2})
      ROOT r = s32[2] custom-call(x, x), custom_call_target="maybe_add", api_version=API_VERSION_TYPED_FFI
    })");
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(*result, LiteralUtil::CreateR1<int32_t>({2, 4}));
  result = RunFfi(kMaybeAdd, "maybe_add", R"(
    HloModule m
    ENTRY e {
      x = s32[2] constant({1, 2})
      ROOT r = s32[2] custom-call(x, x, x), custom_call_target="maybe_add", api_version=API_VERSION_TYPED_FFI
    })");
  EXPECT_THAT(result.status().message(),
              HasSubstr("Wrong number of arguments: expected between 1 and 2 but got 3"));
}

// --- Errors --------------------------------------------------------------------

XLA_FFI_DEFINE_HANDLER(
    kFail,
    [](ffi::Token, ffi::Result<ffi::Token>, std::string_view why) {
      return ffi::Error(ffi::ErrorCode::kFailedPrecondition, std::string("refused: ").append(why));
    },
    ffi::Ffi::Bind().Arg<ffi::Token>().Ret<ffi::Token>().Attr<std::string_view>("why"));

TEST(XlaFfi, ErrorAbortsTheRunWithItsCodeAndMessage) {
  absl::StatusOr<Literal> result = RunFfi(kFail, "fail", R"(
    HloModule m
    ENTRY e {
      t = token[] after-all()
      ROOT r = token[] custom-call(t), custom_call_target="fail", api_version=API_VERSION_TYPED_FFI,
               backend_config="{why = \"no reason\"}"
    })");
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kFailedPrecondition) << result.status();
  EXPECT_THAT(result.status().message(), HasSubstr("custom-call 'fail'"));
  EXPECT_THAT(result.status().message(), HasSubstr("refused: no reason"));
}

TEST(XlaFfi, ErrorAndErrorOrBasics) {
  ffi::Error ok = ffi::Error::Success();
  EXPECT_TRUE(ok.success());
  ffi::Error bad = ffi::Error::InvalidArgument("x");
  EXPECT_TRUE(bad.failure());
  EXPECT_EQ(*bad.errc(), ffi::ErrorCode::kInvalidArgument);
  EXPECT_EQ(bad.message(), "x");
  ffi::ErrorOr<int> value = 3;
  EXPECT_TRUE(value.has_value());
  EXPECT_EQ(*value, 3);
  ffi::ErrorOr<int> error = ffi::Unexpected(ffi::Error::Internal("y"));
  EXPECT_TRUE(error.has_error());
  EXPECT_EQ(error.error().message(), "y");
  EXPECT_EQ(ffi::ByteWidth(ffi::C128), 16u);
  EXPECT_EQ(ffi::ToComplex(ffi::F32), ffi::C64);
}

// --- Attributes ----------------------------------------------------------------

// Writes every attribute kind into an f64[12] result.
XLA_FFI_DEFINE_HANDLER(
    kAttrs,
    [](ffi::Result<ffi::BufferR1<ffi::F64>> out, bool flag, int32_t i32, int64_t i64, uint8_t u8,
       float f, double d, std::string_view s, ffi::Span<const int64_t> sizes,
       ffi::Span<const float> scales, Mode mode) {
      double* o = out->typed_data();
      o[0] = flag;
      o[1] = i32;
      o[2] = static_cast<double>(i64);
      o[3] = u8;
      o[4] = f;
      o[5] = d;
      o[6] = static_cast<double>(s.size());
      o[7] = static_cast<double>(sizes.size());
      o[8] = static_cast<double>(sizes.back());
      o[9] = scales[0] + scales[1];
      o[10] = static_cast<double>(mode);
      o[11] = s == "hello" ? 1 : 0;
      return ffi::Error::Success();
    },
    ffi::Ffi::Bind()
        .Ret<ffi::BufferR1<ffi::F64>>()
        .Attr<bool>("flag")
        .Attr<int32_t>("i32")
        .Attr<int64_t>("i64")
        .Attr<uint8_t>("u8")
        .Attr<float>("f")
        .Attr<double>("d")
        .Attr<std::string_view>("s")
        .Attr<ffi::Span<const int64_t>>("sizes")
        .Attr<ffi::Span<const float>>("scales")
        .Attr<Mode>("mode"));

std::string AttrsHlo(absl::string_view config) {
  return absl::StrCat(R"(
    HloModule m
    ENTRY e {
      ROOT r = f64[12] custom-call(), custom_call_target="attrs", api_version=API_VERSION_TYPED_FFI,
               backend_config=")",
                      config, R"("
    })");
}

TEST(XlaFfi, AttributesOfEveryKind) {
  absl::StatusOr<Literal> result = RunFfi(
      kAttrs, "attrs",
      AttrsHlo("{flag = true, i32 = -7 : i32, i64 = 9000000000 : i64, u8 = 200 : ui8, "
               "f = 0.5 : f32, d = 2.25 : f64, s = \\\"hello\\\", sizes = array<i64: 4, 5, 6>, "
               "scales = array<f32: 1.5, 2.0>, mode = 2 : i32}"));
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(*result, LiteralUtil::CreateR1<double>(
                         {1, -7, 9000000000.0, 200, 0.5, 2.25, 5, 3, 6, 3.5, 2, 1}));
}

TEST(XlaFfi, MissingExtraAndMistypedAttributesAreNamed) {
  // Missing `mode` (and so one attribute short).
  absl::StatusOr<Literal> result =
      RunFfi(kAttrs, "attrs",
             AttrsHlo("{flag = true, i32 = 1 : i32, i64 = 1, u8 = 1 : ui8, f = 0.5 : f32, d = 1.0, "
                      "s = \\\"x\\\", sizes = array<i64: 1>, scales = array<f32: 1.0, 2.0>}"));
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(result.status().message(), HasSubstr("Wrong number of attributes: expected 10"));
  // `mode` renamed to `mood`: the right count, but `mode` is missing.
  result = RunFfi(
      kAttrs, "attrs",
      AttrsHlo("{flag = true, i32 = 1 : i32, i64 = 1, u8 = 1 : ui8, f = 0.5 : f32, d = 1.0, "
               "s = \\\"x\\\", sizes = array<i64: 1>, scales = array<f32: 1.0, 2.0>, mood = 1}"));
  EXPECT_THAT(result.status().message(), HasSubstr("attribute 'mode': missing"));
  // Mistyped: a string for an integer, an out-of-range u8, an i32 array for
  // an i64 span, an integer for a float.
  result = RunFfi(
      kAttrs, "attrs",
      AttrsHlo("{flag = true, i32 = \\\"one\\\", i64 = 1, u8 = 300, f = 1 : i32, d = 1.0, "
               "s = \\\"x\\\", sizes = array<i32: 1>, scales = array<f32: 1.0, 2.0>, mode = 1}"));
  std::string message(result.status().message());
  EXPECT_THAT(message, HasSubstr("attribute 'i32': Wrong attribute type: expected scalar but got "
                                 "string"));
  EXPECT_THAT(message, HasSubstr("attribute 'u8': Scalar value 300 (S64) is out of range for U8"));
  EXPECT_THAT(message,
              HasSubstr("attribute 'sizes': Wrong array data type: expected S64 but got S32"));
  EXPECT_THAT(message,
              HasSubstr("attribute 'f': Wrong scalar data type: expected F32 but got S32"));
}

// Attrs<Struct>() and Attrs<Dictionary>().
XLA_FFI_DEFINE_HANDLER(
    kRange,
    [](ffi::ResultBufferR1<ffi::S64> out, Range range) {
      for (int64_t i = range.lo; i < range.hi; ++i) {
        out->typed_data()[i - range.lo] = i;
      }
      return ffi::Error::Success();
    },
    ffi::Ffi::Bind().Ret<ffi::BufferR1<ffi::S64>>().Attrs<Range>());

TEST(XlaFfi, StructAttributes) {
  absl::StatusOr<Literal> result = RunFfi(kRange, "range", R"(
    HloModule m
    ENTRY e {
      ROOT r = s64[3] custom-call(), custom_call_target="range", api_version=API_VERSION_TYPED_FFI,
               backend_config="{lo = 4 : i64, hi = 7 : i64}"
    })");
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(*result, LiteralUtil::CreateR1<int64_t>({4, 5, 6}));

  result = RunFfi(kRange, "range", R"(
    HloModule m
    ENTRY e {
      ROOT r = s64[3] custom-call(), custom_call_target="range", api_version=API_VERSION_TYPED_FFI,
               backend_config="{lo = 4 : i64, high = 7 : i64}"
    })");
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(result.status().message(), HasSubstr("attributes: member 'hi': missing"));
}

// A struct from a nested dictionary attribute, and a nested Dictionary.
XLA_FFI_DEFINE_HANDLER(
    kNested,
    [](ffi::ResultBufferR1<ffi::S64> out, Range range, ffi::Dictionary options) -> ffi::Error {
      ffi::ErrorOr<int64_t> step = options.get<int64_t>("step");
      if (!step) return step.error();
      int64_t n = 0;
      for (int64_t i = range.lo; i < range.hi; i += *step) {
        out->typed_data()[n++] = i;
      }
      return ffi::Error::Success();
    },
    ffi::Ffi::Bind().Ret<ffi::BufferR1<ffi::S64>>().Attr<Range>("range").Attr<ffi::Dictionary>(
        "options"));

TEST(XlaFfi, NestedDictionaryAttributes) {
  absl::StatusOr<Literal> result = RunFfi(kNested, "nested", R"(
    HloModule m
    ENTRY e {
      ROOT r = s64[3] custom-call(), custom_call_target="nested", api_version=API_VERSION_TYPED_FFI,
               backend_config="{range = {lo = 1 : i64, hi = 7 : i64}, options = {step = 2 : i64}}"
    })");
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(*result, LiteralUtil::CreateR1<int64_t>({1, 3, 5}));

  result = RunFfi(kNested, "nested", R"(
    HloModule m
    ENTRY e {
      ROOT r = s64[3] custom-call(), custom_call_target="nested", api_version=API_VERSION_TYPED_FFI,
               backend_config="{range = 3 : i64, options = {}}"
    })");
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(result.status().message(),
              HasSubstr("attribute 'range': Wrong attribute type: expected dictionary but got "
                        "scalar"));
}

XLA_FFI_DEFINE_HANDLER(
    kDictionary,
    [](ffi::ResultBufferR0<ffi::F32> out, ffi::Dictionary attrs) -> ffi::Error {
      ffi::ErrorOr<float> scale = attrs.get<float>("scale");
      if (!scale) return scale.error();
      float bias = attrs.contains("bias") ? *attrs.get<float>("bias") : 0.0f;
      *out->typed_data() = *scale * static_cast<float>(attrs.size()) + bias;
      return ffi::Error::Success();
    },
    ffi::Ffi::Bind().Ret<ffi::BufferR0<ffi::F32>>().Attrs());

TEST(XlaFfi, DictionaryAttributes) {
  absl::StatusOr<Literal> result = RunFfi(kDictionary, "dict", R"(
    HloModule m
    ENTRY e {
      ROOT r = f32[] custom-call(), custom_call_target="dict", api_version=API_VERSION_TYPED_FFI,
               backend_config="{scale = 1.5 : f32, bias = 1.0 : f32}"
    })");
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->GetFirstElement<float>(), 4.0f);

  result = RunFfi(kDictionary, "dict", R"(
    HloModule m
    ENTRY e {
      ROOT r = f32[] custom-call(), custom_call_target="dict", api_version=API_VERSION_TYPED_FFI,
               backend_config="{bias = 1.0 : f32}"
    })");
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(result.status().message(), HasSubstr("attribute 'scale': missing"));
}

// A binding inferred from the function's signature (no explicit binding).
static ffi::Error NegateImpl(ffi::BufferR1<ffi::F64> in, ffi::ResultBufferR1<ffi::F64> out) {
  for (size_t i = 0; i < in.element_count(); ++i) out->typed_data()[i] = -in.typed_data()[i];
  return ffi::Error::Success();
}
XLA_FFI_DEFINE_HANDLER(kNegate, NegateImpl);

TEST(XlaFfi, InferredBinding) {
  absl::StatusOr<Literal> result = RunFfi(kNegate, "negate", R"(
    HloModule m
    ENTRY e {
      c = f64[2] constant({1, -2})
      ROOT r = f64[2] custom-call(c), custom_call_target="negate", api_version=API_VERSION_TYPED_FFI
    })");
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(*result, LiteralUtil::CreateR1<double>({-1, 2}));
}

// A handler that records the platform stream it was given (a CUDA custom
// call's Ctx<PlatformStream<cudaStream_t>>; here any pointer type).
struct FakeStream;
static ffi::Error StreamImpl(FakeStream* stream, ffi::ResultBufferR1<ffi::S64> out) {
  out->typed_data()[0] = static_cast<int64_t>(reinterpret_cast<intptr_t>(stream));
  return ffi::Error::Success();
}
XLA_FFI_DEFINE_HANDLER(
    kStream, StreamImpl,
    ffi::Ffi::Bind().Ctx<ffi::PlatformStream<FakeStream*>>().Ret<ffi::BufferR1<ffi::S64>>());

TEST(XlaFfi, PlatformStreamIsTheCallsStream) {
  int64_t out = 0;
  FfiBuffer ret{S64, {1}, &out};
  FfiAttributes attributes;
  int marker = 0;
  FfiCallFrame call{{}, absl::MakeConstSpan(&ret, 1), attributes, &marker};
  absl::Status status = ffi::CallXlaFfiHandler(kStream, call);
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(out, static_cast<int64_t>(reinterpret_cast<intptr_t>(&marker)));

  // On the Host a call has no platform stream: the binding fails, named.
  FfiCallFrame host_call{{}, absl::MakeConstSpan(&ret, 1), attributes};
  status = ffi::CallXlaFfiHandler(kStream, host_call);
  EXPECT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr("platform stream"));
}

}  // namespace
}  // namespace axle
