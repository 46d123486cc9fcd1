//===- loop_kernel_module_test.cc - Many kernels, few LLVM modules ---------===//
//
// LoopKernelModule: structurally identical fusions share one function (and
// different ones do not); enough code is split into one LLVM module per
// compile thread, compiled concurrently, with the same results as one
// module on one thread; a small program stays one module; split modules
// are stored in and loaded from the disk object cache one file each.
//
//===----------------------------------------------------------------------===//
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "axle/cpu/jit.h"
#include "axle/cpu/loop_kernel_emitter.h"
#include "axle/hlo/text/hlo_parser.h"
#include "gtest/gtest.h"

namespace axle::cpu {
namespace {

constexpr int64_t kSize = 256;

// `count` computations k0..k{count-1}: x * c + y with c = 0.5 + i (each
// its own function), then an entry.
std::string ScaledSums(int count) {
  std::string text = "HloModule scaled_sums\n";
  for (int i = 0; i < count; ++i) {
    absl::StrAppend(&text, "k", i, " {\n  x = f32[", kSize, "] parameter(0)\n  y = f32[", kSize,
                    "] parameter(1)\n  c = f32[] constant(", i, ".5)\n  cb = f32[", kSize,
                    "] broadcast(c), dimensions={}\n  m = f32[", kSize,
                    "] multiply(x, cb)\n  ROOT r = f32[", kSize, "] add(m, y)\n}\n");
  }
  absl::StrAppend(&text, "ENTRY e {\n  ROOT x = f32[] parameter(0)\n}\n");
  return text;
}

// Runs every computation k<i> of `module` as a kernel of one LoopKernelModule
// with `threads` compile threads; returns the outputs, one vector each.
struct SplitRun {
  std::vector<std::vector<float>> outputs;
  int64_t llvm_modules = 0;
};
SplitRun CompileAndRun(const HloModule& module, int count, int threads,
                       const std::string& cache_dir = "") {
  CpuCompileOptions options;
  options.jit.compile_threads = threads;
  options.jit.cache_dir = cache_dir;
  LoopKernelModule kernels("scaled_sums", options);
  std::vector<std::unique_ptr<CompiledKernel>> compiled;
  for (int i = 0; i < count; ++i) {
    auto kernel = kernels.AddKernel(*module.GetComputationWithName(absl::StrCat("k", i)),
                                    absl::StrCat("k", i));
    EXPECT_TRUE(kernel.ok()) << kernel.status();
    if (!kernel.ok()) return {};
    compiled.push_back(*std::move(kernel));
  }
  absl::Status status = kernels.Compile();
  EXPECT_TRUE(status.ok()) << status;
  SplitRun run;
  run.llvm_modules = kernels.num_llvm_modules();
  std::vector<float> x(kSize), y(kSize);
  for (int64_t j = 0; j < kSize; ++j) {
    x[j] = static_cast<float>(j) * 0.25f - 7.0f;
    y[j] = static_cast<float>(j % 13) - 6.0f;
  }
  for (const auto& kernel : compiled) {
    std::vector<float> out(kSize, -1.0f);
    void* buffers[] = {x.data(), y.data(), out.data()};
    kernel->Run(buffers);
    run.outputs.push_back(std::move(out));
  }
  return run;
}

TEST(LoopKernelModuleTest, ManyKernelsSplitIntoOneModulePerThreadWithTheSameResults) {
  constexpr int kCount = 48;
  auto module = ParseAndReturnUnverifiedModule(ScaledSums(kCount));
  ASSERT_TRUE(module.ok()) << module.status();
  SplitRun one = CompileAndRun(**module, kCount, /*threads=*/1);
  SplitRun two = CompileAndRun(**module, kCount, /*threads=*/2);
  EXPECT_EQ(one.llvm_modules, 1);
  EXPECT_EQ(two.llvm_modules, 2);
  ASSERT_EQ(one.outputs.size(), static_cast<size_t>(kCount));
  ASSERT_EQ(two.outputs.size(), static_cast<size_t>(kCount));
  for (int i = 0; i < kCount; ++i) {
    // Bit for bit: the split does not change the code of a kernel.
    EXPECT_EQ(std::memcmp(one.outputs[i].data(), two.outputs[i].data(), kSize * sizeof(float)), 0)
        << "k" << i;
    const float c = static_cast<float>(i) + 0.5f;
    for (int64_t j : {int64_t{0}, int64_t{17}, kSize - 1}) {
      const float x = static_cast<float>(j) * 0.25f - 7.0f;
      const float y = static_cast<float>(j % 13) - 6.0f;
      EXPECT_NEAR(two.outputs[i][j], x * c + y, 1e-4f) << "k" << i << "[" << j << "]";
    }
  }
}

TEST(LoopKernelModuleTest, SmallProgramStaysOneModule) {
  auto module = ParseAndReturnUnverifiedModule(ScaledSums(2));
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_EQ(CompileAndRun(**module, 2, /*threads=*/4).llvm_modules, 1);
}

TEST(LoopKernelModuleTest, SplitModulesAreCachedOneFileEach) {
  constexpr int kCount = 48;
  const std::string dir = ::testing::TempDir() + "/axle_loop_kernel_module_cache";
  std::filesystem::remove_all(dir);
  auto module = ParseAndReturnUnverifiedModule(ScaledSums(kCount));
  ASSERT_TRUE(module.ok()) << module.status();
  const JitStats before = GetJitStats();
  SplitRun first = CompileAndRun(**module, kCount, /*threads=*/2, dir);
  EXPECT_EQ(GetJitStats().modules_optimized, before.modules_optimized + 2);
  EXPECT_EQ(GetJitStats().object_cache_writes, before.object_cache_writes + 2);
  SplitRun second = CompileAndRun(**module, kCount, /*threads=*/2, dir);
  EXPECT_EQ(GetJitStats().modules_optimized, before.modules_optimized + 2);
  EXPECT_EQ(GetJitStats().object_cache_hits, before.object_cache_hits + 2);
  ASSERT_EQ(second.outputs.size(), first.outputs.size());
  for (size_t i = 0; i < first.outputs.size(); ++i) EXPECT_EQ(first.outputs[i], second.outputs[i]);
  std::filesystem::remove_all(dir);
}

constexpr char kSgdSteps[] = R"(
HloModule sgd
step_a {
  w = f32[64] parameter(0)
  g = f32[64] parameter(1)
  lr = f32[] constant(0.01)
  lrb = f32[64] broadcast(lr), dimensions={}
  s = f32[64] multiply(g, lrb)
  ROOT n = f32[64] subtract(w, s)
}
step_b {
  w2 = f32[64] parameter(0)
  g2 = f32[64] parameter(1)
  lr2 = f32[] constant(0.01)
  lrb2 = f32[64] broadcast(lr2), dimensions={}
  s2 = f32[64] multiply(g2, lrb2)
  ROOT n2 = f32[64] subtract(w2, s2)
}
other_rate {
  w = f32[64] parameter(0)
  g = f32[64] parameter(1)
  lr = f32[] constant(0.02)
  lrb = f32[64] broadcast(lr), dimensions={}
  s = f32[64] multiply(g, lrb)
  ROOT n = f32[64] subtract(w, s)
}
other_shape {
  w = f32[32] parameter(0)
  g = f32[32] parameter(1)
  lr = f32[] constant(0.01)
  lrb = f32[32] broadcast(lr), dimensions={}
  s = f32[32] multiply(g, lrb)
  ROOT n = f32[32] subtract(w, s)
}
swapped_parameters {
  w = f32[64] parameter(1)
  g = f32[64] parameter(0)
  lr = f32[] constant(0.01)
  lrb = f32[64] broadcast(lr), dimensions={}
  s = f32[64] multiply(g, lrb)
  ROOT n = f32[64] subtract(w, s)
}
ENTRY e {
  ROOT x = f32[] parameter(0)
}
)";

TEST(LoopKernelModuleTest, IdenticalFusionsShareOneFunction) {
  auto module = ParseAndReturnUnverifiedModule(kSgdSteps);
  ASSERT_TRUE(module.ok()) << module.status();
  LoopKernelModule kernels("sgd", CpuCompileOptions());
  std::vector<std::unique_ptr<CompiledKernel>> compiled;
  for (const char* name : {"step_a", "step_b", "other_rate", "other_shape", "swapped_parameters"}) {
    auto kernel = kernels.AddKernel(*(*module)->GetComputationWithName(name), name);
    ASSERT_TRUE(kernel.ok()) << kernel.status();
    compiled.push_back(*std::move(kernel));
  }
  ASSERT_TRUE(kernels.Compile().ok());
  EXPECT_EQ(kernels.num_kernels(), 5);
  EXPECT_EQ(kernels.num_functions(), 4);
  EXPECT_EQ(compiled[0]->function(), compiled[1]->function());
  for (int i = 2; i < 5; ++i) EXPECT_NE(compiled[0]->function(), compiled[i]->function()) << i;

  // The shared function computes step_b's values.
  std::vector<float> w(64), g(64), out(64);
  for (int j = 0; j < 64; ++j) {
    w[j] = static_cast<float>(j);
    g[j] = static_cast<float>(100 - j);
  }
  void* buffers[] = {w.data(), g.data(), out.data()};
  compiled[1]->Run(buffers);
  for (int j = 0; j < 64; ++j) EXPECT_FLOAT_EQ(out[j], w[j] - g[j] * 0.01f) << j;
}

TEST(LoopKernelModuleTest, PrecompiledJitResolvesSharedFunctions) {
  auto module = ParseAndReturnUnverifiedModule(kSgdSteps);
  ASSERT_TRUE(module.ok()) << module.status();
  LoopKernelModule first("sgd", CpuCompileOptions());
  auto a = first.AddKernel(*(*module)->GetComputationWithName("step_a"), "kernel_0");
  auto b = first.AddKernel(*(*module)->GetComputationWithName("step_b"), "kernel_1");
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_TRUE(first.Compile().ok());
  const JitStats before = GetJitStats();
  LoopKernelModule second("sgd", CpuCompileOptions(), first.jit());
  auto c = second.AddKernel(*(*module)->GetComputationWithName("step_a"), "kernel_0");
  auto d = second.AddKernel(*(*module)->GetComputationWithName("step_b"), "kernel_1");
  ASSERT_TRUE(c.ok() && d.ok());
  ASSERT_TRUE(second.Compile().ok());
  EXPECT_EQ(GetJitStats().modules_optimized, before.modules_optimized);
  EXPECT_EQ(second.signature(), first.signature());
  EXPECT_EQ((*d)->function(), (*b)->function());
  EXPECT_EQ((*c)->function(), (*a)->function());
}

}  // namespace
}  // namespace axle::cpu
