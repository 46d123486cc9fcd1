//===- conv_padding_legalization_test.cc - Convolutions cuDNN's padding takes ===//
#include "axle/gpu/conv_padding_legalization.h"

#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "axle/core/literal.h"
#include "axle/core/literal_comparison.h"
#include "axle/eval/hlo_evaluator.h"
#include "axle/gpu/convolution_kernel.h"
#include "axle/gpu/cudnn_convolution.h"
#include "axle/gpu/gpu_compiler.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/ir/hlo_module.h"
#include "axle/hlo/text/hlo_parser.h"
#include "gtest/gtest.h"

namespace axle::gpu {
namespace {

std::string ConvModule(const std::string& input, const std::string& kernel,
                       const std::string& output, const std::string& attributes) {
  return absl::StrCat("HloModule m\nENTRY e {\n  x = ", input, " parameter(0)\n  w = ", kernel,
                      " parameter(1)\n  ROOT c = ", output, " convolution(x, w), ", attributes,
                      "\n}\n");
}

Literal MakeInput(const Shape& shape, int seed) {
  Literal literal(shape);
  for (int64_t i = 0; i < shape.num_elements(); ++i) {
    literal.data<float>()[i] =
        static_cast<float>((i * 7919 + int64_t{seed} * 104729) % 61) / 16.0f - 1.875f;
  }
  return literal;
}

const HloConvolutionInstruction* OnlyConvolution(const HloModule& module) {
  const HloConvolutionInstruction* found = nullptr;
  for (const HloInstruction* instruction : module.entry_computation()->instructions()) {
    if (const auto* convolution = dyn_cast<HloConvolutionInstruction>(instruction)) {
      EXPECT_EQ(found, nullptr) << "more than one convolution";
      found = convolution;
    }
  }
  return found;
}

// Runs the pass on `text`'s module: it changes it exactly when `expect_changed`,
// the module computes what it did (on the interpreter), and a changed
// convolution's padding is symmetric and taken by cuDNN: on an explicitly
// padded input, or (an input gradient) sliced.
void ExpectLegalized(const std::string& text, bool expect_changed) {
  SCOPED_TRACE(text);
  auto module = ParseAndReturnUnverifiedModule(text);
  ASSERT_TRUE(module.ok()) << module.status();
  const HloComputation& entry = *(*module)->entry_computation();
  const Literal x = MakeInput(entry.parameter_instruction(0)->shape(), 0);
  const Literal w = MakeInput(entry.parameter_instruction(1)->shape(), 1);
  HloEvaluator before_evaluator;
  auto before = before_evaluator.Evaluate(**module, {&x, &w});
  ASSERT_TRUE(before.ok()) << before.status();

  GpuConvPaddingLegalization pass;
  auto changed = pass.Run(module->get());
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_EQ(*changed, expect_changed) << (*module)->ToString();
  const HloConvolutionInstruction* convolution = OnlyConvolution(**module);
  ASSERT_NE(convolution, nullptr);
  if (expect_changed) {
    const bool sliced = entry.root_instruction()->opcode() == HloOpcode::kSlice &&
                        entry.root_instruction()->operand(0) == convolution;
    EXPECT_TRUE(convolution->operand(0)->opcode() == HloOpcode::kPad || sliced)
        << (*module)->ToString();
    for (const WindowDimension& dimension : convolution->window().dimensions()) {
      EXPECT_EQ(dimension.padding_low(), dimension.padding_high());
      EXPECT_GE(dimension.padding_low(), 0);
    }
    auto plan = MakeConvPlan(*convolution);
    ASSERT_TRUE(plan.ok()) << plan.status();
    auto cudnn = CudnnConvConfigFor(*plan);
    EXPECT_TRUE(cudnn.ok()) << cudnn.status();
  }
  HloEvaluator after_evaluator;
  auto after = after_evaluator.Evaluate(**module, {&x, &w});
  ASSERT_TRUE(after.ok()) << after.status();
  // The same products, and zeros where the window was outside the input.
  absl::Status near = LiteralsNear(*before, *after, ErrorSpec(1e-6, 1e-6));
  EXPECT_TRUE(near.ok()) << near << "\n" << (*module)->ToString();
}

TEST(GpuConvPaddingLegalizationTest, StrideTwoSamePaddingOfJax) {
  // cnn_train_step's forward convolution: NHWC, HWIO, pad 0_1.
  ExpectLegalized(
      ConvModule("f32[2,9,9,3]", "f32[3,3,3,4]", "f32[2,4,4,4]",
                 "window={size=3x3 stride=2x2 pad=0_1x0_1}, dim_labels=b01f_01io->b01f"),
      true);
}

TEST(GpuConvPaddingLegalizationTest, WeightGradientWithDilatedWindow) {
  // Its weight gradient: an 8x8 window dilated by 2, pad 0_1.
  ExpectLegalized(ConvModule("f32[2,16,16,3]", "f32[8,8,3,4]", "f32[2,3,3,4]",
                             "window={size=8x8 pad=0_1x0_1 rhs_dilate=2x2}, "
                             "dim_labels=b01f_01io->b01f"),
                  true);
}

TEST(GpuConvPaddingLegalizationTest, NegativeAndMixedPadding) {
  ExpectLegalized(ConvModule("f32[1,2,10,12]", "f32[3,2,3,3]", "f32[1,3,9,13]",
                             "window={size=3x3 pad=-1_2x2_1}, dim_labels=bf01_oi01->bf01"),
                  true);
  ExpectLegalized(ConvModule("f32[1,2,10,12]", "f32[3,2,3,3]", "f32[1,3,6,13]",
                             "window={size=3x3 pad=-1_-1x1_2}, dim_labels=bf01_oi01->bf01"),
                  true);
}

TEST(GpuConvPaddingLegalizationTest, ReversedGroupedWindow) {
  ExpectLegalized(ConvModule("f32[2,8,8,4]", "f32[3,3,2,6]", "f32[2,8,9,6]",
                             "window={size=3x3 pad=2_0x1_2 rhs_reversal=1x1}, "
                             "dim_labels=b01f_01io->b01f, feature_group_count=2"),
                  true);
}

TEST(GpuConvPaddingLegalizationTest, LeavesWhatCudnnTakesOrNever) {
  // Already symmetric.
  ExpectLegalized(ConvModule("f32[2,8,8,3]", "f32[3,3,3,4]", "f32[2,8,8,4]",
                             "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f"),
                  false);
  // An input gradient with symmetric padding, one whose padding is larger
  // than the window's span (cuDNN's forward padding would be negative), and
  // a grouped one: not changed.
  ExpectLegalized(ConvModule("f32[2,4,4,3]", "f32[3,3,3,4]", "f32[2,7,7,4]",
                             "window={size=3x3 pad=1_1x1_1 lhs_dilate=2x2}, "
                             "dim_labels=b01f_01io->b01f"),
                  false);
  ExpectLegalized(ConvModule("f32[2,4,4,3]", "f32[2,2,3,4]", "f32[2,11,11,4]",
                             "window={size=2x2 pad=3_2x3_2 lhs_dilate=2x2}, "
                             "dim_labels=b01f_01io->b01f"),
                  false);
  ExpectLegalized(ConvModule("f32[2,4,4,4]", "f32[3,3,2,4]", "f32[2,8,8,4]",
                             "window={size=3x3 pad=2_1x2_1 lhs_dilate=2x2}, "
                             "dim_labels=b01f_01io->b01f, feature_group_count=2"),
                  false);
  // One spatial dimension.
  ExpectLegalized(ConvModule("f32[2,9,3]", "f32[3,3,4]", "f32[2,4,4]",
                             "window={size=3 stride=2 pad=0_1}, dim_labels=b0f_0io->b0f"),
                  false);
  // Window wider than the padded input on one side only: the explicit pad
  // would be empty.
  ExpectLegalized(ConvModule("f32[1,1,2,2]", "f32[1,1,1,1]", "f32[1,1,0,2]",
                             "window={size=1x1 pad=-1_-1x0_0}, dim_labels=bf01_oi01->bf01"),
                  false);
}

TEST(GpuConvPaddingLegalizationTest, InputGradientPaddingMadeSymmetricWithASlice) {
  // cnn_train_step's input gradient of its stride-2 SAME (0_1) convolution:
  // pad 2_1 becomes 2_2 and the extra last row and column are sliced off.
  ExpectLegalized(ConvModule("f32[2,4,4,3]", "f32[3,3,4,3]", "f32[2,8,8,4]",
                             "window={size=3x3 pad=2_1x2_1 lhs_dilate=2x2}, "
                             "dim_labels=b01f_01oi->b01f"),
                  true);
  // The low end the larger, NCHW, reversed window, rhs dilation.
  ExpectLegalized(ConvModule("f32[1,3,5,4]", "f32[3,2,3,3]", "f32[1,2,10,8]",
                             "window={size=3x3 pad=3_2x2_1 lhs_dilate=2x2 rhs_dilate=2x1 "
                             "rhs_reversal=1x1}, dim_labels=bf01_io01->bf01"),
                  true);
}

// The JAX programs' convolutions through the GPU pipeline: none is left to
// Axle's kernel for its padding alone (each one's choice is printed).
class ConvPaddingJaxTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ConvPaddingJaxTest, NoConvolutionMissesCudnnForItsPadding) {
  const std::string path = absl::StrCat(AXLE_GPU_JAX_DIR, "/", GetParam(), ".hlo");
  std::ifstream file(path);
  if (!file) GTEST_SKIP() << "no JAX programs at '" << AXLE_GPU_JAX_DIR << "'";
  std::stringstream text;
  text << file.rdbuf();
  auto module = ParseAndReturnUnverifiedModule(text.str(), path);
  ASSERT_TRUE(module.ok()) << module.status();
  ASSERT_TRUE(PrepareGpuModule(module->get(), /*run_backend_only=*/false).ok());
  int convolutions = 0;
  for (const HloComputation* computation : (*module)->computations()) {
    for (const HloInstruction* instruction : computation->instructions()) {
      const auto* convolution = dyn_cast<HloConvolutionInstruction>(instruction);
      if (convolution == nullptr) continue;
      ++convolutions;
      auto plan = MakeConvPlan(*convolution);
      ASSERT_TRUE(plan.ok()) << plan.status();
      auto cudnn = CudnnConvConfigFor(*plan);
      std::cout << "  " << GetParam() << " " << convolution->name() << ": "
                << (cudnn.ok() ? std::string("cuDNN") : std::string(cudnn.status().message()))
                << "\n";
      if (!cudnn.ok()) {
        EXPECT_EQ(cudnn.status().message().find("padding"), std::string::npos)
            << convolution->ToString();
      }
    }
  }
  EXPECT_GT(convolutions, 0);
}

INSTANTIATE_TEST_SUITE_P(Programs, ConvPaddingJaxTest,
                         ::testing::Values("cnn_train_step", "grouped_dilated_transposed_conv",
                                           "resnet_block_infer"));

}  // namespace
}  // namespace axle::gpu
