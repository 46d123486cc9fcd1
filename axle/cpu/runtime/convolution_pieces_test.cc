// Batch-1 convolutions split across the intra-op pool (convolution_thunk_pieces.cc): into
// rows, output features or pixels, an NCHW input gathered channels-last by each row piece, and
// 3x3 ones on oneDNN's Winograd kernels as row or feature pieces; each case checks the split the
// thunk picked and the result against the interpreter.
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "axle/base/thread_pool.h"
#include "axle/cpu/runtime/convolution_test_util.h"
#include "axle/cpu/runtime/depthwise_rows.h"
#include "gtest/gtest.h"

namespace axle {
namespace {

using conv_test::Bf16Kind;
using conv_test::Check;
using conv_test::ConstantText;
using conv_test::ConvModule;
using conv_test::KindOf;

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
  // A strided depthwise 3x3 runs on depthwise_rows.h's kernel where the
  // CPU has AVX-512F (in pieces of rows too), a 5x5 one on oneDNN's.
  Check(RowsModule(24, 10, 16, 16, 3, 2, 16, false),
        cpu::DepthwiseRowsAvailable() ? "depthwise-rows" : RowsKind(12));
  Check(RowsModule(24, 10, 16, 16, 5, 2, 16, false), RowsKind(12));
  Check(RowsModule(12, 5, 24, 8, 1, 1, 1, true), RowsKind(12));
  // 7 rows (4 + 3 on 2 threads) and 16 features (too few to split), and a
  // convolution too large to split unevenly (132M multiply-adds: 7x512
  // rows, 64 features, 3x3), which splits over its features instead; as
  // large a one with 16 rows splits into rows.
  Check(RowsModule(7, 7, 8, 16, 3, 1, 1, true), RowsKind(7));
  EXPECT_EQ(KindOf(RowsModule(7, 512, 64, 64, 3, 1, 1, true)), FeaturesKind(7, 64, false));
  EXPECT_EQ(KindOf(RowsModule(16, 256, 64, 64, 3, 1, 1, true)), RowsKind(16, false));
}

TEST(CpuConvolution, DepthwiseOnItsOwnKernel) {
  // 3x3 depthwise convolutions of one channels-last image on
  // depthwise_rows.h's kernel: stride 1 with a relu and a feature count
  // no multiple of 16, 7 rows (4 + 3 on 2 threads), a single row, stride
  // 2 over odd rows and columns; with a residual (an addend) it stays on
  // oneDNN. All against the interpreter.
  if (!cpu::DepthwiseRowsAvailable()) GTEST_SKIP() << "no AVX-512F";
  Check(RowsModule(7, 13, 30, 30, 3, 1, 30, false, /*clamp_to_six=*/false), "depthwise-rows");
  Check(RowsModule(7, 7, 48, 48, 3, 1, 48, false), "depthwise-rows");
  Check(RowsModule(1, 5, 16, 16, 3, 1, 16, false), "depthwise-rows");
  Check(RowsModule(13, 9, 32, 32, 3, 2, 32, false), "depthwise-rows");
  EXPECT_NE(KindOf(RowsModule(8, 8, 16, 16, 3, 1, 16, true)), "depthwise-rows");
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

// The kind of a small Winograd candidate (under 64M multiply-adds) whose
// weights are read at run time: Winograd on one thread, the direct kernels
// on more (its pieces need constant weights, and oneDNN's team runs it
// slower than the direct ones).
std::string RuntimeWeightsWinogradKind() {
  return std::string(Bf16Kind()) == "onednn" && ThreadPool::DefaultNumThreads() < 2
             ? "onednn-winograd"
             : "onednn";
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
  // An NCHW input and weights read at run time, batch 2 (no pieces): on one
  // thread the whole convolution, input, output and addend reordered
  // around it.
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
        RuntimeWeightsWinogradKind(), winograd_error);
  // JAX's input-gradient convolution: its kernel in hwoi (01oi), which
  // oneDNN's Winograd weights reorder does not read, densely copied first
  // (it ran on the scalar loop before, 60x slower).
  Check(ConvModule("f32[2,16,16,32]", "f32[3,3,32,32]", "f32[2,16,16,32]",
                   "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01oi->b01f"),
        RuntimeWeightsWinogradKind(), winograd_error);
  // A larger one (151M multiply-adds) with weights read at run time:
  // Winograd on any number of threads.
  EXPECT_EQ(KindOf(ConvModule("f32[16,32,32,32]", "f32[3,3,32,32]", "f32[16,32,32,32]",
                              "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f")),
            std::string(Bf16Kind()) == "onednn" ? "onednn-winograd" : "onednn");
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
