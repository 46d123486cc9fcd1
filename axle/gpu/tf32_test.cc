//===- tf32_test.cc - Which f32 products the cuda backend computes in TF32 -===//
//
// Without a GPU: XLA:GPU's precision rule (DEFAULT and HIGH: TF32; HIGHEST
// or an f32 algorithm: exact f32) as the gemm plan's compute type, the
// convolution thunk's cuDNN math type and XLA's cuDNN custom calls see it;
// which result elements read a TF32 product; the comparison's TF32 bounds.
//
//===----------------------------------------------------------------------===//
#include "axle/gpu/tf32.h"

#include <cmath>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "axle/core/literal.h"
#include "axle/gpu/convolution_thunk.h"
#include "axle/gpu/cudnn_convolution.h"
#include "axle/gpu/gemm_plan.h"
#include "axle/hlo/text/hlo_parser.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace axle::gpu {
namespace {

using ::testing::HasSubstr;

std::unique_ptr<HloModule> Parse(const std::string& text) {
  auto module = ParseAndReturnUnverifiedModule(text);
  EXPECT_TRUE(module.ok()) << module.status() << "\n" << text;
  return module.ok() ? *std::move(module) : nullptr;
}

std::string Dot(const std::string& type, const std::string& out, const std::string& precision) {
  return absl::StrCat("HloModule m\nENTRY e {\n  a = ", type, "[8,16] parameter(0)\n  b = ", type,
                      "[16,4] parameter(1)\n  ROOT d = ", out,
                      "[8,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}",
                      precision, "\n}\n");
}

std::string Convolution(const std::string& type, const std::string& precision) {
  return absl::StrCat("HloModule m\nENTRY e {\n  x = ", type,
                      "[2,8,8,4] parameter(0)\n  w = ", type,
                      "[3,3,4,8] parameter(1)\n  ROOT c = ", type,
                      "[2,8,8,8] convolution(x, w), window={size=3x3 pad=1_1x1_1}, "
                      "dim_labels=b01f_01io->b01f",
                      precision, "\n}\n");
}

TEST(Tf32Test, PrecisionRuleIsXlaGpus) {
  PrecisionConfig config;
  EXPECT_TRUE(PrecisionAllowsTf32(config));  // no precisions: DEFAULT
  config.add_operand_precision(PrecisionConfig::DEFAULT);
  config.add_operand_precision(PrecisionConfig::HIGH);
  EXPECT_TRUE(PrecisionAllowsTf32(config));
  config.add_operand_precision(PrecisionConfig::HIGHEST);
  EXPECT_FALSE(PrecisionAllowsTf32(config));

  PrecisionConfig algorithm;
  algorithm.set_algorithm(PrecisionConfig::ALG_DOT_TF32_TF32_F32);
  EXPECT_TRUE(PrecisionAllowsTf32(algorithm));
  algorithm.set_algorithm(PrecisionConfig::ALG_DOT_F32_F32_F32);
  EXPECT_FALSE(PrecisionAllowsTf32(algorithm));
  algorithm.set_algorithm(PrecisionConfig::ALG_DOT_TF32_TF32_F32_X3);
  EXPECT_FALSE(PrecisionAllowsTf32(algorithm));
}

TEST(Tf32Test, DotsOfF32AndC64AtDefaultOrHighComputeInTf32) {
  struct Case {
    std::string type, out, precision;
    bool tf32;
  };
  for (const Case& c : std::vector<Case>{
           {"f32", "f32", "", true},
           {"f32", "f32", ", operand_precision={default,default}", true},
           {"f32", "f32", ", operand_precision={high,high}", true},
           {"f32", "f32", ", operand_precision={highest,highest}", false},
           {"f32", "f32", ", operand_precision={default,highest}", false},
           {"f32", "f32", ", algorithm=dot_tf32_tf32_f32", true},
           {"f32", "f32", ", algorithm=dot_f32_f32_f32", false},
           {"c64", "c64", "", true},
           {"f64", "f64", "", false},
           {"bf16", "f32", "", false},
           {"f16", "f16", "", false},
       }) {
    SCOPED_TRACE(c.type + " -> " + c.out + c.precision);
    std::unique_ptr<HloModule> module = Parse(Dot(c.type, c.out, c.precision));
    ASSERT_NE(module, nullptr);
    const HloInstruction& dot = *module->entry_computation()->root_instruction();
    EXPECT_EQ(ComputesInTf32(dot), c.tf32);
    absl::StatusOr<GemmPlan> allowed = MakeGemmPlan(dot, /*allow_tf32=*/true);
    ASSERT_TRUE(allowed.ok()) << allowed.status();
    EXPECT_EQ(allowed->compute == GemmCompute::kTf32, c.tf32);
    EXPECT_THAT(allowed->ToString(), HasSubstr(c.tf32 ? "accumulating tf32" : "accumulating f"));
    // AXLE_GPU_TF32=0: exact f32 whatever the precision.
    absl::StatusOr<GemmPlan> exact = MakeGemmPlan(dot, /*allow_tf32=*/false);
    ASSERT_TRUE(exact.ok()) << exact.status();
    EXPECT_NE(exact->compute, GemmCompute::kTf32);
  }
}

TEST(Tf32Test, ConvolutionsTakeCudnnsTf32MathAtDefaultOrHigh) {
  struct Case {
    std::string type, precision;
    bool tf32;
  };
  for (const Case& c : std::vector<Case>{{"f32", "", true},
                                         {"f32", ", operand_precision={high,high}", true},
                                         {"f32", ", operand_precision={highest,highest}", false},
                                         {"f32", ", operand_precision={default,highest}", false},
                                         {"f16", "", false}}) {
    SCOPED_TRACE(c.type + c.precision);
    std::unique_ptr<HloModule> module = Parse(Convolution(c.type, c.precision));
    ASSERT_NE(module, nullptr);
    const HloInstruction& conv = *module->entry_computation()->root_instruction();
    EXPECT_EQ(ComputesInTf32(conv), c.tf32);
    absl::StatusOr<std::unique_ptr<ConvolutionThunk>> thunk =
        MakeConvolutionThunkWithBackend(conv, {{0, 1}, {2}}, ConvolutionBackend::kAuto);
    ASSERT_TRUE(thunk.ok()) << thunk.status();
    EXPECT_EQ((*thunk)->cudnn_allows_tf32(), c.tf32 && Tf32Enabled());
  }
  CudnnConvConfig config;
  config.type = F32;
  EXPECT_EQ(CudnnMathFor(config), CudnnMath::kFma);
  config.allow_tf32 = true;
  EXPECT_EQ(CudnnMathFor(config), CudnnMath::kDefault);
  config.type = BF16;
  EXPECT_EQ(CudnnMathFor(config), CudnnMath::kTensorOp);
}

TEST(Tf32Test, CudnnCustomCallsFollowTheSameRule) {
  const std::string call = R"(
HloModule m
ENTRY e {
  x = f32[2,8,8,4] parameter(0)
  w = f32[3,3,4,8] parameter(1)
  c = (f32[2,8,8,8], u8[0]) custom-call(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, custom_call_target="__cudnn$convForward"PRECISION
  ROOT r = f32[2,8,8,8] get-tuple-element(c), index=0
})";
  for (const auto& [precision, tf32] : std::vector<std::pair<std::string, bool>>{
           {"", true}, {", operand_precision={highest,highest}", false}}) {
    std::string text = call;
    text.replace(text.find("PRECISION"), 9, precision);
    std::unique_ptr<HloModule> module = Parse(text);
    ASSERT_NE(module, nullptr);
    const HloInstruction& custom_call =
        *module->entry_computation()->root_instruction()->operand(0);
    EXPECT_EQ(ComputesInTf32(custom_call), tf32) << precision;
    EXPECT_EQ(ResultElementsReadingTf32(*module), std::vector<bool>{tf32});
  }
}

TEST(Tf32Test, FindsTheResultElementsThatReadTf32Products) {
  std::unique_ptr<HloModule> module = Parse(R"(
HloModule m
body {
  s = (s32[], f32[4,4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  m = f32[4,4] get-tuple-element(s), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  d = f32[4,4] dot(m, m), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = (s32[], f32[4,4]) tuple(j, d)
}
cond {
  s = (s32[], f32[4,4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  three = s32[] constant(3)
  ROOT lt = pred[] compare(i, three), direction=LT
}
ENTRY e {
  a = f32[4,4] parameter(0)
  b = f32[4,4] parameter(1)
  exact = f32[4,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}, operand_precision={highest,highest}
  fast = f32[4,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  relu = f32[4,4] maximum(fast, b)
  zero = s32[] constant(0)
  init = (s32[], f32[4,4]) tuple(zero, a)
  loop = (s32[], f32[4,4]) while(init), condition=cond, body=body
  looped = f32[4,4] get-tuple-element(loop), index=1
  sum = f32[4,4] add(a, b)
  ROOT r = (f32[4,4], f32[4,4], f32[4,4], f32[4,4]) tuple(exact, relu, looped, sum)
})");
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(ResultElementsReadingTf32(*module), (std::vector<bool>{false, true, true, false}));
}

TEST(Tf32Test, BoundsWidenOnlyTheElementsThatReadTf32) {
  const ErrorSpec base(1e-3, 1e-3);
  const Literal expected = LiteralUtil::CreateR1<float>({3, -4, 0});
  const ErrorSpec widened = Tf32ErrorSpec(base, expected);
  EXPECT_DOUBLE_EQ(widened.rel, 1e-2);
  EXPECT_NEAR(widened.abs, 1e-2 * std::sqrt(25.0 / 3), 1e-9);  // 1e-2 * rms
  const ErrorSpec small = Tf32ErrorSpec(ErrorSpec(1.0, 0.5), expected);
  EXPECT_DOUBLE_EQ(small.abs, 1.0);  // never narrower than the base
  EXPECT_DOUBLE_EQ(small.rel, 0.5);

  std::unique_ptr<HloModule> module = Parse(R"(
HloModule m
ENTRY e {
  a = f32[3,2] parameter(0)
  b = f32[2] parameter(1)
  d = f32[3] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  n = f32[3] negate(d)
  ROOT t = (f32[3], f32[3]) tuple(n, d)
})");
  ASSERT_NE(module, nullptr);
  const Literal exact = LiteralUtil::MakeTuple(
      {LiteralUtil::CreateR1<float>({100, -50, 0}), LiteralUtil::CreateR1<float>({1, 2, 3})});
  // 0.5% off, and an element near zero off by a TF32-sized 0.1.
  const Literal tf32 = LiteralUtil::MakeTuple({LiteralUtil::CreateR1<float>({100.5f, -50.2f, 0.1f}),
                                               LiteralUtil::CreateR1<float>({1.004f, 2, 3})});
  EXPECT_TRUE(LiteralsNearAllowingTf32(*module, exact, tf32, base, true).ok());
  absl::Status exact_bounds = LiteralsNearAllowingTf32(*module, exact, tf32, base, false);
  EXPECT_FALSE(exact_bounds.ok());

  std::unique_ptr<HloModule> mixed = Parse(R"(
HloModule m
ENTRY e {
  a = f32[3,2] parameter(0)
  b = f32[2] parameter(1)
  d = f32[3] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  s = f32[3] reduce-precision(d), exponent_bits=8, mantissa_bits=23
  c = f32[3] constant({1, 2, 3})
  ROOT t = (f32[3], f32[3]) tuple(s, c)
})");
  ASSERT_NE(mixed, nullptr);
  // The element that reads no TF32 product keeps the base bounds.
  absl::Status kept = LiteralsNearAllowingTf32(*mixed, exact, tf32, base, true);
  EXPECT_FALSE(kept.ok());
  EXPECT_THAT(kept.message(), HasSubstr("result element 1"));
}

}  // namespace
}  // namespace axle::gpu
