//===- reduction_kernel_test.cc - Reduction kernels vs the interpreter -----===//
//
// reduce roots over rows, columns, everything and middle dimensions, with
// add/multiply/max/min/and/or combiners, fused with elementwise producers;
// floats within a tolerance (the sum is reassociated into vector lanes),
// integers, pred and in-order float combiners exactly; variadic reduce
// (argmax), combiners of several ops, a reduce inside an elementwise
// kernel. Also checks that an f32 row sum is vectorized with 16 lanes, and
// that column reductions fold in order, vectorized across columns, and
// sibling column reductions (a multi-output kernel) in one column loop.
//
//===----------------------------------------------------------------------===//
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "axle/core/literal_comparison.h"
#include "axle/cpu/cpu_test_util.h"
#include "axle/cpu/loop_kernel_plan.h"
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

TEST(ReductionKernelTest, ColumnReductionsFoldInOrderAndVectorizeAcrossColumns) {
  // The output row is the accumulator (input rows folded into it in order):
  // exact, even for float sums, and vectorized across the columns.
  const ErrorSpec exact(0, 0);
  Check(ReduceModule("f32", "256,1024", "1024", "0", "add", "0"), exact);
  Check(ReduceModule("f32", "3,4,37", "37", "0,1", "add", "0.5"), exact);
  Check(ReduceModule("f32", "3,4,37", "3,37", "1", "maximum", "-inf"), exact);
  Check(ReduceModule("bf16", "33,19", "19", "0", "add", "0"), exact);
  Check(ReduceModule("f16", "2,3,4,5", "2,5", "1,2", "multiply", "1"), exact);
  Check(ReduceModule("u8", "9,70", "70", "0", "add", "3"), exact);
  auto module =
      ParseAndReturnUnverifiedModule(ReduceModule("f32", "256,1024", "1024", "0", "add", "0"));
  ASSERT_TRUE(module.ok()) << module.status();
  std::string after;
  CpuCompileOptions options;
  options.jit.ir_after_optimization = [&](absl::string_view, absl::string_view ir) {
    after = std::string(ir);
  };
  auto kernel = CompileLoopKernel(*(*module)->entry_computation(), options);
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  EXPECT_TRUE(absl::StrContains(after, "fadd <16 x float>")) << after;
  EXPECT_FALSE(absl::StrContains(after, "reassoc")) << after;
}

TEST(ReductionKernelTest, F32RowMaxIsVectorizedAndPropagatesNaN) {
  const std::string text = ReduceModule("f32", "8,1000", "8", "1", "maximum", "-inf");
  auto module = ParseAndReturnUnverifiedModule(text);
  ASSERT_TRUE(module.ok()) << module.status();
  std::string after;
  CpuCompileOptions options;
  options.jit.ir_after_optimization = [&](absl::string_view, absl::string_view ir) {
    after = std::string(ir);
  };
  auto kernel = CompileLoopKernel(*(*module)->entry_computation(), options);
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  // vmaxps lanes (a flagged compare and select) beside a NaN-seen mask.
  EXPECT_TRUE(absl::StrContains(after, "@llvm.vector.reduce.fmax.v16f32")) << after;
  EXPECT_TRUE(absl::StrContains(after, "fcmp uno <16 x float>")) << after;
  // The inputs hold NaNs in some rows: those rows must be NaN.
  Check(text, ErrorSpec(0, 0));
  Check(ReduceModule("f64", "3,100", "3", "1", "minimum", "inf"), ErrorSpec(0, 0));
  // A libm call in the loop: the width is not forced (LLVM would fail to
  // honour it and warn), the result still matches.
  Check(R"(
HloModule m
combine {
  a = f64[] parameter(0)
  b = f64[] parameter(1)
  ROOT c = f64[] maximum(a, b)
}
ENTRY e {
  x = f64[7,300] parameter(0)
  s = f64[7,300] sine(x)
  i = f64[] constant(-inf)
  ROOT r = f64[7] reduce(s, i), dimensions={1}, to_apply=combine
})",
        ErrorSpec(0, 0));
}

// One NaN per row at a position in the vector body or in the scalar tail,
// rows without one, rows of -inf and of mixed zeros, a NaN init value,
// and min as well: the result is NaN exactly when a NaN went in.
TEST(ReductionKernelTest, FloatMaxAndMinAreNaNWhereverTheNaNIs) {
  constexpr int64_t kRows = 9, kColumns = 1003;
  const std::vector<int64_t> nan_at = {0, 15, 16, 63, 64, 500, 999, 1002, -1};
  Literal x(ShapeUtil::MakeShape(F32, {kRows, kColumns}));
  float* data = static_cast<float*>(x.untyped_data());
  for (int64_t r = 0; r < kRows; ++r) {
    for (int64_t c = 0; c < kColumns; ++c) {
      data[r * kColumns + c] = static_cast<float>((r * 7 + c * 13) % 101) - 50.0f;
    }
    if (nan_at[r] >= 0) data[r * kColumns + nan_at[r]] = NAN;
  }
  Literal y(ShapeUtil::MakeShape(F32, {kRows, kColumns}));
  std::memset(y.untyped_data(), 0, y.size_bytes());
  for (const char* op : {"maximum", "minimum"}) {
    for (const char* init : {"-inf", "inf", "nan"}) {
      std::vector<Literal> inputs;
      inputs.push_back(x.Clone());
      inputs.push_back(y.Clone());
      const std::string text = ReduceModule("f32", absl::StrCat(kRows, ",", kColumns),
                                            absl::StrCat(kRows), "1", op, init);
      auto run = RunAgainstInterpreter(text, {}, &inputs);
      ASSERT_TRUE(run.ok()) << run.status();
      for (int64_t r = 0; r < kRows; ++r) {
        const float got = run->actual[0].Get<float>({r});
        const float want = run->expected[0].Get<float>({r});
        EXPECT_EQ(std::isnan(got), std::isnan(want)) << op << " init " << init << " row " << r;
        if (!std::isnan(want)) {
          EXPECT_EQ(got, want) << op << " init " << init << " row " << r;
        }
      }
    }
  }
  // Rows of only -inf, and of -0 and +0 (the sign of a zero result may
  // differ from the in-order fold: compared by value).
  Literal z(ShapeUtil::MakeShape(F32, {2, 40}));
  for (int64_t c = 0; c < 40; ++c) {
    z.Set<float>({0, c}, -INFINITY);
    z.Set<float>({1, c}, c % 2 ? 0.0f : -0.0f);
  }
  std::vector<Literal> inputs;
  inputs.push_back(z.Clone());
  inputs.push_back(Literal(ShapeUtil::MakeShape(F32, {2, 40})));
  std::memset(inputs.back().untyped_data(), 0, inputs.back().size_bytes());
  auto run =
      RunAgainstInterpreter(ReduceModule("f32", "2,40", "2", "1", "maximum", "-inf"), {}, &inputs);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->actual[0].Get<float>({0}), -INFINITY);
  EXPECT_EQ(run->actual[0].Get<float>({1}), 0.0f);
}

// argmax as XLA writes it: (value, index) pairs, the first index of the
// largest value, NaN largest.
constexpr char kArgmax[] = R"(
HloModule m
argmax {
  a = f32[] parameter(0)
  i = s32[] parameter(1)
  b = f32[] parameter(2)
  j = s32[] parameter(3)
  gt = pred[] compare(a, b), direction=GT
  a_nan = pred[] compare(a, a), direction=NE
  take_a = pred[] or(gt, a_nan)
  eq = pred[] compare(a, b), direction=EQ
  lower = pred[] compare(i, j), direction=LT
  tie = pred[] and(eq, lower)
  keep = pred[] or(take_a, tie)
  v = f32[] select(keep, a, b)
  k = s32[] select(keep, i, j)
  ROOT t = (f32[], s32[]) tuple(v, k)
}
ENTRY e {
  x = f32[6,50] parameter(0)
  y = f32[6,50] parameter(1)
  p = f32[6,50] multiply(x, y)
  n = s32[6,50] iota(), iota_dimension=1
  lo = f32[] constant(-inf)
  zero = s32[] constant(0)
  r = (f32[6], s32[6]) reduce(p, n, lo, zero), dimensions={1}, to_apply=argmax
  v = f32[6] get-tuple-element(r), index=0
  k = s32[6] get-tuple-element(r), index=1
  ROOT t = (f32[6], s32[6]) tuple(v, k)
})";

TEST(ReductionKernelTest, VariadicArgmaxMatchesExactly) {
  auto run = RunAgainstInterpreter(kArgmax);
  ASSERT_TRUE(run.ok()) << run.status();
  ASSERT_EQ(run->actual.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    absl::Status status = LiteralsEqual(run->expected[i], run->actual[i]);
    EXPECT_TRUE(status.ok()) << run->names[i] << ": " << status;
  }
}

TEST(ReductionKernelTest, CombinerOfSeveralOpsFoldsInOrder) {
  // acc * 0.5 + x: not associative, so only an in-order fold matches.
  const std::string text = R"(
HloModule m
combine {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  half = f32[] constant(0.5)
  h = f32[] multiply(a, half)
  ROOT c = f32[] add(h, b)
}
ENTRY e {
  x = f32[5,40] parameter(0)
  y = f32[5,40] parameter(1)
  p = f32[5,40] subtract(x, y)
  i = f32[] constant(1)
  ROOT r = f32[40] reduce(p, i), dimensions={0}, to_apply=combine
})";
  Check(text, ErrorSpec(0, 0));
}

TEST(ReductionKernelTest, ReduceFeedingElementwiseOpsInOneKernel) {
  // A row max broadcast back and subtracted (the first half of softmax).
  const std::string text = R"(
HloModule m
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] maximum(a, b)
}
ENTRY e {
  x = f32[4,33] parameter(0)
  lo = f32[] constant(-inf)
  m = f32[4] reduce(x, lo), dimensions={1}, to_apply=max
  b = f32[4,33] broadcast(m), dimensions={0}
  ROOT d = f32[4,33] subtract(x, b)
})";
  Check(text, ErrorSpec(0, 0));
}

// Sibling column reductions of one kernel (cpu_multi_output_fusion.h), as batch
// norm backward has them: sums and a max over all but the minor dimension
// of expressions of the same inputs (one of them bf16 widened to f32, as
// bf16-reductions-in-f32 leaves a bf16 sum).
// `kept`: the input dimensions the outputs keep.
std::string SiblingColumnReductions(absl::string_view dims, absl::string_view out_dims,
                                    absl::string_view reduced, absl::string_view kept) {
  return absl::StrReplaceAll(R"(
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] maximum(a, b)
}
ENTRY e {
  x = f32[IN] parameter(0)
  y = f32[IN] parameter(1)
  w = bf16[IN] parameter(2)
  g = f32[OUT] parameter(3)
  gb = f32[IN] broadcast(g), dimensions={KEPT}
  zero = f32[] constant(0)
  lo = f32[] constant(-inf)
  d = f32[IN] subtract(x, gb)
  dy = f32[IN] multiply(d, y)
  wf = f32[IN] convert(w)
  wy = f32[IN] multiply(wf, y)
  s1 = f32[OUT] reduce(y, zero), dimensions={RED}, to_apply=add
  s2 = f32[OUT] reduce(dy, zero), dimensions={RED}, to_apply=add
  s3 = f32[OUT] reduce(wy, zero), dimensions={RED}, to_apply=add
  s4 = f32[OUT] reduce(d, lo), dimensions={RED}, to_apply=max
  ROOT t = (f32[OUT], f32[OUT], f32[OUT], f32[OUT]) tuple(s1, s2, s3, s4)
}
)",
                             {{"IN", dims}, {"OUT", out_dims}, {"RED", reduced}, {"KEPT", kept}});
}

TEST(ReductionKernelTest, SiblingColumnReductionsFoldInOnePassExactly) {
  // In order per element, as the single column reduction: bit for bit the
  // interpreter's, for every output, at odd sizes (a column loop of 1, 19
  // and 37 elements, a vector remainder) and an output of rank 2.
  for (const auto& [in, out, reduced, kept] :
       std::vector<std::array<std::string, 4>>{{"3,5,7,19", "19", "0,1,2", "3"},
                                               {"16,4,4,32", "32", "0,1,2", "3"},
                                               {"9,1", "1", "0", "1"},
                                               {"300,37", "37", "0", "1"},
                                               {"3,11,37", "3,37", "1", "0,2"}}) {
    const std::string text = SiblingColumnReductions(in, out, reduced, kept);
    auto run = RunAgainstInterpreter(text);
    ASSERT_TRUE(run.ok()) << run.status() << "\n" << text;
    ASSERT_EQ(run->actual.size(), 4u);
    for (size_t o = 0; o < run->actual.size(); ++o) {
      // Exact; a NaN (inf - inf) matches a NaN of any sign and payload.
      absl::Status status = LiteralsNear(run->expected[o], run->actual[o], ErrorSpec(0, 0));
      EXPECT_TRUE(status.ok()) << in << " output " << o << "\n" << status;
    }
  }
}

// Runs the kernel of `text`'s entry over `ranges` of its range dimension,
// in the order given, and expects the interpreter's results bit for bit.
// The output buffers start as all-ones bytes (NaN for floats): a range sets
// every element it folds into before reading it, whichever path (a block,
// the streamed rows, the columns left after the blocks) folds it.
void ExpectRangesGiveTheWholeResult(const std::string& text,
                                    const std::vector<std::pair<int64_t, int64_t>>& ranges) {
  auto module = ParseAndReturnUnverifiedModule(text);
  ASSERT_TRUE(module.ok()) << module.status();
  std::vector<Literal> inputs;
  auto run = RunAgainstInterpreter(text, {}, &inputs);
  ASSERT_TRUE(run.ok()) << run.status();
  auto kernel = CompileLoopKernel(*(*module)->entry_computation());
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  std::vector<Literal> outputs;
  std::vector<void*> buffers;
  buffers.reserve(inputs.size() + run->expected.size());
  for (Literal& input : inputs) buffers.push_back(input.untyped_data());
  outputs.reserve(run->expected.size());
  for (const Literal& expected : run->expected) outputs.emplace_back(expected.shape());
  for (Literal& output : outputs) {
    std::memset(output.untyped_data(), 0xff, static_cast<size_t>(output.size_bytes()));
    buffers.push_back(output.untyped_data());
  }
  for (const auto& [begin, end] : ranges) (*kernel)->RunRange(buffers.data(), begin, end);
  for (size_t o = 0; o < outputs.size(); ++o) {
    absl::Status status = LiteralsNear(run->expected[o], outputs[o], ErrorSpec(0, 0));
    EXPECT_TRUE(status.ok()) << "output " << o << "\n" << status;
  }
}

TEST(ReductionKernelTest, SiblingColumnReductionsSplitAcrossRangesOfColumns) {
  // The kernel ranges over the columns (RangeDimension: 0), as its thunk
  // splits it across threads: ranges in any order give the whole result.
  ExpectRangesGiveTheWholeResult(SiblingColumnReductions("6,5,70", "70", "0,1", "2"),
                                 {{48, 70}, {0, 16}, {16, 48}});
}

TEST(ReductionKernelTest, ColumnReductionsInRegisterBlocksFoldInOrderAtOddWidths) {
  // Blocks of columns with their accumulators in registers, the shorter
  // blocks and the columns left after them, and rows wider than a block
  // streamed through the output row: every element still folds its rows
  // in order, bit for bit the interpreter's, for one reduction and for
  // four siblings in one kernel.
  const ErrorSpec exact(0, 0);
  for (const std::vector<int64_t>& dims : std::vector<std::vector<int64_t>>{{40, 16},
                                                                            {33, 48},
                                                                            {21, 63},
                                                                            {64, 65},
                                                                            {7, 9, 100},
                                                                            {300, 129},
                                                                            {500, 200},
                                                                            {5, 70, 256},
                                                                            {40, 513},
                                                                            {30, 1000}}) {
    std::vector<int64_t> reduced(dims.size() - 1);
    for (size_t d = 0; d < reduced.size(); ++d) reduced[d] = static_cast<int64_t>(d);
    const std::string in = absl::StrJoin(dims, ",");
    const std::string out = absl::StrCat(dims.back());
    const std::string red = absl::StrJoin(reduced, ",");
    Check(ReduceModule("f32", in, out, red, "add", "0.25"), exact);
    const std::string text = SiblingColumnReductions(in, out, red, absl::StrCat(dims.size() - 1));
    auto run = RunAgainstInterpreter(text);
    ASSERT_TRUE(run.ok()) << run.status() << "\n" << text;
    for (size_t o = 0; o < run->actual.size(); ++o) {
      absl::Status status = LiteralsNear(run->expected[o], run->actual[o], ErrorSpec(0, 0));
      EXPECT_TRUE(status.ok()) << in << " output " << o << "\n" << status;
    }
  }
  // Other result types (a block's lanes are the widest type's, bf16 and
  // f16 accumulate in their own type per fold), a rank-2 output.
  Check(ReduceModule("bf16", "50,80", "80", "0", "add", "0"), exact);
  Check(ReduceModule("f16", "3,17,72", "72", "0,1", "maximum", "-inf"), exact);
  Check(ReduceModule("f64", "29,43", "43", "0", "add", "1"), exact);
  Check(ReduceModule("s32", "31,150", "150", "0", "add", "7"), exact);
  Check(ReduceModule("u8", "9,130", "130", "0", "add", "3"), exact);
  Check(ReduceModule("f32", "3,41,77", "3,77", "1", "add", "0"), exact);
}

TEST(ReductionKernelTest, ColumnReductionAccumulatorsStayInRegisters) {
  // Four sums of 64 columns: one block of four 16-lane vectors each, whose
  // accumulators are loop-carried vector values (phis) of the row loop,
  // not loaded and stored per row.
  auto module = ParseAndReturnUnverifiedModule(SiblingColumnReductions("4096,64", "64", "0", "1"));
  ASSERT_TRUE(module.ok()) << module.status();
  std::string after;
  CpuCompileOptions options;
  options.jit.ir_after_optimization = [&](absl::string_view, absl::string_view ir) {
    after = std::string(ir);
  };
  auto kernel = CompileLoopKernel(*(*module)->entry_computation(), options);
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  int phis = 0;
  for (size_t at = after.find("= phi <16 x float>"); at != std::string::npos;
       at = after.find("= phi <16 x float>", at + 1)) {
    ++phis;
  }
  EXPECT_GE(phis, 16) << after;
}

TEST(ReductionKernelTest, WideColumnReductionSplitsIntoBlockedAndStreamedRanges) {
  // Ranges of columns that fit a block (four sums: 64 columns) and ranges
  // streamed through the output row, in any order: the whole result.
  ExpectRangesGiveTheWholeResult(SiblingColumnReductions("37,1000", "1000", "0", "1"),
                                 {{300, 1000}, {0, 61}, {61, 300}});
}

TEST(ReductionKernelTest, EveryColumnPathSetsItsOwnColumns) {
  // One sum (blocks of 128 columns, then 64, 32 and 16, then the columns
  // left) and four siblings (blocks of 64) over 1000 columns, in ranges
  // that take every path: a whole block, shorter blocks, the last columns
  // fewer than a vector, and ranges wider than a block, streamed.
  const std::vector<std::pair<int64_t, int64_t>> ranges = {{0, 128},   {128, 240}, {240, 251},
                                                           {251, 700}, {700, 707}, {707, 1000}};
  ExpectRangesGiveTheWholeResult(ReduceModule("f32", "23,1000", "1000", "0", "add", "0.5"), ranges);
  ExpectRangesGiveTheWholeResult(SiblingColumnReductions("23,1000", "1000", "0", "1"), ranges);
}

TEST(ReductionKernelTest, SiblingColumnReductionsReadTheirInputsInOneLoop) {
  // One column loop for all four reductions: each input is loaded once per
  // element, and the loop is vectorized across columns.
  auto module =
      ParseAndReturnUnverifiedModule(SiblingColumnReductions("64,1024", "1024", "0", "1"));
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
  int column_loops = 0;
  for (size_t at = before.find("column.header"); at != std::string::npos;
       at = before.find("column.header", at + 1)) {
    column_loops += before.compare(at - 1, 1, "\n") == 0;  // a block's label
  }
  EXPECT_EQ(column_loops, 1) << before;
  EXPECT_TRUE(absl::StrContains(after, "fadd <16 x float>")) << after;
}

// The reduces `text`'s entry roots (one, or a tuple's operands).
std::vector<const HloInstruction*> RootsOf(const HloModule& module) {
  const HloInstruction* root = module.entry_computation()->root_instruction();
  if (root->opcode() != HloOpcode::kTuple) return {root};
  return {root->operands().begin(), root->operands().end()};
}

TEST(ReductionKernelTest, ColumnReductionsToOneRowOverManyRowsAreCutIntoChunks) {
  // Chunked: every dimension but the minor one folded, 2 MiB of input or
  // more, one associative op per combiner; chunks of at least 1 MiB, at
  // most 16, their partial rows at most 256 KiB.
  const std::vector<std::pair<std::string, int64_t>> cases = {
      {ReduceModule("f32", "16384,1024", "1024", "0", "add", "0"), 16},
      {ReduceModule("f32", "1024,1024", "1024", "0", "add", "0"), 4},
      {ReduceModule("s32", "8,64,2048", "2048", "0,1", "maximum", "0"), 4},
      {ReduceModule("f32", "256,1024", "1024", "0", "add", "0"), 0},  // 1 MiB
      {ReduceModule("f32", "8,1024,1024", "8,1024", "1", "add", "0"), 0},
      {ReduceModule("f32", "16384,8192", "8192", "0", "add", "0"), 9},  // 8 partial rows
      {SiblingColumnReductions("4096,256", "256", "0", "1"), 16},
  };
  for (const auto& [text, chunks] : cases) {
    auto module = ParseAndReturnUnverifiedModule(text);
    ASSERT_TRUE(module.ok()) << module.status();
    EXPECT_EQ(ColumnChunks(RootsOf(**module)), chunks) << text;
  }
  // A combiner of two ops is not cut.
  const std::string two_ops = R"(
HloModule m
combine {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  s = f32[] add(a, b)
  ROOT m = f32[] multiply(s, b)
}
ENTRY e {
  x = f32[4096,1024] parameter(0)
  i = f32[] constant(0)
  ROOT r = f32[1024] reduce(x, i), dimensions={0}, to_apply=combine
})";
  auto module = ParseAndReturnUnverifiedModule(two_ops);
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_EQ(ColumnChunks(RootsOf(**module)), 0);
}

TEST(ReductionKernelTest, ChunkedColumnReductionsMatchTheInterpreter) {
  // The chunks' partial rows start from their first input row and the init
  // value is folded once (an init that is no identity: 7, 0.25); max, min
  // and integer sums exactly, float sums within rounding; ranks 2 and 3
  // with their folded dimensions flattened, four siblings, and columns
  // that fit a register block (64 and 100) or stream (3000).
  const ErrorSpec exact(0, 0);
  // Sums of thousands of terms of both signs, reassociated once per chunk.
  const ErrorSpec sum(1e-3, 1e-3);
  Check(ReduceModule("f32", "4096,300", "300", "0", "add", "0.25"), sum);
  Check(ReduceModule("f32", "9,1000,100", "100", "0,1", "add", "0"), sum);
  Check(ReduceModule("f32", "700,3000", "3000", "0", "maximum", "-inf"), exact);
  Check(ReduceModule("f32", "20,200,300", "300", "0,1", "minimum", "inf"), exact);
  Check(ReduceModule("s32", "4099,333", "333", "0", "add", "7"), exact);
  Check(ReduceModule("bf16", "8192,256", "256", "0", "maximum", "-inf"), exact);
  Check(ReduceModule("f64", "2049,257", "257", "0", "add", "1"), ErrorSpec(1e-12, 1e-12));
  const std::string siblings = SiblingColumnReductions("8,1024,64", "64", "0,1", "2");
  auto run = RunAgainstInterpreter(siblings);
  ASSERT_TRUE(run.ok()) << run.status();
  for (size_t o = 0; o < run->actual.size(); ++o) {
    absl::Status status = LiteralsNear(run->expected[o], run->actual[o], sum);
    EXPECT_TRUE(status.ok()) << "output " << o << "\n" << status;
  }
}

TEST(ReductionKernelTest, ChunkedColumnReductionsAreTheSameInAnyOrderOfChunks) {
  // The chunks run in any order and split in any ranges (as threads take
  // them), then the combine: the same bits as the whole kernel in one run,
  // whatever the number of threads.
  for (const std::string& text : {ReduceModule("f32", "4096,300", "300", "0", "add", "0.25"),
                                  SiblingColumnReductions("8,1024,64", "64", "0,1", "2")}) {
    auto module = ParseAndReturnUnverifiedModule(text);
    ASSERT_TRUE(module.ok()) << module.status();
    const int64_t chunks = ColumnChunks(RootsOf(**module));
    ASSERT_GE(chunks, 4);
    std::vector<Literal> inputs;
    auto run = RunAgainstInterpreter(text, {}, &inputs);
    ASSERT_TRUE(run.ok()) << run.status();
    auto kernel = CompileLoopKernel(*(*module)->entry_computation());
    ASSERT_TRUE(kernel.ok()) << kernel.status();
    ASSERT_EQ((*kernel)->outer_size(), chunks + 1);
    ASSERT_GT((*kernel)->partials_bytes(), 0);
    auto run_kernel = [&](const std::vector<std::pair<int64_t, int64_t>>& ranges) {
      std::vector<Literal> outputs;
      std::vector<void*> buffers;
      buffers.reserve(inputs.size() + run->expected.size() + 1);
      for (Literal& input : inputs) buffers.push_back(input.untyped_data());
      outputs.reserve(run->expected.size());
      for (const Literal& expected : run->expected) outputs.emplace_back(expected.shape());
      for (Literal& output : outputs) {
        std::memset(output.untyped_data(), 0xff, static_cast<size_t>(output.size_bytes()));
        buffers.push_back(output.untyped_data());
      }
      if (ranges.empty()) {
        (*kernel)->Run(buffers.data());
        return outputs;
      }
      std::vector<std::byte> partials(static_cast<size_t>((*kernel)->partials_bytes()) + 64,
                                      std::byte{0xff});
      buffers.push_back(partials.data() + (64 - reinterpret_cast<uintptr_t>(partials.data()) % 64));
      for (const auto& [begin, end] : ranges) (*kernel)->RunRange(buffers.data(), begin, end);
      (*kernel)->RunRange(buffers.data(), chunks, chunks + 1);
      return outputs;
    };
    std::vector<Literal> whole = run_kernel({});
    for (size_t o = 0; o < whole.size(); ++o) {
      absl::Status status = LiteralsNear(run->expected[o], whole[o], ErrorSpec(1e-3, 1e-3));
      EXPECT_TRUE(status.ok()) << "output " << o << "\n" << status;
    }
    for (const auto& ranges : std::vector<std::vector<std::pair<int64_t, int64_t>>>{
             {{chunks - 1, chunks}, {0, 2}, {2, chunks - 1}}, {{3, chunks}, {0, 3}}}) {
      std::vector<Literal> parts = run_kernel(ranges);
      for (size_t o = 0; o < whole.size(); ++o) {
        EXPECT_EQ(std::memcmp(whole[o].untyped_data(), parts[o].untyped_data(),
                              static_cast<size_t>(whole[o].size_bytes())),
                  0)
            << "output " << o;
      }
    }
  }
}

}  // namespace
}  // namespace axle::cpu
