//===- column_reduction_splitter_test.cc - Column reductions in two passes -===//
#include "axle/gpu/column_reduction_splitter.h"

#include <cstdlib>
#include <memory>
#include <string>

#include "axle/core/literal.h"
#include "axle/core/literal_comparison.h"
#include "axle/eval/hlo_evaluator.h"
#include "axle/gpu/gpu_compiler.h"
#include "axle/gpu/gpu_program.h"
#include "axle/hlo/ir/hlo_module.h"
#include "axle/hlo/text/hlo_parser.h"
#include "gtest/gtest.h"

namespace axle::gpu {
namespace {

int CountReduces(const HloModule& module) {
  int count = 0;
  for (const HloInstruction* instruction : module.entry_computation()->instructions()) {
    count += instruction->opcode() == HloOpcode::kReduce ? 1 : 0;
  }
  return count;
}

Literal MakeInput(const Shape& shape) {
  Literal literal(shape);
  for (int64_t i = 0; i < shape.num_elements(); ++i) {
    const int64_t value = (i * 7919) % 23 - 11;
    if (primitive_util::IsFloatingPointType(shape.element_type())) {
      literal.SetFromDouble(i, static_cast<double>(value) / 4.0);
    } else if (shape.element_type() == PRED) {
      literal.SetIntegral(i, value > 0 ? 1 : 0);
    } else {
      literal.SetIntegral(i, value);
    }
  }
  return literal;
}

// Runs the pass with small thresholds (8 tiles, 2 rows a part, no size
// floor); returns whether it split, after checking that the module computes
// what it did (exactly: integer, max and pred reductions, and float sums
// of quarters).
bool SplitsAndAgrees(const std::string& text) {
  SCOPED_TRACE(text);
  auto module = ParseAndReturnUnverifiedModule(text);
  EXPECT_TRUE(module.ok()) << module.status();
  if (!module.ok()) return false;
  const Literal input =
      MakeInput((*module)->entry_computation()->parameter_instruction(0)->shape());
  HloEvaluator before_evaluator;
  auto before = before_evaluator.Evaluate(**module, {&input});
  EXPECT_TRUE(before.ok()) << before.status();
  const int reduces = CountReduces(**module);
  GpuColumnReductionSplitter pass(/*min_bytes=*/0, /*target_tiles=*/8, /*min_rows_per_part=*/2);
  auto changed = pass.Run(module->get());
  EXPECT_TRUE(changed.ok()) << changed.status();
  if (!changed.ok() || !before.ok()) return false;
  HloEvaluator after_evaluator;
  auto after = after_evaluator.Evaluate(**module, {&input});
  EXPECT_TRUE(after.ok()) << after.status();
  if (!after.ok()) return false;
  EXPECT_EQ(before->shape(), after->shape());
  absl::Status same = LiteralsNear(*before, *after, ErrorSpec(0));
  EXPECT_TRUE(same.ok()) << same << "\n" << (*module)->ToString();
  EXPECT_EQ(CountReduces(**module), *changed ? reduces + 1 : reduces);
  return *changed;
}

std::string ReduceModule(const std::string& input, const std::string& output,
                         const std::string& dims, const std::string& op, const std::string& init,
                         const std::string& type) {
  return "HloModule m\ncombine {\n  a = " + type + "[] parameter(0)\n  b = " + type +
         "[] parameter(1)\n  ROOT c = " + type + "[] " + op +
         "(a, b)\n}\nENTRY e {\n  x = " + input + " parameter(0)\n  i = " + type + "[] " + init +
         "\n  ROOT r = " + output + " reduce(x, i), dimensions={" + dims +
         "}, to_apply=combine\n}\n";
}

TEST(GpuColumnReductionSplitterTest, PartsGiveTwoBlocksPerSmAndDivideTheRows) {
  const GpuColumnReductionSplitter pass;
  // f32[32768,1024]: 128 tiles of 8 columns, two parts give 256.
  EXPECT_EQ(pass.PartsFor(32768, 1024, 4), 2);
  // bf16 columns are half as wide: four parts.
  EXPECT_EQ(pass.PartsFor(32768, 1024, 2), 4);
  // Enough tiles already; too small to matter.
  EXPECT_EQ(pass.PartsFor(8192, 4096, 4), 1);
  EXPECT_EQ(pass.PartsFor(256, 1024, 4), 1);
  // A full reduction of 2^24 f32: 2048 parts of 8192 rows.
  EXPECT_EQ(pass.PartsFor(int64_t{1} << 24, 1, 4), 2048);
  // Rows no power of two divides: left alone; an odd factor limits it.
  EXPECT_EQ(pass.PartsFor(1048577, 8, 4), 1);
  EXPECT_EQ(pass.PartsFor(int64_t{2} * 1048575, 8, 4), 2);
}

TEST(GpuColumnReductionSplitterTest, ColumnAndFullReductionsComputeTheSame) {
  EXPECT_TRUE(
      SplitsAndAgrees(ReduceModule("s32[64,16]", "s32[16]", "0", "add", "constant(0)", "s32")));
  EXPECT_TRUE(
      SplitsAndAgrees(ReduceModule("f32[64,16]", "f32[16]", "0", "add", "constant(0)", "f32")));
  EXPECT_TRUE(SplitsAndAgrees(
      ReduceModule("f32[64,16]", "f32[16]", "0", "maximum", "constant(-inf)", "f32")));
  EXPECT_TRUE(SplitsAndAgrees(
      ReduceModule("s32[64,16]", "s32[16]", "0", "minimum", "constant(2147483647)", "s32")));
  EXPECT_TRUE(SplitsAndAgrees(
      ReduceModule("pred[64,16]", "pred[16]", "0", "or", "constant(false)", "pred")));
  // Several leading dims reduced, several trailing kept.
  EXPECT_TRUE(SplitsAndAgrees(
      ReduceModule("s32[4,16,2,4]", "s32[2,4]", "0,1", "add", "constant(0)", "s32")));
  // A full reduction.
  EXPECT_TRUE(
      SplitsAndAgrees(ReduceModule("s32[1024]", "s32[]", "0", "add", "constant(0)", "s32")));
}

TEST(GpuColumnReductionSplitterTest, LeavesWhatItCannotSplitAlone) {
  // A non-identity init would be folded in twice.
  EXPECT_FALSE(
      SplitsAndAgrees(ReduceModule("s32[64,16]", "s32[16]", "0", "add", "constant(1)", "s32")));
  // Row reductions; a middle dimension.
  EXPECT_FALSE(
      SplitsAndAgrees(ReduceModule("s32[16,64]", "s32[16]", "1", "add", "constant(0)", "s32")));
  EXPECT_FALSE(
      SplitsAndAgrees(ReduceModule("s32[4,64,4]", "s32[4,4]", "1", "add", "constant(0)", "s32")));
  // A combiner that is no single op of its parameters.
  EXPECT_FALSE(SplitsAndAgrees(
      ReduceModule("s32[64,16]", "s32[16]", "0", "subtract", "constant(0)", "s32")));
  // A column-major operand.
  EXPECT_FALSE(SplitsAndAgrees(
      ReduceModule("s32[64,16]{0,1}", "s32[16]", "0", "add", "constant(0)", "s32")));
}

TEST(GpuColumnReductionSplitterTest, TheCudaPipelineSplitsALargeColumnSumOnlyWhenAsked) {
  // Off by default (slower on an H200); AXLE_GPU_SPLIT_COLUMNS=1: two kernels.
  for (const bool split : {false, true}) {
    if (split) setenv("AXLE_GPU_SPLIT_COLUMNS", "1", 1);
    auto module = ParseAndReturnUnverifiedModule(
        ReduceModule("f32[32768,1024]", "f32[1024]", "0", "add", "constant(0)", "f32"));
    ASSERT_TRUE(module.ok()) << module.status();
    auto program = CompileGpuProgram(module->get(), PtxOptions());
    unsetenv("AXLE_GPU_SPLIT_COLUMNS");
    ASSERT_TRUE(program.ok()) << program.status();
    EXPECT_EQ(program->kernels.size(), split ? 2u : 1u) << GpuProgramToString(*program);
  }
}

}  // namespace
}  // namespace axle::gpu
