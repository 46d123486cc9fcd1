//===- cudnn_conv_calls_test.cc - XLA:GPU's __cudnn$conv* calls -----------===//
//
// Without a GPU: the backend_config parser; each call, rewritten by
// GpuCudnnConvCallsToHlo, computes on the interpreter exactly what the plain
// `convolution` (and elementwise ops) that XLA's rewriters started from
// computes; those plain gradients are the forward convolution's adjoints
// (<dy, x * w> = <dx, x> = <dw, w>); the cuda pipeline takes modules of
// these calls; what the rewrite cannot express, and the cpu and the
// interpreter, are Unimplemented naming the instruction or target.
//
// On a GPU (CudnnConvCallsDeviceTest): each call on cuda against the plain
// convolution on cuda, and against the interpreter.
//
//===----------------------------------------------------------------------===//
#include "axle/gpu/cudnn_conv_calls.h"

#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "axle/base/status_macros.h"
#include "axle/core/literal.h"
#include "axle/core/literal_comparison.h"
#include "axle/eval/hlo_evaluator.h"
#include "axle/gpu/convolution_kernel.h"
#include "axle/gpu/gpu_compiler.h"
#include "axle/gpu/gpu_executable_test_util.h"
#include "axle/gpu/ptxas.h"
#include "axle/gpu/tf32.h"
#include "axle/hlo/ir/hlo_module.h"
#include "axle/hlo/text/hlo_parser.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace axle::gpu {
namespace {

using test::ExpectModulesCompileWithoutADevice;
using test::GpuExecutableTest;
using test::MakeInput;
using test::TestModule;
using ::testing::HasSubstr;
using ::testing::Not;

// A call and the plain HLO it stands for, over the same parameters.
struct CallCase {
  const char* name;
  std::string call;
  std::string plain;
};

constexpr char kConfig[] =
    R"({"operation_queue_id":"0","wait_on_operation_queues":[],"cudnn_conv_backend_config":{"activation_mode":"kNone","conv_result_scale":1,"side_input_scale":0,"leakyrelu_alpha":0},"force_earliest_schedule":false})";

std::string CallModule(const std::string& parameters, const std::string& result,
                       const std::string& call) {
  return absl::StrCat("HloModule m\nENTRY e {\n", parameters, "  c = (", result,
                      ", u8[256]) custom-call(", call, "\n  ROOT r = ", result,
                      " get-tuple-element(c), index=0\n}\n");
}

std::string PlainModule(const std::string& parameters, const std::string& body) {
  return absl::StrCat("HloModule m\nENTRY e {\n", parameters, body, "}\n");
}

std::vector<CallCase> Cases() {
  const std::string xw = "  x = f32[2,9,9,4] parameter(0)\n  w = f32[3,3,4,8] parameter(1)\n";
  const std::string strided =
      "window={size=3x3 stride=2x2 pad=1_1x1_1}, dim_labels=b01f_01io->b01f";
  std::vector<CallCase> cases;
  cases.push_back({"forward_nhwc_strided",
                   CallModule(xw, "f32[2,5,5,8]",
                              absl::StrCat("x, w), ", strided,
                                           R"(, custom_call_target="__cudnn$convForward", )",
                                           "backend_config=", kConfig)),
                   PlainModule(xw, absl::StrCat("  ROOT y = f32[2,5,5,8] convolution(x, w), ",
                                                strided, "\n"))});
  const std::string nchw = "  x = f32[2,4,7,7] parameter(0)\n  w = f32[8,4,3,3] parameter(1)\n";
  const std::string nchw_window = "window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01";
  cases.push_back(
      {"forward_nchw_scaled",
       CallModule(nchw, "f32[2,8,7,7]",
                  absl::StrCat(
                      "x, w), ", nchw_window, R"(, custom_call_target="__cudnn$convForward", )",
                      R"(backend_config={"cudnn_conv_backend_config":{"conv_result_scale":0.5}})")),
       PlainModule(nchw, absl::StrCat("  y = f32[2,8,7,7] convolution(x, w), ", nchw_window,
                                      "\n  h = f32[] constant(0.5)\n"
                                      "  b = f32[2,8,7,7] broadcast(h), dimensions={}\n"
                                      "  ROOT s = f32[2,8,7,7] multiply(y, b)\n"))});
  const std::string fused_parameters =
      xw + "  bias = f32[8] parameter(2)\n  side = f32[2,9,9,8] parameter(3)\n";
  const std::string same = "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f";
  cases.push_back(
      {"bias_side_input_relu",
       CallModule(
           fused_parameters, "f32[2,9,9,8]",
           absl::StrCat(
               "x, w, bias, side), ", same,
               R"(, custom_call_target="__cudnn$convBiasActivationForward", )",
               R"(backend_config={"cudnn_conv_backend_config":{"activation_mode":"kRelu","conv_result_scale":1,"side_input_scale":0.5,"leakyrelu_alpha":0}})")),
       PlainModule(fused_parameters,
                   absl::StrCat("  y = f32[2,9,9,8] convolution(x, w), ", same,
                                "\n  h = f32[] constant(0.5)\n"
                                "  hb = f32[2,9,9,8] broadcast(h), dimensions={}\n"
                                "  hs = f32[2,9,9,8] multiply(side, hb)\n"
                                "  ys = f32[2,9,9,8] add(y, hs)\n"
                                "  bb = f32[2,9,9,8] broadcast(bias), dimensions={3}\n"
                                "  yb = f32[2,9,9,8] add(ys, bb)\n"
                                "  z = f32[] constant(0)\n"
                                "  zb = f32[2,9,9,8] broadcast(z), dimensions={}\n"
                                "  ROOT relu = f32[2,9,9,8] maximum(yb, zb)\n"))});
  cases.push_back(
      {"bias_leaky_relu",
       CallModule(
           xw + "  bias = f32[8] parameter(2)\n", "f32[2,9,9,8]",
           absl::StrCat(
               "x, w, bias), ", same,
               R"(, custom_call_target="__cudnn$convBiasActivationForward", )",
               R"(backend_config={"cudnn_conv_backend_config":{"activation_mode":"kLeakyRelu","conv_result_scale":1,"side_input_scale":0,"leakyrelu_alpha":0.25}})")),
       PlainModule(xw + "  bias = f32[8] parameter(2)\n",
                   absl::StrCat("  y = f32[2,9,9,8] convolution(x, w), ", same,
                                "\n  bb = f32[2,9,9,8] broadcast(bias), dimensions={3}\n"
                                "  yb = f32[2,9,9,8] add(y, bb)\n"
                                "  a = f32[] constant(0.25)\n"
                                "  ab = f32[2,9,9,8] broadcast(a), dimensions={}\n"
                                "  ya = f32[2,9,9,8] multiply(yb, ab)\n"
                                "  z = f32[] constant(0)\n"
                                "  zb = f32[2,9,9,8] broadcast(z), dimensions={}\n"
                                "  gt = pred[2,9,9,8] compare(yb, zb), direction=GT\n"
                                "  ROOT leaky = f32[2,9,9,8] select(gt, yb, ya)\n"))});
  // The gradients of the strided forward convolution above.
  const std::string dyw = "  dy = f32[2,5,5,8] parameter(0)\n  w = f32[3,3,4,8] parameter(1)\n";
  cases.push_back({"backward_input_strided",
                   CallModule(dyw, "f32[2,9,9,4]",
                              absl::StrCat("dy, w), ", strided,
                                           R"(, custom_call_target="__cudnn$convBackwardInput", )",
                                           "backend_config=", kConfig)),
                   PlainModule(dyw,
                               "  ROOT dx = f32[2,9,9,4] convolution(dy, w), window={size=3x3 "
                               "pad=1_1x1_1 lhs_dilate=2x2 rhs_reversal=1x1}, "
                               "dim_labels=b01f_01oi->b01f\n")});
  const std::string xdy = "  x = f32[2,9,9,4] parameter(0)\n  dy = f32[2,5,5,8] parameter(1)\n";
  cases.push_back({"backward_filter_strided",
                   CallModule(xdy, "f32[3,3,4,8]",
                              absl::StrCat("x, dy), ", strided,
                                           R"(, custom_call_target="__cudnn$convBackwardFilter", )",
                                           "backend_config=", kConfig)),
                   PlainModule(xdy,
                               "  ROOT dw = f32[3,3,4,8] convolution(x, dy), window={size=5x5 "
                               "pad=1_1x1_1 rhs_dilate=2x2}, dim_labels=f01b_i01o->01bf\n")});
  const std::string grouped = "  x = f32[2,9,9,4] parameter(0)\n  dy = f32[2,9,9,8] parameter(1)\n";
  cases.push_back({"backward_filter_grouped",
                   CallModule(grouped, "f32[3,3,2,8]",
                              absl::StrCat("x, dy), ", same, R"(, feature_group_count=2, )",
                                           R"(custom_call_target="__cudnn$convBackwardFilter", )",
                                           "backend_config=", kConfig)),
                   PlainModule(grouped,
                               "  ROOT dw = f32[3,3,2,8] convolution(x, dy), window={size=9x9 "
                               "pad=1_1x1_1}, dim_labels=f01b_i01o->01bf, batch_group_count=2\n")});
  // cuDNN's int8 convolutions: s8 products summed in s32, then saturated
  // to s8, or converted to f32 and scaled; the vectorized form (INT8x4)
  // carries the features' vectors in a trailing dimension.
  const std::string int8_xw = "  x = s8[2,6,6,8] parameter(0)\n  w = s8[3,3,8,4] parameter(1)\n";
  const std::string int8_plain_conv =
      "  xc = s32[2,6,6,8] convert(x)\n  wc = s32[3,3,8,4] convert(w)\n"
      "  y = s32[2,6,6,4] convolution(xc, wc), window={size=3x3 pad=1_1x1_1}, "
      "dim_labels=b01f_01io->b01f\n";
  const std::string saturate =
      "  lo = s32[] constant(-128)\n  hi = s32[] constant(127)\n"
      "  lob = s32[2,6,6,4] broadcast(lo), dimensions={}\n"
      "  hib = s32[2,6,6,4] broadcast(hi), dimensions={}\n"
      "  ymax = s32[2,6,6,4] maximum(y, lob)\n  ymin = s32[2,6,6,4] minimum(ymax, hib)\n";
  cases.push_back(
      {"int8_saturating",
       CallModule(int8_xw, "s8[2,6,6,4]",
                  absl::StrCat("x, w), ", same, R"(, custom_call_target="__cudnn$convForward", )",
                               "backend_config=", kConfig)),
       PlainModule(int8_xw, absl::StrCat(int8_plain_conv, saturate,
                                         "  ROOT r = s8[2,6,6,4] convert(ymin)\n"))});
  cases.push_back(
      {"int8_to_f32_scaled",
       CallModule(
           int8_xw, "f32[2,6,6,4]",
           absl::StrCat(
               "x, w), ", same, R"(, custom_call_target="__cudnn$convForward", )",
               R"(backend_config={"cudnn_conv_backend_config":{"conv_result_scale":0.25}})")),
       PlainModule(int8_xw, absl::StrCat(int8_plain_conv,
                                         "  yf = f32[2,6,6,4] convert(y)\n"
                                         "  q = f32[] constant(0.25)\n"
                                         "  qb = f32[2,6,6,4] broadcast(q), dimensions={}\n"
                                         "  ROOT r = f32[2,6,6,4] multiply(yf, qb)\n"))});
  const std::string vect_xw =
      "  x = s8[2,6,6,2,4] parameter(0)\n  w = s8[4,3,3,2,4] parameter(1)\n";
  const std::string vect_window = "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_o01i->b01f";
  cases.push_back(
      {"int8x4_vectorized",
       CallModule(
           vect_xw, "s8[2,6,6,1,4]",
           absl::StrCat("x, w), ", vect_window, R"(, custom_call_target="__cudnn$convForward", )",
                        "backend_config=", kConfig)),
       PlainModule(vect_xw,
                   absl::StrCat("  xm = s8[2,6,6,8] reshape(x)\n  wm = s8[4,3,3,8] reshape(w)\n"
                                "  xc = s32[2,6,6,8] convert(xm)\n  wc = s32[4,3,3,8] convert(wm)\n"
                                "  y = s32[2,6,6,4] convolution(xc, wc), ",
                                vect_window, "\n", saturate,
                                "  ys = s8[2,6,6,4] convert(ymin)\n"
                                "  ROOT r = s8[2,6,6,1,4] reshape(ys)\n"))});
  return cases;
}

// Inputs of every parameter of `module`: floats in [-2, 2), s8 over its
// whole range (so that int8 sums saturate).
std::vector<Literal> Inputs(const HloModule& module) {
  std::vector<Literal> inputs;
  for (const HloInstruction* parameter : module.entry_computation()->parameter_instructions()) {
    const int seed = static_cast<int>(inputs.size()) + 3;
    if (parameter->shape().element_type() != S8) {
      inputs.push_back(MakeInput(parameter->shape(), seed));
      continue;
    }
    Literal literal(parameter->shape());
    absl::Span<int8_t> data = literal.data<int8_t>();
    for (size_t i = 0; i < data.size(); ++i) {
      data[i] = static_cast<int8_t>(static_cast<int>((i * 7919 + seed * 104729) % 256) - 128);
    }
    inputs.push_back(std::move(literal));
  }
  return inputs;
}

absl::StatusOr<Literal> Evaluate(const HloModule& module, const std::vector<Literal>& inputs) {
  std::vector<const Literal*> pointers;
  pointers.reserve(inputs.size());
  for (const Literal& input : inputs) pointers.push_back(&input);
  HloEvaluator evaluator;
  return evaluator.Evaluate(module, pointers);
}

absl::StatusOr<std::unique_ptr<HloModule>> Lowered(const std::string& text) {
  AXLE_ASSIGN_OR_RETURN(std::unique_ptr<HloModule> module, ParseAndReturnUnverifiedModule(text));
  GpuCudnnConvCallsToHlo pass;
  AXLE_ASSIGN_OR_RETURN(bool changed, pass.Run(module.get()));
  if (!changed) return absl::InternalError("the pass changed nothing");
  return module;
}

double Dot(const Literal& a, const Literal& b) {
  double sum = 0;
  for (size_t i = 0; i < a.data<float>().size(); ++i) {
    sum += static_cast<double>(a.data<float>()[i]) * b.data<float>()[i];
  }
  return sum;
}

TEST(CudnnConvCallsTest, ParsesXlasBackendConfig) {
  absl::StatusOr<CudnnConvCallConfig> full = ParseCudnnConvBackendConfig(
      R"({"operation_queue_id":"0","cudnn_conv_backend_config":{"conv_result_scale":0.5,)"
      R"("activation_mode":"kLeakyRelu","side_input_scale":2,"leakyrelu_alpha":0.1,)"
      R"("algorithm":{"algo_id":"28","math_type":"DEFAULT_MATH"}}})");
  ASSERT_TRUE(full.ok()) << full.status();
  EXPECT_DOUBLE_EQ(full->conv_result_scale, 0.5);
  EXPECT_DOUBLE_EQ(full->side_input_scale, 2);
  EXPECT_DOUBLE_EQ(full->leakyrelu_alpha, 0.1);
  EXPECT_EQ(full->activation_mode, "kLeakyRelu");

  absl::StatusOr<CudnnConvCallConfig> bare =
      ParseCudnnConvBackendConfig(R"({"cudnn_conv_backend_config":{conv_result_scale:1}})");
  ASSERT_TRUE(bare.ok()) << bare.status();
  EXPECT_DOUBLE_EQ(bare->conv_result_scale, 1);
  EXPECT_EQ(bare->activation_mode, "kNone");

  // activation_mode by number, as XLA's int8 tests write it (2: kRelu).
  absl::StatusOr<CudnnConvCallConfig> numbered = ParseCudnnConvBackendConfig(
      R"({"cudnn_conv_backend_config":{"activation_mode":"2","conv_result_scale":1}})");
  ASSERT_TRUE(numbered.ok()) << numbered.status();
  EXPECT_EQ(numbered->activation_mode, "kRelu");
  EXPECT_FALSE(
      ParseCudnnConvBackendConfig(R"({"cudnn_conv_backend_config":{"activation_mode":42}})").ok());

  absl::StatusOr<CudnnConvCallConfig> empty = ParseCudnnConvBackendConfig("");
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_DOUBLE_EQ(empty->conv_result_scale, 1);
  EXPECT_DOUBLE_EQ(empty->side_input_scale, 0);

  absl::StatusOr<CudnnConvCallConfig> bad =
      ParseCudnnConvBackendConfig(R"({"cudnn_conv_backend_config":{"conv_result_scale":"x"}})");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.status().message(), HasSubstr("conv_result_scale"));
}

TEST(CudnnConvCallsTest, EachCallComputesItsPlainConvolution) {
  for (const CallCase& c : Cases()) {
    SCOPED_TRACE(c.name);
    absl::StatusOr<std::unique_ptr<HloModule>> lowered = Lowered(c.call);
    ASSERT_TRUE(lowered.ok()) << lowered.status();
    for (const HloInstruction* instruction : (*lowered)->entry_computation()->instructions()) {
      EXPECT_NE(instruction->opcode(), HloOpcode::kCustomCall) << instruction->name();
    }
    auto plain = ParseAndReturnUnverifiedModule(c.plain);
    ASSERT_TRUE(plain.ok()) << plain.status();
    const std::vector<Literal> inputs = Inputs(**plain);
    absl::StatusOr<Literal> want = Evaluate(**plain, inputs);
    ASSERT_TRUE(want.ok()) << want.status();
    absl::StatusOr<Literal> got = Evaluate(**lowered, inputs);
    ASSERT_TRUE(got.ok()) << got.status();
    absl::Status near = LiteralsNear(*want, *got, ErrorSpec(1e-5, 1e-5));
    EXPECT_TRUE(near.ok()) << near;
  }
}

// The plain gradients are the forward convolution's adjoints:
// <dy, x * w> = <dx(dy, w), x> = <dw(x, dy), w>.
TEST(CudnnConvCallsTest, GradientsAreTheForwardConvolutionsAdjoints) {
  const std::vector<CallCase> cases = Cases();
  auto named = [&](absl::string_view name) -> const CallCase& {
    for (const CallCase& c : cases) {
      if (c.name == name) return c;
    }
    return cases.front();
  };
  auto forward = ParseAndReturnUnverifiedModule(named("forward_nhwc_strided").plain);
  auto input = Lowered(named("backward_input_strided").call);
  auto filter = Lowered(named("backward_filter_strided").call);
  ASSERT_TRUE(forward.ok() && input.ok() && filter.ok());
  const std::vector<Literal> xw = Inputs(**forward);
  const Literal dy = MakeInput((*input)->entry_computation()->parameter_instruction(0)->shape(), 9);
  absl::StatusOr<Literal> y = Evaluate(**forward, xw);
  ASSERT_TRUE(y.ok()) << y.status();
  std::vector<Literal> dyw;
  dyw.push_back(dy.Clone());
  dyw.push_back(xw[1].Clone());
  absl::StatusOr<Literal> dx = Evaluate(**input, dyw);
  ASSERT_TRUE(dx.ok()) << dx.status();
  std::vector<Literal> xdy;
  xdy.push_back(xw[0].Clone());
  xdy.push_back(dy.Clone());
  absl::StatusOr<Literal> dw = Evaluate(**filter, xdy);
  ASSERT_TRUE(dw.ok()) << dw.status();
  const double forward_product = Dot(dy, *y);
  EXPECT_NEAR(Dot(*dx, xw[0]), forward_product, 1e-4 * std::abs(forward_product) + 1e-3);
  EXPECT_NEAR(Dot(*dw, xw[1]), forward_product, 1e-4 * std::abs(forward_product) + 1e-3);
}

TEST(CudnnConvCallsTest, TheScratchIsZerosOfItsShape) {
  std::string text = Cases().front().call;
  const size_t root = text.find("  ROOT r =");
  ASSERT_NE(root, std::string::npos);
  text =
      absl::StrCat(text.substr(0, root), "  ROOT s = u8[256] get-tuple-element(c), index=1\n}\n");
  absl::StatusOr<std::unique_ptr<HloModule>> lowered = Lowered(text);
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  absl::StatusOr<Literal> scratch = Evaluate(**lowered, Inputs(**lowered));
  ASSERT_TRUE(scratch.ok()) << scratch.status();
  ASSERT_EQ(scratch->shape().element_type(), U8);
  ASSERT_EQ(scratch->data<uint8_t>().size(), 256u);
  for (uint8_t byte : scratch->data<uint8_t>()) EXPECT_EQ(byte, 0);
}

TEST(CudnnConvCallsTest, TheCudaPipelineTakesEveryCall) {
  const std::vector<CallCase> cases = Cases();
  std::vector<TestModule> modules;
  modules.reserve(cases.size());
  for (const CallCase& c : cases) modules.push_back({c.name, c.call.c_str(), false});
  ExpectModulesCompileWithoutADevice(modules);
}

// The int8 calls become an integer convolution kernel (s8 loads, 64-bit
// integer products and sums saturated to s32, as the interpreter's integer
// convolution; no float arithmetic) and elementwise kernels, all of which
// ptxas accepts.
TEST(CudnnConvCallsTest, Int8CallsCompileToIntegerConvolutionKernels) {
  if (!PtxasPath().ok()) GTEST_SKIP() << "no ptxas: " << PtxasPath().status().message();
  for (const CallCase& c : Cases()) {
    if (!absl::StartsWith(c.name, "int8")) continue;
    SCOPED_TRACE(c.name);
    absl::StatusOr<std::unique_ptr<HloModule>> lowered = Lowered(c.call);
    ASSERT_TRUE(lowered.ok()) << lowered.status();
    const HloInstruction* convolution = nullptr;
    for (const HloInstruction* instruction : (*lowered)->entry_computation()->instructions()) {
      if (instruction->opcode() == HloOpcode::kConvolution) convolution = instruction;
    }
    ASSERT_NE(convolution, nullptr) << (*lowered)->ToString();
    EXPECT_EQ(convolution->shape().element_type(), S32);
    EXPECT_EQ(convolution->operand(0)->shape().element_type(), S8);
    absl::StatusOr<ConvPlan> plan = MakeConvPlan(*convolution);
    ASSERT_TRUE(plan.ok()) << plan.status();
    absl::StatusOr<PtxKernel> kernel = CompileConvolutionToPtx(*plan, "conv");
    ASSERT_TRUE(kernel.ok()) << kernel.status();
    // Bytes sign-extended (bfe.s32 ..., 8), 64-bit products and sums,
    // saturated to s32 at the end.
    EXPECT_THAT(kernel->ptx, HasSubstr("bfe.s32"));
    EXPECT_THAT(kernel->ptx, HasSubstr("mul.wide.s32"));
    EXPECT_THAT(kernel->ptx, HasSubstr("max.s64"));
    EXPECT_THAT(kernel->ptx, Not(HasSubstr(".f32")));
    absl::StatusOr<std::string> cubin = AssemblePtx(kernel->ptx, "sm_90");
    EXPECT_TRUE(cubin.ok()) << cubin.status() << "\n" << kernel->ptx;
    auto module = ParseAndReturnUnverifiedModule(c.call);
    ASSERT_TRUE(module.ok()) << module.status();
    absl::StatusOr<GpuProgram> program = CompileGpuProgram(module->get(), PtxOptions());
    ASSERT_TRUE(program.ok()) << program.status();
    for (const auto& fused : program->kernels) {
      absl::StatusOr<std::string> assembled = AssemblePtx(fused->ptx, "sm_90");
      EXPECT_TRUE(assembled.ok()) << fused->name << ": " << assembled.status();
    }
  }
}

TEST(CudnnConvCallsTest, WhatTheRewriteCannotExpressIsUnimplemented) {
  const std::string grouped_input = CallModule(
      "  dy = f32[2,9,9,8] parameter(0)\n  w = f32[3,3,2,8] parameter(1)\n", "f32[2,9,9,4]",
      R"(dy, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, feature_group_count=2, custom_call_target="__cudnn$convBackwardInput")");
  absl::StatusOr<std::unique_ptr<HloModule>> lowered = Lowered(grouped_input);
  ASSERT_FALSE(lowered.ok());
  EXPECT_EQ(lowered.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(lowered.status().message(), HasSubstr("custom-call c (__cudnn$convBackwardInput)"));
  EXPECT_THAT(lowered.status().message(), HasSubstr("grouped input gradients"));

  const std::string band_pass = CallModule(
      "  x = f32[1,4,4,2] parameter(0)\n  w = f32[1,1,2,2] parameter(1)\n"
      "  b = f32[2] parameter(2)\n",
      "f32[1,4,4,2]",
      R"(x, w, b), window={size=1x1}, dim_labels=b01f_01io->b01f, custom_call_target="__cudnn$convBiasActivationForward", backend_config={"cudnn_conv_backend_config":{"activation_mode":"kBandPass"}})");
  lowered = Lowered(band_pass);
  ASSERT_FALSE(lowered.ok());
  EXPECT_EQ(lowered.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(lowered.status().message(), HasSubstr("kBandPass"));

  // An int8 result scaled (cuDNN rounds alpha * sum in float first).
  const std::string int8 = CallModule(
      "  x = s8[1,4,4,4] parameter(0)\n  w = s8[3,3,4,4] parameter(1)\n", "s8[1,4,4,4]",
      R"(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, custom_call_target="__cudnn$convForward", backend_config={"cudnn_conv_backend_config":{"conv_result_scale":0.5}})");
  lowered = Lowered(int8);
  ASSERT_FALSE(lowered.ok());
  EXPECT_EQ(lowered.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(lowered.status().message(), HasSubstr("an integer result scaled by 0.5"));

  const std::string wrong_shape = CallModule(
      "  x = f32[1,4,4,2] parameter(0)\n  w = f32[3,3,2,2] parameter(1)\n", "f32[1,4,4,2]",
      R"(x, w), window={size=3x3}, dim_labels=b01f_01io->b01f, custom_call_target="__cudnn$convForward")");
  lowered = Lowered(wrong_shape);
  ASSERT_FALSE(lowered.ok());
  EXPECT_EQ(lowered.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(lowered.status().message(), HasSubstr("f32[1,2,2,2]"));
}

TEST(CudnnConvCallsTest, TheInterpreterNamesTheTarget) {
  auto interpreter = PlatformUtil::GetPlatform("interpreter");
  ASSERT_TRUE(interpreter.ok()) << interpreter.status();
  LocalClient* client = *ClientLibrary::GetOrCreateLocalClient(*interpreter);
  auto module = ParseAndReturnUnverifiedModule(Cases().front().call);
  ASSERT_TRUE(module.ok()) << module.status();
  auto executable = client->Compile(std::move(module).value(), {});
  ASSERT_FALSE(executable.ok());
  EXPECT_EQ(executable.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(executable.status().message(), HasSubstr("'__cudnn$convForward'"));
  EXPECT_THAT(executable.status().message(), HasSubstr("only the cuda platform"));
}

// On a GPU: each call against the plain convolution, both on cuda, and
// against the interpreter's plain result.
class CudnnConvCallsDeviceTest : public GpuExecutableTest {};

TEST_F(CudnnConvCallsDeviceTest, EachCallMatchesThePlainConvolution) {
  for (const CallCase& c : Cases()) {
    SCOPED_TRACE(c.name);
    auto call = CompileFor(client_, c.call);
    ASSERT_TRUE(call.ok()) << call.status();
    auto plain = CompileFor(client_, c.plain);
    ASSERT_TRUE(plain.ok()) << plain.status();
    auto reference = CompileFor(reference_, c.plain);
    ASSERT_TRUE(reference.ok()) << reference.status();
    auto parsed = ParseAndReturnUnverifiedModule(c.plain);
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    const std::vector<Literal> inputs = Inputs(**parsed);
    auto got = RunWith(client_, **call, inputs);
    ASSERT_TRUE(got.ok()) << got.status();
    auto want = RunWith(client_, **plain, inputs);
    ASSERT_TRUE(want.ok()) << want.status();
    auto exact = RunWith(reference_, **reference, inputs);
    ASSERT_TRUE(exact.ok()) << exact.status();
    // One TF32 policy for both on cuda (tf32.h): equal up to the algorithm.
    absl::Status same =
        LiteralsNearAllowingTf32(**parsed, *want, *got, ErrorSpec(1e-5, 1e-5), Tf32Enabled());
    EXPECT_TRUE(same.ok()) << "against the plain convolution on cuda: " << same;
    absl::Status near =
        LiteralsNearAllowingTf32(**parsed, *exact, *got, ErrorSpec(1e-4, 1e-4), Tf32Enabled());
    EXPECT_TRUE(near.ok()) << "against the interpreter: " << near;
  }
}

}  // namespace
}  // namespace axle::gpu
