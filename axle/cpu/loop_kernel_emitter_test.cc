//===- loop_kernel_emitter_test.cc - Loop kernels: indexing, ranges, IR ----===//
//
// The index-remapping ops against the interpreter, split ranges, scalar and
// multi-output kernels, clear errors for what is not supported, the IR
// hooks, and that the optimized IR of an f32 kernel is 16-lane vector code.
//
//===----------------------------------------------------------------------===//
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "axle/core/literal_comparison.h"
#include "axle/cpu/cpu_test_util.h"
#include "axle/cpu/loop_kernel_plan.h"
#include "gtest/gtest.h"

namespace axle::cpu {
namespace {

using testing::RunAgainstInterpreter;

void ExpectEqualToInterpreter(const std::string& text) {
  auto run = RunAgainstInterpreter(text);
  ASSERT_TRUE(run.ok()) << run.status() << "\n" << text;
  for (size_t i = 0; i < run->actual.size(); ++i) {
    EXPECT_TRUE(LiteralsNear(run->expected[i], run->actual[i], ErrorSpec(0, 0)).ok())
        << run->names[i] << ": " << LiteralsNear(run->expected[i], run->actual[i], ErrorSpec(0, 0))
        << "\n"
        << text;
  }
}

TEST(LoopKernelTest, Broadcast) {
  ExpectEqualToInterpreter(R"(
HloModule m
ENTRY e {
  x = f32[3,5] parameter(0)
  b = f32[4,3,6,5] broadcast(x), dimensions={1,3}
  s = f32[] parameter(1)
  c = f32[4,3,6,5] broadcast(s), dimensions={}
  ROOT r = f32[4,3,6,5] add(b, c)
})");
}

TEST(LoopKernelTest, ReshapeTransposeReverse) {
  ExpectEqualToInterpreter(R"(
HloModule m
ENTRY e {
  x = s32[6,20] parameter(0)
  r = s32[4,5,6] reshape(x)
  t = s32[6,4,5] transpose(r), dimensions={2,0,1}
  ROOT v = s32[6,4,5] reverse(t), dimensions={0,2}
})");
}

// Reshapes that add and drop dimensions of size 1, merge and split
// dimensions, and both at once (index groups of several dimensions on each
// side): the operand index is computed group by group.
TEST(LoopKernelTest, ReshapeGroupsOfDimensions) {
  ExpectEqualToInterpreter(R"(
HloModule m
ENTRY e {
  x = s32[1,2,1,12,1] parameter(0)
  a = s32[2,12] reshape(x)
  b = s32[2,1,3,4,1] reshape(x)
  c = s32[1,24] reshape(x)
  d = s32[4,6] reshape(x)
  e = s32[2,3,2,2] reshape(x)
  f = s32[1,1,2,12,1,1] reshape(x)
  y = s32[6,4,1] parameter(1)
  g = s32[3,2,2,2] reshape(y)
  a1 = s32[24] reshape(a)
  b1 = s32[24] reshape(b)
  c1 = s32[24] reshape(c)
  d1 = s32[24] reshape(d)
  e1 = s32[24] reshape(e)
  f1 = s32[24] reshape(f)
  g1 = s32[24] reshape(g)
  h1 = s32[24] reshape(y)
  ROOT r = s32[192] concatenate(a1, b1, c1, d1, e1, f1, g1, h1), dimensions={0}
})");
}

// An RNN step's input row (a dynamic slice [1, 2, 384] of the projected
// sequence, reshaped to [2, 384]) in a gate fusion: only dimensions of
// size 1 differ, so the reshape costs no division and the loop vectorizes
// (the gates' logistic and tanh are vector code then).
TEST(LoopKernelTest, ReshapeDroppingDimensionsOfOneNeedsNoDivision) {
  const char* text = R"(
HloModule m
ENTRY e {
  xs = f32[24,2,384] parameter(0)
  t = s64[] parameter(1)
  zero = s64[] constant(0)
  d = f32[1,2,384] dynamic-slice(xs, t, zero, zero), dynamic_slice_sizes={1,2,384}
  r = f32[2,384] reshape(d)
  s = f32[2,128] slice(r), slice={[0:2], [128:256]}
  h = f32[2,128] parameter(2)
  a = f32[2,128] add(s, h)
  ROOT m = f32[2,128] multiply(a, s)
})";
  ExpectEqualToInterpreter(text);
  auto module = ParseAndReturnUnverifiedModule(text);
  ASSERT_TRUE(module.ok()) << module.status();
  std::string after;
  CpuCompileOptions options;
  options.jit.ir_after_optimization = [&](absl::string_view, absl::string_view ir) {
    after = std::string(ir);
  };
  auto kernel = CompileLoopKernel(*(*module)->entry_computation(), options);
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  EXPECT_FALSE(absl::StrContains(after, "udiv")) << after;
  EXPECT_FALSE(absl::StrContains(after, "urem")) << after;
  EXPECT_TRUE(absl::StrContains(after, "<16 x float>")) << after;
}

TEST(LoopKernelTest, SliceConcatenatePad) {
  ExpectEqualToInterpreter(R"(
HloModule m
ENTRY e {
  x = f32[10,9] parameter(0)
  y = f32[3,9] parameter(1)
  s = f32[4,3] slice(x), slice={[1:9:2], [0:9:3]}
  c = f32[13,9] concatenate(x, y), dimensions={0}
  zero = f32[] constant(-7)
  p = f32[5,12] pad(s, zero), padding=2_-1x1_2_3
  cs = f32[4,3] slice(c), slice={[9:13], [6:9]}
  ps = f32[4,3] slice(p), slice={[1:5], [4:7]}
  ROOT t = (f32[4,3], f32[4,3], f32[4,3]) tuple(s, cs, ps)
})");
}

TEST(LoopKernelTest, PadAndConcatenateWholeOutputs) {
  ExpectEqualToInterpreter(R"(
HloModule m
ENTRY e {
  x = bf16[5,4] parameter(0)
  v = bf16[] parameter(1)
  ROOT p = bf16[12,12] pad(x, v), padding=1_2_1x-1_3_2
})");
  ExpectEqualToInterpreter(R"(
HloModule m
ENTRY e {
  a = s8[2,3] parameter(0)
  b = s8[2,1] parameter(1)
  c = s8[2,4] parameter(2)
  ROOT r = s8[2,8] concatenate(a, b, c), dimensions={1}
})");
}

TEST(LoopKernelTest, IotaConstantDynamicSlice) {
  ExpectEqualToInterpreter(R"(
HloModule m
ENTRY e {
  x = f32[8,6] parameter(0)
  i = s32[] constant(-3)
  j = s32[] constant(100)
  d = f32[3,4] dynamic-slice(x, i, j), dynamic_slice_sizes={3,4}
  k = u8[] constant(2)
  d2 = f32[3,4] dynamic-slice(x, k, k), dynamic_slice_sizes={3,4}
  io = f32[3,4] iota(), iota_dimension=1
  c = f32[3,4] constant({{1,2,3,4},{5,6,7,8},{9,10,11,12}})
  a = f32[3,4] add(d, c)
  b = f32[3,4] multiply(d2, io)
  io2 = s64[3,4] iota(), iota_dimension=0
  ROOT t = (f32[3,4], f32[3,4], s64[3,4]) tuple(a, b, io2)
})");
}

TEST(LoopKernelTest, SharedSubexpressionsAndBitcast) {
  ExpectEqualToInterpreter(R"(
HloModule m
ENTRY e {
  x = f32[16,16] parameter(0)
  a = f32[16,16] multiply(x, x)
  b = f32[16,16] add(a, a)
  c = f32[16,16] multiply(b, b)
  d = f32[16,16] add(c, c)
  f = f32[256] bitcast(d)
  ROOT g = f32[16,16] bitcast(f)
})");
}

TEST(LoopKernelTest, ScalarOutput) {
  ExpectEqualToInterpreter(R"(
HloModule m
ENTRY e {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT z = f32[] atan2(x, y)
})");
}

TEST(LoopKernelTest, RangesComposeToTheWholeRun) {
  const char* text = R"(
HloModule m
ENTRY e {
  x = f32[37,50] parameter(0)
  y = f32[37,50] parameter(1)
  ROOT z = f32[37,50] subtract(x, y)
})";
  std::vector<Literal> inputs;
  auto run = RunAgainstInterpreter(text, {}, &inputs);
  ASSERT_TRUE(run.ok()) << run.status();
  auto module = ParseAndReturnUnverifiedModule(text);
  ASSERT_TRUE(module.ok());
  auto kernel = CompileLoopKernel(*(*module)->entry_computation());
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  EXPECT_EQ((*kernel)->outer_size(), 37);
  Literal out(run->expected[0].shape());
  void* buffers[] = {inputs[0].untyped_data(), inputs[1].untyped_data(), out.untyped_data()};
  (*kernel)->RunRange(buffers, 20, 37);
  (*kernel)->RunRange(buffers, 0, 7);
  (*kernel)->RunRange(buffers, 7, 20);
  EXPECT_TRUE(LiteralsNear(run->expected[0], out, ErrorSpec(0, 0)).ok());
}

TEST(LoopKernelTest, LeadingDimensionsOfOneAreNotTheRange) {
  // A [1, 1, 37, 64] softmax-like kernel (a row max, a row-fused exp and
  // sum) ranges over its 37 rows, not its leading dimension of one, and
  // ranges in any order compose to the interpreter's result.
  const char* text = R"(
HloModule m
mx {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] maximum(a, b)
}
ENTRY e {
  x = f32[1,1,37,64] parameter(0)
  ninf = f32[] constant(-inf)
  m = f32[1,1,37] reduce(x, ninf), dimensions={3}, to_apply=mx
  b = f32[1,1,37,64] broadcast(m), dimensions={0,1,2}
  d = f32[1,1,37,64] subtract(x, b)
  ROOT e = f32[1,1,37,64] exponential(d)
})";
  std::vector<Literal> inputs;
  auto run = RunAgainstInterpreter(text, {}, &inputs);
  ASSERT_TRUE(run.ok()) << run.status();
  auto module = ParseAndReturnUnverifiedModule(text);
  ASSERT_TRUE(module.ok());
  auto kernel = CompileLoopKernel(*(*module)->entry_computation());
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  EXPECT_EQ((*kernel)->outer_size(), 37);
  Literal out(run->expected[0].shape());
  void* buffers[] = {inputs[0].untyped_data(), out.untyped_data()};
  (*kernel)->RunRange(buffers, 30, 37);
  (*kernel)->RunRange(buffers, 0, 13);
  (*kernel)->RunRange(buffers, 13, 30);
  absl::Status near = LiteralsNear(run->expected[0], out, ErrorSpec(1e-6, 1e-6));
  EXPECT_TRUE(near.ok()) << near;
}

TEST(LoopKernelTest, UnsupportedOpIsUnimplementedNamingIt) {
  auto module = ParseAndReturnUnverifiedModule(R"(
HloModule m
ENTRY e {
  x = f32[4,4] parameter(0)
  ROOT d = f32[4,4] dot(x, x), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})");
  ASSERT_TRUE(module.ok()) << module.status();
  auto kernel = CompileLoopKernel(*(*module)->entry_computation());
  ASSERT_FALSE(kernel.ok());
  EXPECT_EQ(kernel.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_TRUE(absl::StrContains(kernel.status().message(), "dot")) << kernel.status();
}

TEST(LoopKernelTest, UnsupportedTypeOpIsUnimplemented) {
  auto module = ParseAndReturnUnverifiedModule(R"(
HloModule m
ENTRY e {
  x = c64[4] parameter(0)
  ROOT t = c64[4] remainder(x, x)
})");
  ASSERT_TRUE(module.ok()) << module.status();
  auto kernel = CompileLoopKernel(*(*module)->entry_computation());
  ASSERT_FALSE(kernel.ok());
  EXPECT_EQ(kernel.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_TRUE(absl::StrContains(kernel.status().message(), "remainder of c64")) << kernel.status();
}

TEST(LoopKernelTest, MultiOutputShapesMustAgree) {
  auto module = ParseAndReturnUnverifiedModule(R"(
HloModule m
ENTRY e {
  x = f32[4] parameter(0)
  y = f32[2,2] reshape(x)
  ROOT t = (f32[4], f32[2,2]) tuple(x, y)
})");
  ASSERT_TRUE(module.ok()) << module.status();
  auto kernel = CompileLoopKernel(*(*module)->entry_computation());
  ASSERT_FALSE(kernel.ok());
  EXPECT_EQ(kernel.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(LoopKernelTest, OptimizedF32KernelIsVectorizedWith16Lanes) {
  auto module = ParseAndReturnUnverifiedModule(R"(
HloModule m
ENTRY e {
  a = f32[1024] parameter(0)
  b = f32[1024] parameter(1)
  m = f32[1024] multiply(a, b)
  e = f32[1024] exponential(m)
  ROOT s = f32[1024] add(e, a)
})");
  ASSERT_TRUE(module.ok()) << module.status();
  std::string before, after;
  CpuCompileOptions options;
  options.jit.ir_before_optimization = [&](absl::string_view, absl::string_view ir) {
    before = std::string(ir);
  };
  options.jit.ir_after_optimization = [&](absl::string_view, absl::string_view ir) {
    after = std::string(ir);
  };
  auto kernel = CompileLoopKernel(*(*module)->entry_computation(), options);
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  EXPECT_TRUE(absl::StrContains(before, "define void @loop_kernel(ptr"));
  EXPECT_FALSE(absl::StrContains(before, "<16 x float>"));
  // The exp polynomial and the arithmetic around it, 16 lanes wide.
  EXPECT_TRUE(absl::StrContains(after, "fmul <16 x float>")) << after;
  EXPECT_TRUE(absl::StrContains(after, "@llvm.fma.v16f32")) << after;
  EXPECT_FALSE(absl::StrContains(after, "call float @expf"));
}

// A concatenate along the innermost dimension (an RNN step's [x, h]) and
// an edge pad: the innermost loop is split at the operand boundaries
// (InnerLoopSplits), so each part reads one operand with plain vector
// loads, not gathers and selects; the results stay exact.
TEST(LoopKernelTest, MinorConcatenateAndPadSplitTheInnerLoop) {
  const char* text = R"(
HloModule m
ENTRY e {
  x = f32[16,64] parameter(0)
  h = f32[16,128] parameter(1)
  c = f32[16,192] concatenate(x, h), dimensions={1}
  zero = f32[] constant(0)
  p = f32[16,192] pad(h, zero), padding=0_0x40_24
  ROOT r = f32[16,192] add(c, p)
})";
  ExpectEqualToInterpreter(text);
  auto module = ParseAndReturnUnverifiedModule(text);
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_EQ(InnerLoopSplits(*(*module)->entry_computation(), {16, 192}),
            (std::vector<int64_t>{40, 64, 168}));
  std::string after;
  CpuCompileOptions options;
  options.jit.ir_after_optimization = [&](absl::string_view, absl::string_view ir) {
    after = std::string(ir);
  };
  auto kernel = CompileLoopKernel(*(*module)->entry_computation(), options);
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  EXPECT_TRUE(absl::StrContains(after, "x float>, ptr")) << after;  // vector loads
  EXPECT_FALSE(absl::StrContains(after, "masked.gather")) << after;
}

// A column reduction of a minor concatenate (GoogLeNet's global average
// pool of its last inception module's concatenation): the column loop is
// split at the operand boundaries too, so each part reads one operand with
// vector loads, no gathers; the sums stay exact.
TEST(LoopKernelTest, ColumnReductionOfAMinorConcatenateSplitsTheColumnLoop) {
  const char* text = R"(
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[1,7,7,48] parameter(0)
  y = f32[1,7,7,32] parameter(1)
  z = f32[1,7,7,16] parameter(2)
  c = f32[1,7,7,96] concatenate(x, y, z), dimensions={3}
  zero = f32[] constant(0)
  ROOT r = f32[1,96] reduce(c, zero), dimensions={1,2}, to_apply=add
})";
  ExpectEqualToInterpreter(text);
  auto module = ParseAndReturnUnverifiedModule(text);
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_EQ(InnerLoopSplits(*(*module)->entry_computation(), {1, 7, 7, 96}),
            (std::vector<int64_t>{48, 80}));
  std::string after;
  CpuCompileOptions options;
  options.jit.ir_after_optimization = [&](absl::string_view, absl::string_view ir) {
    after = std::string(ir);
  };
  auto kernel = CompileLoopKernel(*(*module)->entry_computation(), options);
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  EXPECT_TRUE(absl::StrContains(after, "x float>, ptr")) << after;  // vector loads
  EXPECT_FALSE(absl::StrContains(after, "masked.gather")) << after;
}

// A channel concat of many channels-last feature maps, then a per-channel
// scale and a relu (DenseNet's batch norm after its concat): more parts
// than kMaxInnerLoopParts, but a small body, so still split, without
// gathers. With a body too large for that many copies, not split.
std::string MinorConcatModule(int operands, int negates) {
  std::string text = "HloModule m\nENTRY e {\n";
  std::string names;
  for (int k = 0; k < operands; ++k) {
    absl::StrAppend(&text, "  x", k, " = f32[3,5,16] parameter(", k, ")\n");
    absl::StrAppend(&names, k > 0 ? ", " : "", "x", k);
  }
  const int channels = 16 * operands;
  absl::StrAppend(&text, "  s = f32[", channels, "] parameter(", operands, ")\n", "  c = f32[3,5,",
                  channels, "] concatenate(", names, "), dimensions={2}\n", "  bs = f32[3,5,",
                  channels, "] broadcast(s), dimensions={2}\n", "  v0 = f32[3,5,", channels,
                  "] multiply(c, bs)\n");
  for (int k = 0; k < negates; ++k) {
    absl::StrAppend(&text, "  v", k + 1, " = f32[3,5,", channels, "] negate(v", k, ")\n");
  }
  absl::StrAppend(&text, "  zero = f32[] constant(0)\n  bz = f32[3,5,", channels,
                  "] broadcast(zero), dimensions={}\n  ROOT r = f32[3,5,", channels, "] maximum(v",
                  negates, ", bz)\n}\n");
  return text;
}

TEST(LoopKernelTest, ManyPartMinorConcatenateWithASmallBodyIsSplit) {
  const std::string text = MinorConcatModule(20, 0);
  ExpectEqualToInterpreter(text);
  auto module = ParseAndReturnUnverifiedModule(text);
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_EQ(InnerLoopSplits(*(*module)->entry_computation(), {3, 5, 320}).size(), 19u);
  std::string after;
  CpuCompileOptions options;
  options.jit.ir_after_optimization = [&](absl::string_view, absl::string_view ir) {
    after = std::string(ir);
  };
  auto kernel = CompileLoopKernel(*(*module)->entry_computation(), options);
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  EXPECT_TRUE(absl::StrContains(after, "x float>, ptr")) << after;
  EXPECT_FALSE(absl::StrContains(after, "masked.gather")) << after;

  auto large = ParseAndReturnUnverifiedModule(MinorConcatModule(20, 400));
  ASSERT_TRUE(large.ok()) << large.status();
  EXPECT_TRUE(InnerLoopSplits(*(*large)->entry_computation(), {3, 5, 320}).empty());
}

// Softmax as one kernel: the exp-and-sum pass over each row prefetches the
// next row of the input (rows of at least 2 KiB), in chunks whose inner
// loop is still vectorized; short rows get no prefetches.
std::string OptimizedSoftmaxIr(int64_t columns) {
  auto module = ParseAndReturnUnverifiedModule(testing::SoftmaxModule(8, columns));
  EXPECT_TRUE(module.ok()) << module.status();
  if (!module.ok()) return "";
  std::string after;
  CpuCompileOptions options;
  options.jit.ir_after_optimization = [&](absl::string_view, absl::string_view ir) {
    after = std::string(ir);
  };
  auto kernel = CompileLoopKernel(*(*module)->entry_computation(), options);
  EXPECT_TRUE(kernel.ok()) << kernel.status();
  return after;
}

TEST(LoopKernelTest, RowReductionPrefetchesTheNextRow) {
  const std::string ir = OptimizedSoftmaxIr(4096);
  EXPECT_TRUE(absl::StrContains(ir, "@llvm.prefetch")) << ir;
  EXPECT_TRUE(absl::StrContains(ir, "fadd reassoc <16 x float>")) << ir;  // the chunked sum
  const std::string short_rows = OptimizedSoftmaxIr(256);
  EXPECT_FALSE(absl::StrContains(short_rows, "@llvm.prefetch")) << short_rows;
}

}  // namespace
}  // namespace axle::cpu
