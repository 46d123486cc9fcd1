// Convolutions on the `cpu` platform against the interpreter: dim_labels in
// several orders, 1-d/2-d/3-d, strides, padding (asymmetric, negative), lhs
// and rhs dilation, window reversal, feature and batch groups, bf16, the
// loop's types (f64, f16, s32, pred), constant weights, scale + bias +
// activation epilogues (the scale folded into the weights), residual + clamp epilogues, broadcast
// operands, a convolution feeding a loop fusion, one executable run from four threads, and batch-1
// convolutions split into rows across the intra-op pool, and 3x3 ones on oneDNN's Winograd
// kernels, weight gradients on oneDNN's backward-weights primitive and
// lhs-dilated ones on its backward-data primitive. Each
// case also checks which implementation the convolution thunk picked, so that a case meant for
// oneDNN does not pass silently on the loop.
#include <cstdlib>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "axle/base/thread_pool.h"
#include "axle/cpu/runtime/convolution_thunk.h"
#include "axle/cpu/runtime/platform_test_util.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/pass/pass_registry.h"
#include "axle/hlo/text/hlo_parser.h"
#include "gtest/gtest.h"

namespace axle {
namespace {

using testing::ExpectCpuAgrees;

// Small values (exact in every type) that differ from element to element.
Literal Values(const Shape& shape, int seed) {
  Literal f64(ShapeUtil::MakeShape(F64, shape.dimensions()));
  auto data = f64.data<double>();
  for (size_t i = 0; i < data.size(); ++i) {
    data[i] = static_cast<double>(
        static_cast<int64_t>((i * 7 + static_cast<size_t>(seed) * 13) % 11) - 5);
    if (!primitive_util::IsIntegralType(shape.element_type())) data[i] *= 0.25;
  }
  auto converted = f64.Convert(shape.element_type());
  CHECK(converted.ok()) << converted.status();
  return *std::move(converted);
}

// The implementation the convolution thunk picks for the entry's first
// convolution or epilogue fusion, after the epilogue pass.
std::string KindOf(absl::string_view text) {
  auto module = ParseAndReturnUnverifiedModule(text);
  CHECK(module.ok()) << module.status();
  auto pass = CreatePass("dot-epilogue-fusion");
  CHECK(pass.ok());
  CHECK((*pass)->Run(module->get()).ok());
  for (const HloInstruction* instruction :
       (*module)->entry_computation()->MakeInstructionPostOrder()) {
    if (instruction->opcode() != HloOpcode::kConvolution &&
        instruction->opcode() != HloOpcode::kFusion) {
      continue;
    }
    std::vector<int64_t> values;
    std::vector<const Literal*> constants;
    for (const HloInstruction* operand : instruction->operands()) {
      values.push_back(static_cast<int64_t>(values.size()));
      const auto* constant = dyn_cast<HloConstantInstruction>(operand);
      constants.push_back(constant != nullptr ? &constant->literal() : nullptr);
    }
    cpu::LoopKernelModule kernels("kind", {});
    auto thunk = cpu::CreateConvolutionThunk(*instruction, values, constants, values.size(),
                                             kernels, "convolution_loop");
    if (!thunk.ok()) return std::string(thunk.status().message());
    auto kind = cpu::ConvolutionThunkKind(**thunk);
    return kind.ok() ? *kind : std::string(kind.status().message());
  }
  return "no convolution";
}

// The kind bf16 convolutions run on: oneDNN 2.6 has bf16 convolutions on
// every CPU with AVX-512 BW/VL/DQ (natively with AVX512_BF16, emulated on
// Skylake and Cascade Lake servers) and none without (or under valgrind,
// which hides AVX-512), where the loop runs them.
const char* Bf16Kind() {
  return __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
                 __builtin_cpu_supports("avx512dq")
             ? "onednn"
             : "loop";
}

// Runs `text` on cpu and the interpreter with generated arguments, and
// checks the convolution ran on `kind`.
void Check(absl::string_view text, absl::string_view kind,
           const ErrorSpec& error = ErrorSpec(1e-5, 1e-5)) {
  auto module = ParseAndReturnUnverifiedModule(text);
  ASSERT_TRUE(module.ok()) << module.status();
  std::vector<Literal> arguments;
  for (const HloInstruction* parameter : (*module)->entry_computation()->parameter_instructions()) {
    arguments.push_back(Values(parameter->shape(), static_cast<int>(arguments.size())));
  }
  ExpectCpuAgrees(text, arguments, error);
  EXPECT_EQ(KindOf(text), kind) << text;
}

// One convolution of parameters: `lhs`, `rhs` and `out` are shapes with
// their type, `attributes` the window, dim_labels and group counts.
std::string ConvModule(absl::string_view lhs, absl::string_view rhs, absl::string_view out,
                       absl::string_view attributes) {
  return absl::StrCat("HloModule conv\nENTRY e {\n  x = ", lhs, " parameter(0)\n  k = ", rhs,
                      " parameter(1)\n  ROOT c = ", out, " convolution(x, k), ", attributes,
                      "\n}\n");
}

TEST(CpuConvolution, Nhwc2d) {
  Check(ConvModule("f32[2,7,7,3]", "f32[3,3,3,4]", "f32[2,5,5,4]",
                   "window={size=3x3}, dim_labels=b01f_01io->b01f"),
        "onednn");
}

TEST(CpuConvolution, Nchw2d) {
  Check(ConvModule("f32[2,3,7,7]", "f32[4,3,3,3]", "f32[2,4,5,5]",
                   "window={size=3x3}, dim_labels=bf01_oi01->bf01"),
        "onednn");
}

TEST(CpuConvolution, ScrambledLabels) {
  // lhs [s0, f, b, s1], kernel [i, s1, s0, o], output [f, s0, s1, b].
  Check(ConvModule("f32[6,3,2,5]", "f32[3,2,3,4]", "f32[4,4,4,2]",
                   "window={size=3x2}, dim_labels=0fb1_i10o->f01b"),
        "onednn");
}

TEST(CpuConvolution, OneAndThreeSpatialDims) {
  Check(ConvModule("f32[2,9,3]", "f32[3,3,4]", "f32[2,7,4]",
                   "window={size=3}, dim_labels=b0f_0io->b0f"),
        "onednn");
  Check(ConvModule("f32[1,5,5,5,2]", "f32[3,3,3,2,3]", "f32[1,3,3,3,3]",
                   "window={size=3x3x3}, dim_labels=b012f_012io->b012f"),
        "onednn");
}

TEST(CpuConvolution, StridesAndAsymmetricPadding) {
  Check(ConvModule("f32[1,8,8,2]", "f32[3,3,2,3]", "f32[1,5,4,3]",
                   "window={size=3x3 stride=2x2 pad=1_2x0_1}, dim_labels=b01f_01io->b01f"),
        "onednn");
}

TEST(CpuConvolution, NegativePadding) {
  Check(ConvModule("f32[1,8,8,2]", "f32[3,3,2,3]", "f32[1,6,4,3]",
                   "window={size=3x3 pad=-1_1x0_-2}, dim_labels=b01f_01io->b01f"),
        "onednn");
}

TEST(CpuConvolution, RhsDilation) {
  Check(ConvModule("f32[1,8,8,2]", "f32[3,3,2,3]", "f32[1,4,6,3]",
                   "window={size=3x3 rhs_dilate=2x1}, dim_labels=b01f_01io->b01f"),
        "onednn");
}

TEST(CpuConvolution, LhsDilation) {
  // A transposed convolution: input 5 dilated by 2 is 9, padded 2 + 2, on
  // oneDNN's backward-data primitive (the undilated input).
  Check(ConvModule("f32[1,5,5,2]", "f32[3,3,2,3]", "f32[1,11,11,3]",
                   "window={size=3x3 pad=2_2x2_2 lhs_dilate=2x2}, dim_labels=b01f_01io->b01f"),
        "onednn-backward-data");
  // JAX's conv_transpose(strides=(2, 2), padding='SAME') on an odd batch,
  // and a stride-2 convolution's input gradient (the kernel reversed,
  // hwoi); a 1-d one; NCHW with uneven dilation.
  Check(ConvModule("f32[3,6,7,5]", "f32[3,3,5,4]", "f32[3,12,14,4]",
                   "window={size=3x3 pad=2_1x2_1 lhs_dilate=2x2}, dim_labels=b01f_01io->b01f"),
        "onednn-backward-data");
  Check(ConvModule("f32[2,5,5,6]", "f32[3,3,4,6]", "f32[2,10,10,4]",
                   "window={size=3x3 pad=2_1x2_1 lhs_dilate=2x2 rhs_reversal=1x1}, "
                   "dim_labels=b01f_01oi->b01f"),
        "onednn-backward-data");
  Check(ConvModule("f32[2,9,3]", "f32[3,3,5]", "f32[2,18,5]",
                   "window={size=3 pad=2_1 lhs_dilate=2}, dim_labels=b0f_0io->b0f"),
        "onednn-backward-data");
  // With rhs dilation oneDNN 2.6 offers only its reference or gemm
  // backward-data kernels: the forward primitive.
  Check(ConvModule("f32[2,6,6,3]", "f32[3,3,3,5]", "f32[2,11,11,5]",
                   "window={size=3x3 pad=3_1x3_1 lhs_dilate=2x2 rhs_dilate=2x2}, "
                   "dim_labels=b01f_01io->b01f"),
        "onednn");
  Check(ConvModule("f32[2,3,5,4]", "f32[6,3,2,3]", "f32[2,6,10,9]",
                   "window={size=2x3 pad=1_1x1_0 lhs_dilate=2x3}, dim_labels=bf01_oi01->bf01"),
        "onednn-backward-data");
  // Padding beyond the window's reach: the forward primitive.
  Check(ConvModule("f32[1,5,5,2]", "f32[3,3,2,3]", "f32[1,13,11,3]",
                   "window={size=3x3 pad=3_3x2_2 lhs_dilate=2x2}, dim_labels=b01f_01io->b01f"),
        "onednn");
  // With a stride and negative padding cropping the dilated input.
  Check(ConvModule("f32[1,5,5,2]", "f32[3,3,2,3]", "f32[1,4,3,3]",
                   "window={size=3x3 stride=2x2 pad=-1_1x0_-2 lhs_dilate=2x2}, "
                   "dim_labels=b01f_01io->b01f"),
        "onednn");
}

TEST(CpuConvolution, WindowReversal) {
  Check(ConvModule("f32[1,6,6,2]", "f32[3,3,2,3]", "f32[1,4,4,3]",
                   "window={size=3x3 rhs_reversal=1x0}, dim_labels=b01f_01io->b01f"),
        "onednn");
}

TEST(CpuConvolution, FeatureGroups) {
  // Depthwise.
  Check(ConvModule("f32[2,6,6,4]", "f32[3,3,1,4]", "f32[2,4,4,4]",
                   "window={size=3x3}, dim_labels=b01f_01io->b01f, feature_group_count=4"),
        "onednn");
  // Two groups of two input features, three outputs each.
  Check(ConvModule("f32[1,6,6,4]", "f32[3,3,2,6]", "f32[1,4,4,6]",
                   "window={size=3x3}, dim_labels=b01f_01io->b01f, feature_group_count=2"),
        "onednn");
}

TEST(CpuConvolution, BatchGroups) {
  // A weight gradient's shape: batch 4 in 2 groups of 2.
  Check(ConvModule("f32[4,5,5,3]", "f32[3,3,3,6]", "f32[2,3,3,6]",
                   "window={size=3x3}, dim_labels=b01f_01io->b01f, batch_group_count=2"),
        "onednn");
}

TEST(CpuConvolution, Bf16) {
  Check(ConvModule("bf16[2,7,7,3]", "bf16[3,3,3,4]", "bf16[2,7,7,4]",
                   "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f"),
        Bf16Kind(), ErrorSpec(1e-2, 1e-2));
  Check(ConvModule("bf16[2,7,7,3]", "bf16[3,3,3,4]", "f32[2,5,5,4]",
                   "window={size=3x3}, dim_labels=b01f_01io->b01f"),
        Bf16Kind(), ErrorSpec(1e-2, 1e-2));
}

TEST(CpuConvolution, LoopTypes) {
  Check(ConvModule("f64[2,6,6,3]", "f64[3,3,3,4]", "f64[2,5,2,4]",
                   "window={size=3x3 stride=1x2 pad=1_0x0_-1 lhs_dilate=1x1 rhs_dilate=1x1}, "
                   "dim_labels=b01f_01io->b01f"),
        "loop");
  Check(ConvModule("s32[1,4,6,6]", "s32[4,2,3,3]", "s32[1,4,4,4]",
                   "window={size=3x3}, dim_labels=bf01_oi01->bf01, feature_group_count=2"),
        "loop");
  Check(ConvModule("f16[4,5,5,3]", "f16[2,2,3,4]", "f16[2,9,5,4]",
                   "window={size=2x2 pad=1_0x0_1 lhs_dilate=2x1 rhs_reversal=0x1}, "
                   "dim_labels=b01f_01io->b01f, batch_group_count=2"),
        "loop", ErrorSpec(1e-2, 1e-2));
  Check(ConvModule("pred[1,5,3]", "pred[2,3,2]", "pred[1,4,2]",
                   "window={size=2}, dim_labels=b0f_0io->b0f"),
        "loop");
}

TEST(CpuConvolution, ConstantWeights) {
  // k = f32[2,2,2,3] as nested braces.
  std::string kernel;
  int n = 0;
  for (int a = 0; a < 2; ++a) {
    absl::StrAppend(&kernel, a ? ", {" : "{");
    for (int b = 0; b < 2; ++b) {
      absl::StrAppend(&kernel, b ? ", {" : "{");
      for (int i = 0; i < 2; ++i) {
        absl::StrAppend(&kernel, i ? ", {" : "{");
        for (int o = 0; o < 3; ++o, ++n) {
          absl::StrAppend(&kernel, o ? ", " : "", (n % 7 - 3) * 0.25);
        }
        absl::StrAppend(&kernel, "}");
      }
      absl::StrAppend(&kernel, "}");
    }
    absl::StrAppend(&kernel, "}");
  }
  Check(absl::StrCat(R"(HloModule conv
ENTRY e {
  x = f32[2,5,5,2] parameter(0)
  k = f32[2,2,2,3] constant({)",
                     kernel, R"(})
  ROOT c = f32[2,4,4,3] convolution(x, k), window={size=2x2}, dim_labels=b01f_01io->b01f
}
)"),
        "onednn");
}

TEST(CpuConvolution, BiasReluEpilogue) {
  Check(R"(HloModule conv
ENTRY e {
  x = f32[2,6,6,3] parameter(0)
  k = f32[3,3,3,4] parameter(1)
  bias = f32[4] parameter(2)
  c = f32[2,6,6,4] convolution(x, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  bb = f32[2,6,6,4] broadcast(bias), dimensions={3}
  y = f32[2,6,6,4] add(c, bb)
  zero = f32[] constant(0)
  zeros = f32[2,6,6,4] broadcast(zero), dimensions={}
  ROOT r = f32[2,6,6,4] maximum(y, zeros)
}
)",
        "onednn");
  // NCHW, clamp, bf16 (the epilogue rounds after each step).
  Check(R"(HloModule conv
ENTRY e {
  x = bf16[2,3,6,6] parameter(0)
  k = bf16[4,3,3,3] parameter(1)
  bias = bf16[4] parameter(2)
  c = bf16[2,4,4,4] convolution(x, k), window={size=3x3}, dim_labels=bf01_oi01->bf01
  bb = bf16[2,4,4,4] broadcast(bias), dimensions={1}
  y = bf16[2,4,4,4] add(bb, c)
  lo = bf16[] constant(-1)
  hi = bf16[] constant(1.5)
  ROOT r = bf16[2,4,4,4] clamp(lo, y, hi)
}
)",
        Bf16Kind(), ErrorSpec(1e-2, 1e-2));
  // An integer epilogue on the loop.
  Check(R"(HloModule conv
ENTRY e {
  x = s32[1,5,5,2] parameter(0)
  k = s32[2,2,2,3] parameter(1)
  bias = s32[1,4,4,3] parameter(2)
  c = s32[1,4,4,3] convolution(x, k), window={size=2x2}, dim_labels=b01f_01io->b01f
  y = s32[1,4,4,3] add(c, bias)
  zero = s32[] constant(0)
  zeros = s32[1,4,4,3] broadcast(zero), dimensions={}
  ROOT r = s32[1,4,4,3] maximum(y, zeros)
}
)",
        "loop");
}

TEST(CpuConvolution, ScaleOffsetEpilogue) {
  // The conv block's batch norm: scale and offset per channel, relu.
  const char* kModule = R"(HloModule conv
ENTRY e {
  x = $T[2,6,6,4] parameter(0)
  k = $T[3,3,4,4] parameter(1)
  scale = $T[4] parameter(2)
  offset = $T[4] parameter(3)
  c = $T[2,6,6,4] convolution(x, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  s = $T[2,6,6,4] broadcast(scale), dimensions={3}
  n = $T[2,6,6,4] multiply(c, s)
  o = $T[2,6,6,4] broadcast(offset), dimensions={3}
  y = $T[2,6,6,4] add(n, o)
  zero = $T[] constant(0)
  zeros = $T[2,6,6,4] broadcast(zero), dimensions={}
  ROOT r = $T[2,6,6,4] maximum(y, zeros)
}
)";
  auto with_type = [&](absl::string_view type) {
    return absl::StrReplaceAll(kModule, {{"$T", type}});
  };
  Check(with_type("f32"), "onednn");
  Check(with_type("bf16"), Bf16Kind(), ErrorSpec(2e-2, 2e-2));
  Check(with_type("s32"), "loop");
  // The residual add of the second convolution is a same-shape bias.
  Check(R"(HloModule conv
ENTRY e {
  x = f32[2,6,6,4] parameter(0)
  k = f32[3,3,4,4] parameter(1)
  scale = f32[4] parameter(2)
  c = f32[2,6,6,4] convolution(x, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  s = f32[2,6,6,4] broadcast(scale), dimensions={3}
  n = f32[2,6,6,4] multiply(s, c)
  ROOT y = f32[2,6,6,4] add(x, n)
}
)",
        "onednn");
}

// A constant of `dims` as nested braces, values (n % 7 - 3) * 0.25.
std::string ConstantText(const std::vector<int64_t>& dims, size_t dim = 0, int64_t* n = nullptr) {
  int64_t count = 0;
  if (n == nullptr) n = &count;
  std::string text = "{";
  for (int64_t i = 0; i < dims[dim]; ++i) {
    if (i > 0) absl::StrAppend(&text, ", ");
    if (dim + 1 == dims.size()) {
      absl::StrAppend(&text, (*n)++ % 7 * 0.25 - 0.75);
    } else {
      absl::StrAppend(&text, ConstantText(dims, dim + 1, n));
    }
  }
  return text + "}";
}

TEST(CpuConvolution, ScaleFoldedIntoTheWeights) {
  // A per-feature f32 scale multiplies the weights (conv(x, w) * s as
  // conv(x, w * s)) and the offset is the primitive's bias: constant
  // weights with a constant scale (folded once), constant weights with a
  // scale read at run time (scaled every run), feature groups; at least
  // 8 output elements per weight element, else the scale stays a post-op
  // (a weight gradient's, last).
  const char* kModule = R"(HloModule conv
ENTRY e {
  x = f32[2,12,12,4] parameter(0)
  offset = f32[6] parameter(1)
  k = $K
  scale = $S
  c = f32[2,12,12,6] convolution(x, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f$G
  s = f32[2,12,12,6] broadcast(scale), dimensions={3}
  n = f32[2,12,12,6] multiply(c, s)
  o = f32[2,12,12,6] broadcast(offset), dimensions={3}
  ROOT y = f32[2,12,12,6] add(n, o)
}
)";
  const std::string weights =
      absl::StrCat("f32[3,3,4,6] constant(", ConstantText({3, 3, 4, 6}), ")");
  const std::string scale = "f32[6] constant({0.5, -1, 2, 0.25, 1.5, -0.75})";
  Check(absl::StrReplaceAll(kModule, {{"$K", weights}, {"$S", scale}, {"$G", ""}}), "onednn");
  Check(absl::StrReplaceAll(kModule, {{"$K", weights}, {"$S", "f32[6] parameter(2)"}, {"$G", ""}}),
        "onednn");
  Check(absl::StrReplaceAll(kModule, {{"$K", "f32[3,3,2,6] parameter(2)"},
                                      {"$S", "f32[6] parameter(3)"},
                                      {"$G", ", feature_group_count=2"}}),
        "onednn");
  // A residual block's tail large enough that the addend is copied into
  // the output by several threads before the sum post-op.
  Check(R"(HloModule conv
ENTRY e {
  x = f32[2,48,48,32] parameter(0)
  k = f32[1,1,32,32] parameter(1)
  scale = f32[32] parameter(2)
  offset = f32[32] parameter(3)
  c = f32[2,48,48,32] convolution(x, k), window={size=1x1}, dim_labels=b01f_01io->b01f
  s = f32[2,48,48,32] broadcast(scale), dimensions={3}
  n = f32[2,48,48,32] multiply(c, s)
  o = f32[2,48,48,32] broadcast(offset), dimensions={3}
  y = f32[2,48,48,32] add(n, o)
  a = f32[2,48,48,32] add(y, x)
  zero = f32[] constant(0)
  zeros = f32[2,48,48,32] broadcast(zero), dimensions={}
  ROOT r = f32[2,48,48,32] maximum(a, zeros)
}
)",
        "onednn");
  // A weight gradient's shape: the "weights" are activations, far larger
  // than the output; not folded (it runs as a weight gradient, the scale
  // after the primitive).
  Check(R"(HloModule conv
ENTRY e {
  x = f32[4,10,10,2] parameter(0)
  k = f32[4,8,8,3] parameter(1)
  scale = f32[] parameter(2)
  c = f32[3,3,2,3] convolution(x, k), window={size=8x8}, dim_labels=f01b_i01o->01bf
  s = f32[3,3,2,3] broadcast(scale), dimensions={}
  ROOT n = f32[3,3,2,3] multiply(c, s)
}
)",
        "onednn-weight-grad");
}

// A training program's weight gradient, JAX's layout: the input x
// [N, H, W, C] and the output gradient dy [N, Ho, Wo, O] give the kernel's
// gradient [KH, KW, C, O], the minibatch N as the input feature and the
// window dy's whole image. The forward convolution's stride is the rhs
// dilation, its dilation the stride.
std::string WeightGradModule(int64_t n, int64_t image, int64_t c, int64_t o, int64_t taps,
                             int64_t out_image, absl::string_view window) {
  return ConvModule(absl::StrCat("f32[", n, ",", image, ",", image, ",", c, "]"),
                    absl::StrCat("f32[", n, ",", out_image, ",", out_image, ",", o, "]"),
                    absl::StrCat("f32[", taps, ",", taps, ",", c, ",", o, "]"),
                    absl::StrCat("window={", window, "}, dim_labels=f01b_i01o->01bf"));
}

TEST(CpuConvolution, WeightGradientsOnBackwardWeights) {
  // 3x3, padded, stride 1 (batchnorm_two_conv_grad's); an odd minibatch
  // (pieces of 2 and 3 on two threads).
  Check(WeightGradModule(4, 8, 5, 6, 3, 8, "size=8x8 pad=1_1x1_1"), "onednn-weight-grad");
  Check(WeightGradModule(5, 7, 16, 16, 3, 7, "size=7x7 pad=1_1x1_1"), "onednn-weight-grad");
  // Forward stride 2, padded 0_1 (cnn_train_step's): rhs dilation 2.
  Check(WeightGradModule(2, 10, 3, 4, 3, 5, "size=5x5 pad=0_1x0_1 rhs_dilate=2x2"),
        "onednn-weight-grad");
  // Forward dilation 2: window stride 2.
  Check(WeightGradModule(3, 9, 4, 8, 3, 9, "size=9x9 stride=2x2 pad=2_2x2_2"),
        "onednn-weight-grad");
  // 1x1, and 5x5 unpadded.
  Check(WeightGradModule(3, 6, 4, 5, 1, 6, "size=6x6"), "onednn-weight-grad");
  Check(WeightGradModule(2, 10, 8, 16, 5, 6, "size=6x6"), "onednn-weight-grad");
  // A learning rate's scale after it, and an accumulated gradient added.
  Check(R"(HloModule conv
ENTRY e {
  x = f32[4,8,8,5] parameter(0)
  dy = f32[4,8,8,6] parameter(1)
  acc = f32[3,3,5,6] parameter(2)
  c = f32[3,3,5,6] convolution(x, dy), window={size=8x8 pad=1_1x1_1}, dim_labels=f01b_i01o->01bf
  lr = f32[] constant(0.25)
  s = f32[3,3,5,6] broadcast(lr), dimensions={}
  n = f32[3,3,5,6] multiply(c, s)
  ROOT a = f32[3,3,5,6] add(n, acc)
}
)",
        "onednn-weight-grad");
  // Batch groups: the weight gradients of a depthwise (8 groups of one
  // feature) and of a grouped convolution (4 groups of 2 input and 3 output
  // features), as JAX transposes feature_group_count; odd minibatches.
  Check(ConvModule("f32[5,8,8,8]", "f32[5,8,8,8]", "f32[3,3,1,8]",
                   "window={size=8x8 pad=1_1x1_1}, dim_labels=f01b_i01o->01bf, "
                   "batch_group_count=8"),
        "onednn-weight-grad");
  Check(ConvModule("f32[3,9,9,8]", "f32[3,5,5,12]", "f32[3,3,2,12]",
                   "window={size=5x5 pad=1_1x1_1 rhs_dilate=2x2}, dim_labels=f01b_i01o->01bf, "
                   "batch_group_count=4"),
        "onednn-weight-grad");
  // Not weight gradients: a forward convolution (a 3x3 window over 8x8
  // outputs), the same labels with a window smaller than the output, one
  // with window reversal, and a forward convolution whose window covers
  // its whole input (a 3x3 window over one pixel: its kernel's input
  // features are not outermost).
  Check(ConvModule("f32[4,10,10,5]", "f32[3,3,5,6]", "f32[4,8,8,6]",
                   "window={size=3x3}, dim_labels=b01f_01io->b01f"),
        "onednn");
  Check(WeightGradModule(4, 8, 5, 6, 7, 2, "size=2x2"), "onednn");
  Check(ConvModule("f32[2,3,3,8]", "f32[3,3,8,4]", "f32[2,1,1,4]",
                   "window={size=3x3}, dim_labels=b01f_01io->b01f"),
        "onednn");
  Check(WeightGradModule(4, 8, 5, 6, 3, 8, "size=8x8 pad=1_1x1_1 rhs_reversal=1x1"), "onednn");
}

TEST(CpuConvolution, ResidualAndClampEpilogue) {
  // A residual block's tail (ONNX Conv + Add + Clip(0, 6)): bias, an addend
  // of the output's shape, then max and min as a clamp, all one fusion.
  const char* kModule = R"(HloModule conv
ENTRY e {
  x = $T[2,$IN] parameter(0)
  k = $T[4,4,3,3] parameter(1)
  bias = $T[4] parameter(2)
  res = $T[2,$OUT] parameter(3)
  c = $T[2,$OUT] convolution(x, k), window={size=3x3 pad=1_1x0_1}, dim_labels=$LABELS
  bb = $T[2,$OUT] broadcast(bias), dimensions={$F}
  y = $T[2,$OUT] add(bb, c)
  s = $T[2,$OUT] add(y, res)
  lo = $T[] constant(-1)
  los = $T[2,$OUT] broadcast(lo), dimensions={}
  hi = $T[] constant(2)
  his = $T[2,$OUT] broadcast(hi), dimensions={}
  m = $T[2,$OUT] maximum(los, s)
  ROOT r = $T[2,$OUT] minimum(m, his)
}
)";
  auto with = [&](absl::string_view type, bool nchw) {
    return absl::StrReplaceAll(kModule, {{"$T", type},
                                         {"$IN", nchw ? "4,6,5" : "6,5,4"},
                                         {"$OUT", nchw ? "4,6,4" : "6,4,4"},
                                         {"$LABELS", nchw ? "bf01_oi01->bf01" : "b01f_oi01->b01f"},
                                         {"$F", nchw ? "1" : "3"}});
  };
  // Channels-last: the addend as a oneDNN post-op, read in place.
  Check(with("f32", false), "onednn");
  // Channels-first: oneDNN's layout differs, the addend comes after.
  Check(with("f32", true), "onednn");
  Check(with("bf16", false), Bf16Kind(), ErrorSpec(2e-2, 2e-2));
  Check(with("s32", false), "loop");
  Check(with("f64", true), "loop");
}

TEST(CpuConvolution, LoneResidualAddIsTheAddend) {
  // A projection with a skip connection and no bias (MobileNet-style
  // inverted residuals: a 1x1 Conv, then Add): the add's other operand,
  // of the output's size and not a broadcast, is the addend (oneDNN's sum
  // post-op where the layouts agree), not a full-size bias; a full-size
  // broadcast of a per-row bias stays a bias.
  const char* kModule = R"(HloModule conv
ENTRY e {
  x = $T[2,$IN] parameter(0)
  k = $T[4,4,1,1] parameter(1)
  res = $T[2,$OUT] parameter(2)
  c = $T[2,$OUT] convolution(x, k), window={size=1x1}, dim_labels=$LABELS
  ROOT s = $T[2,$OUT] add(c, res)
}
)";
  const char* kRowBias = R"(HloModule conv
ENTRY e {
  x = f32[2,6,5,4] parameter(0)
  k = f32[4,4,1,1] parameter(1)
  b = f32[6,5] parameter(2)
  c = f32[2,6,5,4] convolution(x, k), window={size=1x1}, dim_labels=b01f_oi01->b01f
  bb = f32[2,6,5,4] broadcast(b), dimensions={1,2}
  ROOT s = f32[2,6,5,4] add(bb, c)
}
)";
  auto with = [&](absl::string_view type, bool nchw) {
    return absl::StrReplaceAll(kModule,
                               {{"$T", type},
                                {"$IN", nchw ? "4,6,5" : "6,5,4"},
                                {"$OUT", nchw ? "4,6,5" : "6,5,4"},
                                {"$LABELS", nchw ? "bf01_oi01->bf01" : "b01f_oi01->b01f"}});
  };
  Check(with("f32", false), "onednn");
  Check(with("f32", true), "onednn");
  Check(with("bf16", false), Bf16Kind(), ErrorSpec(2e-2, 2e-2));
  Check(with("s32", false), "loop");
  Check(kRowBias, "onednn");
}

TEST(CpuConvolution, FullSizeScaleAfterThePrimitive) {
  // A grouped input gradient times the activation's derivative (JAX's
  // backward pass through tanh): a scale of the output's size, applied
  // after the primitive from a dense copy in the output's order or, when
  // the operand already has it, in place. Channels-last and -first, a
  // transposed scale (copied), a per-row broadcast and a constant one.
  const char* kModule = R"(HloModule conv
ENTRY e {
  d = f32[2,6,5,8] parameter(0)
  k = f32[3,3,4,4] parameter(1)
  m = f32[2,6,5,4] parameter(2)
  c = f32[2,6,5,4] convolution(d, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01oi->b01f,
      feature_group_count=2
  ROOT r = f32[2,6,5,4] multiply(c, m)
}
)";
  Check(kModule, "onednn");
  Check(absl::StrReplaceAll(kModule, {{"m = f32[2,6,5,4] parameter(2)",
                                       "mt = f32[2,4,6,5] parameter(2)\n"
                                       "  m = f32[2,6,5,4] transpose(mt), dimensions={0,2,3,1}"}}),
        "onednn");
  Check(absl::StrReplaceAll(kModule, {{"m = f32[2,6,5,4] parameter(2)",
                                       "row = f32[6,5] parameter(2)\n"
                                       "  m = f32[2,6,5,4] broadcast(row), dimensions={1,2}"}}),
        "onednn");
  Check(absl::StrReplaceAll(kModule, {{"m = f32[2,6,5,4] parameter(2)",
                                       "m = f32[2,6,5,4] iota(), iota_dimension=1"}}),
        "onednn");
  Check(R"(HloModule conv
ENTRY e {
  d = f32[2,8,6,5] parameter(0)
  k = f32[4,8,3,3] parameter(1)
  m = f32[2,4,6,5] parameter(2)
  c = f32[2,4,6,5] convolution(d, k), window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01
  ROOT r = f32[2,4,6,5] multiply(c, m)
}
)",
        "onednn");
}

TEST(CpuConvolution, TransposedInputReadThroughStrides) {
  // The epilogue pass fuses a transposed input into the convolution's
  // fusion, which reads it through strides (oneDNN reorders it or reads it
  // in place); alone, with an epilogue, and on the loop.
  const char* kModule = R"(HloModule conv
ENTRY e {
  x = $T[2,3,7,6] parameter(0)
  k = $T[4,3,3,2] parameter(1)
  bias = $T[4] parameter(2)
  t = $T[2,7,6,3] transpose(x), dimensions={0,2,3,1}
  c = $T[2,3,5,4] convolution(t, k), window={size=3x2 stride=2x1 pad=1_0x0_0}, dim_labels=b01f_oi01->b01f
  bb = $T[2,3,5,4] broadcast(bias), dimensions={3}
  ROOT y = $T[2,3,5,4] add(c, bb)
}
)";
  Check(absl::StrReplaceAll(kModule, {{"$T", "f32"}}), "onednn");
  Check(absl::StrReplaceAll(kModule, {{"$T", "s32"}}), "loop");
  Check(R"(HloModule conv
ENTRY e {
  x = f32[2,3,7,6] parameter(0)
  k = f32[4,3,3,2] parameter(1)
  t = f32[2,6,3,7] transpose(x), dimensions={0,3,1,2}
  ROOT c = f32[2,3,5,4] convolution(t, k), window={size=2x3 stride=2x1 pad=1_0x0_0}, dim_labels=b0f1_oi10->b01f
}
)",
        "onednn");
}

TEST(CpuConvolution, BroadcastOperandsInAnEpilogueFusion) {
  // The epilogue pass fuses the operands' broadcasts too: the input and
  // the kernel are then read at stride 0 along the broadcast dims.
  Check(R"(HloModule conv
ENTRY e {
  row = f32[3] parameter(0)
  kv = f32[4] parameter(1)
  x = f32[2,5,5,3] broadcast(row), dimensions={3}
  k = f32[2,2,3,4] broadcast(kv), dimensions={3}
  c = f32[2,4,4,4] convolution(x, k), window={size=2x2 rhs_reversal=1x1}, dim_labels=b01f_01io->b01f
  ROOT t = f32[2,4,4,4] tanh(c)
}
)",
        "onednn");
}

TEST(CpuConvolution, ScalarBiasAndScaleReachEveryFeature) {
  // A scalar broadcast as the bias (oneDNN's native bias) or as the scale
  // (folded into the weights where the weights are small beside the
  // output) is one value per output feature: each feature reads it, not
  // only feature 0 (the others read past a one-element array before).
  const std::string module = R"(HloModule conv
ENTRY e {
  x = f32[16,8,8,16] parameter(0)
  k = f32[KERNEL,16,16] parameter(1)
  c = f32[16,8,8,16] convolution(x, k), window={WINDOW}, dim_labels=b01f_01io->b01f
  v = f32[] constant(0.5)
  vb = f32[16,8,8,16] broadcast(v), dimensions={}
  ROOT r = f32[16,8,8,16] OP(c, vb)
}
)";
  for (const char* op : {"add", "multiply"}) {
    for (const auto& [kernel, window] :
         {std::pair<const char*, const char*>{"3,3", "size=3x3 pad=1_1x1_1"},
          std::pair<const char*, const char*>{"1,1", "size=1x1"}}) {
      SCOPED_TRACE(absl::StrCat(op, " ", kernel));
      std::string text =
          absl::StrReplaceAll(module, {{"KERNEL", kernel}, {"WINDOW", window}, {"OP", op}});
      Check(text, "onednn");
    }
  }
  // And a scalar parameter as the bias, read at run time.
  Check(R"(HloModule conv
ENTRY e {
  x = f32[4,8,8,16] parameter(0)
  k = f32[1,1,16,32] parameter(1)
  v = f32[] parameter(2)
  c = f32[4,8,8,32] convolution(x, k), window={size=1x1}, dim_labels=b01f_01io->b01f
  vb = f32[4,8,8,32] broadcast(v), dimensions={}
  ROOT r = f32[4,8,8,32] add(c, vb)
}
)",
        "onednn");
}

TEST(CpuConvolution, FeedsAFusion) {
  // abs is no epilogue: the convolution runs alone, the rest as a loop
  // fusion that reads its result.
  Check(R"(HloModule conv
ENTRY e {
  x = f32[2,6,6,4] parameter(0)
  k = f32[3,3,4,4] parameter(1)
  scale = f32[4] parameter(2)
  c = f32[2,6,6,4] convolution(x, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  a = f32[2,6,6,4] abs(c)
  s = f32[2,6,6,4] broadcast(scale), dimensions={3}
  n = f32[2,6,6,4] multiply(a, s)
  res = f32[2,6,6,4] add(n, x)
  zero = f32[] constant(0)
  zeros = f32[2,6,6,4] broadcast(zero), dimensions={}
  ROOT r = f32[2,6,6,4] maximum(res, zeros)
}
)",
        "onednn");
}

TEST(CpuConvolution, FourThreadsRunOneExecutable) {
  // The scrambled layout: input and output reorders around the primitive,
  // the kernel reordered every run, a bias epilogue.
  const std::string text = R"(HloModule conv
ENTRY e {
  x = f32[6,3,2,5] parameter(0)
  k = f32[3,2,3,4] parameter(1)
  bias = f32[4] parameter(2)
  c = f32[4,4,4,2] convolution(x, k), window={size=3x2}, dim_labels=0fb1_i10o->f01b
  bb = f32[4,4,4,2] broadcast(bias), dimensions={0}
  ROOT y = f32[4,4,4,2] add(c, bb)
}
)";
  auto module = ParseAndReturnUnverifiedModule(text);
  ASSERT_TRUE(module.ok()) << module.status();
  auto executable = testing::CompileOn("cpu", text);
  ASSERT_TRUE(executable.ok()) << executable.status();
  std::vector<std::vector<Literal>> inputs(4);
  std::vector<Literal> expected;
  for (int t = 0; t < 4; ++t) {
    for (const HloInstruction* parameter :
         (*module)->entry_computation()->parameter_instructions()) {
      inputs[t].push_back(Values(parameter->shape(), t + static_cast<int>(inputs[t].size())));
    }
    auto reference = testing::RunOn("interpreter", text, inputs[t]);
    ASSERT_TRUE(reference.ok()) << reference.status();
    expected.push_back(*std::move(reference));
  }
  std::vector<absl::Status> statuses(4);
  std::vector<std::thread> threads;
  threads.reserve(4);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 10 && statuses[t].ok(); ++round) {
        auto result = testing::RunExecutable("cpu", **executable, inputs[t]);
        statuses[t] = result.ok() ? LiteralsNear(expected[t], *result, ErrorSpec(1e-5, 1e-5))
                                  : result.status();
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (const absl::Status& status : statuses) EXPECT_TRUE(status.ok()) << status;
}

// A constant of `dims` (f32) as HLO text's nested braces, small values that
// differ from element to element.
std::string ConstantText(const std::vector<int64_t>& dims, int seed) {
  int64_t next = 0;
  std::function<std::string(size_t)> nest = [&](size_t d) {
    std::string text = "{";
    for (int64_t i = 0; i < dims[d]; ++i) {
      if (i > 0) absl::StrAppend(&text, ", ");
      if (d + 1 < dims.size()) {
        absl::StrAppend(&text, nest(d + 1));
      } else {
        absl::StrAppend(&text, ((next++ * 7 + int64_t{seed} * 13) % 11 - 5) * 0.25);
      }
    }
    return text + "}";
  };
  return nest(0);
}

// The kind a batch-1, channels-last convolution with constant weights and
// `rows` output rows (pixels for a pointwise one) runs on: split into rows
// when the pool has threads to split across and the convolution is small
// (convolution_thunk.cc: at most 32M multiply-adds) or its rows divide
// evenly (the longest piece at most 1/16 above an even share).
std::string RowsKind(int64_t rows, bool small = true) {
  const int64_t threads = ThreadPool::DefaultNumThreads();
  const bool even = (rows + threads - 1) / threads * threads * 16 <= rows * 17;
  return threads >= 2 && rows >= threads && (small || even) ? "onednn-rows" : "onednn";
}

// The kind such a convolution with `features` output features runs on:
// split over its features where its rows do not divide evenly, the
// convolution is large or its longest row piece more than 1/8 above an
// even share, and its features divide (a multiple of 16 per thread), else
// as RowsKind says.
std::string FeaturesKind(int64_t rows, int64_t features, bool small = true) {
  const int64_t threads = ThreadPool::DefaultNumThreads();
  const int64_t longest = (rows + threads - 1) / threads;
  const bool even = longest * threads * 16 <= rows * 17;
  const bool lopsided = longest * threads * 8 > rows * 9;
  if (threads >= 2 && !even && (!small || lopsided) && features % (threads * 16) == 0) {
    return "onednn-features";
  }
  return RowsKind(rows, small);
}

// An ONNX Conv as the front end emits it (NHWC, OIHW constant weights) with
// a bias, an optional residual and a clamp to [0, 6] (a relu when
// `clamp_to_six` is false).
std::string RowsModule(int64_t height, int64_t width, int64_t in, int64_t out, int64_t size,
                       int64_t stride, int64_t groups, bool residual, bool clamp_to_six = true) {
  const int64_t pad = size / 2;
  const int64_t out_h = (height + 2 * pad - size) / stride + 1;
  const int64_t out_w = (width + 2 * pad - size) / stride + 1;
  const std::string y = absl::StrCat("f32[1,", out_h, ",", out_w, ",", out, "]");
  std::string text = absl::StrCat(
      "HloModule conv\nENTRY e {\n  x = f32[1,", height, ",", width, ",", in,
      "] parameter(0)\n  res = ", y, " parameter(1)\n  k = f32[", out, ",", in / groups, ",", size,
      ",", size, "] constant(", ConstantText({out, in / groups, size, size}, 1), ")\n  bias = f32[",
      out, "] constant(", ConstantText({out}, 2), ")\n  c = ", y,
      " convolution(x, k), window={size=", size, "x", size, " stride=", stride, "x", stride,
      " pad=", pad, "_", pad, "x", pad, "_", pad, "}, dim_labels=b01f_oi01->b01f",
      groups > 1 ? absl::StrCat(", feature_group_count=", groups) : "", "\n  bb = ", y,
      " broadcast(bias), dimensions={3}\n  b = ", y, " add(c, bb)\n");
  absl::StrAppend(&text, "  s = ", y, residual ? " add(b, res)\n" : " copy(b)\n",
                  "  lo = f32[] constant(0)\n  los = ", y, " broadcast(lo), dimensions={}\n");
  if (!clamp_to_six) {
    absl::StrAppend(&text, "  ROOT m = ", y, " maximum(los, s)\n}\n");
    return text;
  }
  absl::StrAppend(&text, "  hi = f32[] constant(6)\n  his = ", y,
                  " broadcast(hi), dimensions={}\n  m = ", y, " maximum(los, s)\n  ROOT r = ", y,
                  " minimum(m, his)\n}\n");
  return text;
}

// While one exists, f32 3x3 convolutions run oneDNN's direct kernels
// (AXLE_CPU_WINOGRAD=0): for the cases about how those split.
class DirectKernelsOnly {
 public:
  DirectKernelsOnly() { setenv("AXLE_CPU_WINOGRAD", "0", 1); }
  ~DirectKernelsOnly() { unsetenv("AXLE_CPU_WINOGRAD"); }
  DirectKernelsOnly(const DirectKernelsOnly&) = delete;
  DirectKernelsOnly& operator=(const DirectKernelsOnly&) = delete;
};

TEST(CpuConvolution, RowsAcrossThePool) {
  // 3x3 with a residual, a strided depthwise 3x3, a 1x1: each split into
  // rows (12 output rows), against the interpreter.
  DirectKernelsOnly direct;
  Check(RowsModule(12, 9, 8, 16, 3, 1, 1, true), RowsKind(12));
  Check(RowsModule(24, 10, 16, 16, 3, 2, 16, false), RowsKind(12));
  Check(RowsModule(12, 5, 24, 8, 1, 1, 1, true), RowsKind(12));
  // 7 rows (4 + 3 on 2 threads) and 16 features (too few to split), and a
  // convolution too large to split unevenly (132M multiply-adds: 7x512
  // rows, 64 features, 3x3), which splits over its features instead; as
  // large a one with 16 rows splits into rows.
  Check(RowsModule(7, 7, 8, 16, 3, 1, 1, true), RowsKind(7));
  EXPECT_EQ(KindOf(RowsModule(7, 512, 64, 64, 3, 1, 1, true)), FeaturesKind(7, 64, false));
  EXPECT_EQ(KindOf(RowsModule(16, 256, 64, 64, 3, 1, 1, true)), RowsKind(16, false));
}

TEST(CpuConvolution, UnevenRowsSplitIntoFeatures) {
  // 7 rows do not divide between 2 threads; 64 or 96 features do: each
  // piece computes its features over every pixel (with the residual, the
  // bias and the clamp), against the interpreter. A stride-2 3x3 (14 -> 7
  // rows, as ResNet's last stage) and a 5x5 over 5 rows (3 + 2) too; 13
  // rows (7 + 6) stay in rows.
  DirectKernelsOnly direct;
  Check(RowsModule(7, 7, 16, 64, 3, 1, 1, true), FeaturesKind(7, 64));
  Check(RowsModule(7, 9, 24, 96, 3, 1, 1, false), FeaturesKind(7, 96));
  Check(RowsModule(14, 14, 16, 64, 3, 2, 1, true), FeaturesKind(7, 64));
  Check(RowsModule(5, 6, 8, 32, 5, 1, 1, false), FeaturesKind(5, 32));
  Check(RowsModule(13, 6, 8, 32, 3, 1, 1, false), FeaturesKind(13, 32));
}

TEST(CpuConvolution, PointwiseSplitsIntoPixels) {
  // A 1x1 convolution splits over its pixels, not its rows: one row of 9
  // pixels (no row split possible on 2 threads), and 7x7 (25 + 24 pixels),
  // with a residual, against the interpreter.
  Check(RowsModule(1, 9, 16, 8, 1, 1, 1, true), RowsKind(9));
  Check(RowsModule(7, 7, 32, 24, 1, 1, 1, true), RowsKind(49));
  Check(RowsModule(7, 7, 32, 24, 1, 1, 1, false), RowsKind(49));
  // Strided 1x1 (a ResNet downsample) splits by rows, or by its features
  // when they divide where the rows (7) do not.
  Check(RowsModule(14, 14, 16, 24, 1, 2, 1, false), RowsKind(7));
  Check(RowsModule(14, 14, 16, 32, 1, 2, 1, false), FeaturesKind(7, 32));
}

// A network's first convolution as the ONNX front end emits it: an NCHW
// image (`in` channels, not channels-last) into an NHWC output, OIHW
// constant weights, a bias and a relu.
std::string NchwInputModule(int64_t height, int64_t width, int64_t in, int64_t out, int64_t size,
                            int64_t stride, int64_t pad) {
  const int64_t out_h = (height + 2 * pad - size) / stride + 1;
  const int64_t out_w = (width + 2 * pad - size) / stride + 1;
  const std::string y = absl::StrCat("f32[1,", out_h, ",", out_w, ",", out, "]");
  return absl::StrCat(
      "HloModule conv\nENTRY e {\n  x = f32[1,", in, ",", height, ",", width,
      "] parameter(0)\n  k = f32[", out, ",", in, ",", size, ",", size, "] constant(",
      ConstantText({out, in, size, size}, 1), ")\n  bias = f32[", out, "] constant(",
      ConstantText({out}, 2), ")\n  c = ", y, " convolution(x, k), window={size=", size, "x", size,
      " stride=", stride, "x", stride, " pad=", pad, "_", pad, "x", pad, "_", pad,
      "}, dim_labels=bf01_oi01->b01f\n  bb = ", y, " broadcast(bias), dimensions={3}\n  b = ", y,
      " add(c, bb)\n  zero = f32[] constant(0)\n  zeros = ", y,
      " broadcast(zero), dimensions={}\n  ROOT r = ", y, " maximum(b, zeros)\n}\n");
}

TEST(CpuConvolution, NchwInputSplitsIntoRowsGatheredChannelsLast) {
  // The input is NCHW, which oneDNN's kernels would reorder whole before the
  // primitive: each piece gathers its own input rows channels-last instead.
  // 3 channels, 3x3 stride 2 unpadded (odd rows: 9 = 5 + 4), 7x7 stride 2
  // padded by 3 (8 rows), and 5 channels 3x3 stride 1 padded by 1, against
  // the interpreter.
  Check(NchwInputModule(19, 13, 3, 16, 3, 2, 0), RowsKind(9));
  Check(NchwInputModule(16, 11, 3, 8, 7, 2, 3), RowsKind(8));
  Check(NchwInputModule(6, 9, 5, 16, 3, 1, 1), RowsKind(6));
}

// The kind an f32 3x3 stride-1 convolution (padding 1) of a `rows` x
// `width` x `in` input into `out` features (16-multiples) runs on: oneDNN's
// Winograd kernels where it has them (AVX-512, as for bf16), split when the
// pool has the threads: over the output features where the weights hold at
// least 4x the input's elements and the features divide (16 per thread),
// else into rows where they split within 1/8 of even, else whole; `direct`
// where it has none.
std::string WinogradKind(int64_t rows, int64_t width, int64_t in, int64_t out,
                         const std::string& direct) {
  if (std::string(Bf16Kind()) != "onednn") return direct;
  const int64_t threads = ThreadPool::DefaultNumThreads();
  if (threads >= 2 && out * in * 9 >= 4 * rows * width * in && out % (threads * 16) == 0) {
    return "onednn-winograd-features";
  }
  const int64_t longest = (rows + threads - 1) / threads;
  return threads >= 2 && rows >= threads && longest * threads * 8 <= rows * 9
             ? "onednn-winograd-rows"
             : "onednn-winograd";
}

TEST(CpuConvolution, WinogradForThreeByThree) {
  // ResNet's 3x3 convolutions (stride 1, padding 1; bias, residual, relu;
  // 4.7M and 7.2M multiply-adds): 16 rows split into row pieces, each
  // reordering its own rows to and from the blocked layout; 7 rows of 64
  // features into 128 (weights 12x the input) and 8 rows of 48 into 96
  // (18x; the residual a slice) split over the output features, each piece
  // reordering the whole input and its features of the output (and of the
  // residual); against the interpreter. The transforms round differently
  // from the direct sum.
  const ErrorSpec winograd_error(1e-4, 1e-4);
  Check(RowsModule(16, 16, 32, 64, 3, 1, 1, true, false),
        WinogradKind(16, 16, 32, 64, RowsKind(16)), winograd_error);
  Check(RowsModule(16, 16, 32, 64, 3, 1, 1, false, false),
        WinogradKind(16, 16, 32, 64, RowsKind(16)), winograd_error);
  Check(RowsModule(7, 14, 64, 128, 3, 1, 1, true, false),
        WinogradKind(7, 14, 64, 128, FeaturesKind(7, 128)), winograd_error);
  Check(RowsModule(8, 8, 64, 128, 3, 1, 1, true, false), WinogradKind(8, 8, 64, 128, RowsKind(8)),
        winograd_error);
  Check(RowsModule(8, 8, 64, 128, 3, 1, 1, false, false), WinogradKind(8, 8, 64, 128, RowsKind(8)),
        winograd_error);
  // oneDNN's Winograd kernels take no clamp to [0, 6]: the direct ones.
  EXPECT_EQ(KindOf(RowsModule(16, 16, 32, 64, 3, 1, 1, true)), RowsKind(16));
  // An NCHW input and weights read at run time, batch 2 (no pieces): the
  // whole convolution, input, output and addend reordered around it.
  Check(R"(HloModule conv
ENTRY e {
  x = f32[2,32,12,12] parameter(0)
  k = f32[64,32,3,3] parameter(1)
  bias = f32[64] parameter(2)
  res = f32[2,64,12,12] parameter(3)
  c = f32[2,64,12,12] convolution(x, k), window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01
  bb = f32[2,64,12,12] broadcast(bias), dimensions={1}
  y = f32[2,64,12,12] add(c, bb)
  ROOT s = f32[2,64,12,12] add(y, res)
}
)",
        std::string(Bf16Kind()) == "onednn" ? "onednn-winograd" : "onednn", winograd_error);
  // JAX's input-gradient convolution: its kernel in hwoi (01oi), which
  // oneDNN's Winograd weights reorder does not read, densely copied first
  // (it ran on the scalar loop before, 60x slower).
  Check(ConvModule("f32[2,16,16,32]", "f32[3,3,32,32]", "f32[2,16,16,32]",
                   "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01oi->b01f"),
        std::string(Bf16Kind()) == "onednn" ? "onednn-winograd" : "onednn", winograd_error);
  // Not 3x3 at stride 1, or below 4M multiply-adds (0.5M): the direct
  // kernels.
  EXPECT_EQ(KindOf(RowsModule(32, 32, 32, 64, 3, 2, 1, false)), RowsKind(16));
  EXPECT_EQ(KindOf(RowsModule(12, 9, 16, 32, 3, 1, 1, true, false)), RowsKind(12));
  // Fewer than 16 input (or output) features, though over 4M multiply-adds
  // (96x96, 3 -> 32: 8M): the direct kernels.
  EXPECT_EQ(KindOf(RowsModule(96, 96, 3, 32, 3, 1, 1, false, false)).find("winograd"),
            std::string::npos);
  EXPECT_EQ(KindOf(RowsModule(96, 96, 32, 8, 3, 1, 1, false, false)).find("winograd"),
            std::string::npos);
  // Off with the environment switch: the direct kernels' split.
  DirectKernelsOnly direct;
  EXPECT_EQ(KindOf(RowsModule(16, 16, 32, 64, 3, 1, 1, true, false)), RowsKind(16));
}

}  // namespace
}  // namespace axle
