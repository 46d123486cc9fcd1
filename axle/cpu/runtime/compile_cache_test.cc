//===- compile_cache_test.cc - Reusing compiled code; LLVM IR in dumps -----===//
//
// Compiling the same module twice in a process runs LLVM once and gives two
// independent executables that both compute the interpreter's values;
// other build options compile again; a cached compilation whose kernels
// differ from those its module needs is not used. (Disk and structural
// identity: executable_cache_test.cc.) With AXLE_DUMP_TO set, the compiler
// writes the cpu-prepare pass dumps, the LLVM IR before and after
// optimization (naming the kernels) and the LLVM timings.
//
//===----------------------------------------------------------------------===//
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "axle/cpu/jit.h"
#include "axle/cpu/runtime/cpu_executable.h"
#include "axle/cpu/runtime/executable_cache.h"
#include "axle/cpu/runtime/platform_test_util.h"
#include "gtest/gtest.h"

namespace axle::cpu {
namespace {

namespace fs = std::filesystem;
using testing::ClientFor;
using testing::RunExecutable;

// Two kernels: the multiply-add (a result itself) and the reduce of it.
constexpr char kModule[] = R"(
HloModule compile_cache_MODULE
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
  z = f32[] constant(0)
  r = f32[16] reduce(t, z), dimensions={1}, to_apply=sum
  ROOT out = (f32[16,8], f32[16]) tuple(t, r)
})";

// kModule under another module name (names do not change its identity: each
// test starts with an empty compilation cache).
std::string ModuleNamed(const std::string& name) {
  std::string text = kModule;
  text.replace(text.find("MODULE"), 6, name);
  return text;
}

std::vector<Literal> Arguments() {
  std::vector<Literal> arguments;
  for (int a = 0; a < 2; ++a) {
    Literal literal(ShapeUtil::MakeShape(F32, {16, 8}));
    for (int64_t i = 0; i < 128; ++i) literal.SetFromDouble(i, 0.25 * (i % 13) - a);
    arguments.push_back(std::move(literal));
  }
  return arguments;
}

std::unique_ptr<LocalExecutable> Compile(const std::string& text,
                                         const ExecutableBuildOptions& options = {}) {
  auto module = ParseAndReturnUnverifiedModule(text);
  CHECK(module.ok()) << module.status();
  auto executable = ClientFor("cpu")->Compile(std::move(*module), options);
  CHECK(executable.ok()) << executable.status();
  return std::move(*executable);
}

void ExpectAgreesWithInterpreter(const std::string& text, const LocalExecutable& executable) {
  absl::StatusOr<Literal> actual = RunExecutable("cpu", executable, Arguments());
  ASSERT_TRUE(actual.ok()) << actual.status();
  absl::StatusOr<Literal> expected = testing::RunOn("interpreter", text, Arguments());
  ASSERT_TRUE(expected.ok()) << expected.status();
  absl::Status near = LiteralsNear(*expected, *actual, ErrorSpec(1e-5, 1e-5));
  EXPECT_TRUE(near.ok()) << near;
}

class CompileCacheTest : public ::testing::Test {
 protected:
  void SetUp() override { CompilationCache::Global().Clear(); }
};

TEST_F(CompileCacheTest, SameModuleTwiceRunsLlvmOnce) {
  const std::string text = ModuleNamed("twice");
  const int64_t before = GetJitStats().modules_optimized;
  std::unique_ptr<LocalExecutable> first = Compile(text);
  EXPECT_EQ(GetJitStats().modules_optimized, before + 1);  // one module for both kernels
  std::unique_ptr<LocalExecutable> second = Compile(text);
  EXPECT_EQ(GetJitStats().modules_optimized, before + 1);
  ASSERT_NE(first->executable(), second->executable());

  // Independent executables: each runs (its own arena) and is right, also
  // after the other is gone.
  ExpectAgreesWithInterpreter(text, *first);
  ExpectAgreesWithInterpreter(text, *second);
  const auto* first_cpu = static_cast<const CpuExecutable*>(first->executable());
  const auto* second_cpu = static_cast<const CpuExecutable*>(second->executable());
  EXPECT_EQ(first_cpu->arenas_allocated(), 1);
  EXPECT_EQ(second_cpu->arenas_allocated(), 1);
  first.reset();
  ExpectAgreesWithInterpreter(text, *second);
}

TEST_F(CompileCacheTest, OtherBuildOptionsOrModuleCompileAgain) {
  const std::string text = ModuleNamed("options");
  const int64_t before = GetJitStats().modules_optimized;
  std::unique_ptr<LocalExecutable> plain = Compile(text);
  ExecutableBuildOptions options;
  options.set_device_ordinal(0);
  std::unique_ptr<LocalExecutable> other_options = Compile(text, options);
  EXPECT_EQ(GetJitStats().modules_optimized, before + 2);
  std::string changed = text;
  changed.replace(changed.find("add(m, x)"), 9, "add(m, y)");
  std::unique_ptr<LocalExecutable> other_module = Compile(changed);
  EXPECT_EQ(GetJitStats().modules_optimized, before + 3);
  ExpectAgreesWithInterpreter(text, *other_options);
  ExpectAgreesWithInterpreter(changed, *other_module);
}

int64_t CountFusions(const LocalExecutable& executable) {
  int64_t fusions = 0;
  for (const HloInstruction* instruction :
       executable.executable()->module().entry_computation()->instructions()) {
    fusions += instruction->opcode() == HloOpcode::kFusion;
  }
  return fusions;
}

TEST_F(CompileCacheTest, RunBackendOnlyCompilesTheModuleAsGiven) {
  // XLA's run_backend_only: no optimization passes. The multiply and the
  // add stay two kernels (the optimizing pipeline fuses them); a module
  // fused already keeps its fusion as it is.
  const std::string text = ModuleNamed("backend_only");
  ExecutableBuildOptions options;
  options.set_run_backend_only(true);
  std::unique_ptr<LocalExecutable> as_given = Compile(text, options);
  std::unique_ptr<LocalExecutable> optimized = Compile(text);
  EXPECT_EQ(CountFusions(*as_given), 3);
  EXPECT_LT(CountFusions(*optimized), 3);
  ExpectAgreesWithInterpreter(text, *as_given);

  const std::string fused = R"(
HloModule compile_cache_prefused
fused {
  a = f32[16,8] parameter(0)
  b = f32[16,8] parameter(1)
  m = f32[16,8] multiply(a, b)
  ROOT t = f32[16,8] add(m, a)
}
ENTRY e {
  x = f32[16,8] parameter(0)
  y = f32[16,8] parameter(1)
  ROOT f = f32[16,8] fusion(x, y), kind=kLoop, calls=fused
})";
  std::unique_ptr<LocalExecutable> prefused = Compile(fused, options);
  EXPECT_EQ(CountFusions(*prefused), 1);
  ExpectAgreesWithInterpreter(fused, *prefused);
}

TEST_F(CompileCacheTest, CachedKernelsOfOtherFusionsAreNotUsed) {
  // Poison the entry of module A with module B's kernels (as if the passes
  // had fused A differently this time): compiling A must not run B's code.
  const std::string a = ModuleNamed("poisoned");
  std::string b = ModuleNamed("other_kernels");
  b.replace(b.find("multiply(x, y)"), 14, "subtract(x, y)");
  std::unique_ptr<LocalExecutable> compiled_b = Compile(b);
  std::unique_ptr<LocalExecutable> first_a = Compile(a);
  auto parse = [](const std::string& text) {
    auto module = ParseAndReturnUnverifiedModule(text);
    CHECK(module.ok()) << module.status();
    return std::move(*module);
  };
  const std::string platform = ClientFor("cpu")->platform()->Name();
  const CompilationKey key_a = MakeCompilationKey(*parse(a), ExecutableBuildOptions(), platform);
  auto of_a = CompilationCache::Global().Find(key_a);
  auto of_b = CompilationCache::Global().Find(
      MakeCompilationKey(*parse(b), ExecutableBuildOptions(), platform));
  ASSERT_NE(of_a, nullptr);
  ASSERT_NE(of_b, nullptr);
  auto poisoned = std::make_shared<CpuCompiledArtifact>();
  poisoned->optimized = static_cast<const CpuCompiledArtifact&>(*of_a).optimized;
  poisoned->kernels = static_cast<const CpuCompiledArtifact&>(*of_b).kernels;
  poisoned->signature = static_cast<const CpuCompiledArtifact&>(*of_b).signature;
  CompilationCache::Global().Insert(key_a, poisoned);

  const int64_t before = GetJitStats().modules_optimized;
  std::unique_ptr<LocalExecutable> compiled_a = Compile(a);
  EXPECT_EQ(GetJitStats().modules_optimized, before + 1);
  ExpectAgreesWithInterpreter(a, *compiled_a);
  ExpectAgreesWithInterpreter(b, *compiled_b);
  // The poisoned entry was replaced: the next compile is a clean hit.
  std::unique_ptr<LocalExecutable> again = Compile(a);
  EXPECT_EQ(GetJitStats().modules_optimized, before + 1);
  ExpectAgreesWithInterpreter(a, *again);
}

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST_F(CompileCacheTest, DumpHasPassesLlvmIrAndTimings) {
  const std::string dir = ::testing::TempDir() + "/axle_cpu_dump_test";
  fs::remove_all(dir);
  const std::string text = ModuleNamed("dumped");
  setenv("AXLE_DUMP_TO", dir.c_str(), 1);
  std::unique_ptr<LocalExecutable> executable = Compile(text);
  unsetenv("AXLE_DUMP_TO");
  ExpectAgreesWithInterpreter(text, *executable);

  const std::string prefix = dir + "/compile_cache_dumped";
  const std::string before = ReadFile(prefix + ".ir-before-optimization.ll");
  const std::string after = ReadFile(prefix + ".ir-after-optimization.ll");
  for (const std::string* ir : {&before, &after}) {
    EXPECT_TRUE(absl::StrContains(*ir, "define void @kernel_0(")) << *ir;
    EXPECT_TRUE(absl::StrContains(*ir, "define void @kernel_1(")) << *ir;
  }
  EXPECT_TRUE(absl::StrContains(before, "kernel_0.body"));  // inlined by the optimizer
  EXPECT_FALSE(absl::StrContains(after, "define internal void @kernel_0.body"));
  const std::string timings = ReadFile(prefix + ".timings.txt");
  for (const char* line : {"fusion", "cpu-wrap-in-loop-fusions", "dce", "cpu: llvm-ir-emission",
                           "cpu: llvm-optimization", "cpu: llvm-codegen"}) {
    EXPECT_TRUE(absl::StrContains(timings, line)) << line << " in\n" << timings;
  }
  bool has_pass_dump = false;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (absl::EndsWith(name, ".fusion.hlo")) has_pass_dump = true;
  }
  EXPECT_TRUE(has_pass_dump);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace axle::cpu
