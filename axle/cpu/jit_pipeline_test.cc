//===- jit_pipeline_test.cc - The kernel pipeline and Axle's LLVM options --===//
//
// JitOptions::kernel_pipeline: a softmax-like kernel (row max, exp, row sum,
// divide) and a layer-norm-like one give the interpreter's values through
// Axle's kernel pipeline and through LLVM's default one, and both vectorize
// them to 16 lanes. The process-wide LLVM options (jit.h): a vectorized
// loop has no vector epilogue loop. Without AVX512-FP16, no compare or
// select on half vectors is left for the backend to scalarize (an f16
// relu feeding an f32 sum).
//
//===----------------------------------------------------------------------===//
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "axle/core/literal_comparison.h"
#include "axle/cpu/cpu_test_util.h"
#include "gtest/gtest.h"

namespace axle::cpu {
namespace {

using testing::RunAgainstInterpreter;

constexpr char kSoftmax[] = R"(
HloModule m
max_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
add_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[37,203] parameter(0)
  ninf = f32[] constant(-inf)
  zero = f32[] constant(0)
  rowmax = f32[37] reduce(x, ninf), dimensions={1}, to_apply=max_f32
  maxb = f32[37,203] broadcast(rowmax), dimensions={0}
  shifted = f32[37,203] subtract(x, maxb)
  e = f32[37,203] exponential(shifted)
  rowsum = f32[37] reduce(e, zero), dimensions={1}, to_apply=add_f32
  sumb = f32[37,203] broadcast(rowsum), dimensions={0}
  ROOT p = f32[37,203] divide(e, sumb)
})";

constexpr char kNormalize[] = R"(
HloModule m
add_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[19,333] parameter(0)
  scale = f32[333] parameter(1)
  zero = f32[] constant(0)
  sum = f32[19] reduce(x, zero), dimensions={1}, to_apply=add_f32
  inv = f32[] constant(0.003003003)
  invb = f32[19] broadcast(inv), dimensions={}
  mean = f32[19] multiply(sum, invb)
  meanb = f32[19,333] broadcast(mean), dimensions={0}
  centered = f32[19,333] subtract(x, meanb)
  scaleb = f32[19,333] broadcast(scale), dimensions={1}
  scaled = f32[19,333] multiply(centered, scaleb)
  ROOT r = f32[19,333] tanh(scaled)
})";

// An f16 bias add and relu (with its NaN select), summed over H and W in
// f32: JAX's mixed-precision pooling after a convolution.
constexpr char kF16ReluSum[] = R"(
HloModule m
add_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[4,8,8,32] parameter(0)
  b = f16[32] parameter(1)
  c = f16[4,8,8,32] convert(x)
  bb = f16[4,8,8,32] broadcast(b), dimensions={3}
  a = f16[4,8,8,32] add(c, bb)
  z = f16[] constant(0)
  zb = f16[4,8,8,32] broadcast(z), dimensions={}
  m = f16[4,8,8,32] maximum(a, zb)
  f = f32[4,8,8,32] convert(m)
  zero = f32[] constant(0)
  ROOT r = f32[4,32] reduce(f, zero), dimensions={1,2}, to_apply=add_f32
})";

// Runs `text` with `kernel_pipeline` against the interpreter (within a few
// ulp: the row sums are vectorized) and returns the IR after optimization.
std::string RunAndGetOptimizedIr(const std::string& text, bool kernel_pipeline) {
  std::string after;
  CpuCompileOptions options;
  options.jit.kernel_pipeline = kernel_pipeline;
  options.jit.ir_after_optimization = [&](absl::string_view, absl::string_view ir) {
    after = std::string(ir);
  };
  auto run = RunAgainstInterpreter(text, options);
  EXPECT_TRUE(run.ok()) << run.status();
  if (!run.ok()) return after;
  for (size_t i = 0; i < run->actual.size(); ++i) {
    EXPECT_TRUE(LiteralsNear(run->expected[i], run->actual[i], ErrorSpec(1e-5, 1e-5)).ok())
        << "kernel_pipeline=" << kernel_pipeline << ": "
        << LiteralsNear(run->expected[i], run->actual[i], ErrorSpec(1e-5, 1e-5));
  }
  return after;
}

TEST(JitPipelineTest, KernelPipelineAndDefaultPipelineAgreeAndVectorize) {
  for (const char* text : {kSoftmax, kNormalize}) {
    for (bool kernel_pipeline : {true, false}) {
      const std::string ir = RunAndGetOptimizedIr(text, kernel_pipeline);
      EXPECT_TRUE(absl::StrContains(ir, "<16 x float>"))
          << "kernel_pipeline=" << kernel_pipeline << "\n"
          << ir;
      // The body was inlined into the kernel and removed.
      EXPECT_FALSE(absl::StrContains(ir, "define internal"))
          << "kernel_pipeline=" << kernel_pipeline << "\n"
          << ir;
    }
  }
}

TEST(JitPipelineTest, VectorLoopsHaveNoVectorEpilogue) {
  // -enable-epilogue-vectorization=false: the remainder of a 16-lane loop
  // is scalar, never an 8-lane loop.
  for (bool kernel_pipeline : {true, false}) {
    const std::string ir = RunAndGetOptimizedIr(kSoftmax, kernel_pipeline);
    EXPECT_TRUE(absl::StrContains(ir, "<16 x float>")) << ir;
    EXPECT_FALSE(absl::StrContains(ir, "vec.epilog")) << ir;
    EXPECT_FALSE(absl::StrContains(ir, "<8 x float>")) << ir;
  }
}

TEST(JitPipelineTest, NoHalfVectorComparesOrSelectsWithoutFp16) {
#if defined(__x86_64__)
  if (__builtin_cpu_supports("avx512fp16")) GTEST_SKIP() << "the CPU has AVX512-FP16";
#else
  GTEST_SKIP() << "x86-64 only";
#endif
  for (bool kernel_pipeline : {true, false}) {
    const std::string ir = RunAndGetOptimizedIr(kF16ReluSum, kernel_pipeline);
    for (absl::string_view line : absl::StrSplit(ir, '\n')) {
      const bool compare = absl::StrContains(line, "fcmp") || absl::StrContains(line, "select");
      EXPECT_FALSE(compare && absl::StrContains(line, "x half>")) << line;
    }
  }
}

}  // namespace
}  // namespace axle::cpu
