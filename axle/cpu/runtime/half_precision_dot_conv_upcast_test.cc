//===- half_precision_dot_conv_upcast_test.cc - the upcast pass -----------===//
//
// Without native bf16 the pass turns bf16 dots (bf16 or f32 results, with
// batch dims and the dot_bf16_bf16_f32 algorithm) into f32 dots between
// converts, and f16 dots and convolutions and 8-bit float dots always;
// with native bf16 it leaves bf16 dots, and other types always, alone. The rewritten module
// computes what the interpreter computes for the original (up to the order
// of the f32 sums).
//
//===----------------------------------------------------------------------===//
#include "axle/cpu/runtime/half_precision_dot_conv_upcast.h"

#include <string>
#include <vector>

#include "absl/strings/str_replace.h"
#include "axle/cpu/cpu_test_util.h"
#include "axle/cpu/runtime/platform_test_util.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/text/hlo_parser.h"
#include "gtest/gtest.h"

namespace axle {
namespace {

constexpr const char* kAttentionScores = R"(
HloModule m
ENTRY e {
  q = bf16[2,16,4,8] parameter(0)
  k = bf16[2,16,4,8] parameter(1)
  ROOT s = f32[2,4,16,16] dot(q, k), lhs_batch_dims={0,2}, lhs_contracting_dims={3},
      rhs_batch_dims={0,2}, rhs_contracting_dims={3}, algorithm=dot_bf16_bf16_f32
})";

constexpr const char* kBf16Matmul = R"(
HloModule m
ENTRY e {
  a = bf16[33,70] parameter(0)
  b = bf16[70,17] parameter(1)
  ROOT d = bf16[33,17] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})";

// An f16 attention's batched score dot (f32 result) and its f16 value dot.
constexpr const char* kF16AttentionScores = R"(
HloModule m
ENTRY e {
  q = f16[2,12,3,1,8] parameter(0)
  k = f16[2,12,3,8] parameter(1)
  ROOT s = f32[2,3,12,1,12] dot(q, k), lhs_batch_dims={0,2}, lhs_contracting_dims={4},
      rhs_batch_dims={0,2}, rhs_contracting_dims={3}, algorithm=dot_f16_f16_f32
})";

constexpr const char* kF16Matmul = R"(
HloModule m
ENTRY e {
  a = f16[33,70] parameter(0)
  b = f16[70,17] parameter(1)
  ROOT d = f16[33,17] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})";

// An f16 convolution (channels-last, padded, grouped).
constexpr const char* kF16Convolution = R"(
HloModule m
ENTRY e {
  x = f16[2,9,9,8] parameter(0)
  k = f16[3,3,4,6] parameter(1)
  ROOT c = f16[2,9,9,6] convolution(x, k), window={size=3x3 pad=1_1x1_1},
      dim_labels=b01f_01io->b01f, feature_group_count=2
})";

// f8 training's dots: e4m3fn x e4m3fn with an f32 result, a gradient's
// e4m3fn x e5m2 (mixed 8-bit types), and one with an e5m2 result.
constexpr const char* kF8Matmul = R"(
HloModule m
ENTRY e {
  a = f8e4m3fn[33,70] parameter(0)
  b = f8e4m3fn[70,17] parameter(1)
  ROOT d = f32[33,17] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})";

constexpr const char* kF8MixedGradient = R"(
HloModule m
ENTRY e {
  a = f8e4m3fn[40,24] parameter(0)
  g = f8e5m2[40,9] parameter(1)
  ROOT d = f32[24,9] dot(a, g), lhs_contracting_dims={0}, rhs_contracting_dims={0}
})";

constexpr const char* kF8Result = R"(
HloModule m
ENTRY e {
  a = f8e5m2[4,6] parameter(0)
  b = f8e5m2[6,5] parameter(1)
  ROOT d = f8e5m2[4,5] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})";

std::unique_ptr<HloModule> Rewritten(const std::string& text, bool native, bool* changed) {
  auto module = ParseAndReturnUnverifiedModule(text);
  CHECK(module.ok()) << module.status();
  absl::StatusOr<bool> result = cpu::HalfPrecisionDotConvUpcast(native).Run(module->get());
  CHECK(result.ok()) << result.status();
  *changed = *result;
  return std::move(*module);
}

TEST(HalfPrecisionDotConvUpcast, BatchedDotWithF32ResultBecomesAnF32Dot) {
  bool changed = false;
  auto module = Rewritten(kAttentionScores, /*native=*/false, &changed);
  EXPECT_TRUE(changed);
  const HloInstruction* root = module->entry_computation()->root_instruction();
  ASSERT_EQ(root->opcode(), HloOpcode::kDot);
  EXPECT_EQ(root->shape().element_type(), F32);
  for (const HloInstruction* operand : root->operands()) {
    EXPECT_EQ(operand->opcode(), HloOpcode::kConvert);
    EXPECT_EQ(operand->shape().element_type(), F32);
  }
  EXPECT_EQ(cast<HloDotInstruction>(root)->precision_config().algorithm(),
            PrecisionConfig::ALG_UNSET);
  EXPECT_EQ(cast<HloDotInstruction>(root)->dot_dimension_numbers().lhs_batch_dimensions(),
            (std::vector<int64_t>{0, 2}));
}

TEST(HalfPrecisionDotConvUpcast, Bf16ResultIsConvertedBack) {
  bool changed = false;
  auto module = Rewritten(kBf16Matmul, /*native=*/false, &changed);
  EXPECT_TRUE(changed);
  const HloInstruction* root = module->entry_computation()->root_instruction();
  ASSERT_EQ(root->opcode(), HloOpcode::kConvert);
  EXPECT_EQ(root->shape().element_type(), BF16);
  EXPECT_EQ(root->operand(0)->opcode(), HloOpcode::kDot);
  EXPECT_EQ(root->operand(0)->shape().element_type(), F32);
}

TEST(HalfPrecisionDotConvUpcast, NativeBf16AndOtherTypesAreLeftAlone) {
  bool changed = true;
  Rewritten(kBf16Matmul, /*native=*/true, &changed);
  EXPECT_FALSE(changed);
  const std::string f32 = R"(
HloModule m
ENTRY e {
  a = f32[3,4] parameter(0)
  b = f32[4,5] parameter(1)
  ROOT d = f32[3,5] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})";
  Rewritten(f32, /*native=*/false, &changed);
  EXPECT_FALSE(changed);
}

TEST(HalfPrecisionDotConvUpcast, F16DotsBecomeF32DotsEvenWithNativeBf16) {
  for (const char* text : {kF16AttentionScores, kF16Matmul}) {
    SCOPED_TRACE(text);
    bool changed = false;
    auto module = Rewritten(text, /*native=*/true, &changed);
    EXPECT_TRUE(changed);
    const HloInstruction* root = module->entry_computation()->root_instruction();
    const HloInstruction* dot = root->opcode() == HloOpcode::kConvert ? root->operand(0) : root;
    EXPECT_EQ(root->shape().element_type(), text == kF16Matmul ? F16 : F32);
    ASSERT_EQ(dot->opcode(), HloOpcode::kDot);
    EXPECT_EQ(dot->shape().element_type(), F32);
    for (const HloInstruction* operand : dot->operands()) {
      EXPECT_EQ(operand->opcode(), HloOpcode::kConvert);
      EXPECT_EQ(operand->operand(0)->shape().element_type(), F16);
    }
    EXPECT_EQ(cast<HloDotInstruction>(dot)->precision_config().algorithm(),
              PrecisionConfig::ALG_UNSET);
  }
}

TEST(HalfPrecisionDotConvUpcast, F16ConvolutionsBecomeF32Convolutions) {
  bool changed = false;
  auto module = Rewritten(kF16Convolution, /*native=*/true, &changed);
  EXPECT_TRUE(changed);
  const HloInstruction* root = module->entry_computation()->root_instruction();
  ASSERT_EQ(root->opcode(), HloOpcode::kConvert);
  EXPECT_EQ(root->shape().element_type(), F16);
  const HloInstruction* convolution = root->operand(0);
  ASSERT_EQ(convolution->opcode(), HloOpcode::kConvolution);
  EXPECT_EQ(convolution->shape().element_type(), F32);
  EXPECT_EQ(cast<HloConvolutionInstruction>(convolution)->feature_group_count(), 2);
  // bf16 convolutions are oneDNN's: left alone.
  Rewritten(absl::StrReplaceAll(kF16Convolution, {{"f16", "bf16"}}), /*native=*/false, &changed);
  EXPECT_FALSE(changed);
}

TEST(HalfPrecisionDotConvUpcast, EightBitFloatDotsBecomeF32Dots) {
  for (const char* text : {kF8Matmul, kF8MixedGradient, kF8Result}) {
    SCOPED_TRACE(text);
    bool changed = false;
    auto module = Rewritten(text, /*native=*/true, &changed);
    EXPECT_TRUE(changed);
    const HloInstruction* root = module->entry_computation()->root_instruction();
    const HloInstruction* dot = root->opcode() == HloOpcode::kConvert ? root->operand(0) : root;
    EXPECT_EQ(root->shape().element_type(), text == kF8Result ? F8E5M2 : F32);
    ASSERT_EQ(dot->opcode(), HloOpcode::kDot);
    EXPECT_EQ(dot->shape().element_type(), F32);
    for (const HloInstruction* operand : dot->operands()) {
      EXPECT_EQ(operand->opcode(), HloOpcode::kConvert);
      EXPECT_EQ(operand->shape().element_type(), F32);
    }
  }
  // f8e8m0fnu's products leave f32's range, and f64 results sum in f64:
  // both stay.
  bool changed = true;
  Rewritten(absl::StrReplaceAll(kF8Matmul, {{"f8e4m3fn", "f8e8m0fnu"}}), /*native=*/true, &changed);
  EXPECT_FALSE(changed);
  Rewritten(absl::StrReplaceAll(kF8Matmul, {{"f32[33,17]", "f64[33,17]"}}), /*native=*/true,
            &changed);
  EXPECT_FALSE(changed);
}

TEST(HalfPrecisionDotConvUpcast, RewrittenModulesAgreeWithTheInterpreter) {
  // On this machine the cpu platform runs the pass when the CPU lacks
  // native bf16, and oneDNN's bf16 path otherwise: both agree.
  for (const char* text : {kAttentionScores, kBf16Matmul, kF16AttentionScores, kF16Matmul,
                           kF16Convolution, kF8Matmul, kF8MixedGradient}) {
    SCOPED_TRACE(text);
    testing::ExpectCpuAgrees(text, cpu::testing::MakeTestArguments(text), ErrorSpec(1e-2, 1e-2));
  }
}

}  // namespace
}  // namespace axle
