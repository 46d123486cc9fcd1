//===- reduction_kernel_test.cc - Reduction kernels vs the interpreter -----===//
//
// reduce roots over rows, columns, everything and middle dimensions, with
// add/multiply/max/min/and/or combiners, fused with elementwise producers;
// floats within a tolerance (the sum is reassociated into vector lanes),
// integers, pred and in-order float combiners exactly. Also checks that an
// f32 row sum is vectorized with 16 lanes.
//
//===----------------------------------------------------------------------===//
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "axle/core/literal_comparison.h"
#include "axle/cpu/cpu_test_util.h"
#include "gtest/gtest.h"

namespace axle::cpu {
namespace {

using testing::RunAgainstInterpreter;

std::string ReduceModule(absl::string_view type, absl::string_view input_dims,
                         absl::string_view output_dims, absl::string_view dims,
                         absl::string_view op, absl::string_view init) {
  return absl::StrCat(R"(
HloModule m
combine {
  a = )",
                      type, R"([] parameter(0)
  b = )",
                      type, R"([] parameter(1)
  ROOT c = )",
                      type, "[] ", op, R"((a, b)
}
ENTRY e {
  x = )",
                      type, "[", input_dims, R"(] parameter(0)
  y = )",
                      type, "[", input_dims, R"(] parameter(1)
  p = )",
                      type, "[", input_dims, R"(] )", type == "pred" ? "and" : "add", R"((x, y)
  i = )",
                      type, "[] constant(", init, R"()
  ROOT r = )",
                      type, "[", output_dims, "] reduce(p, i), dimensions={", dims,
                      "}, to_apply=combine\n}\n");
}

void Check(const std::string& text, const ErrorSpec& spec) {
  auto run = RunAgainstInterpreter(text);
  ASSERT_TRUE(run.ok()) << run.status() << "\n" << text;
  const Literal& expected = run->expected[0];
  const PrimitiveType type = expected.shape().element_type();
  absl::Status status = primitive_util::IsFloatingPointType(type)
                            ? LiteralsNear(expected, run->actual[0], spec)
                            : LiteralsEqual(expected, run->actual[0]);
  EXPECT_TRUE(status.ok()) << status << "\n" << text;
}

TEST(ReductionKernelTest, FloatSumsOverEveryShapeOfReduction) {
  const ErrorSpec spec(1e-4, 1e-5);
  Check(ReduceModule("f32", "7,300", "7", "1", "add", "0"), spec);
  Check(ReduceModule("f32", "300,7", "7", "0", "add", "0"), spec);
  Check(ReduceModule("f32", "5,6,70", "", "0,1,2", "add", "1.5"), spec);
  Check(ReduceModule("f32", "5,6,70", "5,70", "1", "add", "0"), spec);
  Check(ReduceModule("f64", "9,129", "9", "1", "add", "0"), ErrorSpec(1e-12, 1e-12));
}

TEST(ReductionKernelTest, InOrderCombinersMatchExactly) {
  const ErrorSpec exact(0, 0);
  Check(ReduceModule("f32", "6,50", "6", "1", "maximum", "-inf"), exact);
  Check(ReduceModule("f32", "6,50", "50", "0", "minimum", "inf"), exact);
  Check(ReduceModule("bf16", "4,200", "4", "1", "add", "0"), exact);
  Check(ReduceModule("s32", "8,77", "8", "1", "add", "0"), exact);
  Check(ReduceModule("s32", "8,77", "77", "0", "multiply", "1"), exact);
  Check(ReduceModule("u8", "3,4,5", "4", "0,2", "maximum", "0"), exact);
  Check(ReduceModule("s64", "40", "", "0", "minimum", "9223372036854775807"), exact);
  Check(ReduceModule("pred", "5,33", "5", "1", "or", "false"), exact);
  Check(ReduceModule("pred", "5,33", "33", "0", "and", "true"), exact);
}

TEST(ReductionKernelTest, F32RowSumIsVectorized) {
  auto module =
      ParseAndReturnUnverifiedModule(ReduceModule("f32", "64,1024", "64", "1", "add", "0"));
  ASSERT_TRUE(module.ok()) << module.status();
  std::string after;
  CpuCompileOptions options;
  options.jit.ir_after_optimization = [&](absl::string_view, absl::string_view ir) {
    after = std::string(ir);
  };
  auto kernel = CompileLoopKernel(*(*module)->entry_computation(), options);
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  EXPECT_TRUE(absl::StrContains(after, "fadd reassoc <16 x float>")) << after;
}

TEST(ReductionKernelTest, VariadicReduceIsUnimplemented) {
  auto module = ParseAndReturnUnverifiedModule(R"(
HloModule m
combine {
  a = f32[] parameter(0)
  b = s32[] parameter(1)
  c = f32[] parameter(2)
  d = s32[] parameter(3)
  e = f32[] add(a, c)
  f = s32[] add(b, d)
  ROOT t = (f32[], s32[]) tuple(e, f)
}
ENTRY e {
  x = f32[8] parameter(0)
  y = s32[8] parameter(1)
  i = f32[] constant(0)
  j = s32[] constant(0)
  ROOT r = (f32[], s32[]) reduce(x, y, i, j), dimensions={0}, to_apply=combine
})");
  ASSERT_TRUE(module.ok()) << module.status();
  auto kernel = CompileLoopKernel(*(*module)->entry_computation());
  ASSERT_FALSE(kernel.ok());
  EXPECT_EQ(kernel.status().code(), absl::StatusCode::kUnimplemented) << kernel.status();
}

}  // namespace
}  // namespace axle::cpu
