// Dots on the `cpu` platform against the interpreter: dimension numbers that
// read operands in place, transposed or gathered; oneDNN types (f32, bf16)
// and the loop's (f64, f16, s32, c64, ...); epilogue fusions; constant
// weights; one executable run from 8 threads.
#include <cstdlib>
#include <thread>

#include "axle/base/status_macros.h"
#include "axle/core/literal_comparison.h"
#include "axle/cpu/runtime/platform_test_util.h"
#include "axle/hlo/text/hlo_parser.h"
#include "axle/runtime/local_client.h"
#include "gtest/gtest.h"

namespace axle {
namespace {

using testing::CompileOn;
using testing::ExpectCpuAgrees;
using testing::RunExecutable;
using testing::RunOn;

// Small values (exact in every type) that differ from element to element.
Literal Values(PrimitiveType type, absl::Span<const int64_t> dims, int seed) {
  Literal f64(ShapeUtil::MakeShape(F64, dims));
  auto data = f64.data<double>();
  for (size_t i = 0; i < data.size(); ++i) {
    data[i] = static_cast<double>(
        static_cast<int64_t>((i * 7 + static_cast<size_t>(seed) * 13) % 11) - 5);
    if (primitive_util::IsFloatingPointType(type) || primitive_util::IsComplexType(type)) {
      data[i] *= 0.25;
    }
  }
  auto converted = f64.Convert(type);
  CHECK(converted.ok()) << converted.status();
  return *std::move(converted);
}

std::string DotModule(absl::string_view lhs, absl::string_view rhs, absl::string_view out,
                      absl::string_view numbers) {
  return absl::StrCat("HloModule dot\nENTRY e {\n  a = ", lhs, " parameter(0)\n  b = ", rhs,
                      " parameter(1)\n  ROOT d = ", out, " dot(a, b)", numbers.empty() ? "" : ", ",
                      numbers, "\n}\n");
}

struct DotCase {
  const char* lhs;
  std::vector<int64_t> lhs_dims;
  const char* rhs;
  std::vector<int64_t> rhs_dims;
  const char* out;
  const char* numbers;
};

const DotCase kShapes[] = {
    // Plain, A^T B, A B^T, A^T B^T.
    {"[33,47]",
     {33, 47},
     "[47,29]",
     {47, 29},
     "[33,29]",
     "lhs_contracting_dims={1}, rhs_contracting_dims={0}"},
    {"[47,33]",
     {47, 33},
     "[47,29]",
     {47, 29},
     "[33,29]",
     "lhs_contracting_dims={0}, rhs_contracting_dims={0}"},
    {"[33,47]",
     {33, 47},
     "[29,47]",
     {29, 47},
     "[33,29]",
     "lhs_contracting_dims={1}, rhs_contracting_dims={1}"},
    {"[47,33]",
     {47, 33},
     "[29,47]",
     {29, 47},
     "[33,29]",
     "lhs_contracting_dims={0}, rhs_contracting_dims={1}"},
    // Matrix-vector, vector-matrix, dot product, outer product.
    {"[17,40]",
     {17, 40},
     "[40]",
     {40},
     "[17]",
     "lhs_contracting_dims={1}, rhs_contracting_dims={0}"},
    {"[40]",
     {40},
     "[40,17]",
     {40, 17},
     "[17]",
     "lhs_contracting_dims={0}, rhs_contracting_dims={0}"},
    {"[40]", {40}, "[40]", {40}, "[]", "lhs_contracting_dims={0}, rhs_contracting_dims={0}"},
    {"[5]", {5}, "[7]", {7}, "[5,7]", ""},
    // Leading batch; batch in the middle (gathered); two contracting dims.
    {"[3,9,12]",
     {3, 9, 12},
     "[3,12,10]",
     {3, 12, 10},
     "[3,9,10]",
     "lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, "
     "rhs_contracting_dims={1}"},
    {"[9,3,12]",
     {9, 3, 12},
     "[12,3,10]",
     {12, 3, 10},
     "[3,9,10]",
     "lhs_batch_dims={1}, lhs_contracting_dims={2}, rhs_batch_dims={1}, "
     "rhs_contracting_dims={0}"},
    {"[2,6,4,5]",
     {2, 6, 4, 5},
     "[5,4,2,7]",
     {5, 4, 2, 7},
     "[2,6,7]",
     "lhs_batch_dims={0}, lhs_contracting_dims={3,2}, rhs_batch_dims={2}, "
     "rhs_contracting_dims={0,1}"},
    // Empty contraction: zeros.
    {"[4,0]",
     {4, 0},
     "[0,3]",
     {0, 3},
     "[4,3]",
     "lhs_contracting_dims={1}, rhs_contracting_dims={0}"},
};

void RunShapes(absl::string_view in_type, PrimitiveType in, absl::string_view out_type,
               ErrorSpec error) {
  for (const DotCase& c : kShapes) {
    SCOPED_TRACE(absl::StrCat(c.lhs, " x ", c.rhs, " ", c.numbers));
    ExpectCpuAgrees(DotModule(absl::StrCat(in_type, c.lhs), absl::StrCat(in_type, c.rhs),
                              absl::StrCat(out_type, c.out), c.numbers),
                    {Values(in, c.lhs_dims, 1), Values(in, c.rhs_dims, 2)}, error);
  }
}

TEST(DotTest, F32ShapesAndDimensionNumbers) { RunShapes("f32", F32, "f32", ErrorSpec(1e-5, 1e-5)); }
TEST(DotTest, Bf16ToBf16AndF32) {
  RunShapes("bf16", BF16, "bf16", ErrorSpec(1e-2, 1e-2));
  RunShapes("bf16", BF16, "f32", ErrorSpec(1e-5, 1e-5));
}
TEST(DotTest, LoopTypes) {
  RunShapes("f64", F64, "f64", ErrorSpec(1e-12, 1e-12));
  RunShapes("f16", F16, "f16", ErrorSpec(1e-2, 1e-2));
  RunShapes("s32", S32, "s32", ErrorSpec(0, 0));
  RunShapes("s8", S8, "s32", ErrorSpec(0, 0));
  RunShapes("c64", C64, "c64", ErrorSpec(1e-5, 1e-5));
}

TEST(DotTest, LargeF32MatmulAgrees) {
  ExpectCpuAgrees(DotModule("f32[130,260]", "f32[260,70]", "f32[130,70]",
                            "lhs_contracting_dims={1}, rhs_contracting_dims={0}"),
                  {Values(F32, {130, 260}, 3), Values(F32, {260, 70}, 4)}, ErrorSpec(1e-4, 1e-5));
}

// dot + bias + activation, each an epilogue fusion (one oneDNN call).
std::string EpilogueModule(absl::string_view type, absl::string_view activation) {
  return absl::StrCat(R"(
HloModule epilogue
ENTRY e {
  x = )",
                      type, R"([6,20] parameter(0)
  w = )",
                      type, R"([20,12] parameter(1)
  bias = )",
                      type, R"([12] parameter(2)
  d = )",
                      type, R"([6,12] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = )",
                      type, R"([6,12] broadcast(bias), dimensions={1}
  y = )",
                      type, R"([6,12] add(d, bb)
  )",
                      activation, R"(
})");
}

TEST(DotTest, EpiloguesAgree) {
  const char* activations[] = {
      "zero = f32[] constant(0)\n  z = f32[6,12] broadcast(zero), dimensions={}\n"
      "  ROOT r = f32[6,12] maximum(y, z)",
      "ROOT r = f32[6,12] logistic(y)",
      "ROOT r = f32[6,12] tanh(y)",
      "ROOT r = f32[6,12] exponential(y)",
      "lo = f32[] constant(-0.5)\n  hi = f32[] constant(0.75)\n"
      "  ROOT r = f32[6,12] clamp(lo, y, hi)",
      "ROOT r = f32[6,12] negate(y)",
  };
  for (const char* activation : activations) {
    SCOPED_TRACE(activation);
    ExpectCpuAgrees(EpilogueModule("f32", activation),
                    {Values(F32, {6, 20}, 1), Values(F32, {20, 12}, 2), Values(F32, {12}, 3)});
  }
  // The same fusions on the loop path.
  std::string f64_relu =
      EpilogueModule("f64",
                     "zero = f64[] constant(0)\n  z = f64[6,12] broadcast(zero), dimensions={}\n"
                     "  ROOT r = f64[6,12] maximum(y, z)");
  ExpectCpuAgrees(f64_relu,
                  {Values(F64, {6, 20}, 1), Values(F64, {20, 12}, 2), Values(F64, {12}, 3)});
  // bf16 rounds after the dot and after the add, as the interpreter does.
  ExpectCpuAgrees(EpilogueModule("bf16", "ROOT r = bf16[6,12] tanh(y)"),
                  {Values(BF16, {6, 20}, 1), Values(BF16, {20, 12}, 2), Values(BF16, {12}, 3)},
                  ErrorSpec(1e-3, 1e-3));
}

// GELU's tanh approximation (as jax.nn.gelu(approximate=True) lowers it)
// above an f32 dot of [m, k] x [k, n], with or without a bias: one epilogue
// fusion (epilogue_fusion.h).
std::string GeluModule(int64_t m, int64_t k, int64_t n, bool bias) {
  const std::string out = absl::StrCat("f32[", m, ",", n, "]");
  std::string text =
      absl::StrCat("HloModule gelu\nENTRY e {\n  x = f32[", m, ",", k, "] parameter(0)\n  w = f32[",
                   k, ",", n, "] parameter(1)\n  ", bias ? "d" : "a", " = ", out,
                   " dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n");
  if (bias) {
    absl::StrAppend(&text, "  b = f32[", n, "] parameter(2)\n  bb = ", out,
                    " broadcast(b), dimensions={1}\n  a = ", out, " add(d, bb)\n");
  }
  for (const char* line :
       {"p2 = $ multiply(a, a)", "p3 = $ multiply(p2, a)", "k = f32[] constant(0.044715)",
        "kb = $ broadcast(k), dimensions={}", "t = $ multiply(p3, kb)", "u = $ add(a, t)",
        "c = f32[] constant(0.797884583)", "cb = $ broadcast(c), dimensions={}",
        "v = $ multiply(u, cb)", "th = $ tanh(v)", "one = f32[] constant(1)",
        "ob = $ broadcast(one), dimensions={}", "wv = $ add(th, ob)", "half = f32[] constant(0.5)",
        "hb = $ broadcast(half), dimensions={}", "h = $ multiply(wv, hb)",
        "ROOT y = $ multiply(a, h)"}) {
    std::string instruction = line;
    const size_t slot = instruction.find('$');
    if (slot != std::string::npos) instruction.replace(slot, 1, out);
    absl::StrAppend(&text, "  ", instruction, "\n");
  }
  return absl::StrCat(text, "}\n");
}

TEST(DotTest, GeluTanhEpilogueAgreesOnEachPath) {
  // [6,20]x[20,12]: the emitted loop; [16,512]x[512,64]: the small-dot
  // tiles, [20,300,50] with a partial vector per row, [2,400,200] in
  // 128-column units (small_dot.h; GELU by vector_activations.h); [130,260]x[260,70]:
  // oneDNN, then GELU after it (vector_activations.h).
  const int64_t sizes[][3] = {
      {6, 20, 12}, {16, 512, 64}, {20, 300, 50}, {2, 400, 200}, {130, 260, 70}};
  for (const auto& size : sizes) {
    for (bool bias : {true, false}) {
      std::string text = GeluModule(size[0], size[1], size[2], bias);
      SCOPED_TRACE(text);
      // Values of both signs, up to a few units: GELU's curved part.
      std::vector<Literal> arguments = {Values(F32, {size[0], size[1]}, 1),
                                        Values(F32, {size[1], size[2]}, 2)};
      for (Literal& argument : arguments) {
        for (float& value : argument.data<float>()) value *= 4.f / static_cast<float>(size[1]);
      }
      if (bias) arguments.push_back(Values(F32, {size[2]}, 3));
      ExpectCpuAgrees(text, arguments, ErrorSpec(1e-5, 1e-4));
    }
  }
}

// oneDNN's f32 GELU runs after the matmul (vector_activations.h) on the matmul's team
// of the intra-op pool: [63,256]x[256,256] runs on the calling thread alone,
// [64,256]x[256,256] (the work of a team of two) in one block (blocks of 64
// rows of 256), [256,256]x[256,256] in blocks split across the pool; and
// with 100 columns a row is no whole number of 16-value vectors.
TEST(DotTest, GeluAfterTheMatmulAgreesAcrossTeamAndBlockSizes) {
  const int64_t sizes[][3] = {{63, 256, 256}, {64, 256, 256}, {256, 256, 256}, {300, 80, 100}};
  for (const auto& size : sizes) {
    for (bool bias : {true, false}) {
      std::string text = GeluModule(size[0], size[1], size[2], bias);
      SCOPED_TRACE(text);
      std::vector<Literal> arguments = {Values(F32, {size[0], size[1]}, 1),
                                        Values(F32, {size[1], size[2]}, 2)};
      for (Literal& argument : arguments) {
        for (float& value : argument.data<float>()) value *= 4.f / static_cast<float>(size[1]);
      }
      if (bias) arguments.push_back(Values(F32, {size[2]}, 3));
      ExpectCpuAgrees(text, arguments, ErrorSpec(1e-5, 1e-4));
    }
  }
}

// A bias with one value per output column is the matmul's own bias argument
// (dot_thunk.cc): batched, with a transposed lhs, under a tanh, with one
// column, on bf16 operands with an f32 result, and as a constant; a scalar
// bias and one per row stay binary post-ops. (f32 dots above the small-dot
// path's 2^21 multiply-adds, or with at most 16 columns: oneDNN's.)
TEST(DotTest, ColumnBiasAsTheMatmulsOwnAgrees) {
  ExpectCpuAgrees(
      R"(
HloModule column_bias
ENTRY e {
  x = f32[3,64,128] parameter(0)
  w = f32[3,128,100] parameter(1)
  b = f32[100] parameter(2)
  xt = f32[128,200] parameter(3)
  x3 = f32[1100,128] parameter(4)
  w3 = f32[128,1] parameter(5)
  b3 = f32[1] parameter(6)
  s = f32[] parameter(7)
  r = f32[200] parameter(8)
  d = f32[3,64,100] dot(x, w), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
  bb = f32[3,64,100] broadcast(b), dimensions={2}
  y = f32[3,64,100] add(d, bb)
  w1 = f32[1,128,100] slice(w), slice={[0:1], [0:128], [0:100]}
  ws = f32[128,100] reshape(w1)
  w4 = f32[1,128,100] slice(w), slice={[1:2], [0:128], [0:100]}
  ws4 = f32[128,100] reshape(w4)
  w5 = f32[1,128,100] slice(w), slice={[2:3], [0:128], [0:100]}
  ws5 = f32[128,100] reshape(w5)
  d2 = f32[200,100] dot(xt, ws), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  bb2 = f32[200,100] broadcast(b), dimensions={1}
  a2 = f32[200,100] add(bb2, d2)
  t2 = f32[200,100] tanh(a2)
  d3 = f32[1100,1] dot(x3, w3), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb3 = f32[1100,1] broadcast(b3), dimensions={1}
  y3 = f32[1100,1] add(d3, bb3)
  d4 = f32[200,100] dot(xt, ws4), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  bs = f32[200,100] broadcast(s), dimensions={}
  y4 = f32[200,100] add(d4, bs)
  d5 = f32[200,100] dot(xt, ws5), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  br = f32[200,100] broadcast(r), dimensions={0}
  y5 = f32[200,100] add(d5, br)
  ROOT o = (f32[3,64,100], f32[200,100], f32[1100,1], f32[200,100], f32[200,100]) tuple(y, t2, y3, y4, y5)
})",
      {Values(F32, {3, 64, 128}, 1), Values(F32, {3, 128, 100}, 2), Values(F32, {100}, 3),
       Values(F32, {128, 200}, 4), Values(F32, {1100, 128}, 5), Values(F32, {128, 1}, 6),
       Values(F32, {1}, 7), Values(F32, {}, 8), Values(F32, {200}, 9)},
      ErrorSpec(1e-4, 1e-5));
  ExpectCpuAgrees(R"(
HloModule bf16_column_bias
ENTRY e {
  x = bf16[96,64] parameter(0)
  w = bf16[64,80] parameter(1)
  b = f32[80] parameter(2)
  d = f32[96,80] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = f32[96,80] broadcast(b), dimensions={1}
  a = f32[96,80] add(d, bb)
  zero = f32[] constant(0)
  z = f32[96,80] broadcast(zero), dimensions={}
  ROOT r = f32[96,80] maximum(a, z)
})",
                  {Values(BF16, {96, 64}, 1), Values(BF16, {64, 80}, 2), Values(F32, {80}, 3)},
                  ErrorSpec(1e-4, 1e-5));
  ExpectCpuAgrees(R"(
HloModule constant_column_bias
ENTRY e {
  x = f32[300,128] parameter(0)
  w = f32[128,4] parameter(1)
  b = f32[4] constant({0.5, -4, 1.25, 3})
  d = f32[300,4] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = f32[300,4] broadcast(b), dimensions={1}
  ROOT y = f32[300,4] add(d, bb)
})",
                  {Values(F32, {300, 128}, 1), Values(F32, {128, 4}, 2)}, ErrorSpec(1e-4, 1e-5));
}

TEST(DotTest, ResidualOfTheOutputsShapeOnOneDnn) {
  // A residual read in place (copied into the output, oneDNN's sum
  // post-op), one read transposed, then a relu; batched too.
  ExpectCpuAgrees(R"(
HloModule residual
ENTRY e {
  x = f32[130,260] parameter(0)
  w = f32[260,70] parameter(1)
  r = f32[130,70] parameter(2)
  rt = f32[70,130] parameter(3)
  d = f32[130,70] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  y = f32[130,70] add(r, d)
  zero = f32[] constant(0)
  z = f32[130,70] broadcast(zero), dimensions={}
  a = f32[130,70] maximum(y, z)
  d2 = f32[130,70] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  t = f32[130,70] transpose(rt), dimensions={1,0}
  y2 = f32[130,70] add(d2, t)
  xb = f32[3,40,50] parameter(4)
  wb = f32[3,50,60] parameter(5)
  rb = f32[3,40,60] parameter(6)
  db = f32[3,40,60] dot(xb, wb), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
  yb = f32[3,40,60] add(db, rb)
  ROOT o = (f32[130,70], f32[130,70], f32[3,40,60]) tuple(a, y2, yb)
}
)",
                  {Values(F32, {130, 260}, 1), Values(F32, {260, 70}, 2), Values(F32, {130, 70}, 3),
                   Values(F32, {70, 130}, 4), Values(F32, {3, 40, 50}, 5),
                   Values(F32, {3, 50, 60}, 6), Values(F32, {3, 40, 60}, 7)},
                  ErrorSpec(1e-4, 1e-5));
}

TEST(DotTest, ResidualComputedBeforeTheDotTakesOverItsMemory) {
  // A residual that a fusion computes and nothing reads after the dot
  // shares the output's memory (the sum post-op adds to it in place); one
  // read again afterwards, one that is also the dot's lhs, and a
  // transposed one do not. 2.3M multiply-adds each: oneDNN's path.
  ExpectCpuAgrees(
      R"(
HloModule residual_in_place
ENTRY e {
  x = f32[130,130] parameter(0)
  w = f32[130,130] parameter(1)
  p = f32[130,130] parameter(2)
  r = f32[130,130] add(p, p)
  d = f32[130,130] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  y = f32[130,130] add(d, r)
  q = f32[130,130] multiply(p, x)
  d2 = f32[130,130] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  y2 = f32[130,130] add(q, d2)
  q2 = f32[130,130] multiply(q, q)
  s = f32[130,130] subtract(p, w)
  d3 = f32[130,130] dot(s, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  y3 = f32[130,130] add(d3, s)
  u = f32[130,130] add(w, p)
  t = f32[130,130] transpose(u), dimensions={1,0}
  d4 = f32[130,130] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  y4 = f32[130,130] add(d4, t)
  ROOT o = (f32[130,130], f32[130,130], f32[130,130], f32[130,130], f32[130,130]) tuple(y, y2, q2, y3, y4)
}
)",
      {Values(F32, {130, 130}, 1), Values(F32, {130, 130}, 2), Values(F32, {130, 130}, 3)},
      ErrorSpec(1e-4, 1e-5));
}

TEST(DotTest, BiasBroadcastOverTheBatchOnOneDnn) {
  // Attention's mask above baddbmm: a [M, N] bias over every batch, a
  // parameter and a constant (folded from the iota). oneDNN 2.6 has only
  // its reference matmul for that binary post-op; the thunk broadcasts the
  // bias into the output and adds it with a sum post-op instead. (2.6M
  // multiply-adds: above the small dot's size.)
  ExpectCpuAgrees(R"(
HloModule batch_broadcast_bias
ENTRY e {
  x = f32[8,64,64] parameter(0)
  w = f32[8,64,80] parameter(1)
  mask = f32[64,80] parameter(2)
  d = f32[8,64,80] dot(x, w), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
  bm = f32[8,64,80] broadcast(mask), dimensions={1,2}
  y = f32[8,64,80] add(bm, d)
  w2 = f32[8,64,80] parameter(3)
  i = s32[64,80] iota(), iota_dimension=1
  c = f32[64,80] convert(i)
  d2 = f32[8,64,80] dot(x, w2), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
  bc = f32[8,64,80] broadcast(c), dimensions={1,2}
  y2 = f32[8,64,80] add(d2, bc)
  ROOT o = (f32[8,64,80], f32[8,64,80]) tuple(y, y2)
})",
                  {Values(F32, {8, 64, 64}, 1), Values(F32, {8, 64, 80}, 2),
                   Values(F32, {64, 80}, 3), Values(F32, {8, 64, 80}, 4)},
                  ErrorSpec(1e-4, 1e-5));
}

TEST(DotTest, BiasOverRowsOrFullAndActivationAlone) {
  ExpectCpuAgrees(R"(
HloModule rows
ENTRY e {
  x = f32[2,5,8] parameter(0)
  w = f32[2,8,3] parameter(1)
  bias = f32[2,5] parameter(2)
  full = f32[2,5,3] parameter(3)
  d = f32[2,5,3] dot(x, w), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
  bb = f32[2,5,3] broadcast(bias), dimensions={0,1}
  y = f32[2,5,3] add(bb, d)
  t = f32[2,5,3] tanh(y)
  d2 = f32[2,5,3] dot(x, w), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
  y2 = f32[2,5,3] add(d2, full)
  d3 = f32[2,5,3] dot(x, w), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
  e3 = f32[2,5,3] exponential(d3)
  ty = f32[2,5,3] add(t, y2)
  ROOT out = f32[2,5,3] add(ty, e3)
})",
                  {Values(F32, {2, 5, 8}, 1), Values(F32, {2, 8, 3}, 2), Values(F32, {2, 5}, 3),
                   Values(F32, {2, 5, 3}, 4)});
}

TEST(DotTest, ConstantWeightsAndBias) {
  ExpectCpuAgrees(R"(
HloModule constant_weights
ENTRY e {
  x = f32[3,4] parameter(0)
  w = f32[4,2] constant({{1, -2}, {0.5, 3}, {-1, 0.25}, {2, 2}})
  wt = f32[2,4] constant({{1, 0.5, -1, 2}, {-2, 3, 0.25, 2}})
  b = f32[2] constant({0.5, -4})
  d = f32[3,2] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = f32[3,2] broadcast(b), dimensions={1}
  y = f32[3,2] add(d, bb)
  dt = f32[3,2] dot(x, wt), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  ROOT out = f32[3,2] subtract(y, dt)
})",
                  {Values(F32, {3, 4}, 1)});
  // Hand-computed: x = [[-1.25, 0.5, -1, 0.75], ...] row 0 times w plus b.
  absl::StatusOr<Literal> result = RunOn("cpu", R"(
HloModule hand
ENTRY e {
  x = f32[1,4] constant({{-1.25, 0.5, -1, 0.75}})
  w = f32[4,2] constant({{1, -2}, {0.5, 3}, {-1, 0.25}, {2, 2}})
  b = f32[2] constant({0.5, -4})
  d = f32[1,2] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = f32[1,2] broadcast(b), dimensions={1}
  ROOT y = f32[1,2] add(d, bb)
})",
                                         {});
  ASSERT_TRUE(result.ok()) << result.status();
  // -1.25 + 0.25 + 1 + 1.5 + 0.5 = 2; 2.5 + 1.5 - 0.25 + 1.5 - 4 = 1.25.
  EXPECT_EQ(result->data<float>()[0], 2.0f);
  EXPECT_EQ(result->data<float>()[1], 1.25f);
}

// f32 dots on either side of the work that wakes a second OpenMP thread
// for oneDNN (2 x kMinWorkPerOmpThread = 2^22 multiply-adds: [64,256] x
// [256,256] has exactly that, 63 rows one row less), plain, with bias and
// relu, with both operands transposed, and batched.
TEST(DotTest, TeamSizedByTheWorkAgrees) {
  for (int64_t m : {63, 64}) {
    SCOPED_TRACE(m);
    const std::string x = absl::StrCat("f32[", m, ",256]"), y = absl::StrCat("f32[", m, ",256]");
    ExpectCpuAgrees(
        absl::StrCat(R"(
HloModule team
ENTRY e {
  x = )",
                     x, R"( parameter(0)
  w = f32[256,256] parameter(1)
  b = f32[256] parameter(2)
  xt = f32[256,)",
                     m, R"(] parameter(3)
  d = )",
                     y, R"( dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = )",
                     y, R"( broadcast(b), dimensions={1}
  a = )",
                     y, R"( add(d, bb)
  zero = f32[] constant(0)
  z = )",
                     y, R"( broadcast(zero), dimensions={}
  r = )",
                     y, R"( maximum(a, z)
  t = )",
                     y, R"( dot(xt, w), lhs_contracting_dims={0}, rhs_contracting_dims={1}
  ROOT o = ()",
                     y, ",", y, R"() tuple(r, t)
})"),
        {Values(F32, {m, 256}, 1), Values(F32, {256, 256}, 2), Values(F32, {256}, 3),
         Values(F32, {256, m}, 4)},
        ErrorSpec(1e-4, 1e-5));
  }
  ExpectCpuAgrees(R"(
HloModule team_batched
ENTRY e {
  x = f32[4,64,128] parameter(0)
  w = f32[4,128,128] parameter(1)
  ROOT d = f32[4,64,128] dot(x, w), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
})",
                  {Values(F32, {4, 64, 128}, 5), Values(F32, {4, 128, 128}, 6)},
                  ErrorSpec(1e-4, 1e-5));
}

// A constant f32[k, n] in HLO text, small values that differ from element
// to element (exact products and sums).
std::string ConstantMatrix(int64_t k, int64_t n) {
  std::string text = absl::StrCat("f32[", k, ",", n, "] constant({");
  for (int64_t i = 0; i < k; ++i) {
    absl::StrAppend(&text, i == 0 ? "{" : ", {");
    for (int64_t j = 0; j < n; ++j) {
      absl::StrAppend(&text, j == 0 ? "" : ", ",
                      0.25 * static_cast<double>((i * 7 + j * 3) % 11 - 5));
    }
    absl::StrAppend(&text, "}");
  }
  return absl::StrCat(text, "})");
}

// Large f32 dots split into pieces along their rows or batch, each a
// one-thread oneDNN primitive on the intra-op pool (dot_split.h), against
// the interpreter, under each AXLE_CPU_DOT_SPLIT / AXLE_CPU_DOT_PIECES
// setting (read when the thunk is made): a packed rhs (512+ rows) with the
// column bias and GELU after each piece and a shorter last piece (1000
// rows), a transposed lhs, a residual (sum post-op), constant weights,
// and batched dots (plain and with a column bias; the batch is split).
TEST(DotTest, SplitIntoPiecesAgreesUnderEachSetting) {
  struct Case {
    std::string text;
    std::vector<Literal> arguments;
  };
  std::vector<Case> cases;
  {
    Case c{GeluModule(1000, 64, 96, /*bias=*/true), {}};
    c.arguments.push_back(Values(F32, {1000, 64}, 1));
    c.arguments.push_back(Values(F32, {64, 96}, 2));
    for (Literal& argument : c.arguments) {
      for (float& value : argument.data<float>()) value *= 4.f / 64.f;
    }
    c.arguments.push_back(Values(F32, {96}, 3));
    cases.push_back(std::move(c));
  }
  cases.push_back({R"(
HloModule split_transposed_lhs_residual
ENTRY e {
  xt = f32[128,300] parameter(0)
  w = f32[128,128] parameter(1)
  r = f32[300,128] parameter(2)
  d = f32[300,128] dot(xt, w), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  ROOT y = f32[300,128] add(d, r)
})",
                   {}});
  cases.back().arguments.push_back(Values(F32, {128, 300}, 4));
  cases.back().arguments.push_back(Values(F32, {128, 128}, 5));
  cases.back().arguments.push_back(Values(F32, {300, 128}, 6));
  cases.push_back({absl::StrCat(R"(
HloModule split_constant_weights
ENTRY e {
  x = f32[300,128] parameter(0)
  w = )",
                                ConstantMatrix(128, 128), R"(
  b = f32[128] parameter(1)
  d = f32[300,128] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = f32[300,128] broadcast(b), dimensions={1}
  a = f32[300,128] add(d, bb)
  zero = f32[] constant(0)
  z = f32[300,128] broadcast(zero), dimensions={}
  ROOT y = f32[300,128] maximum(a, z)
})"),
                   {}});
  cases.back().arguments.push_back(Values(F32, {300, 128}, 7));
  cases.back().arguments.push_back(Values(F32, {128}, 8));
  cases.push_back({R"(
HloModule split_batched
ENTRY e {
  x = f32[6,64,128] parameter(0)
  w = f32[6,128,96] parameter(1)
  b = f32[96] parameter(2)
  d = f32[6,64,96] dot(x, w), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
  bb = f32[6,64,96] broadcast(b), dimensions={2}
  a = f32[6,64,96] add(d, bb)
  ROOT o = (f32[6,64,96], f32[6,64,96]) tuple(d, a)
})",
                   {}});
  cases.back().arguments.push_back(Values(F32, {6, 64, 128}, 9));
  cases.back().arguments.push_back(Values(F32, {6, 128, 96}, 10));
  cases.back().arguments.push_back(Values(F32, {96}, 11));
  const char* settings[][2] = {{"rows", "1"}, {"rows", "3"}, {"team", "2"}};
  for (const auto& setting : settings) {
    setenv("AXLE_CPU_DOT_SPLIT", setting[0], 1);
    setenv("AXLE_CPU_DOT_PIECES", setting[1], 1);
    for (const Case& c : cases) {
      SCOPED_TRACE(absl::StrCat(setting[0], " ", setting[1], "\n", c.text.substr(0, 60)));
      ExpectCpuAgrees(c.text, c.arguments, ErrorSpec(1e-5, 1e-4));
    }
  }
  unsetenv("AXLE_CPU_DOT_SPLIT");
  unsetenv("AXLE_CPU_DOT_PIECES");
}

TEST(DotTest, EightThreadsRunOneExecutable) {
  std::string text =
      EpilogueModule("f32",
                     "zero = f32[] constant(0)\n  z = f32[6,12] broadcast(zero), dimensions={}\n"
                     "  ROOT r = f32[6,12] maximum(y, z)");
  auto executable = CompileOn("cpu", text);
  ASSERT_TRUE(executable.ok()) << executable.status();
  std::vector<std::vector<Literal>> inputs;
  std::vector<Literal> expected;
  for (int t = 0; t < 8; ++t) {
    inputs.push_back(
        {Values(F32, {6, 20}, t), Values(F32, {20, 12}, t + 1), Values(F32, {12}, t + 2)});
    auto reference = RunOn("interpreter", text, inputs.back());
    ASSERT_TRUE(reference.ok()) << reference.status();
    expected.push_back(*std::move(reference));
  }
  std::vector<absl::Status> statuses(8);
  std::vector<std::thread> threads;
  threads.reserve(8);
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 20 && statuses[t].ok(); ++round) {
        auto result = RunExecutable("cpu", **executable, inputs[t]);
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
