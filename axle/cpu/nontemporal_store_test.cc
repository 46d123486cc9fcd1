//===- nontemporal_store_test.cc - Large outputs: non-temporal stores ------===//
//
// A loop kernel whose output is at least the last-level cache's size (here
// set to 32 MiB through JitOptions; by default the host's, read at run
// time: host_cache_sizes.h) stores it through an aligned main loop with
// non-temporal vector stores (loop_kernel_emitter.cc,
// EmitNonTemporalRow; jit.cc, MarkNonTemporalStores). These tests check the
// optimized IR on x86-64 (aligned !nontemporal 16-lane stores, an sfence;
// none of it for a small output or short rows) and that every element is
// still computed for ranges that start anywhere, odd row lengths, and
// output buffers that are not 64-byte aligned (or not even 4-byte aligned).
//
//===----------------------------------------------------------------------===//
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "axle/cpu/host_cache_sizes.h"
#include "axle/cpu/loop_kernel_emitter.h"
#include "axle/hlo/ir/hlo_module.h"
#include "axle/hlo/text/hlo_parser.h"
#include "gtest/gtest.h"

namespace axle::cpu {
namespace {

// out = a * 2 - b: exact in f32 for the inputs below, so the expected
// values do not depend on how the kernel contracts or vectorizes.
std::string Module(const std::string& shape) {
  return "HloModule m\nENTRY e {\n  a = " + shape + " parameter(0)\n  b = " + shape +
         " parameter(1)\n  two = f32[] constant(2)\n  twos = " + shape +
         " broadcast(two), dimensions={}\n  m = " + shape +
         " multiply(a, twos)\n  ROOT s = " + shape + " subtract(m, b)\n}\n";
}

struct Compiled {
  std::unique_ptr<CompiledKernel> kernel;
  std::string ir;  // after optimization
};

// The last-level cache size the tests compile for, unless they say.
constexpr int64_t kTestCacheBytes = int64_t{32} << 20;

Compiled Compile(const std::string& text, int64_t last_level_cache_bytes = kTestCacheBytes) {
  auto module = ParseAndReturnUnverifiedModule(text);
  EXPECT_TRUE(module.ok()) << module.status();
  Compiled compiled;
  CpuCompileOptions options;
  options.jit.last_level_cache_bytes = last_level_cache_bytes;
  options.jit.ir_after_optimization = [&](absl::string_view, absl::string_view ir) {
    compiled.ir = std::string(ir);
  };
  auto kernel = CompileLoopKernel(*(*module)->entry_computation(), options);
  EXPECT_TRUE(kernel.ok()) << kernel.status();
  if (kernel.ok()) compiled.kernel = std::move(*kernel);
  return compiled;
}

// Runs `kernel` over the ranges (of the outermost dimension), in the order
// given, into an output `offset_bytes` past a 64-byte boundary, and counts
// the elements that differ from a * 2 - b.
int64_t CountWrong(const CompiledKernel& kernel, int64_t elements, int64_t offset_bytes,
                   const std::vector<std::pair<int64_t, int64_t>>& ranges) {
  std::vector<float> a(elements), b(elements);
  for (int64_t i = 0; i < elements; ++i) {
    a[i] = static_cast<float>(i % 1000) * 0.5f;
    b[i] = static_cast<float>(i % 7);
  }
  std::vector<char> storage(elements * sizeof(float) + 128);
  const uintptr_t start = reinterpret_cast<uintptr_t>(storage.data());
  char* out = storage.data() + ((64 - start % 64) % 64) + offset_bytes;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (int64_t i = 0; i < elements; ++i) std::memcpy(out + i * sizeof(float), &nan, sizeof(float));
  void* buffers[] = {a.data(), b.data(), out};
  for (const auto& [begin, end] : ranges) kernel.RunRange(buffers, begin, end);
  int64_t wrong = 0;
  for (int64_t i = 0; i < elements; ++i) {
    float value;
    std::memcpy(&value, out + i * sizeof(float), sizeof(float));
    wrong += value != a[i] * 2.0f - b[i];
  }
  return wrong;
}

// 8M + 37 f32: 32 MiB and a bit, an odd length.
constexpr int64_t kLarge = (int64_t{8} << 20) + 37;

// On x86-64: 16-lane !nontemporal stores, each aligned to its size, and an
// sfence.
void ExpectAlignedNonTemporalStores(const std::string& ir) {
#if defined(__x86_64__)
  EXPECT_TRUE(absl::StrContains(ir, "store <16 x float>")) << ir;
  EXPECT_TRUE(absl::StrContains(ir, "!nontemporal")) << ir;
  EXPECT_TRUE(absl::StrContains(ir, "@llvm.x86.sse.sfence")) << ir;
  for (absl::string_view line : absl::StrSplit(ir, '\n')) {
    if (!absl::StrContains(line, "!nontemporal")) continue;
    const bool zmm =
        absl::StrContains(line, "store <16 x float>") && absl::StrContains(line, "align 64");
    const bool ymm =
        absl::StrContains(line, "store <8 x float>") && absl::StrContains(line, "align 32");
    EXPECT_TRUE(zmm || ymm) << line;
  }
#endif
}

TEST(NonTemporalStoreTest, LargeOutputHasAlignedNonTemporalVectorStores) {
  Compiled compiled = Compile(Module("f32[" + std::to_string(kLarge) + "]"));
  ASSERT_NE(compiled.kernel, nullptr);
  ExpectAlignedNonTemporalStores(compiled.ir);
}

TEST(NonTemporalStoreTest, SmallOutputHasOrdinaryStores) {
  Compiled compiled = Compile(Module("f32[4096]"));
  ASSERT_NE(compiled.kernel, nullptr);
  EXPECT_FALSE(absl::StrContains(compiled.ir, "!nontemporal")) << compiled.ir;
  EXPECT_FALSE(absl::StrContains(compiled.ir, "sfence")) << compiled.ir;
  EXPECT_EQ(CountWrong(*compiled.kernel, 4096, 4, {{0, 4096}}), 0);
}

TEST(NonTemporalStoreTest, ShortRowsHaveOrdinaryStores) {
  // 32 MiB in rows of 4 f32: no aligned main loop to speak of.
  Compiled compiled = Compile(Module("f32[2097152,4]"));
  ASSERT_NE(compiled.kernel, nullptr);
  EXPECT_FALSE(absl::StrContains(compiled.ir, "!nontemporal"));
  EXPECT_FALSE(absl::StrContains(compiled.ir, "sfence"));
}

TEST(NonTemporalStoreTest, RangesStartingAnywhereComputeEveryElement) {
  Compiled compiled = Compile(Module("f32[" + std::to_string(kLarge) + "]"));
  ASSERT_NE(compiled.kernel, nullptr);
  const std::vector<std::pair<int64_t, int64_t>> ranges = {
      {4194301, kLarge}, {0, 5}, {5, 6}, {6, 1000003}, {1000003, 4194301}, {17, 17}};
  EXPECT_EQ(CountWrong(*compiled.kernel, kLarge, 0, ranges), 0);
  EXPECT_EQ(CountWrong(*compiled.kernel, kLarge, 4, ranges), 0);  // misaligned output
  EXPECT_EQ(CountWrong(*compiled.kernel, kLarge, 60, {{0, kLarge}}), 0);
  EXPECT_EQ(CountWrong(*compiled.kernel, kLarge, 2, ranges), 0);  // not even 4-byte aligned
}

TEST(NonTemporalStoreTest, OddRowsComputeEveryElement) {
  // 4097 rows of 2053 f32 (33.6 MB): each row starts at a different offset
  // from a 64-byte boundary; ranges are of rows.
  Compiled compiled = Compile(Module("f32[4097,2053]"));
  ASSERT_NE(compiled.kernel, nullptr);
  ExpectAlignedNonTemporalStores(compiled.ir);
  const int64_t elements = int64_t{4097} * 2053;
  EXPECT_EQ(CountWrong(*compiled.kernel, elements, 0, {{1, 2000}, {0, 1}, {2000, 4097}}), 0);
  EXPECT_EQ(CountWrong(*compiled.kernel, elements, 12, {{0, 4097}}), 0);
}

// The threshold follows the cache size: the same output on both sides of
// it, and of the host's own last-level cache (the default).
TEST(NonTemporalStoreTest, ThresholdIsTheLastLevelCache) {
  const std::string one_mib = Module("f32[512,512]");
  EXPECT_FALSE(absl::StrContains(Compile(one_mib, (int64_t{1} << 20) + 64).ir, "!nontemporal"));
  ExpectAlignedNonTemporalStores(Compile(one_mib, int64_t{1} << 20).ir);
  const int64_t host = HostCacheSizes().last_level_bytes;
  const int64_t row = 1024;  // f32 rows of 4 KiB
  const int64_t rows_under = host / (row * 4) - 1, rows_over = host / (row * 4) + 1;
  auto shape = [&](int64_t rows) { return Module(absl::StrCat("f32[", rows, ",", row, "]")); };
  EXPECT_FALSE(absl::StrContains(Compile(shape(rows_under), 0).ir, "!nontemporal"))
      << "host last-level cache: " << host << " bytes";
  ExpectAlignedNonTemporalStores(Compile(shape(rows_over), 0).ir);
}

}  // namespace
}  // namespace axle::cpu
