// The small-dot kernel (small_dot.h) against a scalar reference: every
// tail of rows and columns, strided and broadcast operands, batches, bias
// patterns and activations, a transposed rhs, each with the rhs in place
// and packed into panels; and dots that take the path on the `cpu`
// platform against the interpreter.
#include "axle/cpu/runtime/small_dot.h"

#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "axle/cpu/runtime/platform_test_util.h"
#include "gtest/gtest.h"

namespace axle::cpu {
namespace {

// Values in [-1, 1) that differ from element to element.
std::vector<float> Values(int64_t count, int seed) {
  std::vector<float> values(count);
  for (int64_t i = 0; i < count; ++i) {
    values[i] = static_cast<float>((i * 37 + int64_t{seed} * 101) % 199) / 99.5f - 1.0f;
  }
  return values;
}

float Activate(const SmallDotShape& shape, float x) {
  switch (shape.activation) {
    case Activation::kNone:
      return x;
    case Activation::kRelu:
      return std::isnan(x) ? x : std::max(x, 0.f);
    case Activation::kClamp:
      return std::isnan(x) ? x : std::min(std::max(x, shape.low), shape.high);
    case Activation::kLogistic:
      return 1.f / (1.f + std::exp(-x));
    case Activation::kTanh:
      return std::tanh(x);
    case Activation::kExp:
      return std::exp(x);
    case Activation::kGeluTanh:
      return GeluTanh(x);
  }
  return x;
}

// out[b, i, j] by the definition in small_dot.h, in double.
std::vector<float> Reference(const SmallDotShape& s, const float* lhs, const float* rhs,
                             const float* bias) {
  std::vector<float> out(s.batch * s.m * s.n);
  for (int64_t b = 0; b < s.batch; ++b) {
    for (int64_t i = 0; i < s.m; ++i) {
      for (int64_t j = 0; j < s.n; ++j) {
        double sum = 0;
        for (int64_t p = 0; p < s.k; ++p) {
          const int64_t rb = SmallDotBatchOffset(s, b, s.rhs_batch_stride, s.rhs_outer_stride);
          const int64_t w =
              s.rhs_transposed ? rb + j * s.rhs_k_stride + p : rb + p * s.rhs_k_stride + j;
          sum += static_cast<double>(
                     lhs[SmallDotBatchOffset(s, b, s.lhs_batch_stride, s.lhs_outer_stride) +
                         i * s.lhs_row_stride + p * s.lhs_k_stride]) *
                 rhs[w];
        }
        if (bias != nullptr) {
          sum += bias[SmallDotBatchOffset(s, b, s.bias_batch_stride, s.bias_outer_stride) +
                      i * s.bias_row_stride + j * s.bias_column_stride];
        }
        out[(b * s.m + i) * s.n + j] = Activate(s, static_cast<float>(sum));
      }
    }
  }
  return out;
}

// Runs `shape` in two halves of its units (as two threads would) and
// compares with the reference. Operands are allocated to cover the
// largest offset the strides reach.
void ExpectAgrees(const SmallDotShape& shape, bool with_bias) {
  SCOPED_TRACE(absl::StrCat("batch ", shape.batch, " m ", shape.m, " n ", shape.n, " k ", shape.k,
                            " bias ", with_bias, " activation ",
                            static_cast<int>(shape.activation)));
  // The furthest batch (SmallDotBatchOffset) plus one matrix.
  auto extent = [&](int64_t bs, int64_t os, int64_t r, int64_t rs, int64_t c, int64_t cs) {
    int64_t last = 0;
    for (int64_t i = 0; i < shape.batch; ++i) {
      last = std::max(last, SmallDotBatchOffset(shape, i, bs, os));
    }
    return last + (r - 1) * rs + (c - 1) * cs + 1;
  };
  std::vector<float> lhs = Values(extent(shape.lhs_batch_stride, shape.lhs_outer_stride, shape.m,
                                         shape.lhs_row_stride, shape.k, shape.lhs_k_stride),
                                  1);
  std::vector<float> rhs = shape.rhs_transposed
                               ? Values(extent(shape.rhs_batch_stride, shape.rhs_outer_stride,
                                               shape.n, shape.rhs_k_stride, shape.k, 1),
                                        2)
                               : Values(extent(shape.rhs_batch_stride, shape.rhs_outer_stride,
                                               shape.k, shape.rhs_k_stride, shape.n, 1),
                                        2);
  std::vector<float> bias = Values(extent(shape.bias_batch_stride, shape.bias_outer_stride, shape.m,
                                          shape.bias_row_stride, shape.n, shape.bias_column_stride),
                                   3);
  const float* bias_data = with_bias ? bias.data() : nullptr;
  std::vector<float> expected = Reference(shape, lhs.data(), rhs.data(), bias_data);
  // In place, then with the rhs packed (PackSmallDotRhs).
  std::vector<float> packed(SmallDotPackedRhsSize(shape), std::nanf(""));
  PackSmallDotRhs(shape, rhs.data(), packed.data());
  SmallDotShape packed_shape = shape;
  packed_shape.rhs_packed = true;
  using Run = std::pair<const SmallDotShape*, const float*>;
  for (const auto& [run_shape, run_rhs] :
       {Run{&shape, rhs.data()}, Run{&packed_shape, packed.data()}}) {
    SCOPED_TRACE(run_shape->rhs_packed ? "packed rhs" : "rhs in place");
    // Output rows OutRowStride apart; what lies between them stays NaN.
    const int64_t row_stride = OutRowStride(shape);
    std::vector<float> out(shape.batch * shape.m * row_stride, std::nanf(""));
    const int64_t units = SmallDotUnits(*run_shape);
    SmallDotF32(*run_shape, lhs.data(), run_rhs, bias_data, out.data(), 0, units / 2);
    SmallDotF32(*run_shape, lhs.data(), run_rhs, bias_data, out.data(), units / 2, units);
    for (int64_t row = 0; row < shape.batch * shape.m; ++row) {
      for (int64_t j = 0; j < row_stride; ++j) {
        const float value = out[row * row_stride + j];
        if (j >= shape.n) {
          ASSERT_TRUE(std::isnan(value)) << "row " << row << " column " << j << " written";
          continue;
        }
        const float want = expected[row * shape.n + j];
        ASSERT_NEAR(value, want, 1e-4f * (1.f + std::abs(want))) << "row " << row << " col " << j;
      }
    }
  }
}

SmallDotShape Plain(int64_t m, int64_t n, int64_t k) {
  SmallDotShape shape;
  shape.m = m;
  shape.n = n;
  shape.k = k;
  shape.lhs_row_stride = k;
  shape.lhs_k_stride = 1;
  shape.rhs_k_stride = n;
  shape.bias_column_stride = 1;
  return shape;
}

class SmallDotTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!SmallDotAvailable()) GTEST_SKIP() << "this CPU lacks AVX-512F";
  }
};

TEST_F(SmallDotTest, EveryRowAndColumnTail) {
  for (int64_t m : {1, 3, 7, 8, 9, 16, 21, 32}) {
    for (int64_t n : {1, 5, 16, 17, 32, 33, 70}) {
      for (int64_t k : {1, 13, 200}) ExpectAgrees(Plain(m, n, k), m % 2 == 1);
    }
  }
}

// More rows than kSmallDotMaxRows (small dots of any row count take the
// path): whole tiles of 8 rows and the rest, blocks of 16 columns or less
// (one vector per row), lhs rows read in place at any stride.
TEST_F(SmallDotTest, ManyRowsAndNarrowBlocks) {
  for (int64_t m : {33, 48, 61}) {
    for (int64_t n : {3, 16, 17, 40, 128}) {
      for (int64_t k : {1, 64}) {
        SmallDotShape shape = Plain(m, n, k);
        shape.activation = n == 17 ? Activation::kRelu : Activation::kNone;
        ExpectAgrees(shape, m != 48);
        // The lhs transposed ([k, m] in memory).
        shape.lhs_row_stride = 1;
        shape.lhs_k_stride = m;
        ExpectAgrees(shape, true);
      }
    }
  }
}

// Tall dots (kTallRows and more: 12-row tiles and every remainder) with
// their output rows apart (a slice of a wider array, as a pointwise
// convolution writes its part of a concatenation), in place and packed.
TEST_F(SmallDotTest, TallDotsIntoAStridedOutput) {
  for (int64_t m : {72, 77, 83, 95, 169}) {
    for (int64_t n : {13, 64, 70}) {
      for (int64_t k : {16, 48}) {
        SmallDotShape shape = Plain(m, n, k);
        shape.out_row_stride = n == 64 ? 2 * n : n + 3;
        shape.activation = n == 64 ? Activation::kRelu : Activation::kNone;
        ExpectAgrees(shape, m % 2 == 1);
      }
    }
  }
  // A dense tall output (out_row_stride 0: n).
  ExpectAgrees(Plain(100, 40, 24), true);
}

TEST_F(SmallDotTest, StridedOperands) {
  // lhs transposed ([k, m] in memory), rhs rows padded.
  SmallDotShape shape = Plain(12, 40, 30);
  shape.lhs_row_stride = 1;
  shape.lhs_k_stride = 12;
  shape.rhs_k_stride = 48;
  ExpectAgrees(shape, false);
  // A single column whose rhs rows are far apart.
  SmallDotShape column = Plain(5, 1, 64);
  column.rhs_k_stride = 7;
  ExpectAgrees(column, true);
}

TEST_F(SmallDotTest, BatchesAndBroadcastOperands) {
  SmallDotShape shape = Plain(6, 35, 20);
  shape.batch = 3;
  shape.lhs_batch_stride = int64_t{6} * 20;
  shape.rhs_batch_stride = int64_t{20} * 35;
  shape.bias_batch_stride = int64_t{6} * 35;
  shape.bias_row_stride = 35;
  ExpectAgrees(shape, true);
  // The rhs shared by every batch (stride 0); bias per row only.
  shape.rhs_batch_stride = 0;
  shape.bias_batch_stride = 0;
  shape.bias_row_stride = 1;
  shape.bias_column_stride = 0;
  ExpectAgrees(shape, true);
  // Bias with a column stride other than 1 (a transposed full bias).
  shape.bias_row_stride = 1;
  shape.bias_column_stride = 6;
  ExpectAgrees(shape, true);
}

TEST_F(SmallDotTest, Activations) {
  // The transcendental ones 16 at a time on the stored tiles
  // (vector_activations.h): 10 rows read in 32-column tiles, 2 rows in
  // 128-column units, a transposed rhs in 8-column dot products.
  for (Activation activation : {Activation::kRelu, Activation::kClamp, Activation::kLogistic,
                                Activation::kTanh, Activation::kExp, Activation::kGeluTanh}) {
    for (int64_t m : {10, 2}) {
      for (bool transposed : {false, true}) {
        SmallDotShape shape = Plain(m, 37, 9);
        if (transposed) {
          shape.rhs_transposed = true;
          shape.rhs_k_stride = 9;
        }
        shape.activation = activation;
        shape.low = -0.25f;
        shape.high = 0.5f;
        ExpectAgrees(shape, true);
      }
    }
  }
}

// rhs as [n, k] (a Linear layer's weight): dot products of dense rows,
// with every tail of rows (pairs), columns (8) and contraction (16).
TEST_F(SmallDotTest, TransposedRhs) {
  for (int64_t m : {1, 2, 3, 16}) {
    for (int64_t n : {1, 7, 8, 33, 70}) {
      for (int64_t k : {1, 15, 16, 130}) {
        SmallDotShape shape = Plain(m, n, k);
        shape.rhs_transposed = true;
        shape.rhs_k_stride = k + (n % 2);  // rows padded sometimes
        shape.activation = m == 3 ? Activation::kTanh : Activation::kNone;
        ExpectAgrees(shape, n % 3 != 0);
      }
    }
  }
  // Batched, the rhs shared by the batches, bias per row.
  SmallDotShape shape = Plain(5, 20, 40);
  shape.rhs_transposed = true;
  shape.rhs_k_stride = 40;
  shape.batch = 3;
  shape.lhs_batch_stride = int64_t{5} * 40;
  shape.bias_row_stride = 1;
  shape.bias_column_stride = 0;
  ExpectAgrees(shape, true);
}

// A batch of two runs of dims (SmallDotShape::inner_batch): attention's
// scores q . K over a K cache [b, s, h, d] batched over (b, h), h's stride
// d and b's s * h * d, with a bias batched the same way; dense rhs columns
// too.
TEST_F(SmallDotTest, BatchOfTwoRuns) {
  for (bool transposed : {true, false}) {
    SmallDotShape shape = Plain(1, 64, 32);
    shape.rhs_transposed = transposed;
    shape.batch = 8;
    shape.inner_batch = 4;
    shape.lhs_batch_stride = 32;
    shape.lhs_outer_stride = 128;
    shape.rhs_batch_stride = 32;
    shape.rhs_outer_stride = int64_t{64} * 4 * 32;
    shape.rhs_k_stride = transposed ? 128 : int64_t{4} * 64;
    if (!transposed) shape.rhs_batch_stride = 64;
    shape.bias_batch_stride = 1;
    shape.bias_outer_stride = int64_t{4} * 64 + 3;
    shape.bias_row_stride = 0;
    shape.bias_column_stride = 4;
    ExpectAgrees(shape, true);
  }
}

// 1-3 rows with dense rhs columns read in units of 128 columns, in place
// (rows at any stride, the last unit masked) and packed; 4 rows (row
// tiles) on the other side. Batches, the rhs shared, bias and relu.
TEST_F(SmallDotTest, WideUnitsOfFewRows) {
  for (int64_t m : {1, 2, 3, 4}) {
    for (int64_t n : {127, 128, 129, 300}) {
      for (int64_t k : {1, 36}) {
        SmallDotShape shape = Plain(m, n, k);
        shape.rhs_k_stride = n + (k > 1 ? 3 : 0);  // rows padded sometimes
        shape.activation = n == 129 ? Activation::kRelu : Activation::kNone;
        ExpectAgrees(shape, n != 128);
      }
    }
  }
  SmallDotShape shape = Plain(1, 200, 50);
  shape.batch = 3;
  shape.lhs_batch_stride = 50;
  shape.rhs_batch_stride = int64_t{50} * 200;
  shape.bias_batch_stride = 200;
  ExpectAgrees(shape, true);
  shape.rhs_batch_stride = 0;
  ExpectAgrees(shape, true);
  // Units of 128 columns for 1-3 rows, of kSmallDotColumns for more.
  EXPECT_EQ(SmallDotUnitColumns(Plain(1, 300, 8)), 128);
  EXPECT_EQ(SmallDotUnits(Plain(3, 300, 8)), 3);
  EXPECT_EQ(SmallDotUnitColumns(Plain(4, 300, 8)), kSmallDotColumns);
}

TEST_F(SmallDotTest, ReluAndClampKeepNan) {
  SmallDotShape shape = Plain(2, 16, 1);
  std::vector<float> lhs = {std::numeric_limits<float>::quiet_NaN(), 1.f};
  std::vector<float> rhs(16, 1.f);
  std::vector<float> out(32);
  for (Activation activation : {Activation::kRelu, Activation::kClamp}) {
    shape.activation = activation;
    SmallDotF32(shape, lhs.data(), rhs.data(), nullptr, out.data(), 0, SmallDotUnits(shape));
    EXPECT_TRUE(std::isnan(out[0]));
    EXPECT_EQ(out[16], activation == Activation::kRelu ? 1.f : 0.f);
  }
}

// Dots above the emitted loop's size on the `cpu` platform, with few rows:
// the small-dot path on AVX-512 machines, oneDNN elsewhere.
TEST(SmallDotPlatformTest, AgreesWithInterpreter) {
  auto literal = [](const std::vector<int64_t>& dims, int seed) {
    Literal out(ShapeUtil::MakeShape(F32, dims));
    std::vector<float> values = Values(out.element_count(), seed);
    std::copy(values.begin(), values.end(), out.data<float>().begin());
    return out;
  };
  // An RNN step: [16, 192] x [192, 512] + bias, then tanh.
  testing::ExpectCpuAgrees(R"(
HloModule step
ENTRY e {
  x = f32[16,192] parameter(0)
  w = f32[192,512] parameter(1)
  b = f32[512] parameter(2)
  d = f32[16,512] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = f32[16,512] broadcast(b), dimensions={1}
  y = f32[16,512] add(d, bb)
  ROOT t = f32[16,512] tanh(y)
})",
                           {literal({16, 192}, 1), literal({192, 512}, 2), literal({512}, 3)},
                           ErrorSpec(1e-4, 1e-4));
  // Transposed lhs, batched, with relu.
  testing::ExpectCpuAgrees(R"(
HloModule batched
ENTRY e {
  x = f32[2,300,10] parameter(0)
  w = f32[2,300,130] parameter(1)
  d = f32[2,10,130] dot(x, w), lhs_batch_dims={0}, lhs_contracting_dims={1}, rhs_batch_dims={0}, rhs_contracting_dims={1}
  zero = f32[] constant(0)
  z = f32[2,10,130] broadcast(zero), dimensions={}
  ROOT r = f32[2,10,130] maximum(d, z)
})",
                           {literal({2, 300, 10}, 4), literal({2, 300, 130}, 5)},
                           ErrorSpec(1e-4, 1e-4));
  // An LSTM step as ONNX writes it: x [2, 128] times W^T, W [512, 128]
  // (below the emitted loop's size: the transposed rhs comes here anyway).
  testing::ExpectCpuAgrees(R"(
HloModule linear
ENTRY e {
  x = f32[2,128] parameter(0)
  w = f32[512,128] parameter(1)
  b = f32[512] parameter(2)
  d = f32[2,512] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  bb = f32[2,512] broadcast(b), dimensions={1}
  ROOT y = f32[2,512] add(d, bb)
})",
                           {literal({2, 128}, 6), literal({512, 128}, 7), literal({512}, 8)},
                           ErrorSpec(1e-4, 1e-4));
  // A classifier head on one input (mobilenet_v2's): a matrix-vector
  // product over a [1280, 1000] weight read in place, + bias; and its
  // weight as a Linear layer's [1000, 1280].
  testing::ExpectCpuAgrees(R"(
HloModule classifier
ENTRY e {
  x = f32[1,1280] parameter(0)
  w = f32[1280,1000] parameter(1)
  b = f32[1000] parameter(2)
  d = f32[1,1000] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = f32[1,1000] broadcast(b), dimensions={1}
  ROOT y = f32[1,1000] add(d, bb)
})",
                           {literal({1, 1280}, 12), literal({1280, 1000}, 13), literal({1000}, 14)},
                           ErrorSpec(1e-4, 1e-4));
  testing::ExpectCpuAgrees(R"(
HloModule linear_head
ENTRY e {
  x = f32[1,1280] parameter(0)
  w = f32[1000,1280] parameter(1)
  b = f32[1000] parameter(2)
  d = f32[1,1000] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  bb = f32[1,1000] broadcast(b), dimensions={1}
  ROOT y = f32[1,1000] add(d, bb)
})",
                           {literal({1, 1280}, 15), literal({1000, 1280}, 16), literal({1000}, 17)},
                           ErrorSpec(1e-4, 1e-4));
  // More rows than kSmallDotMaxRows in a small dot: an ONNX classifier
  // head ([48, 256] x [256, 17] + bias, the weight constant or not), a
  // PyTorch MLP layer ([64, 64] x [64, 128] + bias, relu), a transposed
  // lhs, and a batch.
  testing::ExpectCpuAgrees(R"(
HloModule many_rows
ENTRY e {
  x = f32[2,24,256] parameter(0)
  w = f32[256,17] parameter(1)
  b = f32[17] parameter(2)
  d = f32[2,24,17] dot(x, w), lhs_contracting_dims={2}, rhs_contracting_dims={0}
  bb = f32[2,24,17] broadcast(b), dimensions={2}
  ROOT y = f32[2,24,17] add(bb, d)
})",
                           {literal({2, 24, 256}, 18), literal({256, 17}, 19), literal({17}, 20)},
                           ErrorSpec(1e-4, 1e-4));
  testing::ExpectCpuAgrees(
      R"(
HloModule mlp_layer
ENTRY e {
  x = f32[64,64] parameter(0)
  w = f32[64,128] parameter(1)
  b = f32[128] parameter(2)
  xt = f32[64,64] parameter(3)
  d = f32[64,128] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = f32[64,128] broadcast(b), dimensions={1}
  a = f32[64,128] add(d, bb)
  zero = f32[] constant(0)
  z = f32[64,128] broadcast(zero), dimensions={}
  r = f32[64,128] maximum(a, z)
  t = f32[64,128] dot(xt, w), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  xb = f32[3,40,50] parameter(4)
  wb = f32[3,50,60] parameter(5)
  db = f32[3,40,60] dot(xb, wb), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
  ROOT o = (f32[64,128], f32[64,128], f32[3,40,60]) tuple(r, t, db)
})",
      {literal({64, 64}, 21), literal({64, 128}, 22), literal({128}, 23), literal({64, 64}, 24),
       literal({3, 40, 50}, 25), literal({3, 50, 60}, 26)},
      ErrorSpec(1e-4, 1e-4));
  // A constant weight (packed into panels when the thunk is made), [40, 70]
  // transposed, under 2, 5 and 48 rows: panels side by side, and row tiles.
  std::string weight = "{";
  std::vector<float> values = Values(int64_t{40} * 70, 9);
  for (int64_t j = 0; j < 70; ++j) {
    absl::StrAppend(&weight, j > 0 ? "," : "", "{");
    for (int64_t p = 0; p < 40; ++p) absl::StrAppend(&weight, p > 0 ? "," : "", values[j * 40 + p]);
    absl::StrAppend(&weight, "}");
  }
  absl::StrAppend(&weight, "}");
  testing::ExpectCpuAgrees(absl::StrCat(R"(
HloModule constant_weight
ENTRY e {
  x = f32[2,40] parameter(0)
  y = f32[5,40] parameter(1)
  v = f32[48,40] parameter(2)
  w = f32[70,40] constant()",
                                        weight, R"()
  d = f32[2,70] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  e = f32[5,70] dot(y, w), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  f = f32[48,70] dot(v, w), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  ROOT t = (f32[2,70], f32[5,70], f32[48,70]) tuple(d, e, f)
})"),
                           {literal({2, 40}, 10), literal({5, 40}, 11), literal({48, 40}, 27)},
                           ErrorSpec(1e-4, 1e-4));
  // Matrix-vector products with the matrix on the left (a conjugate
  // gradient's A @ p), run as the vector times the transposed matrix: a
  // [520, 300] matrix times a vector, + bias, then tanh; a batch of [2, 100,
  // 64] x [2, 64, 1], its matrix read transposed from [2, 64, 100]
  // (columns dense: the path declines it); and a [40, 30] one, below the
  // emitted loop's size.
  testing::ExpectCpuAgrees(R"(
HloModule matrix_vector
ENTRY e {
  a = f32[520,300] parameter(0)
  v = f32[300] parameter(1)
  b = f32[520] parameter(2)
  d = f32[520] dot(a, v), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  y = f32[520] add(d, b)
  t = f32[520] tanh(y)
  ab = f32[2,100,64] parameter(3)
  vb = f32[2,64,1] parameter(4)
  db = f32[2,100,1] dot(ab, vb), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
  at = f32[2,64,100] parameter(5)
  dt = f32[2,100,1] dot(at, vb), lhs_batch_dims={0}, lhs_contracting_dims={1}, rhs_batch_dims={0}, rhs_contracting_dims={1}
  as = f32[40,30] parameter(6)
  vs = f32[30] parameter(7)
  ds = f32[40] dot(as, vs), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT o = (f32[520], f32[2,100,1], f32[2,100,1], f32[40]) tuple(t, db, dt, ds)
})",
                           {literal({520, 300}, 28), literal({300}, 29), literal({520}, 30),
                            literal({2, 100, 64}, 31), literal({2, 64, 1}, 32),
                            literal({2, 64, 100}, 33), literal({40, 30}, 34), literal({30}, 35)},
                           ErrorSpec(1e-4, 1e-4));
  // A weight gradient summed over a loop's steps, acc + x_i^T d_i ([192,
  // 16] x [16, 64]): the sum written over the accumulator, a state leaf, in
  // place (the bias shares the output's memory).
  testing::ExpectCpuAgrees(
      R"(
HloModule accumulate
body {
  p = (s32[], f32[192,64], f32[8,16,192], f32[8,16,64]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  acc = f32[192,64] get-tuple-element(p), index=1
  xs = f32[8,16,192] get-tuple-element(p), index=2
  ds = f32[8,16,64] get-tuple-element(p), index=3
  zero = s32[] constant(0)
  x = f32[1,16,192] dynamic-slice(xs, i, zero, zero), dynamic_slice_sizes={1,16,192}
  xr = f32[16,192] reshape(x)
  d = f32[1,16,64] dynamic-slice(ds, i, zero, zero), dynamic_slice_sizes={1,16,64}
  dr = f32[16,64] reshape(d)
  g = f32[192,64] dot(xr, dr), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  sum = f32[192,64] add(acc, g)
  one = s32[] constant(1)
  next = s32[] add(i, one)
  ROOT t = (s32[], f32[192,64], f32[8,16,192], f32[8,16,64]) tuple(next, sum, xs, ds)
}
cond {
  p = (s32[], f32[192,64], f32[8,16,192], f32[8,16,64]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(8)
  ROOT lt = pred[] compare(i, n), direction=LT
}
ENTRY e {
  acc = f32[192,64] parameter(0)
  xs = f32[8,16,192] parameter(1)
  ds = f32[8,16,64] parameter(2)
  zero = s32[] constant(0)
  init = (s32[], f32[192,64], f32[8,16,192], f32[8,16,64]) tuple(zero, acc, xs, ds)
  w = (s32[], f32[192,64], f32[8,16,192], f32[8,16,64]) while(init), condition=cond, body=body
  ROOT r = f32[192,64] get-tuple-element(w), index=1
})",
      {literal({192, 64}, 36), literal({8, 16, 192}, 37), literal({8, 16, 64}, 38)},
      ErrorSpec(1e-4, 1e-4));
  // A residual h + h @ w, the bias the lhs itself (dead after the dot): it
  // must not share the output's memory, which the dot writes while it
  // still reads h.
  testing::ExpectCpuAgrees(R"(
HloModule residual
ENTRY e {
  p = f32[64,64] parameter(0)
  w = f32[64,64] parameter(1)
  h = f32[64,64] exponential(p)
  d = f32[64,64] dot(h, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT y = f32[64,64] add(d, h)
})",
                           {literal({64, 64}, 39), literal({64, 64}, 40)}, ErrorSpec(1e-4, 1e-4));
}

// The dots of a small MLP's training step (PyTorch's Linear: x @ W^T with
// W [out, in]) where the kernel beats the emitted loop and oneDNN: the
// classifier head's forward [64, 128] x [10, 128]^T + bias and its
// backward [64, 10] x [10, 128] and [64, 10]^T x [64, 128], a small
// transposed rhs with relu; and next to them the shapes the path declines
// (a transposed rhs of 4 columns or a contraction of 16; a batch of narrow
// [8, 8] x [8, 8]), which the emitted loop computes.
TEST(SmallDotPlatformTest, TrainingStepShapesAgree) {
  auto literal = [](const std::vector<int64_t>& dims, int seed) {
    Literal out(ShapeUtil::MakeShape(F32, dims));
    std::vector<float> values = Values(out.element_count(), seed);
    std::copy(values.begin(), values.end(), out.data<float>().begin());
    return out;
  };
  testing::ExpectCpuAgrees(
      R"(
HloModule head
ENTRY e {
  x = f32[64,128] parameter(0)
  w = f32[10,128] parameter(1)
  b = f32[10] parameter(2)
  g = f32[64,10] parameter(3)
  d = f32[64,10] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  bb = f32[64,10] broadcast(b), dimensions={1}
  y = f32[64,10] add(d, bb)
  dx = f32[64,128] dot(g, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  dw = f32[10,128] dot(g, x), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  ROOT t = (f32[64,10], f32[64,128], f32[10,128]) tuple(y, dx, dw)
})",
      {literal({64, 128}, 41), literal({10, 128}, 42), literal({10}, 43), literal({64, 10}, 44)},
      ErrorSpec(1e-4, 1e-4));
  testing::ExpectCpuAgrees(R"(
HloModule small_transposed
ENTRY e {
  x = f32[64,64] parameter(0)
  w = f32[32,64] parameter(1)
  d = f32[64,32] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  zero = f32[] constant(0)
  z = f32[64,32] broadcast(zero), dimensions={}
  r = f32[64,32] maximum(d, z)
  u = f32[256,64] parameter(2)
  v = f32[4,64] parameter(3)
  n = f32[256,4] dot(u, v), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  p = f32[64,16] parameter(4)
  q = f32[16,16] parameter(5)
  s = f32[64,16] dot(p, q), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  a = f32[8,8,8] parameter(6)
  c = f32[8,8,8] parameter(7)
  o = f32[8,8,8] dot(a, c), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
  ROOT t = (f32[64,32], f32[256,4], f32[64,16], f32[8,8,8]) tuple(r, n, s, o)
})",
                           {literal({64, 64}, 45), literal({32, 64}, 46), literal({256, 64}, 47),
                            literal({4, 64}, 48), literal({64, 16}, 49), literal({16, 16}, 50),
                            literal({8, 8, 8}, 51), literal({8, 8, 8}, 52)},
                           ErrorSpec(1e-4, 1e-4));
}

// A decode step's attention over a KV cache [b, s, h, d]: the scores
// q . K batched over (b, h), whose rhs batch dims are two runs of strides
// (a transposed rhs: the small-dot path with SmallDotShape::inner_batch),
// plus a mask bias; the context p . V (dense rhs columns: the emitted
// loop); three batch dims split after two.
TEST(SmallDotPlatformTest, BatchesOfTwoRunsAgree) {
  auto literal = [](const std::vector<int64_t>& dims, int seed) {
    Literal out(ShapeUtil::MakeShape(F32, dims));
    std::vector<float> values = Values(out.element_count(), seed);
    std::copy(values.begin(), values.end(), out.data<float>().begin());
    return out;
  };
  testing::ExpectCpuAgrees(
      R"(
HloModule decode_attention
ENTRY e {
  q = f32[2,1,4,32] parameter(0)
  k = f32[2,64,4,32] parameter(1)
  v = f32[2,64,4,32] parameter(2)
  m = f32[2,4,64] parameter(3)
  s = f32[2,4,1,64] dot(q, k), lhs_batch_dims={0,2}, lhs_contracting_dims={3}, rhs_batch_dims={0,2}, rhs_contracting_dims={3}
  mb = f32[2,4,1,64] broadcast(m), dimensions={0,1,3}
  sm = f32[2,4,1,64] add(s, mb)
  c = f32[2,4,1,32] dot(sm, v), lhs_batch_dims={0,1}, lhs_contracting_dims={3}, rhs_batch_dims={0,2}, rhs_contracting_dims={1}
  x = f32[2,3,40,2,24] parameter(4)
  y = f32[2,3,2,4,24] parameter(5)
  o = f32[2,3,2,4,40] dot(y, x), lhs_batch_dims={0,1,2}, lhs_contracting_dims={4}, rhs_batch_dims={0,1,3}, rhs_contracting_dims={4}
  ROOT t = (f32[2,4,1,64], f32[2,4,1,32], f32[2,3,2,4,40]) tuple(sm, c, o)
})",
      {literal({2, 1, 4, 32}, 61), literal({2, 64, 4, 32}, 62), literal({2, 64, 4, 32}, 63),
       literal({2, 4, 64}, 64), literal({2, 3, 40, 2, 24}, 65), literal({2, 3, 2, 4, 24}, 66)},
      ErrorSpec(1e-4, 1e-4));
}

}  // namespace
}  // namespace axle::cpu
