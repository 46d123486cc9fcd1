// Convolutions on the `cpu` platform against the interpreter: dim_labels in
// several orders, 1-d/2-d/3-d, strides, padding (asymmetric, negative), lhs
// and rhs dilation, window reversal, feature and batch groups, bf16, the
// loop's types (f64, f16, s32, pred), constant weights, scale + bias +
// activation epilogues (the scale folded into the weights), residual + clamp
// epilogues, broadcast operands, a convolution feeding a loop fusion, one
// executable run from four threads, weight gradients on oneDNN's
// backward-weights primitive (transposed convolutions' too, random shapes)
// and lhs-dilated convolutions on its backward-data primitive. Each case also checks which
// implementation the convolution thunk picked, so that a case meant for oneDNN does not pass
// silently on the loop. The splits across the intra-op pool: convolution_pieces_test.cc.
#include <algorithm>
#include <cstdlib>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "axle/cpu/runtime/convolution_test_util.h"
#include "axle/cpu/runtime/platform_test_util.h"
#include "gtest/gtest.h"

namespace axle {
namespace {

using conv_test::Bf16Kind;
using conv_test::Check;
using conv_test::ConstantText;
using conv_test::ConvModule;
using conv_test::Values;

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

// The weight gradient of a transposed convolution: `x` [N, L..., C]
// dilated by `lhs_dilate`, the output gradient [N, Y..., O] the window, the
// kernel's gradient [K..., C, O] (C per batch group); labels place the
// logical dims (lhs b, f, spatial; rhs i, o, spatial; out b, f, spatial).
struct DilatedWeightGrad {
  int64_t n, c, o, groups;
  std::vector<int64_t> image, dilate, stride, taps, low, window;
  std::string lhs_labels, rhs_labels, out_labels;
};

std::string DilatedWeightGradModule(const DilatedWeightGrad& g) {
  auto shape = [&](const std::string& labels, char first, int64_t first_size, char second,
                   int64_t second_size, const std::vector<int64_t>& spatial) {
    std::string text = "f32[";
    for (size_t d = 0; d < labels.size(); ++d) {
      const char label = labels[d];
      const int64_t size = label == first    ? first_size
                           : label == second ? second_size
                                             : spatial[static_cast<size_t>(label - '0')];
      absl::StrAppend(&text, d > 0 ? "," : "", size);
    }
    return text + "]";
  };
  std::string size, pad, stride, lhs_dilate;
  for (size_t i = 0; i < g.image.size(); ++i) {
    const char* x = i > 0 ? "x" : "";
    // The high padding that ends the last window on the dilated input's
    // padded end (negative when it crops it).
    const int64_t high = (g.taps[i] - 1) * g.stride[i] + g.window[i] -
                         ((g.image[i] - 1) * g.dilate[i] + 1) - g.low[i];
    absl::StrAppend(&size, x, g.window[i]);
    absl::StrAppend(&pad, x, g.low[i], "_", high);
    absl::StrAppend(&stride, x, g.stride[i]);
    absl::StrAppend(&lhs_dilate, x, g.dilate[i]);
  }
  return ConvModule(
      shape(g.lhs_labels, 'b', g.c * g.groups, 'f', g.n, g.image),
      shape(g.rhs_labels, 'i', g.n, 'o', g.o, g.window),
      shape(g.out_labels, 'b', g.c, 'f', g.o, g.taps),
      absl::StrCat("window={size=", size, " stride=", stride, " pad=", pad,
                   " lhs_dilate=", lhs_dilate, "}, dim_labels=", g.lhs_labels, "_", g.rhs_labels,
                   "->", g.out_labels,
                   g.groups > 1 ? absl::StrCat(", batch_group_count=", g.groups) : ""));
}

TEST(CpuConvolution, LhsDilatedWeightGradients) {
  // conv_transpose(strides=(2, 2), padding='SAME')'s kernel gradient, JAX's
  // labels, on backward-weights with the roles swapped.
  DilatedWeightGrad jax{3,      5,      4,        1,      {6, 6}, {2, 2}, {1, 1},
                        {3, 3}, {2, 2}, {12, 12}, "f01b", "i01o", "01bf"};
  Check(DilatedWeightGradModule(jax), "onednn-weight-grad");
  // Random shapes: dilations 1-3, strides (the forward convolution's rhs
  // dilation) 1-2, low padding from negative to the taps' reach, windows
  // cropping the dilated input or padding past it, batch groups, the
  // output's layout and the minibatch's place varied.
  const std::vector<std::vector<std::string>> labels = {{"f01b", "i01o", "01bf"},
                                                        {"f01b", "i01o", "bf01"},
                                                        {"f01b", "i01o", "f01b"},
                                                        {"bf01", "io01", "01bf"}};
  std::mt19937 rng(11);
  auto uniform = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  int backward_weights = 0;
  for (int round = 0; round < 32; ++round) {
    DilatedWeightGrad g;
    g.n = uniform(1, 5);
    g.groups = uniform(0, 3) == 0 ? 2 : 1;
    g.c = uniform(1, 6);
    g.o = g.groups * uniform(1, 6);
    int64_t window = 1, pixels = 1;
    bool in_reach = true;
    for (int i = 0; i < 2; ++i) {
      g.image.push_back(uniform(2, 7));
      g.dilate.push_back(i == round % 2 ? uniform(2, 3) : uniform(1, 3));
      g.stride.push_back(uniform(0, 3) == 0 ? 2 : 1);
      g.taps.push_back(uniform(1, 4));
      // Low and high padding within the taps' reach mostly (as JAX's
      // transposes write them), a fifth of them outside it.
      const int64_t reach = (g.taps[i] - 1) * g.stride[i];
      const bool outside = uniform(0, 4) == 0;
      g.low.push_back(outside ? uniform(-2, reach + 2) : uniform(0, reach));
      const int64_t high = outside ? uniform(-2, reach + 2) : uniform(0, reach);
      const int64_t dilated = (g.image[i] - 1) * g.dilate[i] + 1;
      g.window.push_back(std::max<int64_t>(1, dilated + g.low[i] + high - reach));
      in_reach = in_reach && g.stride[i] == 1 && g.low[i] >= 0 && g.low[i] <= reach && high >= 0 &&
                 high <= reach && g.window[i] >= g.taps[i];
      window *= g.window[i];
      pixels *= g.taps[i];
    }
    const std::vector<std::string>& l = labels[static_cast<size_t>(round) % labels.size()];
    g.lhs_labels = l[0];
    g.rhs_labels = l[1];
    g.out_labels = l[2];
    const std::string text = DilatedWeightGradModule(g);
    SCOPED_TRACE(text);
    // The minibatch (lhs f) outermost in the input, a window larger than
    // the kernel (and as long in each dim), stride 1 and padding within the
    // taps' reach: backward-weights; the others on the forward primitive
    // or its reference kernels (grouped).
    const bool expected = g.lhs_labels[0] == 'f' && window > pixels && in_reach;
    backward_weights += expected ? 1 : 0;
    if (expected) {
      Check(text, "onednn-weight-grad");
    } else {
      conv_test::ExpectAgrees(text);
      EXPECT_NE(conv_test::KindOf(text), "onednn-weight-grad");
    }
  }
  EXPECT_GE(backward_weights, 8);
  // Rhs dilation (a forward convolution's stride on a transposed one): the
  // forward primitive.
  Check(ConvModule("f32[2,5,5,3]", "f32[2,5,5,4]", "f32[4,4,3,4]",
                   "window={size=5x5 pad=2_1x2_1 lhs_dilate=2x2 rhs_dilate=2x2}, "
                   "dim_labels=f01b_i01o->01bf"),
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
  // With an epilogue (a bias and relu, as JAX's conv_transpose then relu;
  // a clamp), after the primitive on the output.
  Check(R"(HloModule conv
ENTRY e {
  x = f32[3,6,7,5] parameter(0)
  k = f32[3,3,5,4] parameter(1)
  b = f32[4] parameter(2)
  c = f32[3,12,14,4] convolution(x, k), window={size=3x3 pad=2_1x2_1 lhs_dilate=2x2}, dim_labels=b01f_01io->b01f
  bb = f32[3,12,14,4] broadcast(b), dimensions={3}
  y = f32[3,12,14,4] add(c, bb)
  z = f32[] constant(0)
  zb = f32[3,12,14,4] broadcast(z), dimensions={}
  ROOT r = f32[3,12,14,4] maximum(y, zb)
}
)",
        "onednn-backward-data");
  Check(R"(HloModule conv
ENTRY e {
  x = f32[2,5,5,6] parameter(0)
  k = f32[3,3,6,16] parameter(1)
  c = f32[2,10,10,16] convolution(x, k), window={size=3x3 pad=2_1x2_1 lhs_dilate=2x2}, dim_labels=b01f_01io->b01f
  lo = f32[] constant(-0.5)
  los = f32[2,10,10,16] broadcast(lo), dimensions={}
  hi = f32[] constant(1.5)
  his = f32[2,10,10,16] broadcast(hi), dimensions={}
  ROOT r = f32[2,10,10,16] clamp(los, c, his)
}
)",
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

TEST(CpuConvolution, OneDimensionalGroupsRunAsTwoDimensional) {
  // A grouped 1-d convolution runs as a 2-d one with a unit height
  // (WithUnitRow): depthwise and causal (JAX's b0f_0io->b0f), two groups in
  // NCW with a bias + relu epilogue, a strided depthwise one whose feature
  // dim is outermost in the kernel, and one into an output laid out [W, N, C].
  Check(ConvModule("f32[3,40,8]", "f32[7,1,8]", "f32[3,40,8]",
                   "window={size=7 pad=6_0}, dim_labels=b0f_0io->b0f, feature_group_count=8"),
        "onednn");
  Check(R"(HloModule conv
ENTRY e {
  x = f32[2,4,17] parameter(0)
  k = f32[6,2,3] parameter(1)
  bias = f32[6] parameter(2)
  c = f32[2,6,17] convolution(x, k), window={size=3 pad=1_1}, dim_labels=bf0_oi0->bf0, feature_group_count=2
  bb = f32[2,6,17] broadcast(bias), dimensions={1}
  y = f32[2,6,17] add(c, bb)
  zero = f32[] constant(0)
  zeros = f32[2,6,17] broadcast(zero), dimensions={}
  ROOT r = f32[2,6,17] maximum(y, zeros)
}
)",
        "onednn");
  Check(ConvModule("f32[2,33,16]", "f32[16,1,5]", "f32[2,15,16]",
                   "window={size=5 stride=2 pad=0_0 rhs_dilate=1}, dim_labels=b0f_oi0->b0f, "
                   "feature_group_count=16"),
        "onednn");
  Check(ConvModule("f32[2,12,4]", "f32[3,1,4]", "f32[10,2,4]",
                   "window={size=3}, dim_labels=b0f_0io->0bf, feature_group_count=4"),
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

}  // namespace
}  // namespace axle
