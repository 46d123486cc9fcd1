//===- host_custom_call_test.cc - Host calling conventions, end to end -----===//
//
// Each test parses a module, runs it on the interpreter with the host
// custom-call handler and checks the values the targets computed.
//
//===----------------------------------------------------------------------===//
#include "axle/runtime/host_custom_call.h"

#include <cstdint>
#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "axle/hlo/text/hlo_parser.h"
#include "axle/runtime/custom_call_status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace axle {
namespace {

using ::testing::HasSubstr;

// --- Targets -------------------------------------------------------------------

void R0F32Add2(float* out, float** in) { *out = **in + 2.0f; }

// out = in[0] + in[1] elementwise, 4 floats.
void AddVectors(void* out, const void** in) {
  auto* o = static_cast<float*>(out);
  auto* a = static_cast<const float*>(in[0]);
  auto* b = static_cast<const float*>(in[1]);
  for (int i = 0; i < 4; ++i) o[i] = a[i] + b[i];
}

void R0F32Add2Succeed(float* out, float** in, XlaCustomCallStatus* status) {
  *out = **in + 2.0f;
  XlaCustomCallStatusSetSuccess(status);
}

void FailWithValue(float*, float** in, XlaCustomCallStatus* status) {
  std::string message = absl::StrCat("Failed: ", in[0][0]);
  XlaCustomCallStatusSetFailure(status, message.data(), message.size());
}

// Writes the opaque's length and its bytes (as floats) to out.
void EchoOpaque(float* out, const void**, const char* opaque, size_t opaque_len,
                XlaCustomCallStatus*) {
  out[0] = static_cast<float>(opaque_len);
  for (size_t i = 0; i < opaque_len && i < 7; ++i) out[1 + i] = static_cast<float>(opaque[i]);
}

void FailWithOpaque(void*, const void**, const char* opaque, size_t opaque_len,
                    XlaCustomCallStatus* status) {
  std::string message =
      absl::StrCat("Fail with raw backend config str: ", std::string(opaque, opaque_len), ".");
  XlaCustomCallStatusSetFailure(status, message.data(), message.size());
}

// in[0]: (f32[2], (s32[3], f32[1]), u8[4]) -- a pointer table, nested.
// out:   ((f32[2], s32[]), f32[3]) -- a pointer table, nested.
void NestedTuples(void* out, const void** in) {
  auto* p0 = static_cast<void* const*>(in[0]);
  auto* a = static_cast<const float*>(p0[0]);
  auto* inner = static_cast<void* const*>(p0[1]);
  auto* b = static_cast<const int32_t*>(inner[0]);
  auto* c = static_cast<const float*>(inner[1]);
  auto* d = static_cast<const uint8_t*>(p0[2]);

  auto* result = static_cast<void**>(out);
  auto* result_inner = static_cast<void**>(result[0]);
  auto* r00 = static_cast<float*>(result_inner[0]);
  auto* r01 = static_cast<int32_t*>(result_inner[1]);
  auto* r1 = static_cast<float*>(result[1]);
  r00[0] = a[0] + c[0];
  r00[1] = a[1] + c[0];
  *r01 = b[0] + b[1] + b[2] + d[0] + d[1] + d[2] + d[3];
  for (int i = 0; i < 3; ++i) r1[i] = static_cast<float>(b[i]) * 10;
}

// out: (f32[4] scratch, f32[]) -- the sum of in[0]'s squares via scratch.
void SumOfSquaresWithScratch(void* out, const void** in) {
  auto* results = static_cast<void**>(out);
  auto* scratch = static_cast<float*>(results[0]);
  auto* x = static_cast<const float*>(in[0]);
  for (int i = 0; i < 4; ++i) scratch[i] = x[i] * x[i];
  *static_cast<float*>(results[1]) = scratch[0] + scratch[1] + scratch[2] + scratch[3];
}

// In place: out is in[0]; adds 1 to 3 floats; records whether they alias.
bool last_call_aliased = false;
void AddOneInPlace(void* out, const void** in) {
  last_call_aliased = out == in[0];
  auto* x = static_cast<float*>(out);
  for (int i = 0; i < 3; ++i) x[i] += 1;
}

// out = (f32[3] aliased with in[0], s32[]): bumps in[0], counts calls.
void BumpAndCount(void* out, const void** in) {
  auto* results = static_cast<void**>(out);
  last_call_aliased = results[0] == in[0];
  auto* x = static_cast<float*>(results[0]);
  for (int i = 0; i < 3; ++i) x[i] *= 2;
  *static_cast<int32_t*>(results[1]) = 7;
}

// Copies 4 floats as laid out in memory.
void CopyRaw4(void* out, const void** in) { std::memcpy(out, in[0], 4 * sizeof(float)); }

// A token operand arrives as null.
void TokenIsNull(void* out, const void** in) {
  *static_cast<int32_t*>(out) = in[0] == nullptr ? 1 : 0;
}

// Writes into its (copied) operand without aliasing.
void ScribbleOnInput(void* out, const void** in) {
  float* x = const_cast<float*>(static_cast<const float*>(in[0]));
  x[0] = -100;
  *static_cast<float*>(out) = 5;
}

XLA_CPU_REGISTER_CUSTOM_CALL_TARGET(R0F32Add2);
XLA_CPU_REGISTER_CUSTOM_CALL_TARGET(AddVectors);
XLA_CPU_REGISTER_CUSTOM_CALL_TARGET(R0F32Add2Succeed);
XLA_CPU_REGISTER_CUSTOM_CALL_TARGET(FailWithValue);
XLA_CPU_REGISTER_CUSTOM_CALL_TARGET(EchoOpaque);
XLA_CPU_REGISTER_CUSTOM_CALL_TARGET(FailWithOpaque);
XLA_CPU_REGISTER_CUSTOM_CALL_TARGET(NestedTuples);
XLA_CPU_REGISTER_CUSTOM_CALL_TARGET(SumOfSquaresWithScratch);
XLA_CPU_REGISTER_CUSTOM_CALL_TARGET(AddOneInPlace);
XLA_CPU_REGISTER_CUSTOM_CALL_TARGET(BumpAndCount);
XLA_CPU_REGISTER_CUSTOM_CALL_TARGET(CopyRaw4);
XLA_CPU_REGISTER_CUSTOM_CALL_TARGET(TokenIsNull);
XLA_CPU_REGISTER_CUSTOM_CALL_TARGET(ScribbleOnInput);
XLA_REGISTER_CUSTOM_CALL_TARGET(AddVectors, "CUDA");
XLA_REGISTER_CUSTOM_CALL_TARGET_WITH_SYM("gpu_only_target", AddVectors, "CUDA");

// --- Helpers -------------------------------------------------------------------

absl::StatusOr<Literal> RunModule(HloEvaluator& evaluator, absl::string_view text,
                                  std::vector<Literal> args = {}) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseAndReturnUnverifiedModule(text);
  if (!module.ok()) return module.status();
  std::vector<const Literal*> pointers;
  for (const Literal& arg : args) pointers.push_back(&arg);
  return evaluator.Evaluate(**module, pointers);
}

absl::StatusOr<Literal> RunModule(absl::string_view text, std::vector<Literal> args = {}) {
  HloEvaluator evaluator;
  InstallHostCustomCalls(&evaluator);
  return RunModule(evaluator, text, std::move(args));
}

// --- Conventions -------------------------------------------------------------------

TEST(HostCustomCall, OriginalConvention) {
  absl::StatusOr<Literal> result = RunModule(R"(
    HloModule m
    ENTRY e {
      c = f32[] constant(42)
      ROOT cc = f32[] custom-call(c), custom_call_target="R0F32Add2"
    })");
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->GetFirstElement<float>(), 44.0f);
}

TEST(HostCustomCall, OriginalConventionWithParameters) {
  absl::StatusOr<Literal> result =
      RunModule(R"(
    HloModule m
    ENTRY e {
      a = f32[4] parameter(0)
      b = f32[4] parameter(1)
      ROOT cc = f32[4] custom-call(a, b), custom_call_target="AddVectors"
    })",
                [] {
                  std::vector<Literal> args;
                  args.push_back(LiteralUtil::CreateR1<float>({1, 2, 3, 4}));
                  args.push_back(LiteralUtil::CreateR1<float>({10, 20, 30, 40}));
                  return args;
                }());
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(*result, LiteralUtil::CreateR1<float>({11, 22, 33, 44}));
}

TEST(HostCustomCall, StatusReturningSuccess) {
  absl::StatusOr<Literal> result = RunModule(R"(
    HloModule m
    ENTRY e {
      c = f32[] constant(42)
      ROOT cc = f32[] custom-call(c), custom_call_target="R0F32Add2Succeed",
                api_version=API_VERSION_STATUS_RETURNING
    })");
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->GetFirstElement<float>(), 44.0f);
}

constexpr char kFailingModule[] = R"(
    HloModule m
    sub {
      p = f32[] parameter(0)
      ROOT cc = f32[] custom-call(p), custom_call_target="FailWithValue",
                api_version=API_VERSION_STATUS_RETURNING
    }
    ENTRY e {
      c0 = f32[] constant(1)
      c1 = f32[] constant(2)
      call0 = f32[] call(c0), to_apply=sub
      call1 = f32[] call(c1), to_apply=sub
      ROOT sum = f32[] add(call0, call1)
    })";

TEST(HostCustomCall, FailureStatusAbortsTheRunAndTheEvaluatorStaysUsable) {
  HloEvaluator evaluator;
  InstallHostCustomCalls(&evaluator);
  absl::StatusOr<Literal> failed = RunModule(evaluator, kFailingModule);
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(failed.status().message(), HasSubstr("Failed: 1"));
  EXPECT_THAT(failed.status().message(), HasSubstr("FailWithValue"));

  absl::StatusOr<Literal> next = RunModule(evaluator, R"(
    HloModule m
    ENTRY e {
      c = f32[] constant(5)
      ROOT cc = f32[] custom-call(c), custom_call_target="R0F32Add2"
    })");
  ASSERT_TRUE(next.ok()) << next.status();
  EXPECT_EQ(next->GetFirstElement<float>(), 7.0f);
  // And the failing module fails the same way again.
  failed = RunModule(evaluator, kFailingModule);
  EXPECT_THAT(failed.status().message(), HasSubstr("Failed: 1"));
}

TEST(HostCustomCall, UnifiedConventionGetsTheOpaque) {
  absl::StatusOr<Literal> result = RunModule(R"(
    HloModule m
    ENTRY e {
      ROOT cc = f32[8] custom-call(), custom_call_target="EchoOpaque",
                api_version=API_VERSION_STATUS_RETURNING_UNIFIED, backend_config="AbC"
    })");
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(*result, LiteralUtil::CreateR1<float>({3, 'A', 'b', 'C', 0, 0, 0, 0}));
}

TEST(HostCustomCall, UnifiedConventionFailureCarriesTheOpaque) {
  absl::StatusOr<Literal> result = RunModule(R"(
    HloModule m
    ENTRY e {
      c0 = f32[] constant(1.0)
      ROOT r = f32[] custom-call(c0), custom_call_target="FailWithOpaque",
               backend_config="foo", api_version=API_VERSION_STATUS_RETURNING_UNIFIED
    })");
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(result.status().message(), HasSubstr("Fail with raw backend config str: foo."));
}

TEST(HostCustomCall, NestedTupleOperandAndResult) {
  absl::StatusOr<Literal> result = RunModule(R"(
    HloModule m
    ENTRY e {
      a = f32[2] constant({1.5, 2.5})
      b = s32[3] constant({1, 2, 3})
      c = f32[1] constant({10})
      d = u8[4] constant({4, 5, 6, 7})
      inner = (s32[3], f32[1]) tuple(b, c)
      p0 = (f32[2], (s32[3], f32[1]), u8[4]) tuple(a, inner, d)
      ROOT cc = ((f32[2], s32[]), f32[3]) custom-call(p0), custom_call_target="NestedTuples"
    })");
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->GetSubliteral({0, 0}), LiteralUtil::CreateR1<float>({11.5f, 12.5f}));
  EXPECT_EQ(result->GetSubliteral({0, 1}),
            LiteralUtil::CreateR0<int32_t>(1 + 2 + 3 + 4 + 5 + 6 + 7));
  EXPECT_EQ(result->GetSubliteral({1}), LiteralUtil::CreateR1<float>({10, 20, 30}));
}

TEST(HostCustomCall, TupleOutputAsScratch) {
  absl::StatusOr<Literal> result = RunModule(R"(
    HloModule m
    ENTRY e {
      x = f32[4] constant({1, 2, 3, 4})
      cc = (f32[4], f32[]) custom-call(x), custom_call_target="SumOfSquaresWithScratch"
      ROOT sum = f32[] get-tuple-element(cc), index=1
    })");
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->GetFirstElement<float>(), 30.0f);
}

TEST(HostCustomCall, OutputAliasesOperand) {
  last_call_aliased = false;
  absl::StatusOr<Literal> result =
      RunModule(R"(
    HloModule m
    ENTRY e {
      x = f32[3] parameter(0)
      cc = f32[3] custom-call(x), custom_call_target="AddOneInPlace",
           output_to_operand_aliasing={{}: (0, {})}
      ROOT t = (f32[3], f32[3]) tuple(cc, x)
    })",
                [] {
                  std::vector<Literal> args;
                  args.push_back(LiteralUtil::CreateR1<float>({1, 2, 3}));
                  return args;
                }());
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_TRUE(last_call_aliased);
  EXPECT_EQ(result->GetSubliteral({0}), LiteralUtil::CreateR1<float>({2, 3, 4}));
  // The parameter itself is a value: the call updated a copy of it.
  EXPECT_EQ(result->GetSubliteral({1}), LiteralUtil::CreateR1<float>({1, 2, 3}));
}

TEST(HostCustomCall, TupleOutputElementAliasesOperand) {
  last_call_aliased = false;
  absl::StatusOr<Literal> result = RunModule(R"(
    HloModule m
    ENTRY e {
      x = f32[3] constant({1, 2, 3})
      ROOT cc = (f32[3], s32[]) custom-call(x), custom_call_target="BumpAndCount",
                output_to_operand_aliasing={{0}: (0, {})}
    })");
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_TRUE(last_call_aliased);
  EXPECT_EQ(result->GetSubliteral({0}), LiteralUtil::CreateR1<float>({2, 4, 6}));
  EXPECT_EQ(result->GetSubliteral({1}), LiteralUtil::CreateR0<int32_t>(7));
}

TEST(HostCustomCall, OperandsAreCopies) {
  absl::StatusOr<Literal> result = RunModule(R"(
    HloModule m
    ENTRY e {
      x = f32[2] constant({1, 2})
      cc = f32[] custom-call(x), custom_call_target="ScribbleOnInput"
      ROOT t = (f32[], f32[2]) tuple(cc, x)
    })");
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->GetSubliteral({1}), LiteralUtil::CreateR1<float>({1, 2}));
}

TEST(HostCustomCall, BuffersAreRowMajorWithoutLayoutConstraints) {
  absl::StatusOr<Literal> result = RunModule(R"(
    HloModule m
    ENTRY e {
      x = f32[2,2]{0,1} constant({{1, 2}, {3, 4}})
      ROOT cc = f32[4] custom-call(x), custom_call_target="CopyRaw4"
    })");
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(*result, LiteralUtil::CreateR1<float>({1, 2, 3, 4}));
}

TEST(HostCustomCall, LayoutConstraintsSetTheBufferLayouts) {
  // The operand is passed column-major; the result is read back from the
  // instruction's layout ({0,1} again), so the values round-trip.
  absl::StatusOr<Literal> result = RunModule(R"(
    HloModule m
    ENTRY e {
      x = f32[2,2] constant({{1, 2}, {3, 4}})
      raw = f32[4]{0} custom-call(x), custom_call_target="CopyRaw4",
            operand_layout_constraints={f32[2,2]{0,1}}
      same = f32[2,2]{0,1} custom-call(x), custom_call_target="CopyRaw4",
             operand_layout_constraints={f32[2,2]{0,1}}
      ROOT t = (f32[4], f32[2,2]) tuple(raw, same)
    })");
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->GetSubliteral({0}), LiteralUtil::CreateR1<float>({1, 3, 2, 4}));
  EXPECT_EQ(result->GetSubliteral({1}), LiteralUtil::CreateR2<float>({{1, 2}, {3, 4}}));
}

TEST(HostCustomCall, TokenOperandIsNull) {
  absl::StatusOr<Literal> result = RunModule(R"(
    HloModule m
    ENTRY e {
      t = token[] after-all()
      ROOT cc = s32[] custom-call(t), custom_call_target="TokenIsNull"
    })");
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->GetFirstElement<int32_t>(), 1);
}

// --- Errors -------------------------------------------------------------------

TEST(HostCustomCall, UnknownTargetIsNotFoundNamingTargetAndPlatform) {
  absl::StatusOr<Literal> result = RunModule(R"(
    HloModule m
    ENTRY e {
      ROOT cc = f32[] custom-call(), custom_call_target="no_such_target"
    })");
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(result.status().message(), HasSubstr("'no_such_target'"));
  EXPECT_THAT(result.status().message(), HasSubstr("\"Host\""));
}

TEST(HostCustomCall, CudaTargetOnHostIsAClearError) {
  absl::StatusOr<Literal> result = RunModule(R"(
    HloModule m
    ENTRY e {
      ROOT cc = f32[4] custom-call(), custom_call_target="gpu_only_target"
    })");
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(result.status().message(), HasSubstr("'gpu_only_target'"));
  EXPECT_THAT(result.status().message(), HasSubstr("\"Host\""));
  EXPECT_THAT(result.status().message(), HasSubstr("registered for \"CUDA\""));
}

void ConflictA(float* out, float**) { *out = 1; }
void ConflictB(float* out, float**) { *out = 2; }

TEST(HostCustomCall, ConflictingRegistrationFailsTheModuleNamingTheTarget) {
  CustomCallTargetRegistry targets;
  targets.Register("conflicted", reinterpret_cast<void*>(&ConflictA), "Host");
  targets.Register("conflicted", reinterpret_cast<void*>(&ConflictB), "Host");
  FfiHandlerRegistry ffi;
  HloEvaluator evaluator;
  evaluator.set_custom_call_handler(MakeHostCustomCallHandler(&targets, &ffi));
  absl::StatusOr<Literal> result = RunModule(evaluator, R"(
    HloModule m
    ENTRY e {
      ROOT cc = f32[] custom-call(), custom_call_target="conflicted"
    })");
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(result.status().message(), HasSubstr("'conflicted'"));
  EXPECT_THAT(result.status().message(), HasSubstr("two different functions"));
}

TEST(HostCustomCall, TypedFfiWithoutHandlerIsNotFound) {
  absl::StatusOr<Literal> result = RunModule(R"(
    HloModule m
    ENTRY e {
      c = f32[] constant(42)
      ROOT cc = f32[] custom-call(c), custom_call_target="R0F32Add2",
                api_version=API_VERSION_TYPED_FFI
    })");
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(result.status().message(), HasSubstr("'R0F32Add2'"));
  EXPECT_THAT(result.status().message(), HasSubstr("registered as an untyped target"));
}

TEST(HostCustomCall, WithoutTheHandlerTheEvaluatorReportsNotFound) {
  HloEvaluator evaluator;
  absl::StatusOr<Literal> result = RunModule(evaluator, R"(
    HloModule m
    ENTRY e {
      c = f32[] constant(42)
      ROOT cc = f32[] custom-call(c), custom_call_target="R0F32Add2"
    })");
  EXPECT_EQ(result.status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace axle
