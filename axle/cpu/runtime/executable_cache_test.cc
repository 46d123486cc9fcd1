//===- executable_cache_test.cc - Compilations cached in memory and on disk ===//
//
// A second compile of a structurally identical module (other names, other
// metadata) is a memory hit: the executable shares the first one's
// optimized module (no pass ran) and no LLVM runs. With AXLE_CACHE_DIR, a
// second client after the memory cache is gone (as a new process) finds the
// compilation on disk: no pass, no LLVM (the kernels' objects come from the
// object cache). Corrupt, truncated and stale files are ignored with a
// warning, and the next compile replaces them; concurrent writers leave one
// whole file. Every executable computes the interpreter's values.
//
//===----------------------------------------------------------------------===//
#include "axle/cpu/runtime/executable_cache.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "axle/cpu/jit.h"
#include "axle/cpu/object_cache.h"
#include "axle/cpu/runtime/platform_test_util.h"
#include "gtest/gtest.h"

namespace axle::cpu {
namespace {

namespace fs = std::filesystem;
using testing::ClientFor;
using testing::RunExecutable;

constexpr char kModule[] = R"(
HloModule executable_cache
sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[16,8] parameter(0)
  y = f32[16,8] parameter(1)
  m = f32[16,8] multiply(x, y)
  t = f32[16,8] add(m, x)
  z = f32[] constant(0.5)
  r = f32[16] reduce(t, z), dimensions={1}, to_apply=sum
  ROOT out = (f32[16,8], f32[16]) tuple(t, r)
})";

// kModule with every name changed and metadata added.
constexpr char kRenamed[] = R"(
HloModule renamed
add_f32 {
  lhs = f32[] parameter(0)
  rhs = f32[] parameter(1)
  ROOT sum = f32[] add(lhs, rhs)
}
ENTRY main {
  p0 = f32[16,8] parameter(0)
  p1 = f32[16,8] parameter(1)
  product = f32[16,8] multiply(p0, p1), metadata={op_name="jit(f)/mul"}
  fma = f32[16,8] add(product, p0)
  init = f32[] constant(0.5)
  rows = f32[16] reduce(fma, init), dimensions={1}, to_apply=add_f32
  ROOT result = (f32[16,8], f32[16]) tuple(fma, rows)
})";

std::vector<Literal> Arguments() {
  std::vector<Literal> arguments;
  for (int a = 0; a < 2; ++a) {
    Literal literal(ShapeUtil::MakeShape(F32, {16, 8}));
    for (int64_t i = 0; i < 128; ++i) literal.SetFromDouble(i, 0.25 * (i % 13) - a);
    arguments.push_back(std::move(literal));
  }
  return arguments;
}

std::unique_ptr<LocalExecutable> Compile(LocalClient& client, const std::string& text) {
  auto module = ParseAndReturnUnverifiedModule(text);
  CHECK(module.ok()) << module.status();
  auto executable = client.Compile(std::move(*module), {});
  CHECK(executable.ok()) << executable.status();
  return std::move(*executable);
}

void ExpectAgreesWithInterpreter(const LocalExecutable& executable) {
  absl::StatusOr<Literal> actual = RunExecutable("cpu", executable, Arguments());
  ASSERT_TRUE(actual.ok()) << actual.status();
  absl::StatusOr<Literal> expected = testing::RunOn("interpreter", kModule, Arguments());
  ASSERT_TRUE(expected.ok()) << expected.status();
  absl::Status near = LiteralsNear(*expected, *actual, ErrorSpec(1e-5, 1e-5));
  EXPECT_TRUE(near.ok()) << near;
}

CompilationKey KeyOf(const std::string& text) {
  auto module = ParseAndReturnUnverifiedModule(text);
  CHECK(module.ok()) << module.status();
  return MakeCompilationKey(**module, ExecutableBuildOptions(),
                            ClientFor("cpu")->platform()->Name());
}

class ExecutableCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    CompilationCache::Global().Clear();
    dir_ = ::testing::TempDir() + "/axle_executable_cache_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    fs::remove_all(dir_);
  }
  void TearDown() override {
    unsetenv("AXLE_CACHE_DIR");
    CompilationCache::Global().Clear();
    fs::remove_all(dir_);
  }
  void UseDisk() { setenv("AXLE_CACHE_DIR", dir_.c_str(), 1); }
  std::string File() const { return ExecutableCachePath(dir_, KeyOf(kModule)); }

  // Compiles kModule with a fresh memory cache (as a new process would) on a
  // client of its own.
  std::unique_ptr<LocalExecutable> CompileInNewClient() {
    CompilationCache::Global().Clear();
    LocalClient client(ClientFor("cpu")->platform());
    return Compile(client, kModule);
  }

  std::string dir_;
};

TEST_F(ExecutableCacheTest, SecondCompileIsAMemoryHitWithoutPassesOrLlvm) {
  LocalClient& client = *ClientFor("cpu");
  const CompilationCacheStats before = CompilationCache::Global().stats();
  const int64_t optimized = GetJitStats().modules_optimized;
  std::unique_ptr<LocalExecutable> first = Compile(client, kModule);
  EXPECT_EQ(CompilationCache::Global().stats().memory_misses, before.memory_misses + 1);
  EXPECT_EQ(GetJitStats().modules_optimized, optimized + 1);

  std::unique_ptr<LocalExecutable> second = Compile(client, kRenamed);
  EXPECT_EQ(CompilationCache::Global().stats().memory_hits, before.memory_hits + 1);
  EXPECT_EQ(GetJitStats().modules_optimized, optimized + 1);
  // The optimized module is shared: the passes did not run again.
  EXPECT_EQ(&first->executable()->module(), &second->executable()->module());
  EXPECT_NE(first->executable(), second->executable());
  ExpectAgreesWithInterpreter(*first);
  first.reset();
  ExpectAgreesWithInterpreter(*second);
}

TEST_F(ExecutableCacheTest, SecondClientFindsTheCompilationOnDisk) {
  UseDisk();
  const CompilationCacheStats before = CompilationCache::Global().stats();
  std::unique_ptr<LocalExecutable> first = CompileInNewClient();
  CompilationCacheStats after = CompilationCache::Global().stats();
  EXPECT_EQ(after.disk_misses, before.disk_misses + 1);
  EXPECT_EQ(after.disk_writes, before.disk_writes + 1);
  ASSERT_TRUE(fs::exists(File()));

  const JitStats jit_before = GetJitStats();
  std::unique_ptr<LocalExecutable> second = CompileInNewClient();
  after = CompilationCache::Global().stats();
  EXPECT_EQ(after.disk_hits, before.disk_hits + 1);
  EXPECT_EQ(after.disk_rejected, before.disk_rejected);
  // No LLVM: the kernels' objects come from the object cache.
  EXPECT_EQ(GetJitStats().modules_optimized, jit_before.modules_optimized);
  EXPECT_EQ(GetJitStats().object_cache_hits, jit_before.object_cache_hits + 1);
  ExpectAgreesWithInterpreter(*first);
  ExpectAgreesWithInterpreter(*second);

  // Now in memory too.
  std::unique_ptr<LocalExecutable> third = Compile(*ClientFor("cpu"), kRenamed);
  EXPECT_EQ(CompilationCache::Global().stats().memory_hits, before.memory_hits + 1);
  ExpectAgreesWithInterpreter(*third);
}

// Replaces the cache file by `damage(contents)`, compiles in a new client
// and expects the file ignored, the values right, and the file replaced by a
// good one.
void ExpectDamagedFileIgnored(const std::string& path,
                              const std::function<std::unique_ptr<LocalExecutable>()>& compile,
                              const std::function<void(const std::string&)>& damage) {
  damage(path);
  const CompilationCacheStats before = CompilationCache::Global().stats();
  std::unique_ptr<LocalExecutable> executable = compile();
  CompilationCacheStats after = CompilationCache::Global().stats();
  EXPECT_EQ(after.disk_rejected, before.disk_rejected + 1);
  EXPECT_EQ(after.disk_hits, before.disk_hits);
  EXPECT_EQ(after.disk_writes, before.disk_writes + 1);
  ExpectAgreesWithInterpreter(*executable);
  executable = compile();
  EXPECT_EQ(CompilationCache::Global().stats().disk_hits, before.disk_hits + 1);
  ExpectAgreesWithInterpreter(*executable);
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void WriteAll(const std::string& path, const std::string& data) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << data;
}

TEST_F(ExecutableCacheTest, CorruptTruncatedAndStaleFilesAreIgnored) {
  UseDisk();
  CompileInNewClient();
  ASSERT_TRUE(fs::exists(File()));
  auto compile = [this] { return CompileInNewClient(); };
  {
    SCOPED_TRACE("a flipped byte");
    ExpectDamagedFileIgnored(File(), compile, [](const std::string& path) {
      std::string data = ReadAll(path);
      data[data.size() / 2] ^= 0x5a;
      WriteAll(path, data);
    });
  }
  {
    SCOPED_TRACE("truncated");
    ExpectDamagedFileIgnored(File(), compile, [](const std::string& path) {
      std::string data = ReadAll(path);
      WriteAll(path, data.substr(0, data.size() - 100));
    });
  }
  {
    SCOPED_TRACE("another version");
    ExpectDamagedFileIgnored(File(), compile, [](const std::string& path) {
      CheckedFileRead read = ReadCheckedFile(path, "AXLEEXE1");
      ASSERT_TRUE(read.payload.has_value());
      std::string payload = *read.payload;
      const size_t at = payload.find("axle-executable-cache-1");
      ASSERT_NE(at, std::string::npos);
      payload[at + 22] = '0';  // "axle-executable-cache-0": same length
      ASSERT_TRUE(WriteCheckedFile(path, "AXLEEXE1", payload));
    });
  }
  {
    SCOPED_TRACE("garbage");
    ExpectDamagedFileIgnored(File(), compile,
                             [](const std::string& path) { WriteAll(path, "not a cache file"); });
  }
}

TEST_F(ExecutableCacheTest, ConcurrentWritersLeaveOneWholeFile) {
  Compile(*ClientFor("cpu"), kModule);
  const CompilationKey key = KeyOf(kModule);
  auto found = CompilationCache::Global().Find(key);
  ASSERT_NE(found, nullptr);
  const auto& artifact = static_cast<const CpuCompiledArtifact&>(*found);
  std::vector<std::thread> writers;
  for (int t = 0; t < 8; ++t) {
    writers.emplace_back([&] {
      for (int i = 0; i < 4; ++i) WriteExecutableCacheFile(dir_, key, artifact);
    });
  }
  for (std::thread& writer : writers) writer.join();
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(dir_)) {
    files.push_back(entry.path().filename().string());
  }
  ASSERT_EQ(files.size(), 1u) << absl::StrJoin(files, " ");
  EXPECT_TRUE(absl::EndsWith(files[0], ".axle-exe"));
  std::shared_ptr<const CpuCompiledArtifact> read = ReadExecutableCacheFile(dir_, key);
  ASSERT_NE(read, nullptr);
  EXPECT_EQ(read->signature, artifact.signature);
  EXPECT_TRUE(ComputationsIdentical(*read->optimized->entry_computation(),
                                    *artifact.optimized->entry_computation()));
}

}  // namespace
}  // namespace axle::cpu
