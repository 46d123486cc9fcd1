//===- row_fusion_test.cc - Row reductions fused into their consumers on cpu -===//
//
// Softmax, log-softmax, layer norm and friends compile to one loop kernel
// whose row reductions are computed once per row (row_index_analysis.h);
// the values agree with the interpreter on corner-case inputs (NaN, ±inf,
// ±0, denormals), odd row lengths, rank 3 and reductions over two trailing
// dimensions.
//
//===----------------------------------------------------------------------===//
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "axle/cpu/cpu_test_util.h"
#include "axle/cpu/runtime/platform_test_util.h"
#include "gtest/gtest.h"

namespace axle {
namespace {

constexpr char kReducers[] = R"(
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
)";

void ExpectModuleAgrees(const std::string& text) {
  SCOPED_TRACE(text);
  // Sums are reassociated (16 partial sums): rounding differs.
  testing::ExpectCpuAgrees(text, cpu::testing::MakeTestArguments(text), ErrorSpec(1e-5, 1e-4));
}

void ExpectAgrees(const std::string& entry) { ExpectModuleAgrees(std::string(kReducers) + entry); }

TEST(RowFusion, Softmax) {
  for (auto [rows, columns] : std::vector<std::pair<int64_t, int64_t>>{
           {1, 1}, {3, 17}, {16, 16}, {37, 129}, {64, 1000}, {9, 515}, {3, 2049}}) {
    ExpectModuleAgrees(cpu::testing::SoftmaxModule(rows, columns));
  }
}

TEST(RowFusion, LogSoftmaxAndLogSumExp) {
  ExpectAgrees(R"(
ENTRY e {
  x = f32[21,35] parameter(0)
  ninf = f32[] constant(-inf)
  rowmax = f32[21] reduce(x, ninf), dimensions={1}, to_apply=max
  rowmaxb = f32[21,35] broadcast(rowmax), dimensions={0}
  shifted = f32[21,35] subtract(x, rowmaxb)
  ex = f32[21,35] exponential(shifted)
  zero = f32[] constant(0)
  rowsum = f32[21] reduce(ex, zero), dimensions={1}, to_apply=add
  lse = f32[21] log(rowsum)
  lseb = f32[21,35] broadcast(lse), dimensions={0}
  ROOT out = f32[21,35] subtract(shifted, lseb)
}
)");
  // The root is a row value itself: log(sum(exp(x - max))) + max.
  ExpectAgrees(R"(
ENTRY e {
  x = f32[21,35] parameter(0)
  ninf = f32[] constant(-inf)
  rowmax = f32[21] reduce(x, ninf), dimensions={1}, to_apply=max
  rowmaxb = f32[21,35] broadcast(rowmax), dimensions={0}
  shifted = f32[21,35] subtract(x, rowmaxb)
  ex = f32[21,35] exponential(shifted)
  zero = f32[] constant(0)
  rowsum = f32[21] reduce(ex, zero), dimensions={1}, to_apply=add
  lse = f32[21] log(rowsum)
  ROOT out = f32[21] add(lse, rowmax)
}
)");
}

std::string LayerNorm(int64_t rows, int64_t columns) {
  std::string text = R"(
ENTRY e {
  x = f32[ROWS,COLS] parameter(0)
  gamma = f32[COLS] parameter(1)
  beta = f32[COLS] parameter(2)
  zero = f32[] constant(0)
  inv_n = f32[] constant(INVN)
  inv_nb = f32[ROWS] broadcast(inv_n), dimensions={}
  sum = f32[ROWS] reduce(x, zero), dimensions={1}, to_apply=add
  mean = f32[ROWS] multiply(sum, inv_nb)
  meanb = f32[ROWS,COLS] broadcast(mean), dimensions={0}
  centered = f32[ROWS,COLS] subtract(x, meanb)
  squared = f32[ROWS,COLS] multiply(centered, centered)
  sumsq = f32[ROWS] reduce(squared, zero), dimensions={1}, to_apply=add
  var = f32[ROWS] multiply(sumsq, inv_nb)
  eps = f32[] constant(1e-05)
  epsb = f32[ROWS] broadcast(eps), dimensions={}
  rstd = f32[ROWS] rsqrt(f32[ROWS] add(var, epsb))
  rstdb = f32[ROWS,COLS] broadcast(rstd), dimensions={0}
  normed = f32[ROWS,COLS] multiply(centered, rstdb)
  gammab = f32[ROWS,COLS] broadcast(gamma), dimensions={1}
  betab = f32[ROWS,COLS] broadcast(beta), dimensions={1}
  ROOT out = f32[ROWS,COLS] add(f32[ROWS,COLS] multiply(normed, gammab), betab)
}
)";
  text = absl::StrReplaceAll(text, {{"ROWS", absl::StrCat(rows)},
                                    {"COLS", absl::StrCat(columns)},
                                    {"INVN", absl::StrCat(1.0 / static_cast<double>(columns))}});
  return text;
}

TEST(RowFusion, LayerNorm) {
  // 700 columns: rows long enough for next-row prefetching, in chunks with a
  // partial last one.
  for (auto [rows, columns] : std::vector<std::pair<int64_t, int64_t>>{{19, 67}, {5, 700}}) {
    ExpectAgrees(LayerNorm(rows, columns));
  }
}

TEST(RowFusion, RankThreeRowsAndTwoTrailingDimensions) {
  // Rows of [3,5] in a [4,3,5] array: one value per leading index.
  ExpectAgrees(R"(
ENTRY e {
  x = f32[4,3,5] parameter(0)
  zero = f32[] constant(0)
  s = f32[4] reduce(x, zero), dimensions={1,2}, to_apply=add
  sb = f32[4,3,5] broadcast(s), dimensions={0}
  ROOT d = f32[4,3,5] subtract(x, sb)
}
)");
  // Rows of 5 in a [4,3,5] array: one value per (i, j).
  ExpectAgrees(R"(
ENTRY e {
  x = f32[4,3,5] parameter(0)
  ninf = f32[] constant(-inf)
  m = f32[4,3] reduce(x, ninf), dimensions={2}, to_apply=max
  mb = f32[4,3,5] broadcast(m), dimensions={0,1}
  ROOT d = f32[4,3,5] subtract(x, mb)
}
)");
}

TEST(RowFusion, MultiOutputAndReductionEpilogue) {
  ExpectAgrees(R"(
ENTRY e {
  x = f32[9,31] parameter(0)
  zero = f32[] constant(0)
  r = f32[9] reduce(x, zero), dimensions={1}, to_apply=add
  ROOT n = f32[9] negate(r)
}
)");
  ExpectAgrees(R"(
ENTRY e {
  x = f32[9,31] parameter(0)
  y = f32[9,31] parameter(1)
  zero = f32[] constant(0)
  rowsum = f32[9] reduce(x, zero), dimensions={1}, to_apply=add
  rowsumb = f32[9,31] broadcast(rowsum), dimensions={0}
  a = f32[9,31] subtract(x, rowsumb)
  b = f32[9,31] add(y, rowsumb)
  ROOT t = (f32[9,31], f32[9,31], f32[9]) tuple(a, b, rowsum)
}
)");
}

}  // namespace
}  // namespace axle
