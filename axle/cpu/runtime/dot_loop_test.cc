// The emitted dot loops (dot_loop_emitter.h: the types oneDNN lacks) on the
// `cpu` platform against the interpreter: every type family, sizes around
// the kernel's row blocks (4) and column chunks, batch and contracting dims
// anywhere, transposed operands, broadcast operands, epilogues, empty dims,
// a dot large enough to be split across threads. Sums are formed in the
// interpreter's order and precision, so results are compared exactly except
// where an epilogue calls a transcendental.
#include <cmath>
#include <iterator>
#include <limits>

#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "axle/cpu/runtime/platform_test_util.h"
#include "gtest/gtest.h"

namespace axle {
namespace {

using testing::ExpectCpuAgrees;
using testing::RunOn;

const ErrorSpec kExact(0, 0);

// Values that differ from element to element: small integers (scaled by
// 0.25 for floats, so narrow-float products are exact) or, with `wide`,
// integers spread over the type's range (so integer sums wrap).
Literal Values(PrimitiveType type, absl::Span<const int64_t> dims, int seed, bool wide = false) {
  Literal f64(ShapeUtil::MakeShape(F64, dims));
  auto data = f64.data<double>();
  for (size_t i = 0; i < data.size(); ++i) {
    const int64_t step = static_cast<int64_t>(i) * 7 + seed * 13;
    data[i] = static_cast<double>(step % 11 - 5);
    if (wide && primitive_util::IsIntegralType(type)) {
      const int bits = primitive_util::BitWidth(type);
      const double range = std::ldexp(1.0, std::min(bits, 52) - 2);
      data[i] = std::floor(range * std::sin(static_cast<double>(step)));
      if (!primitive_util::IsSignedIntegralType(type)) data[i] = std::abs(data[i]);
    } else if (type == PRED) {
      data[i] = step % 3 == 0 ? 1 : 0;
    } else if (primitive_util::IsFloatingPointType(type) || primitive_util::IsComplexType(type)) {
      data[i] *= 0.25;
    }
  }
  auto converted = f64.Convert(type);
  CHECK(converted.ok()) << converted.status();
  if (primitive_util::IsComplexType(type)) {
    // Imaginary parts too.
    for (size_t i = 0; i < data.size(); ++i) {
      const double im = static_cast<double>((static_cast<int64_t>(i) * 5 + seed) % 7 - 3) * 0.5;
      if (type == C64) {
        converted->data<complex64>()[i] = complex64(static_cast<float>(data[i]), im);
      } else {
        converted->data<complex128>()[i] = complex128(data[i], im);
      }
    }
  }
  return *std::move(converted);
}

std::string Name(PrimitiveType type) {
  return std::string(primitive_util::LowercasePrimitiveTypeName(type));
}

std::string Dims(absl::Span<const int64_t> dims) {
  return absl::StrCat("[", absl::StrJoin(dims, ","), "]");
}

std::string DotModule(PrimitiveType lhs, absl::Span<const int64_t> lhs_dims, PrimitiveType rhs,
                      absl::Span<const int64_t> rhs_dims, PrimitiveType out,
                      absl::Span<const int64_t> out_dims, absl::string_view numbers) {
  return absl::StrCat("HloModule dot\nENTRY e {\n  a = ", Name(lhs), Dims(lhs_dims),
                      " parameter(0)\n  b = ", Name(rhs), Dims(rhs_dims),
                      " parameter(1)\n  ROOT d = ", Name(out), Dims(out_dims), " dot(a, b), ",
                      numbers, "\n}\n");
}

const char kMatmul[] = "lhs_contracting_dims={1}, rhs_contracting_dims={0}";

void ExpectMatmulAgrees(PrimitiveType in, PrimitiveType out, int64_t m, int64_t k, int64_t n,
                        bool wide = false, ErrorSpec error = kExact) {
  SCOPED_TRACE(absl::StrCat(Name(in), " -> ", Name(out), " ", m, "x", k, "x", n));
  ExpectCpuAgrees(DotModule(in, {m, k}, in, {k, n}, out, {m, n}, kMatmul),
                  {Values(in, {m, k}, 1, wide), Values(in, {k, n}, 2, wide)}, error);
}

TEST(DotLoopTest, EveryTypeFamily) {
  for (PrimitiveType type :
       {F64, F16, F8E4M3FN, F8E5M2, S8, S16, S32, S64, U8, U32, U64, PRED, C64, C128}) {
    ExpectMatmulAgrees(type, type, 7, 9, 33);
  }
}

TEST(DotLoopTest, IntegersWrapInTheOutputType) {
  for (PrimitiveType type : {S8, S16, S32, S64, U8, U16, U32, U64}) {
    ExpectMatmulAgrees(type, type, 5, 17, 9, /*wide=*/true);
  }
  // Narrow operands into a wider result are converted first.
  ExpectMatmulAgrees(S8, S32, 6, 40, 11, /*wide=*/true);
  ExpectMatmulAgrees(U8, S32, 6, 40, 11, /*wide=*/true);
}

TEST(DotLoopTest, MixedTypes) {
  // f16 operands into f32 (oneDNN does not take it), f32 into f16 (operands
  // rounded to f16 first), s32 x f32 -> f64.
  ExpectMatmulAgrees(F16, F32, 9, 21, 19);
  ExpectMatmulAgrees(F32, F16, 9, 21, 19);
  ExpectCpuAgrees(DotModule(S32, {3, 5}, F32, {5, 4}, F64, {3, 4}, kMatmul),
                  {Values(S32, {3, 5}, 1, true), Values(F32, {5, 4}, 2)}, kExact);
  ExpectCpuAgrees(DotModule(BF16, {4, 6}, F16, {6, 5}, BF16, {4, 5}, kMatmul),
                  {Values(BF16, {4, 6}, 1), Values(F16, {6, 5}, 2)}, kExact);
}

TEST(DotLoopTest, SizesAroundBlocksAndChunks) {
  // Rows around the blocks (8 rows; 4 when a batch has fewer than 8;
  // single rows for the rest), columns around the chunk widths (64 f64, 128
  // f32 sums), long contractions.
  for (int64_t m : {1, 3, 5, 8, 9, 17}) {
    for (int64_t n : {7, 64, 65, 129}) {
      ExpectMatmulAgrees(F64, F64, m, 33, n);
    }
  }
  ExpectMatmulAgrees(F16, F16, 13, 1, 130);
  ExpectMatmulAgrees(S32, S32, 1, 300, 1);
}

TEST(DotLoopTest, EmptyDimensions) {
  ExpectMatmulAgrees(F64, F64, 0, 5, 3);
  ExpectMatmulAgrees(F64, F64, 4, 0, 3);
  ExpectMatmulAgrees(S32, S32, 4, 5, 0);
  ExpectCpuAgrees(DotModule(F64, {0, 3, 2}, F64, {0, 2, 4}, F64, {0, 3, 4},
                            "lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, "
                            "rhs_contracting_dims={1}"),
                  {Values(F64, {0, 3, 2}, 1), Values(F64, {0, 2, 4}, 2)}, kExact);
}

struct GeneralCase {
  std::vector<int64_t> lhs, rhs, out;
  const char* numbers;
};

TEST(DotLoopTest, DimensionNumbersAnywhere) {
  const GeneralCase cases[] = {
      // A^T B, A B^T (transposed rhs), A^T B^T.
      {{33, 7}, {33, 10}, {7, 10}, "lhs_contracting_dims={0}, rhs_contracting_dims={0}"},
      {{7, 33}, {10, 33}, {7, 10}, "lhs_contracting_dims={1}, rhs_contracting_dims={1}"},
      {{33, 7}, {10, 33}, {7, 10}, "lhs_contracting_dims={0}, rhs_contracting_dims={1}"},
      // Matrix-vector, vector-matrix, dot product, outer product.
      {{9, 12}, {12}, {9}, "lhs_contracting_dims={1}, rhs_contracting_dims={0}"},
      {{12}, {12, 9}, {9}, "lhs_contracting_dims={0}, rhs_contracting_dims={0}"},
      {{12}, {12}, {}, "lhs_contracting_dims={0}, rhs_contracting_dims={0}"},
      {{5}, {7}, {5, 7}, "lhs_contracting_dims={}, rhs_contracting_dims={}"},
      // Batch leading, batch in the middle, batch last; rows per batch not
      // a multiple of the block.
      {{3, 7, 12},
       {3, 12, 10},
       {3, 7, 10},
       "lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, "
       "rhs_contracting_dims={1}"},
      {{7, 3, 12},
       {12, 3, 10},
       {3, 7, 10},
       "lhs_batch_dims={1}, lhs_contracting_dims={2}, rhs_batch_dims={1}, "
       "rhs_contracting_dims={0}"},
      {{7, 12, 3},
       {10, 12, 3},
       {3, 7, 10},
       "lhs_batch_dims={2}, lhs_contracting_dims={1}, rhs_batch_dims={2}, "
       "rhs_contracting_dims={1}"},
      // Two contracting dims in different orders, two free dims each side,
      // two batch dims.
      {{2, 6, 4, 5},
       {5, 4, 2, 7},
       {2, 6, 7},
       "lhs_batch_dims={0}, lhs_contracting_dims={3,2}, rhs_batch_dims={2}, "
       "rhs_contracting_dims={0,1}"},
      {{3, 4, 5}, {5, 2, 6}, {3, 4, 2, 6}, "lhs_contracting_dims={2}, rhs_contracting_dims={0}"},
      {{5, 3, 4}, {2, 5, 6}, {3, 4, 2, 6}, "lhs_contracting_dims={0}, rhs_contracting_dims={1}"},
      {{2, 3, 5, 6},
       {3, 2, 6, 4},
       {2, 3, 5, 4},
       "lhs_batch_dims={0,1}, lhs_contracting_dims={3}, rhs_batch_dims={1,0}, "
       "rhs_contracting_dims={2}"},
  };
  for (size_t i = 0; i < std::size(cases); ++i) {
    const GeneralCase& c = cases[i];
    // Complex on the transposed cases only (each compile costs ~20 ms).
    for (PrimitiveType type : {F64, S32, C64}) {
      if (type == C64 && i >= 3) continue;
      SCOPED_TRACE(absl::StrCat(Name(type), Dims(c.lhs), " x ", Dims(c.rhs), " ", c.numbers));
      ExpectCpuAgrees(DotModule(type, c.lhs, type, c.rhs, type, c.out, c.numbers),
                      {Values(type, c.lhs, 1), Values(type, c.rhs, 2)}, kExact);
    }
  }
}

TEST(DotLoopTest, BroadcastAndConstantOperandsInAFusion) {
  // The dot reads a broadcast operand (stride 0) and a constant in place.
  ExpectCpuAgrees(R"(
HloModule broadcast
ENTRY e {
  v = f64[6] parameter(0)
  x = f64[5,6] broadcast(v), dimensions={1}
  w = f64[6,3] constant({{1, 2, 3}, {4, 5, 6}, {-1, -2, -3}, {0.5, 0.25, 2}, {3, 1, 0}, {1, 1, 1}})
  ROOT d = f64[5,3] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})",
                  {Values(F64, {6}, 1)}, kExact);
}

// dot + bias + activation as one fusion (dot-epilogue-fusion), on the
// emitted loop's types.
std::string EpilogueModule(PrimitiveType type, absl::string_view bias_dims,
                           absl::string_view bias_mapping, absl::string_view activation) {
  const std::string t = Name(type);
  return absl::StrCat("HloModule epilogue\nENTRY e {\n  x = ", t, "[6,20] parameter(0)\n  w = ", t,
                      "[20,67] parameter(1)\n  bias = ", t, bias_dims, " parameter(2)\n  d = ", t,
                      "[6,67] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
                      "  bb = ",
                      t, "[6,67] broadcast(bias), dimensions=", bias_mapping, "\n  y = ", t,
                      "[6,67] add(d, bb)\n  ", absl::StrReplaceAll(activation, {{"$t", t}}),
                      "\n}\n");
}

TEST(DotLoopTest, Epilogues) {
  const char* activations[] = {
      "zero = $t[] constant(0)\n  z = $t[6,67] broadcast(zero), dimensions={}\n"
      "  ROOT r = $t[6,67] maximum(z, y)",
      "lo = $t[] constant(-2)\n  hi = $t[] constant(3)\n  ROOT r = $t[6,67] clamp(lo, y, hi)",
      "ROOT r = $t[6,67] tanh(y)",
      "ROOT r = $t[6,67] logistic(y)",
      "ROOT r = $t[6,67] exponential(y)",
  };
  for (PrimitiveType type : {F64, F16}) {
    for (int a = 0; a < 5; ++a) {
      const char* activation = activations[a];
      // f16: relu and tanh (rounding after the add and after the op).
      if (type == F16 && a != 0 && a != 2) continue;
      // A bias over columns, then one over rows.
      for (int64_t bias_size : {67, 6}) {
        const char* dims = bias_size == 67 ? "[67]" : "[6]";
        const char* mapping = bias_size == 67 ? "{1}" : "{0}";
        SCOPED_TRACE(absl::StrCat(Name(type), " bias", dims, " ", activation));
        ExpectCpuAgrees(
            EpilogueModule(type, dims, mapping, activation),
            {Values(type, {6, 20}, 1), Values(type, {20, 67}, 2), Values(type, {bias_size}, 3)},
            type == F64 ? ErrorSpec(1e-12, 1e-12) : ErrorSpec(1e-3, 1e-3));
      }
    }
  }
  for (int a = 0; a < 2; ++a) {
    SCOPED_TRACE(activations[a]);
    ExpectCpuAgrees(EpilogueModule(S32, "[67]", "{1}", activations[a]),
                    {Values(S32, {6, 20}, 1), Values(S32, {20, 67}, 2), Values(S32, {67}, 3)},
                    kExact);
  }
}

TEST(DotLoopTest, LargeDotSplitAcrossThreads) {
  // 130 x 300 x 90 multiply-adds: more than one block of rows per thread.
  ExpectMatmulAgrees(F64, F64, 130, 300, 90);
  ExpectMatmulAgrees(S32, S32, 130, 300, 90, /*wide=*/true);
}

TEST(DotLoopTest, PackedNibbleProducts) {
  ExpectCpuAgrees(R"(
HloModule nibble
ENTRY e {
  a = s8[5,12] parameter(0)
  b = s8[12,7] parameter(1)
  ROOT d = s32[5,7] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}, operand_precision={packed_nibble,packed_nibble}
})",
                  {Values(S8, {5, 12}, 1, true), Values(S8, {12, 7}, 2, true)}, kExact);
}

TEST(DotLoopTest, NonFiniteValuesPropagateAsInTheInterpreter) {
  Literal lhs = Values(F64, {3, 4}, 1);
  Literal rhs = Values(F64, {4, 5}, 2);
  lhs.data<double>()[1] = std::numeric_limits<double>::infinity();
  rhs.data<double>()[7] = std::numeric_limits<double>::quiet_NaN();
  ExpectCpuAgrees(DotModule(F64, {3, 4}, F64, {4, 5}, F64, {3, 5}, kMatmul),
                  {std::move(lhs), std::move(rhs)}, kExact);
}

TEST(DotLoopTest, SecondCompileReusesTheKernels) {
  // The second compile of a module takes its kernels' code from the first
  // (executable_cache.h): the emitted dot must be found under its name.
  const std::string text = DotModule(F64, {5, 6}, F64, {6, 7}, F64, {5, 7}, kMatmul);
  for (int round = 0; round < 2; ++round) {
    SCOPED_TRACE(round);
    ExpectCpuAgrees(text, {Values(F64, {5, 6}, round), Values(F64, {6, 7}, round + 1)}, kExact);
  }
}

}  // namespace
}  // namespace axle
