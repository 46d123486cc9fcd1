//===- kernels_hlo_text_test.cc - The heavy kernels from HLO text ----------===//
//
// End to end: XLA's HLO text for each heavy op, parsed and run by the
// evaluator, checked against hand-computed values. These pin down that the
// attributes the parser fills in (dim_labels, window, gather/scatter dims,
// fft_length, ...) mean to the kernels what they mean in XLA.
//
//===----------------------------------------------------------------------===//
#include <vector>

#include "axle/eval/evaluator_test_util.h"
#include "axle/eval/kernel_test_util.h"
#include "gtest/gtest.h"

namespace axle {
namespace {

using testing_util::EvalOk;
using testing_util::ExpectNear;
using testing_util::R1;
using testing_util::Values;

TEST(KernelsFromText, Dot) {
  Literal a = LiteralUtil::CreateR2<float>({{1, 2, 3}, {4, 5, 6}});
  Literal b = LiteralUtil::CreateR2<float>({{7, 8}, {9, 10}, {11, 12}});
  EXPECT_EQ(EvalOk(R"(
HloModule m
ENTRY e {
  a = f32[2,3] parameter(0)
  b = f32[3,2] parameter(1)
  ROOT d = f32[2,2] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})",
                   {&a, &b}),
            LiteralUtil::CreateR2<float>({{58, 64}, {139, 154}}));
}

TEST(KernelsFromText, BatchDotWithPreferredType) {
  // s8 batch matmul into s32: batch 0 = [[100, 100]] . [[100], [100]] = 20000;
  // batch 1 = [[1, 2]] . [[3], [4]] = 11.
  Literal a = Values<int8_t>({2, 1, 2}, {100, 100, 1, 2});
  Literal b = Values<int8_t>({2, 2, 1}, {100, 100, 3, 4});
  EXPECT_EQ(EvalOk(R"(
HloModule m
ENTRY e {
  a = s8[2,1,2] parameter(0)
  b = s8[2,2,1] parameter(1)
  ROOT d = s32[2,1,1] dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
})",
                   {&a, &b}),
            Values<int32_t>({2, 1, 1}, {20000, 11}));
}

TEST(KernelsFromText, ConvolutionNhwcPaddedStrided) {
  // 3x3 input 1..9, 2x2 ones kernel, stride 2, padding 1: {1, 5, 11, 28}.
  Literal input = Values<float>({1, 3, 3, 1}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  Literal kernel = Values<float>({2, 2, 1, 1}, {1, 1, 1, 1});
  EXPECT_EQ(EvalOk(R"(
HloModule m
ENTRY e {
  x = f32[1,3,3,1] parameter(0)
  k = f32[2,2,1,1] parameter(1)
  ROOT c = f32[1,2,2,1] convolution(x, k), window={size=2x2 stride=2x2 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
})",
                   {&input, &kernel}),
            Values<float>({1, 2, 2, 1}, {1, 5, 11, 28}));
}

TEST(KernelsFromText, ConvolutionLhsDilatedAndGrouped) {
  // Transposed 1D convolution of {1,2,3}: {10, 1, 20, 2, 30, 3}.
  Literal input = Values<float>({1, 1, 3}, {1, 2, 3});
  Literal kernel = Values<float>({1, 1, 2}, {1, 10});
  EXPECT_EQ(EvalOk(R"(
HloModule m
ENTRY e {
  x = f32[1,1,3] parameter(0)
  k = f32[1,1,2] parameter(1)
  ROOT c = f32[1,1,6] convolution(x, k), window={size=2 pad=1_1 lhs_dilate=2}, dim_labels=bf0_oi0->bf0
})",
                   {&input, &kernel}),
            Values<float>({1, 1, 6}, {10, 1, 20, 2, 30, 3}));
  // Depthwise: feature_group_count=2.
  Literal input2 = Values<float>({1, 2, 3}, {1, 2, 3, 10, 20, 30});
  Literal kernel2 = Values<float>({2, 1, 2}, {1, 1, 1, -1});
  EXPECT_EQ(EvalOk(R"(
HloModule m
ENTRY e {
  x = f32[1,2,3] parameter(0)
  k = f32[2,1,2] parameter(1)
  ROOT c = f32[1,2,2] convolution(x, k), window={size=2}, dim_labels=bf0_oi0->bf0, feature_group_count=2
})",
                   {&input2, &kernel2}),
            Values<float>({1, 2, 2}, {3, 5, -10, -10}));
}

TEST(KernelsFromText, Gather) {
  Literal operand = LiteralUtil::CreateR2<int32_t>({{1, 2, 3}, {4, 5, 6}, {7, 8, 9}});
  Literal indices = R1<int32_t>({0, 2});
  EXPECT_EQ(EvalOk(R"(
HloModule m
ENTRY e {
  operand = s32[3,3] parameter(0)
  indices = s32[2] parameter(1)
  ROOT g = s32[2,3] gather(operand, indices), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,3}
})",
                   {&operand, &indices}),
            LiteralUtil::CreateR2<int32_t>({{1, 2, 3}, {7, 8, 9}}));
}

TEST(KernelsFromText, GatherWithBatchingDims) {
  Literal operand = LiteralUtil::CreateR2<float>({{10, 11, 12}, {20, 21, 22}});
  Literal indices = R1<int32_t>({2, 0});
  EXPECT_EQ(EvalOk(R"(
HloModule m
ENTRY e {
  operand = f32[2,3] parameter(0)
  indices = s32[2] parameter(1)
  ROOT g = f32[2] gather(operand, indices), offset_dims={}, collapsed_slice_dims={1}, start_index_map={1}, operand_batching_dims={0}, start_indices_batching_dims={0}, index_vector_dim=1, slice_sizes={1,1}
})",
                   {&operand, &indices}),
            R1<float>({12, 20}));
}

TEST(KernelsFromText, ScatterAdd) {
  Literal operand = R1<float>({1, 1, 1, 1, 1});
  Literal indices = R1<int32_t>({1, 3, 1, 7});
  Literal updates = R1<float>({10, 20, 30, 40});
  EXPECT_EQ(EvalOk(R"(
HloModule m
add {
  p0 = f32[] parameter(0)
  p1 = f32[] parameter(1)
  ROOT s = f32[] add(p0, p1)
}
ENTRY e {
  operand = f32[5] parameter(0)
  indices = s32[4] parameter(1)
  updates = f32[4] parameter(2)
  ROOT s = f32[5] scatter(operand, indices, updates), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
})",
                   {&operand, &indices, &updates}),
            R1<float>({1, 41, 1, 21, 1}));
}

TEST(KernelsFromText, ScatterWithComputedCombiner) {
  // current * 2 + update, through the evaluator: index 0: (5*2+1)*2+2 = 24.
  Literal operand = R1<int32_t>({5, 5});
  Literal indices = R1<int32_t>({0, 0});
  Literal updates = R1<int32_t>({1, 2});
  EXPECT_EQ(EvalOk(R"(
HloModule m
combine {
  p0 = s32[] parameter(0)
  p1 = s32[] parameter(1)
  two = s32[] constant(2)
  m = s32[] multiply(p0, two)
  ROOT s = s32[] add(m, p1)
}
ENTRY e {
  operand = s32[2] parameter(0)
  indices = s32[2] parameter(1)
  updates = s32[2] parameter(2)
  ROOT s = s32[2] scatter(operand, indices, updates), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=combine
})",
                   {&operand, &indices, &updates}),
            R1<int32_t>({24, 5}));
}

TEST(KernelsFromText, ScatterInversePermutation) {
  // XLA's scatter_test.cc TensorFlowScatterV2_InversePermutation, with its
  // expected value: row r of the result is the inverse of permutation row r.
  Literal permutation = LiteralUtil::CreateR2<int32_t>({{1, 3, 2, 0}, {3, 0, 2, 1}, {2, 3, 1, 0}});
  EXPECT_EQ(EvalOk(R"(
HloModule m
update_s32 {
  lhs = s32[] parameter(0)
  ROOT rhs = s32[] parameter(1)
}
ENTRY main {
  permutation = s32[3,4] parameter(0)
  reshape = s32[3,4,1] reshape(permutation)
  operand = s32[3,4] iota(), iota_dimension=1
  updates = s32[3,4,1,1] iota(), iota_dimension=1
  iota = s32[3,4,1] iota(), iota_dimension=0
  indices = s32[3,4,2] concatenate(iota, reshape), dimensions={2}
  ROOT scatter = s32[3,4] scatter(operand, indices, updates), to_apply=update_s32, update_window_dims={2,3}, inserted_window_dims={}, scatter_dims_to_operand_dims={0,1}, index_vector_dim=2
})",
                   {&permutation}),
            LiteralUtil::CreateR2<int32_t>({{3, 0, 2, 1}, {1, 3, 2, 0}, {3, 2, 0, 1}}));
}

TEST(KernelsFromText, SelectAndScatterMaxPoolGradient) {
  Literal operand =
      LiteralUtil::CreateR2<float>({{7, 2, 5, 3}, {3, 8, 9, 3}, {1, 5, 7, 5}, {0, 6, 2, 7}});
  Literal source = LiteralUtil::CreateR2<float>({{2, 6}, {3, 1}});
  EXPECT_EQ(EvalOk(R"(
HloModule m
ge {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=GE
}
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  operand = f32[4,4] parameter(0)
  source = f32[2,2] parameter(1)
  zero = f32[] constant(0)
  ROOT s = f32[4,4] select-and-scatter(operand, source, zero), window={size=2x2 stride=2x2}, select=ge, scatter=add
})",
                   {&operand, &source}),
            LiteralUtil::CreateR2<float>({{0, 0, 0, 0}, {0, 2, 6, 0}, {0, 0, 1, 0}, {0, 3, 0, 0}}));
}

TEST(KernelsFromText, FftAndRfft) {
  Literal x = R1<complex64>({1, 2, 3, 4});
  ExpectNear(EvalOk(R"(
HloModule m
ENTRY e {
  x = c64[4] parameter(0)
  ROOT f = c64[4] fft(x), fft_type=FFT, fft_length={4}
})",
                    {&x}),
             R1<complex64>({{10, 0}, {-2, 2}, {-2, 0}, {-2, -2}}), 1e-5);
  Literal r = R1<float>({1, 2, 3, 4});
  ExpectNear(EvalOk(R"(
HloModule m
ENTRY e {
  x = f32[4] parameter(0)
  ROOT f = c64[3] fft(x), fft_type=RFFT, fft_length={4}
})",
                    {&r}),
             R1<complex64>({{10, 0}, {-2, 2}, {-2, 0}}), 1e-5);
}

TEST(KernelsFromText, CholeskyAndTriangularSolve) {
  Literal a = LiteralUtil::CreateR2<float>({{4, 12, -16}, {12, 37, -43}, {-16, -43, 98}});
  ExpectNear(EvalOk(R"(
HloModule m
ENTRY e {
  a = f32[3,3] parameter(0)
  ROOT l = f32[3,3] cholesky(a), lower=true
})",
                    {&a}),
             LiteralUtil::CreateR2<float>({{2, 0, 0}, {6, 1, 0}, {-8, 5, 3}}), 1e-5);
  Literal t = LiteralUtil::CreateR2<float>({{2, 0, 0}, {4, 5, 0}, {7, 8, 10}});
  Literal b = Values<float>({3, 1}, {2, 14, 53});
  ExpectNear(EvalOk(R"(
HloModule m
ENTRY e {
  a = f32[3,3] parameter(0)
  b = f32[3,1] parameter(1)
  ROOT x = f32[3,1] triangular-solve(a, b), left_side=true, lower=true, transpose_a=NO_TRANSPOSE
})",
                    {&t, &b}),
             Values<float>({3, 1}, {1, 2, 3}), 1e-5);
}

TEST(KernelsFromText, BatchNormTraining) {
  Literal x = LiteralUtil::CreateR2<float>({{1, 10}, {3, 30}});
  Literal scale = R1<float>({1, 2});
  Literal offset = R1<float>({0, 1});
  Literal result = EvalOk(R"(
HloModule m
ENTRY e {
  x = f32[2,2] parameter(0)
  scale = f32[2] parameter(1)
  offset = f32[2] parameter(2)
  ROOT bn = (f32[2,2], f32[2], f32[2]) batch-norm-training(x, scale, offset), epsilon=0, feature_index=1
})",
                          {&x, &scale, &offset});
  ASSERT_EQ(result.tuple_size(), 3);
  EXPECT_EQ(result.tuple_element(0), LiteralUtil::CreateR2<float>({{-1, -1}, {1, 3}}));
  EXPECT_EQ(result.tuple_element(1), R1<float>({2, 20}));
  EXPECT_EQ(result.tuple_element(2), R1<float>({1, 100}));
}

}  // namespace
}  // namespace axle
