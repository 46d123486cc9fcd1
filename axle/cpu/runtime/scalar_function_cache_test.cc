//===- scalar_function_cache_test.cc - Scalar functions with the kernels ---===//
//
// Sort comparators and scatter combiners are compiled into the executable's
// one LoopKernelModule: two sorts with structurally identical comparators
// share one function, everything goes through LLVM as one module, and a
// second compile of the module in the process reuses the cached
// compilation (no pass, no LLVM at all) with the same, correct results.
//
//===----------------------------------------------------------------------===//
#include <string>
#include <vector>

#include "axle/cpu/jit.h"
#include "axle/cpu/runtime/executable_cache.h"
#include "axle/cpu/runtime/platform_test_util.h"
#include "gtest/gtest.h"

namespace axle::cpu {
namespace {

using testing::ClientFor;
using testing::RunExecutable;

// Two sorts whose comparators differ only in names, a sort with another
// comparator, a scatter and a loop fusion (the exponential).
constexpr char kModule[] = R"(
HloModule scalar_function_cache
lt_a {
  p0 = f32[] parameter(0)
  p1 = f32[] parameter(1)
  ROOT lt = pred[] compare(p0, p1), direction=LT
}
lt_b {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT z = pred[] compare(x, y), direction=LT
}
gt {
  p0 = f32[] parameter(0)
  p1 = f32[] parameter(1)
  ROOT gt = pred[] compare(p0, p1), direction=GT
}
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[4,6] parameter(0)
  i = s32[2] parameter(1)
  u = f32[2,6] parameter(2)
  ex = f32[4,6] exponential(x)
  s0 = f32[4,6] sort(ex), dimensions={1}, to_apply=lt_a
  s1 = f32[4,6] sort(x), dimensions={0}, to_apply=lt_b
  s2 = f32[4,6] sort(x), dimensions={1}, to_apply=gt
  sc = f32[4,6] scatter(s1, i, u), to_apply=add, update_window_dims={1},
      inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1
  ROOT t = (f32[4,6], f32[4,6], f32[4,6]) tuple(s0, sc, s2)
})";

std::vector<Literal> Arguments() {
  Literal x(ShapeUtil::MakeShape(F32, {4, 6}));
  for (int64_t i = 0; i < 24; ++i) x.SetFromDouble(i, 0.5 * ((i * 7) % 11) - 2);
  Literal u(ShapeUtil::MakeShape(F32, {2, 6}));
  for (int64_t i = 0; i < 12; ++i) u.SetFromDouble(i, i);
  std::vector<Literal> arguments;
  arguments.push_back(std::move(x));
  arguments.push_back(LiteralUtil::CreateR1<int32_t>({3, 1}));
  arguments.push_back(std::move(u));
  return arguments;
}

std::unique_ptr<LocalExecutable> Compile() {
  auto module = ParseAndReturnUnverifiedModule(kModule);
  CHECK(module.ok()) << module.status();
  auto executable = ClientFor("cpu")->Compile(std::move(*module), {});
  CHECK(executable.ok()) << executable.status();
  return std::move(*executable);
}

void ExpectAgreesWithInterpreter(const LocalExecutable& executable) {
  absl::StatusOr<Literal> actual = RunExecutable("cpu", executable, Arguments());
  ASSERT_TRUE(actual.ok()) << actual.status();
  absl::StatusOr<Literal> expected = testing::RunOn("interpreter", kModule, Arguments());
  ASSERT_TRUE(expected.ok()) << expected.status();
  absl::Status near = LiteralsNear(*expected, *actual, ErrorSpec(1e-6, 1e-6));
  EXPECT_TRUE(near.ok()) << near;
}

int64_t Count(const std::string& text, const std::string& what) {
  int64_t count = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) {
    ++count;
  }
  return count;
}

TEST(ScalarFunctionCacheTest, SharedComparatorOneLlvmModuleAndReusedJit) {
  const int64_t before = GetJitStats().modules_optimized;
  std::unique_ptr<LocalExecutable> first = Compile();
  // The kernel, the comparators and the combiner: one LLVM module.
  EXPECT_EQ(GetJitStats().modules_optimized, before + 1);

  auto module = ParseAndReturnUnverifiedModule(kModule);
  ASSERT_TRUE(module.ok()) << module.status();
  auto found = CompilationCache::Global().Find(
      MakeCompilationKey(**module, ExecutableBuildOptions(), ClientFor("cpu")->platform()->Name()));
  ASSERT_NE(found, nullptr);
  const auto& cached = static_cast<const CpuCompiledArtifact&>(*found);
  ASSERT_NE(cached.kernels, nullptr);
  // Three sorts and a scatter; lt_b's sort reuses lt_a's function.
  EXPECT_EQ(Count(cached.signature, "scalar function "), 4) << cached.signature;
  EXPECT_EQ(Count(cached.signature, "scalar function sort_comparator_"), 3) << cached.signature;
  EXPECT_EQ(Count(cached.signature, " = sort_comparator_"), 1) << cached.signature;
  EXPECT_EQ(Count(cached.signature, "scalar function scatter_combiner_"), 1) << cached.signature;

  std::unique_ptr<LocalExecutable> second = Compile();
  EXPECT_EQ(GetJitStats().modules_optimized, before + 1);
  ExpectAgreesWithInterpreter(*first);
  first.reset();  // the second executable holds the shared Jit itself
  ExpectAgreesWithInterpreter(*second);
}

}  // namespace
}  // namespace axle::cpu
