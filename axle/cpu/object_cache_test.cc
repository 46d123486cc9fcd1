//===- object_cache_test.cc - The Jit's disk object cache ------------------===//
//
// A second Jit compiling the same module with the same cache directory loads
// the object instead of running LLVM; corrupt or truncated files are
// ignored and rewritten; options that change code (the target CPU too)
// use another file;
// concurrent writers leave one whole file. Kernels
// loaded from the cache compute what the interpreter computes.
//
//===----------------------------------------------------------------------===//
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "axle/core/literal_comparison.h"
#include "axle/cpu/cpu_test_util.h"
#include "axle/cpu/jit.h"
#include "gtest/gtest.h"

namespace axle::cpu {
namespace {

namespace fs = std::filesystem;
using testing::RunAgainstInterpreter;

constexpr char kModule[] = R"(
HloModule object_cache
ENTRY e {
  x = f32[64] parameter(0)
  y = f32[64] parameter(1)
  m = f32[64] multiply(x, y)
  ROOT r = f32[64] add(m, x)
})";

// A fresh, empty directory for one test.
std::string FreshDir(const std::string& name) {
  const std::string dir = ::testing::TempDir() + "/axle_object_cache_" + name;
  fs::remove_all(dir);
  return dir;
}

std::vector<fs::path> CacheFiles(const std::string& dir) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir)) files.push_back(entry.path());
  return files;
}

// Compiles kModule with `options` and checks its values.
void CompileAndCheck(const CpuCompileOptions& options) {
  auto run = RunAgainstInterpreter(kModule, options);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_TRUE(LiteralsNear(run->expected[0], run->actual[0], ErrorSpec(1e-6, 1e-6)).ok());
}

TEST(ObjectCacheTest, SecondJitLoadsTheObjectInsteadOfRunningLlvm) {
  CpuCompileOptions options;
  options.jit.cache_dir = FreshDir("hit");
  const JitStats before = GetJitStats();
  CompileAndCheck(options);
  const JitStats after_first = GetJitStats();
  EXPECT_EQ(after_first.modules_optimized, before.modules_optimized + 1);
  EXPECT_EQ(after_first.object_cache_writes, before.object_cache_writes + 1);
  EXPECT_EQ(after_first.object_cache_hits, before.object_cache_hits);
  ASSERT_EQ(CacheFiles(options.jit.cache_dir).size(), 1u);

  CompileAndCheck(options);
  const JitStats after_second = GetJitStats();
  EXPECT_EQ(after_second.modules_optimized, after_first.modules_optimized);
  EXPECT_EQ(after_second.object_cache_hits, after_first.object_cache_hits + 1);
  EXPECT_EQ(CacheFiles(options.jit.cache_dir).size(), 1u);
}

TEST(ObjectCacheTest, CorruptAndTruncatedFilesAreRecompiledAndRewritten) {
  CpuCompileOptions options;
  options.jit.cache_dir = FreshDir("corrupt");
  CompileAndCheck(options);
  const std::vector<fs::path> files = CacheFiles(options.jit.cache_dir);
  ASSERT_EQ(files.size(), 1u);
  const uintmax_t good_size = fs::file_size(files[0]);

  // One flipped byte in the object: the checksum no longer matches.
  {
    std::fstream file(files[0], std::ios::in | std::ios::out | std::ios::binary);
    file.seekg(static_cast<std::streamoff>(good_size / 2));
    const char byte = static_cast<char>(file.get() ^ 0xff);
    file.seekp(static_cast<std::streamoff>(good_size / 2));
    file.put(byte);
  }
  JitStats before = GetJitStats();
  CompileAndCheck(options);
  EXPECT_EQ(GetJitStats().modules_optimized, before.modules_optimized + 1);
  EXPECT_EQ(GetJitStats().object_cache_hits, before.object_cache_hits);
  EXPECT_EQ(fs::file_size(files[0]), good_size);  // rewritten

  // Truncated, then empty.
  for (uintmax_t size : {good_size - 7, uintmax_t{0}}) {
    fs::resize_file(files[0], size);
    before = GetJitStats();
    CompileAndCheck(options);
    EXPECT_EQ(GetJitStats().modules_optimized, before.modules_optimized + 1) << size;
    EXPECT_EQ(fs::file_size(files[0]), good_size) << size;
  }

  // The rewritten file is used again.
  before = GetJitStats();
  CompileAndCheck(options);
  EXPECT_EQ(GetJitStats().modules_optimized, before.modules_optimized);
  EXPECT_EQ(GetJitStats().object_cache_hits, before.object_cache_hits + 1);
  EXPECT_EQ(CacheFiles(options.jit.cache_dir).size(), 1u);  // no temp files left
}

TEST(ObjectCacheTest, DifferentOptionsUseDifferentEntries) {
  CpuCompileOptions options;
  options.jit.cache_dir = FreshDir("options");
  CompileAndCheck(options);
  options.jit.optimization_level = 1;
  const JitStats before = GetJitStats();
  CompileAndCheck(options);
  EXPECT_EQ(GetJitStats().modules_optimized, before.modules_optimized + 1);
  EXPECT_EQ(CacheFiles(options.jit.cache_dir).size(), 2u);
  options.jit.prefer_512_bit_vectors = false;
  CompileAndCheck(options);
  EXPECT_EQ(CacheFiles(options.jit.cache_dir).size(), 3u);
  options.jit.kernel_pipeline = false;
  CompileAndCheck(options);
  EXPECT_EQ(CacheFiles(options.jit.cache_dir).size(), 4u);
}

TEST(ObjectCacheTest, TheTargetCpuIsPartOfTheKey) {
  // x86-64 (the baseline every x86-64 host runs) and a feature removed
  // from the host's: code this host runs, in entries of their own.
  CpuCompileOptions options;
  options.jit.cache_dir = FreshDir("target_cpu");
  CompileAndCheck(options);
  options.jit.target_cpu = "x86-64";
  CompileAndCheck(options);
  EXPECT_EQ(CacheFiles(options.jit.cache_dir).size(), 2u);
  absl::StatusOr<std::unique_ptr<Jit>> jit = Jit::Create(options.jit);
  ASSERT_TRUE(jit.ok()) << jit.status();
  EXPECT_EQ((*jit)->cpu_name(), "x86-64");
  options.jit.target_cpu = "";
  options.jit.target_features = "-avx2";
  CompileAndCheck(options);
  EXPECT_EQ(CacheFiles(options.jit.cache_dir).size(), 3u);
}

TEST(ObjectCacheTest, AnUnknownTargetCpuOrFeatureIsAnError) {
  JitOptions options;
  options.target_cpu = "no-such-cpu";
  absl::StatusOr<std::unique_ptr<Jit>> jit = Jit::Create(options);
  ASSERT_FALSE(jit.ok());
  EXPECT_EQ(jit.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(jit.status().message().find("no-such-cpu"), std::string::npos) << jit.status();
  options.target_cpu = "";
  options.target_features = "+no-such-feature";
  jit = Jit::Create(options);
  ASSERT_FALSE(jit.ok());
  EXPECT_NE(jit.status().message().find("+no-such-feature"), std::string::npos) << jit.status();
  options.target_features = "avx2";  // no + or -
  EXPECT_FALSE(Jit::Create(options).ok());
}

TEST(ObjectCacheTest, ConcurrentWritersLeaveOneWholeFile) {
  CpuCompileOptions options;
  options.jit.cache_dir = FreshDir("concurrent");
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) threads.emplace_back([&options] { CompileAndCheck(options); });
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(CacheFiles(options.jit.cache_dir).size(), 1u);  // no temp files left
  const JitStats before = GetJitStats();
  CompileAndCheck(options);
  EXPECT_EQ(GetJitStats().modules_optimized, before.modules_optimized);
  EXPECT_EQ(GetJitStats().object_cache_hits, before.object_cache_hits + 1);
}

TEST(ObjectCacheTest, NoDirectoryMeansNoCache) {
  const JitStats before = GetJitStats();
  CompileAndCheck(CpuCompileOptions());
  CompileAndCheck(CpuCompileOptions());
  EXPECT_EQ(GetJitStats().modules_optimized, before.modules_optimized + 2);
  EXPECT_EQ(GetJitStats().object_cache_hits, before.object_cache_hits);
}

}  // namespace
}  // namespace axle::cpu
