//===- kernels_xla_values_test.cc - Values XLA's own evaluator tests pin ---===//
//
// Inputs and expected outputs from the convolution and FFT cases of XLA's
// hlo_evaluator_test.cc, rewritten as HLO text run through our parser and
// evaluator: agreement here means the kernels follow XLA's reading of
// dim_labels, padding, dilations, reversal, feature groups and the FFT
// variants, not merely our own.
//
//===----------------------------------------------------------------------===//
#include <complex>
#include <numeric>
#include <string>
#include <vector>

#include "axle/eval/evaluator_test_util.h"
#include "axle/eval/kernel_test_util.h"
#include "gtest/gtest.h"

namespace axle {
namespace {

using testing_util::EvalOk;
using testing_util::ExpectNear;
using testing_util::Values;

std::vector<float> Iota(int n, float start) {
  std::vector<float> v(n);
  std::iota(v.begin(), v.end(), start);
  return v;
}

// --- convolution ------------------------------------------------------------------

// XLA's Conv2DGeneralDimensions input [f=2, h=3, b=1, w=4] = 1..24 and
// weight [o=1, w=3, i=2, h=3].
Literal GeneralInput() { return Values<float>({2, 3, 1, 4}, Iota(24, 1)); }
Literal GeneralWeight() {
  return Values<float>({1, 3, 2, 3},
                       {1, 7, 13, 4, 10, 16, 2, 8, 14, 5, 11, 17, 3, 9, 15, 6, 12, 18});
}

TEST(XlaValues, Conv2DGeneralDimensions) {
  Literal input = GeneralInput(), weight = GeneralWeight();
  EXPECT_EQ(EvalOk(R"(
HloModule m
ENTRY e {
  x = f32[2,3,1,4] parameter(0)
  w = f32[1,3,2,3] parameter(1)
  ROOT c = f32[1,1,1,2] convolution(x, w), window={size=3x3}, dim_labels=f0b1_o1i0->f0b1
})",
                   {&input, &weight}),
            Values<float>({1, 1, 1, 2}, {2514, 2685}));
}

TEST(XlaValues, Conv2DGeneralDimensionsReversed) {
  // The weight reversed in both spatial dimensions and read with window
  // reversal gives the same numbers.
  Literal input = GeneralInput(), weight = GeneralWeight();
  EXPECT_EQ(EvalOk(R"(
HloModule m
ENTRY e {
  x = f32[2,3,1,4] parameter(0)
  w = f32[1,3,2,3] parameter(1)
  r = f32[1,3,2,3] reverse(w), dimensions={3,1}
  ROOT c = f32[1,1,1,2] convolution(x, r), window={size=3x3 rhs_reversal=1x1}, dim_labels=f0b1_o1i0->f0b1
})",
                   {&input, &weight}),
            Values<float>({1, 1, 1, 2}, {2514, 2685}));
}

Literal Input4x4() { return Values<float>({1, 1, 4, 4}, Iota(16, 1)); }
Literal Kernel2x2() { return Values<float>({1, 1, 2, 2}, {5, 6, 7, 8}); }

TEST(XlaValues, Conv2DWithHighPadding) {
  Literal x = Input4x4(), k = Kernel2x2();
  EXPECT_EQ(EvalOk(R"(
HloModule m
ENTRY e {
  x = f32[1,1,4,4] parameter(0)
  k = f32[1,1,2,2] parameter(1)
  ROOT c = f32[1,1,4,4] convolution(x, k), window={size=2x2 pad=0_1x0_1}, dim_labels=bf01_oi01->bf01
})",
                   {&x, &k}),
            Values<float>({1, 1, 4, 4}, {100, 126, 152, 76, 204, 230, 256, 124, 308, 334, 360, 172,
                                         149, 160, 171, 80}));
}

TEST(XlaValues, DilatedBaseConv2DWithHighPadding) {
  Literal x = Input4x4(), k = Kernel2x2();
  EXPECT_EQ(EvalOk(R"(
HloModule m
ENTRY e {
  x = f32[1,1,4,4] parameter(0)
  k = f32[1,1,2,2] parameter(1)
  ROOT c = f32[1,1,7,7] convolution(x, k), window={size=2x2 pad=0_1x0_1 lhs_dilate=2x2}, dim_labels=bf01_oi01->bf01
})",
                   {&x, &k}),
            Values<float>({1, 1, 7, 7},
                          {5,  12, 10,  18, 15,  24,  20,  35,  48, 42, 56, 49, 64, 56, 25, 36, 30,
                           42, 35, 48,  40, 63,  80,  70,  88,  77, 96, 84, 45, 60, 50, 66, 55, 72,
                           60, 91, 112, 98, 120, 105, 128, 112, 65, 84, 70, 90, 75, 96, 80}));
}

TEST(XlaValues, DilatedBaseConv2DWithLowAndHighPadding) {
  Literal x = Input4x4(), k = Kernel2x2();
  EXPECT_EQ(EvalOk(R"(
HloModule m
ENTRY e {
  x = f32[1,1,4,4] parameter(0)
  k = f32[1,1,2,2] parameter(1)
  ROOT c = f32[1,1,8,8] convolution(x, k), window={size=2x2 pad=1_1x1_1 lhs_dilate=2x2}, dim_labels=bf01_oi01->bf01
})",
                   {&x, &k}),
            Values<float>({1, 1, 8, 8},
                          {8,   7,  16,  14, 24,  21,  32,  28,  6,  5,  12, 10, 18, 15, 24, 20,
                           40,  35, 48,  42, 56,  49,  64,  56,  30, 25, 36, 30, 42, 35, 48, 40,
                           72,  63, 80,  70, 88,  77,  96,  84,  54, 45, 60, 50, 66, 55, 72, 60,
                           104, 91, 112, 98, 120, 105, 128, 112, 78, 65, 84, 70, 90, 75, 96, 80}));
}

TEST(XlaValues, DilatedWindowAndBaseConv2DWithDifferentLowAndHighPaddingAndStrides) {
  Literal x = Input4x4();
  Literal k = Values<float>({1, 1, 2, 3}, {5, 6, 7, 8, 9, 10});
  EXPECT_EQ(EvalOk(R"(
HloModule m
ENTRY e {
  x = f32[1,1,4,4] parameter(0)
  k = f32[1,1,2,3] parameter(1)
  ROOT c = f32[1,1,9,3] convolution(x, k), window={size=2x3 stride=1x3 pad=2_2x2_-1 lhs_dilate=2x3 rhs_dilate=2x1}, dim_labels=bf01_oi01->bf01
})",
                   {&x, &k}),
            Values<float>({1, 1, 9, 3}, {10,  20, 30, 0, 0,   0,   57,  74, 91, 0, 0,  0,  125, 142,
                                         159, 0,  0,  0, 193, 210, 227, 0,  0,  0, 91, 98, 105}));
}

TEST(XlaValues, Conv2DGroupedConvolution) {
  Literal x = Values<float>({1, 2, 2, 4}, Iota(16, -7));
  Literal k = Values<float>({2, 2, 2, 8}, Iota(64, -31));
  EXPECT_EQ(EvalOk(R"(
HloModule m
ENTRY e {
  x = f32[1,2,2,4] parameter(0)
  k = f32[2,2,2,8] parameter(1)
  ROOT c = f32[1,1,1,8] convolution(x, k), window={size=2x2}, dim_labels=b01f_01io->b01f, feature_group_count=2
})",
                   {&x, &k}),
            Values<float>({1, 1, 1, 8}, {668, 664, 660, 656, 668, 680, 692, 704}));
}

// --- gather / scatter -------------------------------------------------------------

Literal Matrix3x3() { return LiteralUtil::CreateR2<int32_t>({{1, 2, 3}, {4, 5, 6}, {7, 8, 9}}); }
Literal Operand3x3x2() {
  return Values<int32_t>({3, 3, 2},
                         {-1, 1, -2, 2, -3, 3, -4, 4, -5, 5, -6, 6, -7, 7, -8, 8, -9, 9});
}

TEST(XlaValues, GatherMultipleBatchDims) {
  Literal operand = Matrix3x3();
  Literal indices = LiteralUtil::CreateR2<int32_t>({{0, 2}, {2, 1}});
  EXPECT_EQ(EvalOk(R"(
HloModule m
ENTRY e {
  operand = s32[3,3] parameter(0)
  indices = s32[2,2] parameter(1)
  ROOT g = s32[2,3,2] gather(operand, indices), offset_dims={1}, collapsed_slice_dims={1}, start_index_map={1}, index_vector_dim=2, slice_sizes={3,1}
})",
                   {&operand, &indices}),
            Values<int32_t>({2, 3, 2}, {1, 3, 4, 6, 7, 9, 3, 2, 6, 5, 9, 8}));
}

TEST(XlaValues, GatherNdWithNonDefaultIndexVectorDim) {
  Literal operand = Operand3x3x2();
  Literal indices = LiteralUtil::CreateR2<int32_t>({{0, 0}, {1, 0}});
  EXPECT_EQ(EvalOk(R"(
HloModule m
ENTRY e {
  operand = s32[3,3,2] parameter(0)
  indices = s32[2,2] parameter(1)
  ROOT g = s32[2,2] gather(operand, indices), offset_dims={1}, collapsed_slice_dims={0,1}, start_index_map={0,1}, index_vector_dim=0, slice_sizes={1,1,2}
})",
                   {&operand, &indices}),
            LiteralUtil::CreateR2<int32_t>({{-2, 2}, {-1, 1}}));
}

TEST(XlaValues, GatherBatchDynamicSliceAndZeroBounds) {
  Literal operand = Matrix3x3();
  Literal indices = LiteralUtil::CreateR2<int32_t>({{2, 1}, {1, 1}});
  EXPECT_EQ(EvalOk(R"(
HloModule m
ENTRY e {
  operand = s32[3,3] parameter(0)
  indices = s32[2,2] parameter(1)
  ROOT g = s32[2,1,1] gather(operand, indices), offset_dims={1,2}, collapsed_slice_dims={}, start_index_map={0,1}, index_vector_dim=0, slice_sizes={1,1}
})",
                   {&operand, &indices}),
            Values<int32_t>({2, 1, 1}, {8, 5}));
  Literal empty(ShapeUtil::MakeShape(S32, {3, 0}));
  Literal starts = Values<int32_t>({2}, {0, 2});
  EXPECT_EQ(EvalOk(R"(
HloModule m
ENTRY e {
  operand = s32[3,0] parameter(0)
  indices = s32[2] parameter(1)
  ROOT g = s32[2,0] gather(operand, indices), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,0}
})",
                   {&empty, &starts}),
            Literal(ShapeUtil::MakeShape(S32, {2, 0})));
}

TEST(XlaValues, GatherNoOutputWindowDims) {
  Literal operand = Values<int32_t>({3}, {0, 1, 2});
  Literal indices = Values<int32_t>({2, 2, 1}, {0, 1, 2, 1});
  EXPECT_EQ(EvalOk(R"(
HloModule m
ENTRY e {
  operand = s32[3] parameter(0)
  indices = s32[2,2,1] parameter(1)
  ROOT g = s32[2,2] gather(operand, indices), offset_dims={}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=2, slice_sizes={1}
})",
                   {&operand, &indices}),
            LiteralUtil::CreateR2<int32_t>({{0, 1}, {2, 1}}));
}

TEST(XlaValues, GatherExplicitBatchDims) {
  // Operand batching dims {1, 3} pair with indices dims {1, 0}; the slice of
  // 2 along dimension 0 starts at the clamped index.
  Literal operand = Values<int32_t>(
      {3, 2, 1, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18});
  Literal indices = LiteralUtil::CreateR2<int32_t>({{1, 0}, {0, 1}, {1, 0}});
  EXPECT_EQ(EvalOk(R"(
HloModule m
ENTRY e {
  operand = s32[3,2,1,3] parameter(0)
  indices = s32[3,2] parameter(1)
  ROOT g = s32[3,2,2] gather(operand, indices), offset_dims={2}, collapsed_slice_dims={2}, start_index_map={0}, index_vector_dim=2, slice_sizes={2,1,1,1}, operand_batching_dims={1,3}, start_indices_batching_dims={1,0}
})",
                   {&operand, &indices}),
            Values<int32_t>({3, 2, 2}, {7, 13, 4, 10, 2, 8, 11, 17, 9, 15, 6, 12}));
}

TEST(XlaValues, GatherDiagonalThroughBatchingDims) {
  Literal operand = LiteralUtil::CreateR2<int32_t>(
      {{0, 1, 2, 3}, {10, 11, 12, 13}, {20, 21, 22, 23}, {30, 31, 32, 33}});
  EXPECT_EQ(EvalOk(R"(
HloModule m
ENTRY e {
  operand = s32[4,4] parameter(0)
  indices = s32[4,1] iota(), iota_dimension=0
  ROOT g = s32[4,1] gather(operand, indices), offset_dims={}, collapsed_slice_dims={1}, start_index_map={1}, operand_batching_dims={0}, start_indices_batching_dims={0}, index_vector_dim=2, slice_sizes={1,1}
})",
                   {&operand}),
            Values<int32_t>({4, 1}, {0, 11, 22, 33}));
}

constexpr absl::string_view kScatterRows = R"(
HloModule m
combine {
  lhs = s32[] parameter(0)
  rhs = s32[] parameter(1)
  ROOT r = s32[] OP(lhs, rhs)
}
ENTRY e {
  operand = s32[3,3] parameter(0)
  indices = s32[2] parameter(1)
  updates = s32[2,3] parameter(2)
  ROOT s = s32[3,3] scatter(operand, indices, updates), to_apply=combine, update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1
})";

std::string WithOp(absl::string_view op) {
  std::string text(kScatterRows);
  text.replace(text.find("OP"), 2, std::string(op));
  return text;
}

TEST(XlaValues, ScatterMultiplyAndRepeatedIndices) {
  Literal operand = Matrix3x3();
  Literal updates = LiteralUtil::CreateR2<int32_t>({{10, 20, 30}, {70, 80, 90}});
  Literal rows02 = Values<int32_t>({2}, {0, 2});
  EXPECT_EQ(EvalOk(WithOp("multiply"), {&operand, &rows02, &updates}),
            LiteralUtil::CreateR2<int32_t>({{10, 40, 90}, {4, 5, 6}, {490, 640, 810}}));
  Literal rows11 = Values<int32_t>({2}, {1, 1});
  EXPECT_EQ(EvalOk(WithOp("add"), {&operand, &rows11, &updates}),
            LiteralUtil::CreateR2<int32_t>({{1, 2, 3}, {84, 105, 126}, {7, 8, 9}}));
}

TEST(XlaValues, ScatterMultipleBatchDims) {
  Literal operand = Matrix3x3();
  Literal indices = LiteralUtil::CreateR2<int32_t>({{0, 2}, {2, 1}});
  Literal updates = Values<int32_t>({2, 3, 2}, {10, 30, 40, 60, 70, 90, 5, 5, 5, 5, 5, 5});
  EXPECT_EQ(EvalOk(R"(
HloModule m
add {
  lhs = s32[] parameter(0)
  rhs = s32[] parameter(1)
  ROOT r = s32[] add(lhs, rhs)
}
ENTRY e {
  operand = s32[3,3] parameter(0)
  indices = s32[2,2] parameter(1)
  updates = s32[2,3,2] parameter(2)
  ROOT s = s32[3,3] scatter(operand, indices, updates), to_apply=add, update_window_dims={1}, inserted_window_dims={1}, scatter_dims_to_operand_dims={1}, index_vector_dim=2
})",
                   {&operand, &indices, &updates}),
            LiteralUtil::CreateR2<int32_t>({{11, 7, 38}, {44, 10, 71}, {77, 13, 104}}));
}

// --- fft ------------------------------------------------------------------------------

TEST(XlaValues, Rfft8AndIrfft9) {
  Literal x8 = Values<float>({8}, {1.8, 2.7, 3.6, 4.5, 5.4, 6.3, 7.2, 8.1});
  ExpectNear(EvalOk(R"(
HloModule m
ENTRY e {
  x = f32[8] parameter(0)
  ROOT f = c64[5] fft(x), fft_type=RFFT, fft_length={8}
})",
                    {&x8}),
             Values<complex64>(
                 {5}, {{39.6, 0.0}, {-3.6, 8.691169}, {-3.6, 3.6}, {-3.6, 1.491169}, {-3.6, 0.0}}),
             1e-4);
  Literal spectrum9 = Values<complex64>({5}, {{49.5, 0.0},
                                              {-3.360560, 11.705792},
                                              {-3.893717, 5.712929},
                                              {-4.5, 3.117691},
                                              {-4.895723, 1.021942}});
  ExpectNear(EvalOk(R"(
HloModule m
ENTRY e {
  x = c64[5] parameter(0)
  ROOT f = f32[9] fft(x), fft_type=IRFFT, fft_length={9}
})",
                    {&spectrum9}),
             Values<float>({9}, {1.8, 2.7, 3.6, 4.5, 5.4, 6.3, 7.2, 8.1, 9.9}), 1e-4);
}

TEST(XlaValues, Rfft2DAndBack) {
  Literal x = Values<float>({3, 8}, {1.8, 2.7, 3.6, 4.5, 5.4, 6.3, 7.2, 8.1,  //
                                     8.1, 7.2, 6.3, 5.4, 4.5, 3.6, 2.7, 1.8,  //
                                     1.1, 2.2, 3.3, 4.4, 5.5, 6.6, 7.7, 8.8});
  Literal spectrum = Values<complex64>({3, 5}, {{118.8, 0.0},
                                                {-4.4, 10.622540},
                                                {-4.4, 4.4},
                                                {-4.4, 1.822540},
                                                {-4.4, 0.0},
                                                {0.0, 0.0},
                                                {-19.926162, 0.797280},
                                                {-10.128203, -3.728203},
                                                {-6.069756, -5.602720},
                                                {-3.2, -6.928203},
                                                {0.0, 0.0},
                                                {13.526162, 14.653687},
                                                {3.728203, 10.128203},
                                                {-0.330244, 8.253687},
                                                {-3.2, 6.928203}});
  ExpectNear(EvalOk(R"(
HloModule m
ENTRY e {
  x = f32[3,8] parameter(0)
  ROOT f = c64[3,5] fft(x), fft_type=RFFT, fft_length={3,8}
})",
                    {&x}),
             spectrum, 2e-4);
  ExpectNear(EvalOk(R"(
HloModule m
ENTRY e {
  x = c64[3,5] parameter(0)
  ROOT f = f32[3,8] fft(x), fft_type=IRFFT, fft_length={3,8}
})",
                    {&spectrum}),
             x, 1e-4);
}

// XLA's fft_c64x2x4x8_ data set and its 1D and 3D transforms.
Literal FftData() {
  return Values<complex64>({2, 4, 8}, {{0, 0},      {1, 0},
                                       {2, 0},      {3, 0},
                                       {4, 0},      {5, 0},
                                       {6, 0},      {7, 0},
                                       {0, 0},      {0, 1},
                                       {0, 2},      {0, 3},
                                       {0, 4},      {0, 5},
                                       {0, 6},      {0, 7},
                                       {0, 7},      {1, 6},
                                       {2, 5},      {3, 4},
                                       {4, 3},      {5, 2},
                                       {6, 1},      {7, 0},
                                       {7, 0},      {6, 1},
                                       {5, 2},      {4, 3},
                                       {3, 4},      {2, 5},
                                       {1, 6},      {0, 7},
                                       {-4, 0},     {-3, 0},
                                       {-2, 0},     {-1, 0},
                                       {1, 0},      {2, 0},
                                       {3, 0},      {4, 0},
                                       {0, -4},     {0, -3},
                                       {0, -2},     {0, -1},
                                       {0, 1},      {0, 2},
                                       {0, 3},      {0, 4},
                                       {3.5, 3.5},  {-1.707107, -0.707107},
                                       {-1, 0},     {-0.707107, 0.292893},
                                       {-0.5, 0.5}, {-0.292893, 0.707107},
                                       {0, 1},      {0.707107, 1.707107},
                                       {3.5, 3.5},  {1.707107, 0.707107},
                                       {1, 0},      {0.707107, -0.292893},
                                       {0.5, -0.5}, {0.292893, -0.707107},
                                       {0, -1},     {-0.707107, -1.707107}});
}

TEST(XlaValues, Fft1DOnBatchedData) {
  Literal x = FftData();
  Literal expected = Values<complex64>({2, 4, 8}, {{28, 0},  {-4, 9.656854},
                                                   {-4, 4},  {-4, 1.656854},
                                                   {-4, 0},  {-4, -1.656854},
                                                   {-4, -4}, {-4, -9.656854},
                                                   {0, 28},  {-9.656854, -4},
                                                   {-4, -4}, {-1.656854, -4},
                                                   {0, -4},  {1.656854, -4},
                                                   {4, -4},  {9.656854, -4},
                                                   {28, 28}, {5.656854, 13.656854},
                                                   {0, 8},   {-2.343146, 5.656854},
                                                   {-4, 4},  {-5.656854, 2.343146},
                                                   {-8, 0},  {-13.656854, -5.656854},
                                                   {28, 28}, {-5.656854, -13.656854},
                                                   {0, -8},  {2.343146, -5.656854},
                                                   {4, -4},  {5.656854, -2.343146},
                                                   {8, 0},   {13.656854, 5.656854},
                                                   {0, 0},   {-5, 12.071068},
                                                   {-4, 4},  {-5, 2.071068},
                                                   {-4, 0},  {-5, -2.071068},
                                                   {-4, -4}, {-5, -12.071068},
                                                   {0, 0},   {-12.071068, -5},
                                                   {-4, -4}, {-2.071068, -5},
                                                   {0, -4},  {2.071068, -5},
                                                   {4, -4},  {12.071068, -5},
                                                   {0, 7},   {1, 6},
                                                   {2, 5},   {3, 4},
                                                   {4, 3},   {5, 2},
                                                   {6, 1},   {7, 0},
                                                   {7, 0},   {6, 1},
                                                   {5, 2},   {4, 3},
                                                   {3, 4},   {2, 5},
                                                   {1, 6},   {0, 7}});
  ExpectNear(EvalOk(R"(
HloModule m
ENTRY e {
  x = c64[2,4,8] parameter(0)
  ROOT f = c64[2,4,8] fft(x), fft_type=FFT, fft_length={8}
})",
                    {&x}),
             expected, 2e-4);
}

TEST(XlaValues, Fft3D) {
  Literal x = FftData();
  Literal expected = Values<complex64>(
      {2, 4, 8}, {{91, 91},  {-23.727922, 19.727922}, {-9, 7},   {-5.727922, 1.727922},
                  {-1, -1},  {1.727922, -5.727922},   {7, -9},   {19.727922, -23.727922},
                  {0, 0},    {-12, 24.142136},        {-12, 8},  {-16, 4.142136},
                  {-16, 0},  {-20, -4.142136},        {-20, -8}, {-24, -24.142136},
                  {21, -21}, {19.041630, 63.041630},  {-3, 35},  {-10.958370, 25.041630},
                  {-15, 15}, {-21.041630, 6.958370},  {-27, -5}, {-51.041630, -31.041630},
                  {0, -70},  {-19.313708, -20},       {-8, -18}, {-3.313708, -16},
                  {0, -14},  {3.313708, -12},         {8, -10},  {19.313708, -8},
                  {77, 77},  {-3.585786, -8.414214},  {-7, -7},  {-5.585786, -6.414214},
                  {-7, -7},  {-6.414214, -5.585786},  {-7, -7},  {-8.414214, -3.585786},
                  {0, 0},    {12, -24.142136},        {12, -8},  {16, -4.142136},
                  {16, 0},   {20, 4.142136},          {20, 8},   {24, 24.142136},
                  {35, -35}, {14.899494, 18.899494},  {3, 13},   {-3.100506, 8.899494},
                  {-9, 9},   {-12.899494, 7.100506},  {-21, 5},  {-30.899494, -2.899494},
                  {0, -42},  {-19.313708, 4},         {-8, 2},   {-3.313708, 0},
                  {0, -2},   {3.313708, -4},          {8, -6},   {19.313708, -8}});
  ExpectNear(EvalOk(R"(
HloModule m
ENTRY e {
  x = c64[2,4,8] parameter(0)
  ROOT f = c64[2,4,8] fft(x), fft_type=FFT, fft_length={2,4,8}
})",
                    {&x}),
             expected, 5e-4);
}

}  // namespace
}  // namespace axle
