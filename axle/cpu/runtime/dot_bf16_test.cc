// bf16 dots on the `cpu` platform against the interpreter: the bench's
// layout (row-major operands, bf16 result, oneDNN writing the rounded result
// itself) at a size oneDNN's blocked kernels take, batch dots, and the bf16
// epilogue that rounds after each op (bias over columns, rows or every
// element; each activation; an activation without a bias).
#include <thread>

#include "absl/strings/str_cat.h"
#include "axle/core/literal_comparison.h"
#include "axle/cpu/runtime/platform_test_util.h"
#include "gtest/gtest.h"

namespace axle {
namespace {

using testing::CompileOn;
using testing::ExpectCpuAgrees;
using testing::RunExecutable;
using testing::RunOn;

// Multiples of 1/4 in [-1.25, 1.25]: exact in bf16, and every partial sum
// of the dots below is exact in f32, so an f32 accumulation rounded once
// to bf16 gives the interpreter's result exactly.
Literal Values(PrimitiveType type, absl::Span<const int64_t> dims, int seed) {
  Literal f64(ShapeUtil::MakeShape(F64, dims));
  auto data = f64.data<double>();
  for (size_t i = 0; i < data.size(); ++i) {
    data[i] = 0.25 * static_cast<double>(
                         static_cast<int64_t>((i * 7 + static_cast<size_t>(seed) * 13) % 11) - 5);
  }
  auto converted = f64.Convert(type);
  CHECK(converted.ok()) << converted.status();
  return *std::move(converted);
}

TEST(DotBf16Test, RowMajorMatmulWithBf16Result) {
  // matmul_bf16.hlo's layout, smaller: large enough for oneDNN's blocked
  // (brgemm) kernel, with M, N not multiples of its blocks.
  ExpectCpuAgrees(R"(
HloModule matmul_bf16
ENTRY e {
  a = bf16[200,384] parameter(0)
  b = bf16[384,136] parameter(1)
  ROOT c = bf16[200,136] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})",
                  {Values(BF16, {200, 384}, 1), Values(BF16, {384, 136}, 2)}, ErrorSpec(0, 0));
  // An odd K (the packed rhs's last row pair half zero) and K, N tails.
  ExpectCpuAgrees(R"(
HloModule odd_k
ENTRY e {
  a = bf16[70,99] parameter(0)
  b = bf16[99,150] parameter(1)
  ROOT c = bf16[70,150] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})",
                  {Values(BF16, {70, 99}, 3), Values(BF16, {99, 150}, 4)}, ErrorSpec(0, 0));
}

TEST(DotF32PackedRhsTest, PackedFromFiveHundredTwelveRowsWithKAndNTails) {
  // 520 lhs rows: the f32 rhs is packed into BA16a64b on each run (K = 99
  // and N = 130 leave zero-padded tails); 300 rows: read plain. The
  // values keep every partial sum exact, so the results are exact.
  for (int64_t m : {520, 300}) {
    const std::string text =
        absl::StrCat(R"(
HloModule packed_f32
ENTRY e {
  a = f32[)",
                     m, R"(,99] parameter(0)
  b = f32[99,130] parameter(1)
  ROOT c = f32[)",
                     m, R"(,130] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})");
    ExpectCpuAgrees(text, {Values(F32, {m, 99}, 5), Values(F32, {99, 130}, 6)}, ErrorSpec(0, 0));
  }
}

TEST(DotF32PackedRhsTest, TransposedRhsPackedOnBothSidesOfTheThresholds) {
  // The rhs [N, K] contracts over its minor dim (dX = dY W^T), the lhs
  // plain or transposed: packed from its transpose on each run from
  // kPackF32RhsMinRows (512) lhs rows, read in place below (511, 130; above
  // the small-dot size); K = 301 and N = 130 leave zero-padded tails and
  // partial 16 x 16 tiles. Exact values: exact results.
  for (int64_t m : {520, 512, 511, 130}) {
    for (bool lhs_transposed : {false, true}) {
      SCOPED_TRACE(absl::StrCat("m=", m, " lhs_transposed=", lhs_transposed));
      const std::string lhs =
          lhs_transposed ? absl::StrCat("[301,", m, "]") : absl::StrCat("[", m, ",301]");
      const std::string text =
          absl::StrCat("HloModule packed_transposed\nENTRY e {\n  a = f32", lhs,
                       " parameter(0)\n  b = f32[130,301] parameter(1)\n  ROOT c = f32[", m,
                       ",130] dot(a, b), lhs_contracting_dims={", lhs_transposed ? 0 : 1,
                       "}, rhs_contracting_dims={1}\n}\n");
      const std::vector<int64_t> lhs_dims =
          lhs_transposed ? std::vector<int64_t>{301, m} : std::vector<int64_t>{m, 301};
      ExpectCpuAgrees(text, {Values(F32, lhs_dims, 7), Values(F32, {130, 301}, 8)},
                      ErrorSpec(0, 0));
    }
  }
}

TEST(DotBf16Test, TransposedOperandsAndF32ResultWithBias) {
  // rhs read transposed (packed at run time all the same); lhs transposed.
  ExpectCpuAgrees(R"(
HloModule transposed
ENTRY e {
  a = bf16[96,130] parameter(0)
  b = bf16[70,96] parameter(1)
  ROOT c = bf16[130,70] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={1}
})",
                  {Values(BF16, {96, 130}, 1), Values(BF16, {70, 96}, 2)}, ErrorSpec(0, 0));
  // bf16 x bf16 -> f32, then an f32 bias and relu: oneDNN post-ops.
  ExpectCpuAgrees(R"(
HloModule f32_bias
ENTRY e {
  x = bf16[80,48] parameter(0)
  w = bf16[48,40] parameter(1)
  bias = f32[40] parameter(2)
  d = f32[80,40] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = f32[80,40] broadcast(bias), dimensions={1}
  y = f32[80,40] add(d, bb)
  zero = f32[] constant(0)
  z = f32[80,40] broadcast(zero), dimensions={}
  ROOT r = f32[80,40] maximum(y, z)
})",
                  {Values(BF16, {80, 48}, 1), Values(BF16, {48, 40}, 2), Values(F32, {40}, 3)},
                  ErrorSpec(0, 0));
}

TEST(DotBf16Test, ConstantWeightsPackedOnceWithBias) {
  ExpectCpuAgrees(R"(
HloModule constant_weights
ENTRY e {
  x = bf16[70,4] parameter(0)
  w = bf16[4,3] constant({{1, -2, 0.5}, {0.25, 3, -1}, {2, 0, -0.75}, {-1.5, 1, 1}})
  b = bf16[3] constant({0.5, -4, 1})
  d = bf16[70,3] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = bf16[70,3] broadcast(b), dimensions={1}
  ROOT y = bf16[70,3] add(d, bb)
})",
                  {Values(BF16, {70, 4}, 1)}, ErrorSpec(0, 0));
}

TEST(DotBf16Test, BatchDots) {
  ExpectCpuAgrees(R"(
HloModule batch_bf16
ENTRY e {
  a = bf16[3,40,96] parameter(0)
  b = bf16[3,96,72] parameter(1)
  ROOT c = bf16[3,40,72] dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
})",
                  {Values(BF16, {3, 40, 96}, 1), Values(BF16, {3, 96, 72}, 2)}, ErrorSpec(0, 0));
  // Batch in the middle, rhs transposed, an f32 result.
  ExpectCpuAgrees(R"(
HloModule batch_bf16_f32
ENTRY e {
  a = bf16[40,3,96] parameter(0)
  b = bf16[3,72,96] parameter(1)
  ROOT c = f32[3,40,72] dot(a, b), lhs_batch_dims={1}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={2}
})",
                  {Values(BF16, {40, 3, 96}, 3), Values(BF16, {3, 72, 96}, 4)}, ErrorSpec(0, 0));
}

// x [2,24,40] . w [2,40,32] (batch 2), then `epilogue` on y (the dot).
std::string Bf16Epilogue(absl::string_view epilogue) {
  return absl::StrCat(R"(
HloModule bf16_epilogue
ENTRY e {
  x = bf16[2,24,40] parameter(0)
  w = bf16[2,40,32] parameter(1)
  cols = bf16[32] parameter(2)
  rows = bf16[2,24] parameter(3)
  full = bf16[2,24,32] parameter(4)
  y = bf16[2,24,32] dot(x, w), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
  )",
                      epilogue, "\n}\n");
}

TEST(DotBf16Test, EpiloguesRoundAfterEachOp) {
  const char* epilogues[] = {
      // Bias alone: over columns, over rows, every element.
      "bc = bf16[2,24,32] broadcast(cols), dimensions={2}\n  ROOT r = bf16[2,24,32] add(y, bc)",
      "br = bf16[2,24,32] broadcast(rows), dimensions={0,1}\n  ROOT r = bf16[2,24,32] add(br, y)",
      "ROOT r = bf16[2,24,32] add(y, full)",
      // Bias and an activation.
      "bc = bf16[2,24,32] broadcast(cols), dimensions={2}\n  s = bf16[2,24,32] add(y, bc)\n"
      "  zero = bf16[] constant(0)\n  z = bf16[2,24,32] broadcast(zero), dimensions={}\n"
      "  ROOT r = bf16[2,24,32] maximum(s, z)",
      "s = bf16[2,24,32] add(y, full)\n  lo = bf16[] constant(-0.5)\n"
      "  hi = bf16[] constant(0.75)\n  ROOT r = bf16[2,24,32] clamp(lo, s, hi)",
      "br = bf16[2,24,32] broadcast(rows), dimensions={0,1}\n  s = bf16[2,24,32] add(y, br)\n"
      "  ROOT r = bf16[2,24,32] logistic(s)",
      // An activation alone.
      "ROOT r = bf16[2,24,32] tanh(y)",
      "ROOT r = bf16[2,24,32] exponential(y)",
  };
  for (const char* epilogue : epilogues) {
    SCOPED_TRACE(epilogue);
    ExpectCpuAgrees(Bf16Epilogue(epilogue),
                    {Values(BF16, {2, 24, 40}, 1), Values(BF16, {2, 40, 32}, 2),
                     Values(BF16, {32}, 3), Values(BF16, {2, 24}, 4), Values(BF16, {2, 24, 32}, 5)},
                    ErrorSpec(1e-2, 1e-2));
  }
}

TEST(DotBf16Test, FourThreadsRunOneExecutable) {
  // Each run packs the rhs into its calling thread's buffer.
  const char* text = R"(
HloModule threads
ENTRY e {
  a = bf16[96,80] parameter(0)
  b = bf16[80,130] parameter(1)
  ROOT c = bf16[96,130] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})";
  auto executable = CompileOn("cpu", text);
  ASSERT_TRUE(executable.ok()) << executable.status();
  std::vector<std::vector<Literal>> inputs;
  std::vector<Literal> expected;
  for (int t = 0; t < 4; ++t) {
    inputs.push_back({Values(BF16, {96, 80}, t), Values(BF16, {80, 130}, t + 5)});
    auto reference = RunOn("interpreter", text, inputs.back());
    ASSERT_TRUE(reference.ok()) << reference.status();
    expected.push_back(*std::move(reference));
  }
  std::vector<absl::Status> statuses(4);
  std::vector<std::thread> threads;
  threads.reserve(4);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 10 && statuses[t].ok(); ++round) {
        auto result = RunExecutable("cpu", **executable, inputs[t]);
        statuses[t] =
            result.ok() ? LiteralsNear(expected[t], *result, ErrorSpec(0, 0)) : result.status();
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (const absl::Status& status : statuses) EXPECT_TRUE(status.ok()) << status;
}

}  // namespace
}  // namespace axle
