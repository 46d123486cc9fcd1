//===- indexing_ops_test.cc - gather, dus, reduce-window, map on cpu -------===//
//
// gather, dynamic-update-slice, reduce-window, map and variadic reduce on
// the cpu platform agree with the interpreter: out-of-range starts clamp,
// index_vector_dim anywhere (or implicit), permuted start_index_map,
// batching dimensions, window strides, padding, base and window dilation,
// variadic windows, empty shapes, several element types; select-and-scatter;
// bitcast-convert between element types of different widths;
// set-dimension-size, dynamic-reshape, get-dimension-size, real/imag of
// real values.
//
//===----------------------------------------------------------------------===//
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "axle/cpu/cpu_test_util.h"
#include "axle/cpu/runtime/platform_test_util.h"
#include "gtest/gtest.h"

namespace axle {
namespace {

void ExpectExact(const std::string& text, const std::vector<Literal>& arguments) {
  SCOPED_TRACE(text);
  testing::ExpectCpuAgrees(text, arguments, ErrorSpec(0, 0));
}

void ExpectExact(const std::string& text) {
  ExpectExact(text, cpu::testing::MakeTestArguments(text));
}

Literal Indices(const std::vector<int64_t>& dims, const std::vector<int32_t>& values) {
  return LiteralUtil::CreateFromDimensions<int32_t>(dims, values);
}

// --- gather --------------------------------------------------------------------

TEST(CpuGatherTest, RowsWithOutOfRangeStartsClamp) {
  const std::string text = R"(
HloModule m
ENTRY e {
  x = f32[5,3] parameter(0)
  i = s32[6] parameter(1)
  ROOT g = f32[6,3] gather(x, i), offset_dims={1}, collapsed_slice_dims={0},
      start_index_map={0}, index_vector_dim=1, slice_sizes={1,3}
})";
  std::vector<Literal> arguments = cpu::testing::MakeTestArguments(text);
  arguments[1] = LiteralUtil::CreateR1<int32_t>({0, 4, -1, 5, 2147483647, -2147483647 - 1});
  ExpectExact(text, arguments);
}

TEST(CpuGatherTest, SlicesWithIndexVectorDimFirstAndPermutedMap) {
  // Index vectors along dimension 0 of the indices; entry 0 starts operand
  // dimension 1, entry 1 operand dimension 0; 2x2 windows, clamped.
  const std::string text = R"(
HloModule m
ENTRY e {
  x = s16[4,6] parameter(0)
  i = s32[2,3] parameter(1)
  ROOT g = s16[2,2,3] gather(x, i), offset_dims={0,1}, collapsed_slice_dims={},
      start_index_map={1,0}, index_vector_dim=0, slice_sizes={2,2}
})";
  std::vector<Literal> arguments = cpu::testing::MakeTestArguments(text);
  arguments[1] = Indices({2, 3}, {0, 5, -3, 3, 1, 9});
  ExpectExact(text, arguments);
}

TEST(CpuGatherTest, ImplicitIndexVectorDimAndUnsignedIndices) {
  const std::string text = R"(
HloModule m
ENTRY e {
  x = bf16[7,2] parameter(0)
  i = u8[2,2] parameter(1)
  ROOT g = bf16[2,2,2] gather(x, i), offset_dims={2}, collapsed_slice_dims={0},
      start_index_map={0}, index_vector_dim=2, slice_sizes={1,2}
})";
  ExpectExact(text);  // u8 corner values (0, 1, 127, 255, ...) clamp to 6.
}

TEST(CpuGatherTest, OperandBatchingDims) {
  const std::string text = R"(
HloModule m
ENTRY e {
  x = f32[3,5,2] parameter(0)
  i = s64[3,4,1] parameter(1)
  ROOT g = f32[3,4,2] gather(x, i), offset_dims={2}, collapsed_slice_dims={1},
      start_index_map={1}, operand_batching_dims={0}, start_indices_batching_dims={0},
      index_vector_dim=2, slice_sizes={1,1,2}
})";
  std::vector<Literal> arguments = cpu::testing::MakeTestArguments(text);
  std::vector<int64_t> values = {0, 1, 2, 3, 4, 5, -1, 9, 2, 2, 0, 4};
  arguments[1] = LiteralUtil::CreateFromDimensions<int64_t>({3, 4, 1}, values);
  ExpectExact(text, arguments);
}

TEST(CpuGatherTest, FusedWithElementwiseConsumersAndEmptyResult) {
  const std::string text = R"(
HloModule m
ENTRY e {
  x = f32[8] parameter(0)
  i = s32[3,1] parameter(1)
  g = f32[3,2] gather(x, i), offset_dims={1}, collapsed_slice_dims={},
      start_index_map={0}, index_vector_dim=1, slice_sizes={2}
  ROOT n = f32[3,2] negate(g)
})";
  ExpectExact(text);
  const std::string empty = R"(
HloModule m
ENTRY e {
  x = f32[8] parameter(0)
  i = s32[0,1] parameter(1)
  ROOT g = f32[0,2] gather(x, i), offset_dims={1}, collapsed_slice_dims={},
      start_index_map={0}, index_vector_dim=1, slice_sizes={2}
})";
  ExpectExact(empty);
}

// --- dynamic-update-slice --------------------------------------------------------

TEST(CpuDynamicUpdateSliceTest, StartsClampSoTheUpdateFits) {
  const std::string text = R"(
HloModule m
ENTRY e {
  x = f32[5,6] parameter(0)
  u = f32[2,3] parameter(1)
  a = s32[] parameter(2)
  b = s32[] parameter(3)
  ROOT d = f32[5,6] dynamic-update-slice(x, u, a, b)
})";
  for (auto [a, b] : std::vector<std::pair<int32_t, int32_t>>{
           {0, 0}, {1, 2}, {4, 5}, {-3, 2}, {100, -100}, {3, 3}}) {
    std::vector<Literal> arguments = cpu::testing::MakeTestArguments(text);
    arguments[2] = LiteralUtil::CreateR0<int32_t>(a);
    arguments[3] = LiteralUtil::CreateR0<int32_t>(b);
    SCOPED_TRACE(absl::StrCat(a, ",", b));
    ExpectExact(text, arguments);
  }
}

TEST(CpuDynamicUpdateSliceTest, TypesAndEmptyUpdate) {
  for (const char* type : {"pred", "s8", "u32", "f16", "c64"}) {
    const std::string text = absl::StrCat(R"(
HloModule m
ENTRY e {
  x = )",
                                          type, R"([9] parameter(0)
  u = )",
                                          type, R"([4] parameter(1)
  a = u32[] parameter(2)
  ROOT d = )",
                                          type, R"([9] dynamic-update-slice(x, u, a)
})");
    ExpectExact(text);
  }
  ExpectExact(R"(
HloModule m
ENTRY e {
  x = s32[4] parameter(0)
  u = s32[0] parameter(1)
  a = s32[] parameter(2)
  ROOT d = s32[4] dynamic-update-slice(x, u, a)
})");
}

// --- reduce-window ---------------------------------------------------------------

TEST(CpuReduceWindowTest, MaxPoolWithStridesAndPadding) {
  ExpectExact(R"(
HloModule m
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] maximum(a, b)
}
ENTRY e {
  x = f32[2,7,9] parameter(0)
  lo = f32[] constant(-inf)
  ROOT r = f32[2,4,4] reduce-window(x, lo), window={size=1x3x3 stride=1x2x2 pad=0_0x1_1x0_1},
      to_apply=max
})");
}

TEST(CpuReduceWindowTest, ChannelsLastPoolsUnrolledAndALargeWindowLooped) {
  // Windows of up to 32 elements are straight-line code (the loop over the
  // channels vectorizes), larger ones loops; a NaN in a window stays NaN.
  const std::string text = R"(
HloModule m
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] maximum(a, b)
}
ENTRY e {
  x = f32[1,7,6,19] parameter(0)
  lo = f32[] constant(-inf)
  small = f32[1,4,3,19] reduce-window(x, lo), window={size=1x3x3x1 stride=1x2x2x1 pad=0_0x1_1x1_0x0_0},
      to_apply=max
  large = f32[1,2,1,19] reduce-window(x, lo), window={size=1x6x6x1 stride=1x2x2x1 pad=0_0x0_1x0_0x0_0},
      to_apply=max
  ROOT t = (f32[1,4,3,19], f32[1,2,1,19]) tuple(small, large)
})";
  ExpectExact(text);
  Literal x(ShapeUtil::MakeShape(F32, {1, 7, 6, 19}));
  auto data = x.data<float>();
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<float>((i * 5) % 13) - 6.f;
  data[(3 * 6 + 2) * 19 + 4] = std::numeric_limits<float>::quiet_NaN();
  std::vector<Literal> arguments;
  arguments.push_back(std::move(x));
  ExpectExact(text, arguments);
}

TEST(CpuReduceWindowTest, MaxPoolNaNsOnlyFromRealElements) {
  // The max folds with a NaN-seen flag beside it: a NaN under a window's
  // real element makes that output NaN, one under a padding position or a
  // base-dilation hole (which load a clamped real element) does not, and a
  // NaN init value makes every output NaN.
  const std::string text = R"(
HloModule m
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] maximum(a, b)
}
min {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] minimum(a, b)
}
ENTRY e {
  x = f32[1,5,4,17] parameter(0)
  lo = f32[] constant(-inf)
  hi = f32[] constant(inf)
  qnan = f32[] constant(nan)
  pooled = f32[1,5,4,17] reduce-window(x, lo), window={size=1x3x3x1 pad=0_0x1_1x1_1x0_0},
      to_apply=max
  holes = f32[1,9,4,17] reduce-window(x, lo), window={size=1x2x1x1 pad=0_0x1_0x0_0x0_0 lhs_dilate=1x2x1x1},
      to_apply=max
  low = f32[1,3,2,17] reduce-window(x, hi), window={size=1x3x3x1 stride=1x2x2x1 pad=0_0x1_1x1_1x0_0},
      to_apply=min
  all_nan = f32[1,2,2,17] reduce-window(x, qnan), window={size=1x3x2x1 stride=1x2x2x1},
      to_apply=max
  ROOT t = (f32[1,5,4,17], f32[1,9,4,17], f32[1,3,2,17], f32[1,2,2,17]) tuple(pooled, holes, low, all_nan)
})";
  Literal x(ShapeUtil::MakeShape(F32, {1, 5, 4, 17}));
  auto data = x.data<float>();
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<float>((i * 7) % 19) - 9.f;
  data[(0 * 4 + 0) * 17 + 3] = std::numeric_limits<float>::quiet_NaN();   // row 0, a corner
  data[(4 * 4 + 3) * 17 + 16] = std::numeric_limits<float>::quiet_NaN();  // the last element
  data[(2 * 4 + 1) * 17 + 8] = std::numeric_limits<float>::quiet_NaN();
  std::vector<Literal> arguments;
  arguments.push_back(std::move(x));
  ExpectExact(text, arguments);
}

TEST(CpuReduceWindowTest, DilationsAndANonIdentityInit) {
  // Padding and holes are skipped, not combined with the init value.
  ExpectExact(R"(
HloModule m
add {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT c = s32[] add(a, b)
}
ENTRY e {
  x = s32[6,5] parameter(0)
  i = s32[] constant(7)
  ROOT r = s32[6,5] reduce-window(x, i),
      window={size=3x2 stride=2x1 pad=2_1x1_1 lhs_dilate=2x1 rhs_dilate=1x2}, to_apply=add
})");
}

TEST(CpuReduceWindowTest, FloatSumInOrderAndPred) {
  ExpectExact(R"(
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}
ENTRY e {
  x = f32[40] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[36] reduce-window(x, z), window={size=5}, to_apply=add
})");
  ExpectExact(R"(
HloModule m
or {
  a = pred[] parameter(0)
  b = pred[] parameter(1)
  ROOT c = pred[] or(a, b)
}
ENTRY e {
  x = pred[10,3] parameter(0)
  f = pred[] constant(false)
  ROOT r = pred[5,3] reduce-window(x, f), window={size=2x1 stride=2x1}, to_apply=or
})");
}

TEST(CpuReduceWindowTest, VariadicWindowAndEmptyShapes) {
  ExpectExact(R"(
HloModule m
minmax {
  a = f32[] parameter(0)
  b = s32[] parameter(1)
  c = f32[] parameter(2)
  d = s32[] parameter(3)
  lo = f32[] minimum(a, c)
  hi = s32[] maximum(b, d)
  ROOT t = (f32[], s32[]) tuple(lo, hi)
}
ENTRY e {
  x = f32[8] parameter(0)
  y = s32[8] parameter(1)
  i = f32[] constant(inf)
  j = s32[] constant(-2147483648)
  r = (f32[4], s32[4]) reduce-window(x, y, i, j), window={size=3 stride=2 pad=1_0},
      to_apply=minmax
  a = f32[4] get-tuple-element(r), index=0
  b = s32[4] get-tuple-element(r), index=1
  c = f32[4] convert(b)
  ROOT s = f32[4] add(a, c)
})");
  ExpectExact(R"(
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}
ENTRY e {
  x = f32[0,4] parameter(0)
  z = f32[] constant(1)
  ROOT r = f32[1,4] reduce-window(x, z), window={size=1x1 pad=1_0x0_0}, to_apply=add
})");
}

// --- select-and-scatter ------------------------------------------------------------

TEST(CpuSelectAndScatterTest, MaxPoolGradientWithOverlapAndPadding) {
  ExpectExact(R"(
HloModule m
ge {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=GE
}
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}
ENTRY e {
  x = f32[2,7,6] parameter(0)
  s = f32[2,4,3] parameter(1)
  z = f32[] constant(0.5)
  ROOT r = f32[2,7,6] select-and-scatter(x, s, z), window={size=1x3x3 stride=1x2x2 pad=0_0x1_1x1_0},
      select=ge, scatter=add
})");
}

// Windows inside the operand with an f32 select: the tight loop over the
// source's innermost dimension, for each comparison, overlapping windows
// (stride below the size), ties (small integers), rank 1 and 4.
TEST(CpuSelectAndScatterTest, InsideWindowsEverySelectDirection) {
  struct Case {
    const char* operand;
    const char* source;
    const char* window;
  };
  const Case cases[] = {{"f32[3,9,8,5]", "f32[3,4,4,5]", "size=1x3x2x1 stride=1x2x2x1"},
                        {"f32[20]", "f32[9]", "size=4 stride=2"}};
  for (const char* direction : {"GE", "GT", "LE", "LT"}) {
    for (const Case& c : cases) {
      ExpectExact(absl::StrCat(R"(
HloModule m
select {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=)",
                               direction, R"(
}
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}
ENTRY e {
  x = )",
                               c.operand, " parameter(0)\n  s = ", c.source,
                               " parameter(1)\n  z = f32[] constant(0)\n  ROOT r = ", c.operand,
                               " select-and-scatter(x, s, z), window={", c.window,
                               "}, select=select, scatter=add\n}\n"));
    }
  }
}

TEST(CpuSelectAndScatterTest, IntegerMinSelectAndDilations) {
  ExpectExact(R"(
HloModule m
lt {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=LT
}
mul {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT c = s32[] multiply(a, b)
}
ENTRY e {
  x = s32[9] parameter(0)
  s = s32[4] parameter(1)
  one = s32[] constant(1)
  ROOT r = s32[9] select-and-scatter(x, s, one), window={size=3 stride=2 pad=1_1 rhs_dilate=2},
      select=lt, scatter=mul
})");
}

// --- map, variadic reduce --------------------------------------------------------

TEST(CpuMapTest, TwoOperandComputationOfSeveralOps) {
  ExpectExact(R"(
HloModule m
f {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  m = f32[] multiply(a, b)
  c = f32[] constant(2)
  ROOT s = f32[] subtract(m, c)
}
ENTRY e {
  x = f32[3,17] parameter(0)
  y = f32[3,17] parameter(1)
  ROOT r = f32[3,17] map(x, y), dimensions={0,1}, to_apply=f
})");
}

TEST(CpuVariadicReduceTest, ArgmaxWithTuplesInTheEntry) {
  ExpectExact(R"(
HloModule m
argmax {
  a = f32[] parameter(0)
  i = s32[] parameter(1)
  b = f32[] parameter(2)
  j = s32[] parameter(3)
  gt = pred[] compare(a, b), direction=GT
  eq = pred[] compare(a, b), direction=EQ
  lower = pred[] compare(i, j), direction=LT
  tie = pred[] and(eq, lower)
  keep = pred[] or(gt, tie)
  v = f32[] select(keep, a, b)
  k = s32[] select(keep, i, j)
  ROOT t = (f32[], s32[]) tuple(v, k)
}
ENTRY e {
  x = f32[5,21] parameter(0)
  n = s32[5,21] iota(), iota_dimension=1
  lo = f32[] constant(-inf)
  zero = s32[] constant(0)
  r = (f32[5], s32[5]) reduce(x, n, lo, zero), dimensions={1}, to_apply=argmax
  ROOT k = s32[5] get-tuple-element(r), index=1
})");
}

// --- bitcast-convert between widths ------------------------------------------------

TEST(CpuBitcastConvertTest, WidensAndNarrowsLittleEndian) {
  ExpectExact(R"(
HloModule m
ENTRY e {
  a = s8[3,4] parameter(0)
  b = f16[5,2] parameter(1)
  c = f64[2] parameter(2)
  d = f32[6] parameter(3)
  wa = s32[3] bitcast-convert(a)
  wb = f32[5] bitcast-convert(b)
  nc = s16[2,4] bitcast-convert(c)
  nd = bf16[6,2] bitcast-convert(d)
  ROOT t = (s32[3], f32[5], s16[2,4], bf16[6,2]) tuple(wa, wb, nc, nd)
})");
}

TEST(CpuBitcastConvertTest, BytesToPredAreNonzeroAndBack) {
  // Every byte 0..255 (s8 and u8): a nonzero byte is true, as in the
  // interpreter; pred back to u8 gives 0 or 1.
  ExpectExact(R"(
HloModule m
ENTRY e {
  i = s32[256] iota(), iota_dimension=0
  a = s8[256] convert(i)
  b = u8[256] convert(i)
  pa = pred[256] bitcast-convert(a)
  pb = pred[256] bitcast-convert(b)
  back = u8[256] bitcast-convert(pa)
  ROOT t = (pred[256], pred[256], u8[256]) tuple(pa, pb, back)
})");
}

TEST(CpuDynamicShapeOpsTest, SetDimensionSizeAndDynamicReshapeKeepTheStaticData) {
  ExpectExact(R"(
HloModule m
ENTRY e {
  x = s32[2,3,3] parameter(0)
  two = s32[] parameter(1)
  p = s32[2,<=3,3] set-dimension-size(x, two), dimensions={1}
  nine = s32[] parameter(2)
  ROOT r = s32[<=18] dynamic-reshape(p, nine)
})");
}

TEST(CpuShapeAndComponentOpsTest, GetDimensionSizeAndRealImagOfRealValues) {
  ExpectExact(R"(
HloModule m
ENTRY e {
  x = f32[3,7] parameter(0)
  y = bf16[5] parameter(1)
  n = s32[] get-dimension-size(x), dimensions={1}
  re = f32[3,7] real(x)
  im = bf16[5] imag(y)
  ROOT t = (s32[], f32[3,7], bf16[5]) tuple(n, re, im)
})");
}

}  // namespace
}  // namespace axle
