//===- custom_call_test.cc - Custom calls on the cpu platform --------------===//
//
// Every calling convention run by CustomCallThunk on the executable's
// buffers, checked for values and compared with the interpreter (which runs
// the same targets on literal copies): tuples, opaque, failures, aliasing,
// protection of parameters and constants, side effects and their order,
// tokens, typed FFI, layout constraints, custom calls between fusions.
//
//===----------------------------------------------------------------------===//
#include <cmath>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "axle/cpu/runtime/cpu_executable.h"
#include "axle/cpu/runtime/platform_test_util.h"
#include "axle/runtime/custom_call_registry.h"
#include "axle/runtime/custom_call_status.h"
#include "axle/runtime/ffi/ffi_api.h"
#include "axle/runtime/host_ffi.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

// Written against XLA's typed FFI C++ API: out = alpha * x (any float
// buffer, as f32), or the error `fail` asks for.
static ::axle::ffi::Error CpuCcXlaFfiScaleImpl(::axle::ffi::AnyBuffer x,
                                               ::axle::ffi::Result<::axle::ffi::AnyBuffer> out,
                                               float alpha, bool fail) {
  if (fail) return ::axle::ffi::Error(::axle::ffi::ErrorCode::kFailedPrecondition, "told to fail");
  if (x.element_type() != ::axle::ffi::F32 || out->element_count() != x.element_count()) {
    return ::axle::ffi::Error::InvalidArgument("expected f32 buffers of one size");
  }
  for (size_t i = 0; i < x.element_count(); ++i) {
    out->typed_data<float>()[i] = alpha * x.typed_data<float>()[i];
  }
  return ::axle::ffi::Error::Success();
}
XLA_FFI_DEFINE_HANDLER(kCpuCcXlaFfiScale, CpuCcXlaFfiScaleImpl,
                       ::axle::ffi::Ffi::Bind()
                           .Arg<::axle::ffi::AnyBuffer>()
                           .Ret<::axle::ffi::AnyBuffer>()
                           .Attr<float>("alpha")
                           .Attr<bool>("fail"));
XLA_FFI_REGISTER_HANDLER(::axle::ffi::GetXlaFfiApi(), "CpuCcXlaFfiScale", "cpu", kCpuCcXlaFfiScale);

namespace axle {
namespace {

using testing::ClientFor;
using testing::CompileOn;
using ::testing::ElementsAre;
using testing::ExpectCpuAgrees;
using ::testing::HasSubstr;
using testing::RunExecutable;
using testing::RunOn;

// --- Targets -------------------------------------------------------------------

// out = in[0] + 2 * in[1] (f32[8]).
void CpuCcAxpy(void* out, const void** in) {
  auto* o = static_cast<float*>(out);
  auto* a = static_cast<const float*>(in[0]);
  auto* b = static_cast<const float*>(in[1]);
  for (int i = 0; i < 8; ++i) o[i] = a[i] + 2.0f * b[i];
}

// out = -in[0] (f32[8]); fails when in[0][0] is negative.
void CpuCcNegateNonNegative(void* out, const void** in, XlaCustomCallStatus* status) {
  auto* a = static_cast<const float*>(in[0]);
  if (a[0] < 0) {
    std::string message = absl::StrCat("negative input ", a[0]);
    XlaCustomCallStatusSetFailure(status, message.data(), message.size());
    return;
  }
  for (int i = 0; i < 8; ++i) static_cast<float*>(out)[i] = -a[i];
}

// out[0] = opaque length, out[1..7] = its bytes (f32[8]).
void CpuCcEchoOpaque(void* out, const void**, const char* opaque, size_t opaque_len,
                     XlaCustomCallStatus*) {
  auto* o = static_cast<float*>(out);
  for (int i = 0; i < 8; ++i) o[i] = 0;
  o[0] = static_cast<float>(opaque_len);
  for (size_t i = 0; i < opaque_len && i < 7; ++i) o[1 + i] = static_cast<float>(opaque[i]);
}

// in[0]: (f32[2], (s32[3], f32[1])); in[1]: f32[2].
// out: (f32[2], (s32[3], f32[4])).
void CpuCcNestedTuples(void* out, const void** in) {
  auto* const* p0 = static_cast<void* const*>(in[0]);
  auto* a = static_cast<const float*>(p0[0]);
  auto* const* inner = static_cast<void* const*>(p0[1]);
  auto* s = static_cast<const int32_t*>(inner[0]);
  auto* f = static_cast<const float*>(inner[1]);
  auto* b = static_cast<const float*>(in[1]);
  void** o = static_cast<void**>(out);
  auto* o0 = static_cast<float*>(o[0]);
  void** o1 = static_cast<void**>(o[1]);
  auto* o10 = static_cast<int32_t*>(o1[0]);
  auto* o11 = static_cast<float*>(o1[1]);
  for (int i = 0; i < 2; ++i) o0[i] = a[i] * b[i] + f[0];
  for (int i = 0; i < 3; ++i) o10[i] = s[i] * 10 + i;
  for (int i = 0; i < 4; ++i) o11[i] = a[i % 2] - static_cast<float>(s[i % 3]);
}

// output_to_operand_aliasing={{}: (0, {})}: out += in[1], in place; -1000
// everywhere when `out` is not the operand's buffer.
void CpuCcAccumulate(void* out, const void** in) {
  auto* o = static_cast<float*>(out);
  auto* b = static_cast<const float*>(in[1]);
  const bool same = out == in[0];
  for (int i = 0; i < 8; ++i) o[i] = same ? o[i] + b[i] : -1000.0f;
}

// A badly behaved target: out = in[0] + in[1], then it scribbles over both
// operands.
void CpuCcScribble(void* out, const void** in) {
  auto* a = const_cast<float*>(static_cast<const float*>(in[0]));
  auto* b = const_cast<float*>(static_cast<const float*>(in[1]));
  for (int i = 0; i < 8; ++i) {
    static_cast<float*>(out)[i] = a[i] + b[i];
    a[i] = 1e6f;
    b[i] = -1e6f;
  }
}

// Appends the opaque (a number) to a log and copies in[0] to out (f32[8]).
std::mutex log_mutex;
std::vector<int> call_log;
void CpuCcLog(void* out, const void** in, const char* opaque, size_t opaque_len,
              XlaCustomCallStatus*) {
  int id = 0;
  if (!absl::SimpleAtoi(absl::string_view(opaque, opaque_len), &id)) id = -1;
  {
    std::lock_guard<std::mutex> lock(log_mutex);
    call_log.push_back(id);
  }
  if (out != nullptr && in[0] != nullptr) std::memcpy(out, in[0], 8 * sizeof(float));
}

// in[1] and out[1] are tokens: out[0] = in[0] + 1 when both are null, else
// -1000 (f32[8]).
void CpuCcTokens(void* out, const void** in) {
  void** o = static_cast<void**>(out);
  auto* a = static_cast<const float*>(in[0]);
  const bool null_tokens = in[1] == nullptr && o[1] == nullptr;
  for (int i = 0; i < 8; ++i) static_cast<float*>(o[0])[i] = null_tokens ? a[i] + 1 : -1000.0f;
}

XLA_REGISTER_CUSTOM_CALL_TARGET(CpuCcAxpy, "Host");
XLA_REGISTER_CUSTOM_CALL_TARGET(CpuCcNegateNonNegative, "Host");
XLA_REGISTER_CUSTOM_CALL_TARGET(CpuCcEchoOpaque, "Host");
XLA_REGISTER_CUSTOM_CALL_TARGET(CpuCcNestedTuples, "Host");
XLA_REGISTER_CUSTOM_CALL_TARGET(CpuCcAccumulate, "Host");
XLA_REGISTER_CUSTOM_CALL_TARGET(CpuCcScribble, "Host");
XLA_REGISTER_CUSTOM_CALL_TARGET(CpuCcLog, "Host");
XLA_REGISTER_CUSTOM_CALL_TARGET(CpuCcTokens, "Host");

// Typed FFI: args (f32[n], (s32[m], f32[k])) flattened; rets[0] = args[0] *
// scale + sum(args[1]) + args[2][0]; rets[1] = args[1] * offset.
// `fail = true` returns InvalidArgument.
absl::Status CpuCcFfiScale(const FfiCallFrame& call) {
  absl::StatusOr<bool> fail = call.attributes.Get<bool>("fail");
  if (!fail.ok()) return fail.status();
  if (*fail) return absl::InvalidArgumentError("asked to fail");
  absl::StatusOr<float> scale = call.attributes.Get<float>("scale");
  if (!scale.ok()) return scale.status();
  absl::StatusOr<int32_t> offset = call.attributes.Get<int32_t>("offset");
  if (!offset.ok()) return offset.status();
  if (call.args.size() != 3 || call.rets.size() != 2) {
    return absl::InvalidArgumentError("expected 3 args and 2 rets");
  }
  const FfiBuffer& x = call.args[0];
  const FfiBuffer& s = call.args[1];
  const FfiBuffer& f = call.args[2];
  if (x.element_type != F32 || s.element_type != S32 || call.rets[1].element_type != S32) {
    return absl::InvalidArgumentError("wrong element types");
  }
  int32_t sum = 0;
  for (int64_t i = 0; i < s.element_count(); ++i) sum += s.typed_data<int32_t>()[i];
  for (int64_t i = 0; i < x.element_count(); ++i) {
    call.rets[0].typed_data<float>()[i] =
        x.typed_data<float>()[i] * *scale + static_cast<float>(sum) + f.typed_data<float>()[0];
  }
  for (int64_t i = 0; i < s.element_count(); ++i) {
    call.rets[1].typed_data<int32_t>()[i] = s.typed_data<int32_t>()[i] * *offset;
  }
  return absl::OkStatus();
}
AXLE_FFI_REGISTER_HANDLER("CpuCcFfiScale", kHostPlatformName, CpuCcFfiScale);

// Typed FFI with an aliased result: rets[0] (= args[0]'s buffer) *= 3.
absl::Status CpuCcFfiTripleInPlace(const FfiCallFrame& call) {
  if (call.rets[0].data != call.args[0].data) {
    return absl::InternalError("the aliased result is not the operand's buffer");
  }
  for (int64_t i = 0; i < call.rets[0].element_count(); ++i)
    call.rets[0].typed_data<float>()[i] *= 3;
  return absl::OkStatus();
}
AXLE_FFI_REGISTER_HANDLER("CpuCcFfiTripleInPlace", kHostPlatformName, CpuCcFfiTripleInPlace);

// --- Helpers -------------------------------------------------------------------

Literal F32Vector(std::vector<float> values) {
  Literal literal(ShapeUtil::MakeShape(F32, {static_cast<int64_t>(values.size())}));
  for (size_t i = 0; i < values.size(); ++i) literal.data<float>()[i] = values[i];
  return literal;
}

Literal Ramp(int64_t n, float scale, float offset) {
  Literal literal(ShapeUtil::MakeShape(F32, {n}));
  for (int64_t i = 0; i < n; ++i) literal.data<float>()[i] = scale * static_cast<float>(i) + offset;
  return literal;
}

std::vector<float> Values(const Literal& literal) {
  auto data = literal.data<float>();
  return std::vector<float>(data.begin(), data.end());
}

// --- Conventions ---------------------------------------------------------------

TEST(CpuCustomCall, OriginalConvention) {
  const char* text = R"(
HloModule m
ENTRY e {
  p0 = f32[8] parameter(0)
  p1 = f32[8] parameter(1)
  ROOT cc = f32[8] custom-call(p0, p1), custom_call_target="CpuCcAxpy"
})";
  std::vector<Literal> args;
  args.push_back(Ramp(8, 1, 0));
  args.push_back(Ramp(8, 0.5f, 1));
  absl::StatusOr<Literal> result = RunOn("cpu", text, args);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->data<float>()[5], 5.0f + 2.0f * 3.5f);
  ExpectCpuAgrees(text, args);
}

TEST(CpuCustomCall, StatusReturningFailureEndsTheRunAndTheExecutableStaysUsable) {
  auto executable = CompileOn("cpu", R"(
HloModule m
ENTRY e {
  p0 = f32[8] parameter(0)
  ROOT cc = f32[8] custom-call(p0), custom_call_target="CpuCcNegateNonNegative",
      api_version=API_VERSION_STATUS_RETURNING
})");
  ASSERT_TRUE(executable.ok()) << executable.status();
  std::vector<Literal> good;
  good.push_back(Ramp(8, 1, 0));
  std::vector<Literal> bad;
  bad.push_back(Ramp(8, 1, -3));
  for (int round = 0; round < 2; ++round) {
    absl::StatusOr<Literal> ok = RunExecutable("cpu", **executable, good);
    ASSERT_TRUE(ok.ok()) << ok.status();
    EXPECT_EQ(ok->data<float>()[7], -7.0f);
    absl::StatusOr<Literal> failed = RunExecutable("cpu", **executable, bad);
    ASSERT_FALSE(failed.ok());
    EXPECT_EQ(failed.status().code(), absl::StatusCode::kInternal);
    EXPECT_THAT(failed.status().message(), HasSubstr("CpuCcNegateNonNegative"));
    EXPECT_THAT(failed.status().message(), HasSubstr("negative input -3"));
    EXPECT_THAT(failed.status().message(), HasSubstr("%cc"));
  }
  // Failed runs give their arena back: one arena served all four runs.
  auto* cpu = dynamic_cast<cpu::CpuExecutable*>((*executable)->executable());
  ASSERT_NE(cpu, nullptr);
  EXPECT_EQ(cpu->arenas_allocated(), 1);
  // The interpreter reports the same failure.
  absl::StatusOr<Literal> reference = RunOn("interpreter", R"(
HloModule m
ENTRY e {
  p0 = f32[8] parameter(0)
  ROOT cc = f32[8] custom-call(p0), custom_call_target="CpuCcNegateNonNegative",
      api_version=API_VERSION_STATUS_RETURNING
})",
                                            bad);
  EXPECT_EQ(reference.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(reference.status().message(), HasSubstr("negative input -3"));
}

TEST(CpuCustomCall, UnifiedConventionGetsTheOpaque) {
  const char* text = R"(
HloModule m
ENTRY e {
  ROOT cc = f32[8] custom-call(), custom_call_target="CpuCcEchoOpaque",
      api_version=API_VERSION_STATUS_RETURNING_UNIFIED, backend_config="AbC"
})";
  absl::StatusOr<Literal> result = RunOn("cpu", text, {});
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_THAT(Values(*result), ElementsAre(3, 'A', 'b', 'C', 0, 0, 0, 0));
  ExpectCpuAgrees(text, {});
}

TEST(CpuCustomCall, NestedTupleOperandAndTupleResult) {
  const char* text = R"(
HloModule m
ENTRY e {
  p0 = (f32[2], (s32[3], f32[1])) parameter(0)
  p1 = f32[2] parameter(1)
  cc = (f32[2], (s32[3], f32[4])) custom-call(p0, p1), custom_call_target="CpuCcNestedTuples"
  a = f32[2] get-tuple-element(cc), index=0
  inner = (s32[3], f32[4]) get-tuple-element(cc), index=1
  s = s32[3] get-tuple-element(inner), index=0
  f = f32[4] get-tuple-element(inner), index=1
  twice = f32[2] add(a, a)
  ROOT out = (f32[2], s32[3], f32[4]) tuple(twice, s, f)
})";
  std::vector<Literal> inner;
  Literal s(ShapeUtil::MakeShape(S32, {3}));
  for (int i = 0; i < 3; ++i) s.data<int32_t>()[i] = i + 1;
  inner.push_back(std::move(s));
  inner.push_back(F32Vector({0.25f}));
  std::vector<Literal> outer;
  outer.push_back(F32Vector({2, 3}));
  outer.push_back(Literal::MakeTuple(std::move(inner)));
  std::vector<Literal> args;
  args.push_back(Literal::MakeTuple(std::move(outer)));
  args.push_back(F32Vector({10, 100}));
  absl::StatusOr<Literal> result = RunOn("cpu", text, args);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_THAT(Values(result->GetSubliteral({0})), ElementsAre(40.5f, 600.5f));
  auto sv = result->GetSubliteral({1}).data<int32_t>();
  EXPECT_THAT(std::vector<int32_t>(sv.begin(), sv.end()), ElementsAre(10, 21, 32));
  EXPECT_THAT(Values(result->GetSubliteral({2})), ElementsAre(1, 1, -1, 2));
  ExpectCpuAgrees(text, args);
}

TEST(CpuCustomCall, ConcurrentRunsEachBuildTheirOwnPointerTables) {
  auto executable = CompileOn("cpu", R"(
HloModule m
ENTRY e {
  p0 = (f32[2], (s32[3], f32[1])) parameter(0)
  p1 = f32[2] parameter(1)
  ROOT cc = (f32[2], (s32[3], f32[4])) custom-call(p0, p1), custom_call_target="CpuCcNestedTuples"
})");
  ASSERT_TRUE(executable.ok()) << executable.status();
  constexpr int kThreads = 4;
  std::vector<std::thread> threads;
  std::vector<int> wrong(kThreads, 0);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::vector<Literal> inner;
      Literal s(ShapeUtil::MakeShape(S32, {3}));
      for (int i = 0; i < 3; ++i) s.data<int32_t>()[i] = t;
      inner.push_back(std::move(s));
      inner.push_back(F32Vector({0}));
      std::vector<Literal> outer;
      outer.push_back(F32Vector({1, static_cast<float>(t)}));
      outer.push_back(Literal::MakeTuple(std::move(inner)));
      std::vector<Literal> args;
      args.push_back(Literal::MakeTuple(std::move(outer)));
      args.push_back(F32Vector({1, 1}));
      for (int run = 0; run < 20; ++run) {
        absl::StatusOr<Literal> result = RunExecutable("cpu", **executable, args);
        if (!result.ok() || result->GetSubliteral({0}).data<float>()[1] != t ||
            result->GetSubliteral({1, 0}).data<int32_t>()[2] != 10 * t + 2) {
          ++wrong[t];
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_THAT(wrong, ElementsAre(0, 0, 0, 0));
}

// --- Buffers: aliasing and protected operands -------------------------------

TEST(CpuCustomCall, OutputToOperandAliasingPassesOneBuffer) {
  const char* text = R"(
HloModule m
ENTRY e {
  p0 = f32[8] parameter(0)
  p1 = f32[8] parameter(1)
  x = f32[8] multiply(p0, p0)
  ROOT cc = f32[8] custom-call(x, p1), custom_call_target="CpuCcAccumulate",
      output_to_operand_aliasing={{}: (0, {})}
})";
  std::vector<Literal> args;
  args.push_back(Ramp(8, 1, 0));
  args.push_back(Ramp(8, 0, 0.5f));
  absl::StatusOr<Literal> result = RunOn("cpu", text, args);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->data<float>()[3], 9.5f);
  ExpectCpuAgrees(text, args);
}

TEST(CpuCustomCall, AliasedParameterIsNotChangedForTheCaller) {
  auto executable = CompileOn("cpu", R"(
HloModule m
ENTRY e {
  p0 = f32[8] parameter(0)
  p1 = f32[8] parameter(1)
  ROOT cc = f32[8] custom-call(p0, p1), custom_call_target="CpuCcAccumulate",
      output_to_operand_aliasing={{}: (0, {})}
})");
  ASSERT_TRUE(executable.ok()) << executable.status();
  LocalClient* client = ClientFor("cpu");
  auto a = client->LiteralToShapedBuffer(Ramp(8, 1, 0), 0);
  auto b = client->LiteralToShapedBuffer(Ramp(8, 0, 1), 0);
  ASSERT_TRUE(a.ok() && b.ok());
  for (int run = 0; run < 2; ++run) {
    auto result = (*executable)->Run({&*a, &*b}, {});
    ASSERT_TRUE(result.ok()) << result.status();
    EXPECT_EQ(client->ShapedBufferToLiteral(*result)->data<float>()[4], 5.0f);
  }
  EXPECT_EQ(client->ShapedBufferToLiteral(*a)->data<float>()[4], 4.0f);
}

TEST(CpuCustomCall, TargetWritingItsOperandsCannotChangeParametersOrConstants) {
  auto executable = CompileOn("cpu", R"(
HloModule m
ENTRY e {
  p0 = f32[8] parameter(0)
  c = f32[8] constant({1, 2, 3, 4, 5, 6, 7, 8})
  cc = f32[8] custom-call(p0, c), custom_call_target="CpuCcScribble"
  ROOT out = f32[8] add(cc, p0)
})");
  ASSERT_TRUE(executable.ok()) << executable.status();
  LocalClient* client = ClientFor("cpu");
  auto p0 = client->LiteralToShapedBuffer(Ramp(8, 0, 10), 0);
  ASSERT_TRUE(p0.ok());
  for (int run = 0; run < 2; ++run) {
    auto result = (*executable)->Run({&*p0}, {});
    ASSERT_TRUE(result.ok()) << result.status();
    EXPECT_THAT(Values(*client->ShapedBufferToLiteral(*result)),
                ElementsAre(21, 22, 23, 24, 25, 26, 27, 28));
  }
  EXPECT_EQ(client->ShapedBufferToLiteral(*p0)->data<float>()[0], 10.0f);
}

// --- Side effects, order, tokens --------------------------------------------

TEST(CpuCustomCall, SideEffectingCallsAreKeptAndRunInProgramOrder) {
  const char* text = R"(
HloModule m
ENTRY e {
  p0 = f32[8] parameter(0)
  a = f32[8] custom-call(p0), custom_call_target="CpuCcLog", opaque="1",
      api_version=API_VERSION_STATUS_RETURNING_UNIFIED, custom_call_has_side_effect=true
  b = f32[8] add(a, p0)
  unused = f32[8] custom-call(p0), custom_call_target="CpuCcLog", opaque="2",
      api_version=API_VERSION_STATUS_RETURNING_UNIFIED, custom_call_has_side_effect=true
  c = f32[8] custom-call(b), custom_call_target="CpuCcLog", opaque="3",
      api_version=API_VERSION_STATUS_RETURNING_UNIFIED, custom_call_has_side_effect=true
  e = f32[8] exponential(p0)
  d = f32[8] custom-call(e), custom_call_target="CpuCcLog", opaque="4",
      api_version=API_VERSION_STATUS_RETURNING_UNIFIED, custom_call_has_side_effect=true
  ROOT r = f32[8] multiply(c, d)
})";
  std::vector<Literal> args;
  args.push_back(Ramp(8, 0.25f, 0));
  call_log.clear();
  absl::StatusOr<Literal> result = RunOn("cpu", text, args);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_THAT(call_log, ElementsAre(1, 2, 3, 4));
  EXPECT_FLOAT_EQ(result->data<float>()[4], 2.0f * std::exp(1.0f));
  ExpectCpuAgrees(text, args);
}

TEST(CpuCustomCall, TokensAreNullPointers) {
  const char* text = R"(
HloModule m
ENTRY e {
  p0 = f32[8] parameter(0)
  t0 = token[] after-all()
  cc = (f32[8], token[]) custom-call(p0, t0), custom_call_target="CpuCcTokens",
      custom_call_has_side_effect=true
  v = f32[8] get-tuple-element(cc), index=0
  t1 = token[] get-tuple-element(cc), index=1
  w = f32[8] add-dependency(v, t1)
  ROOT r = f32[8] add(w, p0)
})";
  std::vector<Literal> args;
  args.push_back(Ramp(8, 1, 0));
  absl::StatusOr<Literal> result = RunOn("cpu", text, args);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_THAT(Values(*result), ElementsAre(1, 3, 5, 7, 9, 11, 13, 15));
  ExpectCpuAgrees(text, args);
}

TEST(CpuCustomCall, ResultFeedsAFusionBetweenFusions) {
  const char* text = R"(
HloModule m
ENTRY e {
  p0 = f32[8] parameter(0)
  p1 = f32[8] parameter(1)
  x = f32[8] exponential(p0)
  y = f32[8] multiply(x, p1)
  cc = f32[8] custom-call(y, x), custom_call_target="CpuCcAxpy"
  t = f32[8] tanh(cc)
  ROOT out = f32[8] subtract(t, y)
})";
  std::vector<Literal> args;
  args.push_back(Ramp(8, 0.1f, -0.4f));
  args.push_back(Ramp(8, -0.2f, 0.3f));
  ExpectCpuAgrees(text, args);
}

TEST(CpuCustomCall, RunsInsideAWhileBody) {
  // x <- x + 2 * x, three times: the call runs once per iteration on the
  // loop state.
  const char* text = R"(
HloModule m
cond {
  s = (s32[], f32[8]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[8]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[8] get-tuple-element(s), index=1
  one = s32[] constant(1)
  next = s32[] add(i, one)
  cc = f32[8] custom-call(x, x), custom_call_target="CpuCcAxpy"
  ROOT t = (s32[], f32[8]) tuple(next, cc)
}
ENTRY e {
  p0 = f32[8] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[8]) tuple(zero, p0)
  w = (s32[], f32[8]) while(init), condition=cond, body=body
  ROOT x = f32[8] get-tuple-element(w), index=1
})";
  std::vector<Literal> args;
  args.push_back(Ramp(8, 1, 0));
  absl::StatusOr<Literal> result = RunOn("cpu", text, args);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->data<float>()[4], 4.0f * 27.0f);
  ExpectCpuAgrees(text, args);
}

// --- Typed FFI -----------------------------------------------------------------

constexpr char kFfiModule[] = R"(
HloModule m
ENTRY e {
  p0 = f32[4] parameter(0)
  p1 = (s32[3], f32[1]) parameter(1)
  cc = (f32[4], s32[3]) custom-call(p0, p1), custom_call_target="CpuCcFfiScale",
      api_version=API_VERSION_TYPED_FFI,
      backend_config="{scale = 2.5 : f32, offset = 7 : i32, fail = FAIL}"
  a = f32[4] get-tuple-element(cc), index=0
  b = s32[3] get-tuple-element(cc), index=1
  ROOT out = (f32[4], s32[3]) tuple(a, b)
})";

std::vector<Literal> FfiArguments() {
  std::vector<Literal> inner;
  Literal s(ShapeUtil::MakeShape(S32, {3}));
  for (int i = 0; i < 3; ++i) s.data<int32_t>()[i] = i + 1;
  inner.push_back(std::move(s));
  inner.push_back(F32Vector({0.5f}));
  std::vector<Literal> args;
  args.push_back(F32Vector({0, 1, 2, 3}));
  args.push_back(Literal::MakeTuple(std::move(inner)));
  return args;
}

std::string FfiModule(bool fail) {
  std::string text = kFfiModule;
  text.replace(text.find("FAIL"), 4, fail ? "true" : "false");
  return text;
}

TEST(CpuCustomCall, TypedFfiWithAttributes) {
  absl::StatusOr<Literal> result = RunOn("cpu", FfiModule(false), FfiArguments());
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_THAT(Values(result->GetSubliteral({0})), ElementsAre(6.5f, 9, 11.5f, 14));
  auto s = result->GetSubliteral({1}).data<int32_t>();
  EXPECT_THAT(std::vector<int32_t>(s.begin(), s.end()), ElementsAre(7, 14, 21));
  ExpectCpuAgrees(FfiModule(false), FfiArguments());
}

TEST(CpuCustomCall, TypedFfiErrorKeepsItsCode) {
  absl::StatusOr<Literal> result = RunOn("cpu", FfiModule(true), FfiArguments());
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(result.status().message(), HasSubstr("CpuCcFfiScale"));
  EXPECT_THAT(result.status().message(), HasSubstr("asked to fail"));
}

TEST(CpuCustomCall, TypedFfiAliasedResultIsTheOperandBuffer) {
  const char* text = R"(
HloModule m
ENTRY e {
  p0 = f32[4] parameter(0)
  ROOT cc = f32[4] custom-call(p0), custom_call_target="CpuCcFfiTripleInPlace",
      api_version=API_VERSION_TYPED_FFI, output_to_operand_aliasing={{}: (0, {})}
})";
  std::vector<Literal> args;
  args.push_back(F32Vector({1, 2, 3, 4}));
  absl::StatusOr<Literal> result = RunOn("cpu", text, args);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_THAT(Values(*result), ElementsAre(3, 6, 9, 12));
  ExpectCpuAgrees(text, args);
}

TEST(CpuCustomCall, XlaFfiApiHandlerWithAttributesAndError) {
  const char* text = R"(
HloModule m
ENTRY e {
  p0 = f32[2,3] parameter(0)
  ROOT cc = f32[2,3] custom-call(p0), custom_call_target="CpuCcXlaFfiScale",
      api_version=API_VERSION_TYPED_FFI, backend_config="{alpha = 1.5 : f32, fail = false}"
})";
  std::vector<Literal> args;
  args.push_back(Literal(ShapeUtil::MakeShape(F32, {2, 3})));
  for (int i = 0; i < 6; ++i) args[0].data<float>()[i] = static_cast<float>(i);
  absl::StatusOr<Literal> result = RunOn("cpu", text, args);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_THAT(Values(*result), ElementsAre(0, 1.5f, 3, 4.5f, 6, 7.5f));
  ExpectCpuAgrees(text, args);

  std::string failing = text;
  failing.replace(failing.find("fail = false"), 12, "fail = true");
  result = RunOn("cpu", failing, args);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(result.status().message(), HasSubstr("told to fail"));
}

// --- Layouts and errors --------------------------------------------------------

TEST(CpuCustomCall, DescendingLayoutConstraintsRun) {
  const char* text = R"(
HloModule m
ENTRY e {
  p0 = f32[8] parameter(0)
  p1 = f32[8] parameter(1)
  ROOT cc = f32[8]{0} custom-call(p0, p1), custom_call_target="CpuCcAxpy",
      operand_layout_constraints={f32[8]{0}, f32[8]{0}}
})";
  std::vector<Literal> args;
  args.push_back(Ramp(8, 1, 0));
  args.push_back(Ramp(8, 1, 1));
  ExpectCpuAgrees(text, args);
}

TEST(CpuCustomCall, OtherLayoutConstraintsPassOperandsInTheirLayouts) {
  // Operand 0 is constrained to column-major: the target reads p0's
  // elements in column-major order (0, 4, 1, 5, ...), p1's and the result's
  // in row-major order, on both platforms.
  const char* text = R"(
HloModule m
ENTRY e {
  p0 = f32[2,4] parameter(0)
  p1 = f32[2,4] parameter(1)
  ROOT cc = f32[2,4]{1,0} custom-call(p0, p1), custom_call_target="CpuCcAxpy",
      operand_layout_constraints={f32[2,4]{0,1}, f32[2,4]{1,0}}
})";
  std::vector<Literal> args;
  args.push_back(Ramp(8, 1, 0).Reshape({2, 4}).value());
  args.push_back(Ramp(8, 0, 1).Reshape({2, 4}).value());
  ExpectCpuAgrees(text, args);
  absl::StatusOr<Literal> result = RunOn("cpu", text, args);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_THAT(Values(*result), ElementsAre(2, 6, 3, 7, 4, 8, 5, 9));
}

TEST(CpuCustomCall, UnknownTargetIsNotFoundAtCompileTime) {
  auto executable = CompileOn("cpu", R"(
HloModule m
ENTRY e {
  p0 = f32[8] parameter(0)
  ROOT cc = f32[8] custom-call(p0), custom_call_target="CpuCcNoSuchTarget"
})");
  ASSERT_FALSE(executable.ok());
  EXPECT_EQ(executable.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(executable.status().message(), HasSubstr("CpuCcNoSuchTarget"));
  EXPECT_THAT(executable.status().message(), HasSubstr("\"Host\""));
}

}  // namespace
}  // namespace axle
