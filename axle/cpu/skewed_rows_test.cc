//===- skewed_rows_test.cc - Softmax with each row's output in the next row --===//
//
// A softmax large enough for non-temporal stores (32 MiB) compiles to the
// skewed loop nest (loop_kernel_emitter.cc, EmitSkewedRows): row r's
// divides and stores run inside row r+1's exp-and-sum loop, the last row's
// after the loop, the first row of a range stores its nonexistent previous
// row into a spare stack row. Checked against a double-precision softmax
// over ranges that start and end anywhere (one row, empty, the last row
// alone), rows holding NaN, -inf, +inf and all-equal values, and a
// misaligned output (each row through the spare row and a copy).
//
//===----------------------------------------------------------------------===//
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "axle/cpu/cpu_test_util.h"
#include "axle/cpu/loop_kernel_emitter.h"
#include "axle/hlo/ir/hlo_module.h"
#include "axle/hlo/text/hlo_parser.h"
#include "gtest/gtest.h"

namespace axle::cpu {
namespace {

constexpr int64_t kRows = 2048, kColumns = 4096;  // 32 MiB

std::vector<float> Input() {
  std::vector<float> x(kRows * kColumns);
  for (int64_t i = 0; i < kRows * kColumns; ++i) {
    x[i] = static_cast<float>((i * 2654435761u) % 2000) / 100.0f - 10.0f;
  }
  x[3 * kColumns + 77] = std::numeric_limits<float>::quiet_NaN();
  x[5 * kColumns + 4095] = -INFINITY;
  x[7 * kColumns + 1000] = INFINITY;  // that row: NaN (inf - inf)
  for (int64_t c = 0; c < kColumns; ++c) x[9 * kColumns + c] = 2.5f;
  return x;
}

// Softmax of row `r` of `x`, in double, rounded to f32.
std::vector<float> ExpectedRow(const std::vector<float>& x, int64_t r) {
  const float* row = x.data() + r * kColumns;
  double max = -INFINITY;
  bool nan = false;
  for (int64_t c = 0; c < kColumns; ++c) {
    nan |= std::isnan(row[c]);
    max = std::max<double>(max, row[c]);
  }
  std::vector<float> out(kColumns, std::numeric_limits<float>::quiet_NaN());
  if (nan) return out;
  double sum = 0;
  for (int64_t c = 0; c < kColumns; ++c) sum += std::exp(row[c] - max);
  for (int64_t c = 0; c < kColumns; ++c) out[c] = static_cast<float>(std::exp(row[c] - max) / sum);
  return out;
}

// Runs the kernel over `ranges` into an output `offset_bytes` past a
// 64-byte boundary; the number of elements off by more than 1e-5
// relative (NaN where NaN is expected counts as right).
int64_t CountWrong(const CompiledKernel& kernel, const std::vector<float>& x,
                   const std::vector<std::vector<float>>& expected, int64_t offset_bytes,
                   const std::vector<std::pair<int64_t, int64_t>>& ranges) {
  std::vector<char> storage(kRows * kColumns * sizeof(float) + 128);
  const uintptr_t start = reinterpret_cast<uintptr_t>(storage.data());
  char* out = storage.data() + ((64 - start % 64) % 64) + offset_bytes;
  std::memset(out, 0xff, kRows * kColumns * sizeof(float));  // NaNs
  void* buffers[] = {const_cast<float*>(x.data()), out};
  std::vector<bool> covered(kRows, false);
  for (const auto& [begin, end] : ranges) {
    kernel.RunRange(buffers, begin, end);
    for (int64_t r = begin; r < end; ++r) covered[r] = true;
  }
  int64_t wrong = 0;
  for (int64_t r = 0; r < kRows; ++r) {
    for (int64_t c = 0; c < kColumns; ++c) {
      float got;
      std::memcpy(&got, out + (r * kColumns + c) * sizeof(float), sizeof(float));
      if (!covered[r]) {
        wrong += !std::isnan(got);  // rows outside every range stay untouched
        continue;
      }
      const float want = expected[r][c];
      if (std::isnan(want) || std::isnan(got)) {
        wrong += std::isnan(want) != std::isnan(got);
      } else {
        wrong += std::fabs(got - want) > 1e-5f * std::fabs(want) + 1e-30f;
      }
    }
  }
  return wrong;
}

TEST(SkewedRowsTest, LargeSoftmaxAgreesOverEveryRange) {
  auto module = ParseAndReturnUnverifiedModule(testing::SoftmaxModule(kRows, kColumns));
  ASSERT_TRUE(module.ok()) << module.status();
  std::string ir;
  CpuCompileOptions options;
  // A 32 MiB last-level cache, which the output exceeds: non-temporal
  // stores (by default the host's cache decides, host_cache_sizes.h).
  options.jit.last_level_cache_bytes = int64_t{32} << 20;
  options.jit.ir_after_optimization = [&](absl::string_view, absl::string_view text) {
    ir = std::string(text);
  };
  auto kernel = CompileLoopKernel(*(*module)->entry_computation(), options);
  ASSERT_TRUE(kernel.ok()) << kernel.status();
#if defined(__x86_64__)
  EXPECT_TRUE(absl::StrContains(ir, "spare_row")) << "not skewed";
  EXPECT_TRUE(absl::StrContains(ir, "!nontemporal")) << "no non-temporal stores";
  EXPECT_TRUE(absl::StrContains(ir, "@llvm.prefetch")) << "no next-row prefetches";
#endif
  const std::vector<float> x = Input();
  std::vector<std::vector<float>> expected;
  for (int64_t r = 0; r < kRows; ++r) expected.push_back(ExpectedRow(x, r));
  EXPECT_EQ(CountWrong(**kernel, x, expected, 0, {{0, kRows}}), 0);
  const std::vector<std::pair<int64_t, int64_t>> ranges = {
      {kRows - 1, kRows}, {0, 1}, {1, 2}, {2, 9}, {9, 9}, {9, 1000}, {1000, kRows - 1}};
  EXPECT_EQ(CountWrong(**kernel, x, expected, 0, ranges), 0);
  EXPECT_EQ(CountWrong(**kernel, x, expected, 0, {{4, 11}}), 0);  // rows outside stay put
  EXPECT_EQ(CountWrong(**kernel, x, expected, 4, ranges), 0);     // misaligned: spare row + copy
}

}  // namespace
}  // namespace axle::cpu
