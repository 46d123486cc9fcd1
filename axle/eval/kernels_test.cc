//===- kernels_test.cc - Hand-computed values for dot and convolution ------===//
//
// Each kernel is called directly on an instruction built through the IR API
// (no operands: the kernels read only attributes, the result shape and the
// operand literals). Expected values are worked out by hand in the comments.
//
//===----------------------------------------------------------------------===//
#include "axle/eval/kernels.h"

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "axle/eval/kernel_test_util.h"
#include "gtest/gtest.h"

namespace axle {
namespace {

using testing_util::R1;
using testing_util::Values;

std::unique_ptr<HloDotInstruction> MakeDot(const Shape& shape, std::vector<int64_t> lhs_contracting,
                                           std::vector<int64_t> rhs_contracting,
                                           std::vector<int64_t> lhs_batch = {},
                                           std::vector<int64_t> rhs_batch = {},
                                           HloOpcode opcode = HloOpcode::kDot) {
  auto dot =
      std::make_unique<HloDotInstruction>(opcode, shape, absl::Span<HloInstruction* const>());
  DotDimensionNumbers& d = dot->mutable_attrs()->dot_dimension_numbers;
  *d.mutable_lhs_contracting_dimensions() = lhs_contracting;
  *d.mutable_rhs_contracting_dimensions() = rhs_contracting;
  *d.mutable_lhs_batch_dimensions() = lhs_batch;
  *d.mutable_rhs_batch_dimensions() = rhs_batch;
  return dot;
}

// --- dot -------------------------------------------------------------------------

TEST(DotTest, MatrixTimesMatrix) {
  // [[1,2,3],[4,5,6]] . [[7,8],[9,10],[11,12]]
  //   = [[1*7+2*9+3*11, 1*8+2*10+3*12], [4*7+5*9+6*11, 4*8+5*10+6*12]]
  //   = [[58, 64], [139, 154]]
  auto dot = MakeDot(ShapeUtil::MakeShape(F32, {2, 2}), {1}, {0});
  Literal lhs = LiteralUtil::CreateR2<float>({{1, 2, 3}, {4, 5, 6}});
  Literal rhs = LiteralUtil::CreateR2<float>({{7, 8}, {9, 10}, {11, 12}});
  absl::StatusOr<Literal> result = EvaluateDot(*dot, lhs, rhs);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(*result, LiteralUtil::CreateR2<float>({{58, 64}, {139, 154}}));
}

TEST(DotTest, XlaDocContractingExample) {
  // operation_semantics.md, DotGeneral: contracting lhs dim 1 with rhs dim 1.
  auto dot = MakeDot(ShapeUtil::MakeShape(F32, {2, 2}), {1}, {1});
  Literal lhs = LiteralUtil::CreateR2<float>({{1, 2, 3}, {4, 5, 6}});
  Literal rhs = LiteralUtil::CreateR2<float>({{1, 1, 1}, {2, 2, 2}});
  absl::StatusOr<Literal> result = EvaluateDot(*dot, lhs, rhs);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(*result, LiteralUtil::CreateR2<float>({{6, 12}, {15, 30}}));
}

TEST(DotTest, VectorDotVectorAndMatrixVector) {
  auto vv = MakeDot(ShapeUtil::MakeShape(S32, {}), {0}, {0});
  absl::StatusOr<Literal> s = EvaluateDot(*vv, R1<int32_t>({1, 2, 3}), R1<int32_t>({4, 5, 6}));
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(*s, LiteralUtil::CreateR0<int32_t>(32));

  auto mv = MakeDot(ShapeUtil::MakeShape(S32, {2}), {1}, {0});
  absl::StatusOr<Literal> v =
      EvaluateDot(*mv, LiteralUtil::CreateR2<int32_t>({{1, 2}, {3, 4}}), R1<int32_t>({5, 6}));
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(*v, R1<int32_t>({17, 39}));
}

TEST(DotTest, BatchMatmul) {
  // Batch 0: [[1,2],[3,4]] . [[1,0],[0,1]] = itself.
  // Batch 1: [[5,6],[7,8]] . [[0,1],[1,0]] = columns swapped: [[6,5],[8,7]].
  auto dot = MakeDot(ShapeUtil::MakeShape(F32, {2, 2, 2}), {2}, {1}, {0}, {0});
  Literal lhs = Values<float>({2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  Literal rhs = Values<float>({2, 2, 2}, {1, 0, 0, 1, 0, 1, 1, 0});
  absl::StatusOr<Literal> result = EvaluateDot(*dot, lhs, rhs);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(*result, Values<float>({2, 2, 2}, {1, 2, 3, 4, 6, 5, 8, 7}));
}

TEST(DotTest, BatchDimensionNotLeading) {
  // lhs [m=2, b=2, k=2], rhs [k=2, b=2] (n absent): out[b][m] = sum_k lhs[m][b][k] * rhs[k][b].
  // lhs[m][b][k] = 4m + 2b + k; rhs[k][b] = {{1,2},{3,4}}.
  // b=0: m=0: 0*1+1*3=3; m=1: 4*1+5*3=19.  b=1: m=0: 2*2+3*4=16; m=1: 6*2+7*4=40.
  auto dot = MakeDot(ShapeUtil::MakeShape(S32, {2, 2}), {2}, {0}, {1}, {1});
  Literal lhs = Values<int32_t>({2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
  Literal rhs = LiteralUtil::CreateR2<int32_t>({{1, 2}, {3, 4}});
  absl::StatusOr<Literal> result = EvaluateDot(*dot, lhs, rhs);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(*result, LiteralUtil::CreateR2<int32_t>({{3, 19}, {16, 40}}));
}

TEST(DotTest, MultipleContractingDimensions) {
  // lhs [2,2,3] contracted on dims {1,2} with rhs [2,3,2] on dims {0,1}:
  // out[i][j] = sum_{a,b} lhs[i][a][b] * rhs[a][b][j].
  // lhs = iota 0..11, rhs[a][b][j] = 1 if j == 0 else (a*3+b).
  // out[i][0] = sum of lhs row i: i=0: 0+..+5 = 15; i=1: 6+..+11 = 51.
  // out[i][1] = sum_t lhs[i][t]*t: i=0: 0+1+4+9+16+25 = 55; i=1: 6*0+7+16+27+40+55 = 145.
  auto dot = MakeDot(ShapeUtil::MakeShape(F64, {2, 2}), {1, 2}, {0, 1});
  std::vector<double> lhs_values(12);
  for (int i = 0; i < 12; ++i) lhs_values[i] = i;
  std::vector<double> rhs_values;
  for (int t = 0; t < 6; ++t) {
    rhs_values.push_back(1);
    rhs_values.push_back(t);
  }
  absl::StatusOr<Literal> result = EvaluateDot(*dot, Values<double>({2, 2, 3}, lhs_values),
                                               Values<double>({2, 3, 2}, rhs_values));
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(*result, LiteralUtil::CreateR2<double>({{15, 55}, {51, 145}}));
}

TEST(DotTest, ContractingDimensionsInSwappedOrder) {
  // Pairing lhs dims {1,2} with rhs dims {1,0}: out = sum_{a,b} lhs[a][b] * rhs[b][a].
  // lhs = [[1,2],[3,4]], rhs = [[5,6],[7,8]]: 1*5 + 2*7 + 3*6 + 4*8 = 69.
  auto dot = MakeDot(ShapeUtil::MakeShape(S64, {1}), {1, 2}, {1, 0});
  absl::StatusOr<Literal> result = EvaluateDot(*dot, Values<int64_t>({1, 2, 2}, {1, 2, 3, 4}),
                                               LiteralUtil::CreateR2<int64_t>({{5, 6}, {7, 8}}));
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(*result, R1<int64_t>({69}));
}

TEST(DotTest, IntegerOverflowWraps) {
  // s8: 100*2 + 100*2 = 400 = 256 + 144 -> 144 - 256 = -112.
  auto dot = MakeDot(ShapeUtil::MakeShape(S8, {}), {0}, {0});
  absl::StatusOr<Literal> s8 = EvaluateDot(*dot, R1<int8_t>({100, 100}), R1<int8_t>({2, 2}));
  ASSERT_TRUE(s8.ok()) << s8.status();
  EXPECT_EQ(*s8, LiteralUtil::CreateR0<int8_t>(-112));
  // s32: 2^30 * 4 = 2^32 wraps to 0; plus 7.
  auto dot32 = MakeDot(ShapeUtil::MakeShape(S32, {}), {0}, {0});
  absl::StatusOr<Literal> s32 = EvaluateDot(*dot32, R1<int32_t>({1 << 30, 7}), R1<int32_t>({4, 1}));
  ASSERT_TRUE(s32.ok()) << s32.status();
  EXPECT_EQ(*s32, LiteralUtil::CreateR0<int32_t>(7));
  // u8: 255 * 255 = 65025 = 254*256 + 1 -> 1.
  auto dotu8 = MakeDot(ShapeUtil::MakeShape(U8, {}), {0}, {0});
  absl::StatusOr<Literal> u8 = EvaluateDot(*dotu8, R1<uint8_t>({255}), R1<uint8_t>({255}));
  ASSERT_TRUE(u8.ok()) << u8.status();
  EXPECT_EQ(*u8, LiteralUtil::CreateR0<uint8_t>(1));
}

TEST(DotTest, PreferredElementTypeWidensBeforeMultiplying) {
  // s8 x s8 -> s32: 100*100 + 100*100 = 20000, no wrap at 8 bits.
  auto dot = MakeDot(ShapeUtil::MakeShape(S32, {}), {0}, {0});
  absl::StatusOr<Literal> result =
      EvaluateDot(*dot, R1<int8_t>({100, 100}), R1<int8_t>({100, 100}));
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(*result, LiteralUtil::CreateR0<int32_t>(20000));
}

TEST(DotTest, Bf16AccumulatesInFloat) {
  // 256 + 1 + 1: bf16 has 8 significant bits, so adding 1 to 256 in bf16
  // twice would stay 256; in a float accumulator the sum is 258, which
  // rounds to bf16 258 (representable: 258 = 129 * 2).
  auto dot = MakeDot(ShapeUtil::MakeShape(BF16, {}), {0}, {0});
  Literal lhs = R1<bfloat16>({bfloat16(256.0f), bfloat16(1.0f), bfloat16(1.0f)});
  Literal rhs = R1<bfloat16>({bfloat16(1.0f), bfloat16(1.0f), bfloat16(1.0f)});
  absl::StatusOr<Literal> result = EvaluateDot(*dot, lhs, rhs);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(static_cast<float>(result->data<bfloat16>()[0]), 258.0f);

  // bf16 x bf16 -> f32 keeps the exact product sum.
  auto wide = MakeDot(ShapeUtil::MakeShape(F32, {}), {0}, {0});
  Literal a = R1<bfloat16>({bfloat16(1.5f), bfloat16(-2.0f)});
  Literal b = R1<bfloat16>({bfloat16(3.0f), bfloat16(0.25f)});
  absl::StatusOr<Literal> f = EvaluateDot(*wide, a, b);
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(*f, LiteralUtil::CreateR0<float>(4.0f));
}

TEST(DotTest, Complex) {
  // (1+2i)(3-i) + (i)(i) = (3 - i + 6i + 2) + (-1) = 4 + 5i.
  auto dot = MakeDot(ShapeUtil::MakeShape(C64, {}), {0}, {0});
  Literal lhs = R1<complex64>({{1, 2}, {0, 1}});
  Literal rhs = R1<complex64>({{3, -1}, {0, 1}});
  absl::StatusOr<Literal> result = EvaluateDot(*dot, lhs, rhs);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(*result, LiteralUtil::CreateR0<complex64>({4, 5}));
}

TEST(DotTest, PredIsOrOfAnds) {
  auto dot = MakeDot(ShapeUtil::MakeShape(PRED, {2}), {1}, {0});
  Literal lhs = LiteralUtil::CreateR2<bool>({{true, false}, {false, false}});
  Literal rhs = R1<bool>({true, true});
  absl::StatusOr<Literal> result = EvaluateDot(*dot, lhs, rhs);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(*result, R1<bool>({true, false}));
}

TEST(DotTest, EmptyContractionGivesZeros) {
  auto dot = MakeDot(ShapeUtil::MakeShape(F32, {2, 3}), {1}, {0});
  absl::StatusOr<Literal> result = EvaluateDot(*dot, Literal(ShapeUtil::MakeShape(F32, {2, 0})),
                                               Literal(ShapeUtil::MakeShape(F32, {0, 3})));
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(*result, Literal(ShapeUtil::MakeShape(F32, {2, 3})));
}

TEST(DotTest, MalformedDimensionNumbersAreErrors) {
  Literal m = LiteralUtil::CreateR2<float>({{1, 2}, {3, 4}});
  auto out_of_range = MakeDot(ShapeUtil::MakeShape(F32, {2, 2}), {2}, {0});
  EXPECT_EQ(EvaluateDot(*out_of_range, m, m).status().code(), absl::StatusCode::kInvalidArgument);
  auto wrong_shape = MakeDot(ShapeUtil::MakeShape(F32, {3, 2}), {1}, {0});
  EXPECT_EQ(EvaluateDot(*wrong_shape, m, m).status().code(), absl::StatusCode::kInvalidArgument);
  auto size_mismatch = MakeDot(ShapeUtil::MakeShape(F32, {2, 3}), {1}, {0});
  EXPECT_EQ(
      EvaluateDot(*size_mismatch, m, Literal(ShapeUtil::MakeShape(F32, {3, 3}))).status().code(),
      absl::StatusCode::kInvalidArgument);
}

// --- ragged-dot / scaled-dot ------------------------------------------------------

TEST(RaggedDotTest, NonContracting) {
  // lhs [m=4, k=1] = {1,2,3,4}; rhs [g=2, k=1, n=1] = {10, 100}; groups {1, 2}:
  // row 0 in group 0 (x10), rows 1-2 in group 1 (x100), row 3 in no group (0).
  HloDotInstruction dot(HloOpcode::kRaggedDot, ShapeUtil::MakeShape(F32, {4, 1}), {});
  dot.mutable_attrs()->dot_dimension_numbers.add_lhs_contracting_dimensions(1);
  dot.mutable_attrs()->dot_dimension_numbers.add_rhs_contracting_dimensions(1);
  dot.mutable_attrs()->lhs_ragged_dimensions = {0};
  dot.mutable_attrs()->rhs_group_dimensions = {0};
  absl::StatusOr<Literal> result =
      EvaluateRaggedDot(dot, Values<float>({4, 1}, {1, 2, 3, 4}),
                        Values<float>({2, 1, 1}, {10, 100}), R1<int32_t>({1, 2}));
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(*result, Values<float>({4, 1}, {10, 200, 300, 0}));
}

TEST(RaggedDotTest, Contracting) {
  // lhs [m=1, k=3] = {1,2,3}; rhs [k=3, n=1] = {1,1,1}; groups {2, 1}:
  // out[0] = 1+2 = 3, out[1] = 3.
  HloDotInstruction dot(HloOpcode::kRaggedDot, ShapeUtil::MakeShape(F32, {2, 1, 1}), {});
  dot.mutable_attrs()->dot_dimension_numbers.add_lhs_contracting_dimensions(1);
  dot.mutable_attrs()->dot_dimension_numbers.add_rhs_contracting_dimensions(0);
  dot.mutable_attrs()->lhs_ragged_dimensions = {1};
  absl::StatusOr<Literal> result = EvaluateRaggedDot(
      dot, Values<float>({1, 3}, {1, 2, 3}), Values<float>({3, 1}, {1, 1, 1}), R1<int64_t>({2, 1}));
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(*result, Values<float>({2, 1, 1}, {3, 3}));
}

TEST(ScaledDotTest, BlockScales) {
  // lhs [1,4] = {1,1,1,1} with scale [1,2] = {2, 4} (blocks of 2):
  // dequantized {2,2,4,4}; rhs [4,1] = {1,2,3,4} with scalar scale 0.5:
  // {0.5,1,1.5,2}. Dot: 2*0.5 + 2*1 + 4*1.5 + 4*2 = 1 + 2 + 6 + 8 = 17.
  HloDotInstruction dot(HloOpcode::kScaledDot, ShapeUtil::MakeShape(F32, {1, 1}), {});
  dot.mutable_attrs()->dot_dimension_numbers.add_lhs_contracting_dimensions(1);
  dot.mutable_attrs()->dot_dimension_numbers.add_rhs_contracting_dimensions(0);
  absl::StatusOr<Literal> result = EvaluateScaledDot(
      dot, Values<float>({1, 4}, {1, 1, 1, 1}), Values<float>({4, 1}, {1, 2, 3, 4}),
      Values<float>({1, 2}, {2, 4}), LiteralUtil::CreateR0<float>(0.5f));
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(*result, Values<float>({1, 1}, {17}));
}

// --- convolution ------------------------------------------------------------------

struct WindowSpec {
  int64_t size;
  int64_t stride = 1;
  int64_t pad_low = 0, pad_high = 0;
  int64_t base_dilation = 1, window_dilation = 1;
  bool reversal = false;
};

// dim_labels in XLA's text form, e.g. "b01f_01io->b01f".
std::unique_ptr<HloConvolutionInstruction> MakeConv(const Shape& shape, const std::string& labels,
                                                    const std::vector<WindowSpec>& window,
                                                    int64_t feature_groups = 1,
                                                    int64_t batch_groups = 1) {
  auto conv = std::make_unique<HloConvolutionInstruction>(HloOpcode::kConvolution, shape,
                                                          absl::Span<HloInstruction* const>());
  ConvolutionAttrs& a = *conv->mutable_attrs();
  ConvolutionDimensionNumbers& dn = a.convolution_dimension_numbers;
  size_t arrow = labels.find("->");
  size_t underscore = labels.find('_');
  std::string in = labels.substr(0, underscore);
  std::string kernel = labels.substr(underscore + 1, arrow - underscore - 1);
  std::string out = labels.substr(arrow + 2);
  int64_t spatial = static_cast<int64_t>(in.size()) - 2;
  dn.mutable_input_spatial_dimensions()->resize(spatial);
  dn.mutable_kernel_spatial_dimensions()->resize(spatial);
  dn.mutable_output_spatial_dimensions()->resize(spatial);
  for (int64_t i = 0; i < static_cast<int64_t>(in.size()); ++i) {
    if (in[i] == 'b')
      dn.set_input_batch_dimension(i);
    else if (in[i] == 'f')
      dn.set_input_feature_dimension(i);
    else
      dn.set_input_spatial_dimensions(in[i] - '0', i);
    if (kernel[i] == 'i')
      dn.set_kernel_input_feature_dimension(i);
    else if (kernel[i] == 'o')
      dn.set_kernel_output_feature_dimension(i);
    else
      dn.set_kernel_spatial_dimensions(kernel[i] - '0', i);
    if (out[i] == 'b')
      dn.set_output_batch_dimension(i);
    else if (out[i] == 'f')
      dn.set_output_feature_dimension(i);
    else
      dn.set_output_spatial_dimensions(out[i] - '0', i);
  }
  for (const WindowSpec& w : window) {
    WindowDimension* d = a.window.add_dimensions();
    d->set_size(w.size);
    d->set_stride(w.stride);
    d->set_padding_low(w.pad_low);
    d->set_padding_high(w.pad_high);
    d->set_base_dilation(w.base_dilation);
    d->set_window_dilation(w.window_dilation);
    d->set_window_reversal(w.reversal);
  }
  a.feature_group_count = feature_groups;
  a.batch_group_count = batch_groups;
  return conv;
}

Literal Conv(const HloConvolutionInstruction& conv, const Literal& lhs, const Literal& rhs) {
  absl::StatusOr<Literal> result = EvaluateConvolution(conv, lhs, rhs);
  EXPECT_TRUE(result.ok()) << result.status();
  return result.ok() ? *std::move(result) : Literal();
}

TEST(ConvolutionTest, OneDimensionalValid) {
  // {1,2,3,4,5} with window {1,1}: pairwise sums {3,5,7,9}.
  auto conv = MakeConv(ShapeUtil::MakeShape(F32, {1, 1, 4}), "bf0_oi0->bf0", {{.size = 2}});
  EXPECT_EQ(
      Conv(*conv, Values<float>({1, 1, 5}, {1, 2, 3, 4, 5}), Values<float>({1, 1, 2}, {1, 1})),
      Values<float>({1, 1, 4}, {3, 5, 7, 9}));
}

TEST(ConvolutionTest, TwoDimensionalPaddingAndStride) {
  // 3x3 input 1..9 padded by one zero on every side (5x5), 2x2 ones window,
  // stride 2: windows at rows/cols {0,2}: 1, 2+3, 4+7, 5+6+8+9.
  auto conv = MakeConv(ShapeUtil::MakeShape(F32, {1, 1, 2, 2}), "bf01_oi01->bf01",
                       {{.size = 2, .stride = 2, .pad_low = 1, .pad_high = 1},
                        {.size = 2, .stride = 2, .pad_low = 1, .pad_high = 1}});
  Literal input = Values<float>({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  Literal kernel = Values<float>({1, 1, 2, 2}, {1, 1, 1, 1});
  EXPECT_EQ(Conv(*conv, input, kernel), Values<float>({1, 1, 2, 2}, {1, 5, 11, 28}));
}

TEST(ConvolutionTest, LhsDilationIsTransposedConvolution) {
  // {1,2,3} dilated by 2 -> {1,0,2,0,3}, padded by 1 -> {0,1,0,2,0,3,0};
  // window {1,10}: {10, 1, 20, 2, 30, 3}.
  auto conv = MakeConv(ShapeUtil::MakeShape(F32, {1, 1, 6}), "bf0_oi0->bf0",
                       {{.size = 2, .pad_low = 1, .pad_high = 1, .base_dilation = 2}});
  EXPECT_EQ(Conv(*conv, Values<float>({1, 1, 3}, {1, 2, 3}), Values<float>({1, 1, 2}, {1, 10})),
            Values<float>({1, 1, 6}, {10, 1, 20, 2, 30, 3}));
}

TEST(ConvolutionTest, RhsDilationIsAtrous) {
  // Window {1,10} dilated by 2 reads x[i] and x[i+2]: {1+30, 2+40, 3+50}.
  auto conv = MakeConv(ShapeUtil::MakeShape(F32, {1, 1, 3}), "bf0_oi0->bf0",
                       {{.size = 2, .window_dilation = 2}});
  EXPECT_EQ(
      Conv(*conv, Values<float>({1, 1, 5}, {1, 2, 3, 4, 5}), Values<float>({1, 1, 2}, {1, 10})),
      Values<float>({1, 1, 3}, {31, 42, 53}));
}

TEST(ConvolutionTest, WindowReversal) {
  // The kernel {1,10} is read as {10,1}: {1*10+2, 2*10+3}.
  auto conv = MakeConv(ShapeUtil::MakeShape(F32, {1, 1, 2}), "bf0_oi0->bf0",
                       {{.size = 2, .reversal = true}});
  EXPECT_EQ(Conv(*conv, Values<float>({1, 1, 3}, {1, 2, 3}), Values<float>({1, 1, 2}, {1, 10})),
            Values<float>({1, 1, 2}, {12, 23}));
}

TEST(ConvolutionTest, NegativePaddingCrops) {
  // Padding (-1, -2) removes 1 and 5, 4; a size-1 window copies {2, 3}.
  auto conv = MakeConv(ShapeUtil::MakeShape(S32, {1, 1, 2}), "bf0_oi0->bf0",
                       {{.size = 1, .pad_low = -1, .pad_high = -2}});
  EXPECT_EQ(
      Conv(*conv, Values<int32_t>({1, 1, 5}, {1, 2, 3, 4, 5}), Values<int32_t>({1, 1, 1}, {1})),
      Values<int32_t>({1, 1, 2}, {2, 3}));
}

TEST(ConvolutionTest, FeatureGroupsDepthwise) {
  // Two input features, feature_group_count = 2: output feature 0 convolves
  // feature 0 {1,2,3} with {1,1}; output feature 1 convolves feature 1
  // {10,20,30} with {1,-1}.
  auto conv = MakeConv(ShapeUtil::MakeShape(F32, {1, 2, 2}), "bf0_oi0->bf0", {{.size = 2}},
                       /*feature_groups=*/2);
  Literal input = Values<float>({1, 2, 3}, {1, 2, 3, 10, 20, 30});
  Literal kernel = Values<float>({2, 1, 2}, {1, 1, 1, -1});
  EXPECT_EQ(Conv(*conv, input, kernel), Values<float>({1, 2, 2}, {3, 5, -10, -10}));
}

TEST(ConvolutionTest, FeatureGroupsWithSeveralFeaturesPerGroup) {
  // 4 input features in 2 groups of 2, 2 output features (one per group),
  // 0 spatial dimensions: out[o] = sum over the group's features of in * k.
  // in = {1,2,3,4}; k[o][i] = {{1,10},{100,1000}}: o0 = 1 + 20, o1 = 300 + 4000.
  auto conv = MakeConv(ShapeUtil::MakeShape(F32, {1, 2}), "bf_oi->bf", {}, /*feature_groups=*/2);
  EXPECT_EQ(
      Conv(*conv, Values<float>({1, 4}, {1, 2, 3, 4}), Values<float>({2, 2}, {1, 10, 100, 1000})),
      Values<float>({1, 2}, {21, 4300}));
}

TEST(ConvolutionTest, BatchGroups) {
  // Input batch {b0: {1,2}, b1: {3,4}}, batch_group_count = 2: output
  // feature 0 sees batch 0 times 10, output feature 1 sees batch 1 times 100.
  auto conv = MakeConv(ShapeUtil::MakeShape(F32, {1, 2, 2}), "bf0_oi0->bf0", {{.size = 1}},
                       /*feature_groups=*/1, /*batch_groups=*/2);
  Literal input = Values<float>({2, 1, 2}, {1, 2, 3, 4});
  Literal kernel = Values<float>({2, 1, 1}, {10, 100});
  EXPECT_EQ(Conv(*conv, input, kernel), Values<float>({1, 2, 2}, {10, 20, 300, 400}));
}

TEST(ConvolutionTest, ZeroSpatialDimensionsIsMatmul) {
  // out[b][o] = sum_i in[b][i] * k[i][o]: [[1,2],[3,4]] . [[1,0,1],[0,1,1]].
  auto conv = MakeConv(ShapeUtil::MakeShape(S32, {2, 3}), "bf_io->bf", {});
  EXPECT_EQ(Conv(*conv, LiteralUtil::CreateR2<int32_t>({{1, 2}, {3, 4}}),
                 LiteralUtil::CreateR2<int32_t>({{1, 0, 1}, {0, 1, 1}})),
            LiteralUtil::CreateR2<int32_t>({{1, 2, 3}, {3, 4, 7}}));
}

TEST(ConvolutionTest, ThreeDimensional) {
  // All-ones 2x2x2 input and window: one output of 8; with padding 1 on the
  // high side of the last dimension the second output sees half: 4.
  auto conv = MakeConv(ShapeUtil::MakeShape(F32, {1, 1, 1, 1, 2}), "bf012_oi012->bf012",
                       {{.size = 2}, {.size = 2}, {.size = 2, .pad_high = 1}});
  Literal ones(ShapeUtil::MakeShape(F32, {1, 1, 2, 2, 2}));
  for (float& v : ones.data<float>()) v = 1;
  EXPECT_EQ(Conv(*conv, ones, ones), Values<float>({1, 1, 1, 1, 2}, {8, 4}));
}

TEST(ConvolutionTest, IntegerResultsSaturate) {
  // s8: 100*2 + 100*2 = 400 saturates to 127 (XLA's evaluator clamps
  // convolution results); -400 saturates to -128.
  auto conv = MakeConv(ShapeUtil::MakeShape(S8, {1, 1, 2}), "bf0_oi0->bf0", {{.size = 2}});
  EXPECT_EQ(
      Conv(*conv, Values<int8_t>({1, 1, 3}, {100, 100, -100}), Values<int8_t>({1, 1, 2}, {2, 2})),
      Values<int8_t>({1, 1, 2}, {127, 0}));
  EXPECT_EQ(
      Conv(*conv, Values<int8_t>({1, 1, 3}, {-100, -100, 0}), Values<int8_t>({1, 1, 2}, {2, 2})),
      Values<int8_t>({1, 1, 2}, {-128, -128}));
}

TEST(ConvolutionTest, NhwcAndNchwAgree) {
  // The same convolution in two layouts of dimension labels gives the same
  // numbers, transposed. N=2, C=3, H=4, W=5; O=2, kernel 3x2; stride (2,1),
  // padding (1,0) x (0,1), window dilation 2 in W.
  const int64_t n = 2, c = 3, h = 4, w = 5, o = 2, kh = 3, kw = 2;
  auto value = [](int64_t a, int64_t b, int64_t x, int64_t y) {
    return static_cast<float>((a * 7 + b * 5 + x * 3 + y) % 11) - 5;
  };
  Literal nchw(ShapeUtil::MakeShape(F32, {n, c, h, w}));
  Literal nhwc(ShapeUtil::MakeShape(F32, {n, h, w, c}));
  Literal oihw(ShapeUtil::MakeShape(F32, {o, c, kh, kw}));
  Literal hwio(ShapeUtil::MakeShape(F32, {kh, kw, c, o}));
  for (int64_t a = 0; a < n; ++a)
    for (int64_t b = 0; b < c; ++b)
      for (int64_t x = 0; x < h; ++x)
        for (int64_t y = 0; y < w; ++y) {
          nchw.Set<float>({a, b, x, y}, value(a, b, x, y));
          nhwc.Set<float>({a, x, y, b}, value(a, b, x, y));
        }
  for (int64_t a = 0; a < o; ++a)
    for (int64_t b = 0; b < c; ++b)
      for (int64_t x = 0; x < kh; ++x)
        for (int64_t y = 0; y < kw; ++y) {
          oihw.Set<float>({a, b, x, y}, value(b, a, y, x));
          hwio.Set<float>({x, y, b, a}, value(b, a, y, x));
        }
  // H: (4 + 1 - 3) / 2 + 1 = 2; W: (5 + 1 - 3) / 1 + 1 = 4.
  std::vector<WindowSpec> window = {{.size = kh, .stride = 2, .pad_low = 1},
                                    {.size = kw, .pad_high = 1, .window_dilation = 2}};
  auto a = MakeConv(ShapeUtil::MakeShape(F32, {n, o, 2, 4}), "bf01_oi01->bf01", window);
  auto b = MakeConv(ShapeUtil::MakeShape(F32, {n, 2, 4, o}), "b01f_01io->b01f", window);
  Literal ra = Conv(*a, nchw, oihw);
  Literal rb = Conv(*b, nhwc, hwio);
  bool any_nonzero = false;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t f = 0; f < o; ++f)
      for (int64_t x = 0; x < 2; ++x)
        for (int64_t y = 0; y < 4; ++y) {
          EXPECT_EQ(ra.Get<float>({i, f, x, y}), rb.Get<float>({i, x, y, f}));
          any_nonzero |= ra.Get<float>({i, f, x, y}) != 0;
        }
  EXPECT_TRUE(any_nonzero);
  // Spot check one element by hand: out[0][0][0][0] reads rows -1..1 (row
  // -1 is padding) and columns 0 and 2.
  float expected = 0;
  for (int64_t b2 = 0; b2 < c; ++b2)
    for (int64_t x = 1; x < kh; ++x)
      for (int64_t y = 0; y < kw; ++y) expected += value(0, b2, x - 1, 2 * y) * value(b2, 0, y, x);
  EXPECT_EQ(ra.Get<float>({0, 0, 0, 0}), expected);
}

TEST(ConvolutionTest, MismatchedResultShapeIsAnError) {
  auto conv = MakeConv(ShapeUtil::MakeShape(F32, {1, 1, 5}), "bf0_oi0->bf0", {{.size = 2}});
  EXPECT_EQ(EvaluateConvolution(*conv, Values<float>({1, 1, 5}, {1, 2, 3, 4, 5}),
                                Values<float>({1, 1, 2}, {1, 1}))
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace axle
