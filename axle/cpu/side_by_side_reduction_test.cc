//===- side_by_side_reduction_test.cc - Variadic reduces across lanes -----===//
//
// Argmax and argmin as JAX writes them (a value and an iota, a comparator
// with NaN handling and the lower index winning ties) folded side by side
// (side_by_side_reduction_emitter.cc), against the interpreter bit for bit:
// inputs full of ties, NaNs, infinities and signed zeros; f32, bf16, f16,
// f64 and s32 values; rows of length 1, lane counts that are not a multiple
// of the vector or of the block, reductions over the minor, the major and
// a middle dimension, thread ranges that start anywhere. Also which kernels
// take the schedule (SideBySideReduction) and that the fold is vectorized.
// The split fold of long folds with few outputs (whole vectors, rows
// shorter than a block) and of long rows likewise, with ties spread over
// every run; folds to a scalar cut into chunks, whole and with the chunks
// run in any order (parallel_test.cc runs them on the pool).
//
//===----------------------------------------------------------------------===//
#include <array>
#include <cmath>
#include <cstddef>
#include <limits>
#include <string>
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

using testing::NextRandom;
using testing::RunAgainstInterpreter;

// jnp.argmax (direction GT) or jnp.argmin (LT) of a `type` array of `dims`
// over `reduced`, returning (values, indices), or only the indices.
std::string ArgModule(absl::string_view type, const std::vector<int64_t>& dims,
                      const std::vector<int64_t>& reduced, absl::string_view direction,
                      bool indices_only = false) {
  std::vector<int64_t> out_dims;
  for (int64_t d = 0; d < static_cast<int64_t>(dims.size()); ++d) {
    if (std::find(reduced.begin(), reduced.end(), d) == reduced.end()) out_dims.push_back(dims[d]);
  }
  const std::string in = absl::StrCat("[", absl::StrJoin(dims, ","), "]");
  const std::string out = absl::StrCat("[", absl::StrJoin(out_dims, ","), "]");
  const bool is_float = type != "s32";
  const std::string init = is_float ? (direction == "GT" ? "-inf" : "inf")
                                    : (direction == "GT" ? "-2147483648" : "2147483647");
  // The iota counts along the last reduced dimension (JAX's argmax reduces
  // one dimension; with several, the index is that of the last one).
  const std::string text = R"(
HloModule m
cmp {
  a = {T}[] parameter(0)
  i = s32[] parameter(1)
  b = {T}[] parameter(2)
  j = s32[] parameter(3)
  wins = pred[] compare(a, b), direction={DIR}
  a_nan = pred[] compare(a, a), direction=NE
  take_a = pred[] or(wins, a_nan)
  v = {T}[] select(take_a, a, b)
  eq = pred[] compare(a, b), direction=EQ
  lower = pred[] compare(i, j), direction=LT
  tie = pred[] and(eq, lower)
  keep = pred[] or(take_a, tie)
  k = s32[] select(keep, i, j)
  ROOT t = ({T}[], s32[]) tuple(v, k)
}
ENTRY e {
  x = {T}{IN} parameter(0)
  n = s32{IN} iota(), iota_dimension={LAST}
  lo = {T}[] constant({INIT})
  zero = s32[] constant(0)
  r = ({T}{OUT}, s32{OUT}) reduce(x, n, lo, zero), dimensions={{RED}}, to_apply=cmp
  v = {T}{OUT} get-tuple-element(r), index=0
  k = s32{OUT} get-tuple-element(r), index=1
  ROOT t = {ROOT_SHAPE} tuple({OUTPUTS})
})";
  const std::string root_shape = indices_only ? absl::StrCat("(s32", out, ")")
                                              : absl::StrCat("(", type, out, ", s32", out, ")");
  return absl::StrReplaceAll(text, {{"{T}", type},
                                    {"{IN}", in},
                                    {"{OUT}", out},
                                    {"{ROOT_SHAPE}", root_shape},
                                    {"{OUTPUTS}", indices_only ? "k" : "v, k"},
                                    {"{LAST}", absl::StrCat(reduced.back())},
                                    {"{RED}", absl::StrJoin(reduced, ",")},
                                    {"{DIR}", direction},
                                    {"{INIT}", init}});
}

// Values with many ties: small integers, and (floats) NaNs of both signs,
// infinities and signed zeros; (s32) the type's limits.
Literal TieHeavyLiteral(const Shape& shape, uint64_t seed) {
  Literal literal(shape);
  uint64_t state = seed;
  const bool is_float = primitive_util::IsFloatingPointType(shape.element_type());
  for (int64_t i = 0; i < literal.element_count(); ++i) {
    const uint64_t r = NextRandom(state) % 16;
    if (!is_float) {
      const int64_t v = r == 0   ? std::numeric_limits<int32_t>::min()
                        : r == 1 ? std::numeric_limits<int32_t>::max()
                                 : static_cast<int64_t>(r % 5) - 2;
      literal.SetIntegral(i, v);
      continue;
    }
    double v = static_cast<double>(r % 5) - 2.0;
    if (r == 0) v = std::nan("");
    if (r == 1) v = -std::nan("");
    if (r == 2) v = std::numeric_limits<double>::infinity();
    if (r == 3) v = -std::numeric_limits<double>::infinity();
    if (r == 4) v = -0.0;
    if (r == 5) v = 0.0;
    literal.SetFromDouble(i, v);
  }
  return literal;
}

// Runs `text` as one loop kernel against the interpreter on tie-heavy
// inputs (NaN-free with `nan_free`: rows without a NaN then win by value)
// and expects every output to be bit-identical.
void ExpectExact(const std::string& text, uint64_t seed, bool nan_free = false) {
  auto module = ParseAndReturnUnverifiedModule(text);
  ASSERT_TRUE(module.ok()) << module.status();
  Literal x =
      TieHeavyLiteral((*module)->entry_computation()->parameter_instruction(0)->shape(), seed);
  if (nan_free && primitive_util::IsFloatingPointType(x.shape().element_type())) {
    for (int64_t i = 0; i < x.element_count(); ++i) {
      if (std::isnan(x.GetAsDouble(i))) x.SetFromDouble(i, 1.0);
    }
  }
  std::vector<Literal> inputs;
  inputs.push_back(std::move(x));
  auto run = RunAgainstInterpreter(text, {}, &inputs);
  ASSERT_TRUE(run.ok()) << run.status();
  for (size_t i = 0; i < run->actual.size(); ++i) {
    absl::Status status = LiteralsEqual(run->expected[i], run->actual[i]);
    EXPECT_TRUE(status.ok()) << run->names[i] << ": " << status << "\n" << text;
  }
}

// Runs the f32 argmax over the minor dimension of `dims` (rank 2) as one
// loop kernel, whole and then over `ranges` of its outer dimension, and
// expects the ranges to give the whole run's values and indices, and the
// interpreter's indices.
void ExpectRangesAddUpToTheWholeRun(const std::vector<int64_t>& dims,
                                    const std::vector<std::pair<int64_t, int64_t>>& ranges,
                                    uint64_t seed) {
  const std::string text = ArgModule("f32", dims, {1}, "GT");
  auto module = ParseAndReturnUnverifiedModule(text);
  ASSERT_TRUE(module.ok()) << module.status();
  const HloComputation& entry = *(*module)->entry_computation();
  auto kernel = CompileLoopKernel(entry, {});
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  const int64_t outer = dims[0];
  ASSERT_EQ((*kernel)->outer_size(), outer);
  Literal x = TieHeavyLiteral(entry.parameter_instruction(0)->shape(), seed);
  Literal whole_v(ShapeUtil::MakeShape(F32, {outer})), whole_k(ShapeUtil::MakeShape(S32, {outer}));
  Literal parts_v(ShapeUtil::MakeShape(F32, {outer})), parts_k(ShapeUtil::MakeShape(S32, {outer}));
  void* whole[] = {x.untyped_data(), whole_v.untyped_data(), whole_k.untyped_data()};
  void* parts[] = {x.untyped_data(), parts_v.untyped_data(), parts_k.untyped_data()};
  (*kernel)->Run(whole);
  for (const auto& [from, to] : ranges) (*kernel)->RunRange(parts, from, to);
  EXPECT_TRUE(LiteralsEqual(whole_v, parts_v).ok());
  EXPECT_TRUE(LiteralsEqual(whole_k, parts_k).ok());
  std::vector<Literal> inputs;
  inputs.push_back(std::move(x));
  auto run = RunAgainstInterpreter(text, {}, &inputs);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_TRUE(LiteralsEqual(run->expected[1], parts_k).ok());
}

TEST(SideBySideReductionTest, ArgmaxAndArgminOverTheMinorDimension) {
  // Rows of length 1, lane counts below a vector, between vectors, and
  // past one block of 64 (133 = 64 + 64 + 5); rows of odd lengths.
  for (const std::vector<int64_t>& dims :
       std::vector<std::vector<int64_t>>{{7, 1}, {5, 3}, {37, 131}, {133, 45}, {16, 64}}) {
    for (absl::string_view direction : {"GT", "LT"}) {
      SCOPED_TRACE(absl::StrCat(absl::StrJoin(dims, "x"), " ", direction));
      ExpectExact(ArgModule("f32", dims, {1}, direction), dims[0] * 31 + dims[1]);
      ExpectExact(ArgModule("f32", dims, {1}, direction), dims[1], /*nan_free=*/true);
    }
  }
}

TEST(SideBySideReductionTest, ArgmaxOverTheMajorAndMiddleDimensions) {
  ExpectExact(ArgModule("f32", {131, 37}, {0}, "GT"), 3);
  ExpectExact(ArgModule("f32", {131, 37}, {0}, "LT"), 4, /*nan_free=*/true);
  ExpectExact(ArgModule("f32", {1, 70}, {0}, "GT"), 5);
  // 3-D: a middle dimension, the minor one, and two at once.
  ExpectExact(ArgModule("f32", {3, 70, 19}, {1}, "GT"), 6);
  ExpectExact(ArgModule("f32", {5, 6, 33}, {2}, "GT"), 7);
  ExpectExact(ArgModule("f32", {4, 9, 21}, {0, 2}, "LT"), 8);
  ExpectExact(ArgModule("f32", {2, 65, 17}, {2}, "GT", /*indices_only=*/true), 9);
}

TEST(SideBySideReductionTest, OtherValueTypes) {
  for (absl::string_view type : {"bf16", "f16", "f64", "s32"}) {
    SCOPED_TRACE(type);
    ExpectExact(ArgModule(type, {37, 131}, {1}, "GT"), 10);
    ExpectExact(ArgModule(type, {131, 37}, {0}, "LT"), 11);
    ExpectExact(ArgModule(type, {3, 20, 9}, {1}, "GT", /*indices_only=*/true), 12);
  }
}

// A thread's range of lanes may start anywhere and hold fewer lanes than a
// vector: ranges [0, 5), [5, 22), [22, 37) give the whole run's results.
TEST(SideBySideReductionTest, RangesOfLanesAddUpToTheWholeRun) {
  ExpectRangesAddUpToTheWholeRun({37, 131}, {{0, 5}, {5, 22}, {22, 37}}, 13);
}

TEST(SideBySideReductionTest, TheFoldIsVectorizedAcrossElements) {
  auto module = ParseAndReturnUnverifiedModule(ArgModule("f32", {64, 1000}, {1}, "GT"));
  ASSERT_TRUE(module.ok()) << module.status();
  std::string after;
  CpuCompileOptions options;
  options.jit.ir_after_optimization = [&](absl::string_view, absl::string_view ir) {
    after = std::string(ir);
  };
  auto kernel = CompileLoopKernel(*(*module)->entry_computation(), options);
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  EXPECT_TRUE(absl::StrContains(after, "fcmp ogt <16 x float>")) << after;
  EXPECT_TRUE(absl::StrContains(after, "select <16 x i1>")) << after;
}

TEST(SideBySideReductionTest, WhichReducesTakeIt) {
  auto outputs_of = [](const HloModule& module) {
    const HloInstruction* root = module.entry_computation()->root_instruction();
    return std::vector<const HloInstruction*>(root->operands().begin(), root->operands().end());
  };
  auto argmax = ParseAndReturnUnverifiedModule(ArgModule("f32", {8, 1000}, {1}, "GT"));
  ASSERT_TRUE(argmax.ok()) << argmax.status();
  const HloInstruction* reduce = SideBySideReduction(outputs_of(**argmax));
  ASSERT_NE(reduce, nullptr);
  EXPECT_EQ(SideBySideVectorLanes(*reduce), 8);  // 8 lanes, under a 16-lane vector
  auto wide = ParseAndReturnUnverifiedModule(ArgModule("f64", {100, 10}, {1}, "GT"));
  ASSERT_TRUE(wide.ok()) << wide.status();
  reduce = SideBySideReduction(outputs_of(**wide));
  ASSERT_NE(reduce, nullptr);
  EXPECT_EQ(SideBySideVectorLanes(*reduce), 8);  // f64: 8 in 512 bits
  // Too few lanes: the plain fold.
  auto narrow = ParseAndReturnUnverifiedModule(ArgModule("f32", {3, 1000}, {1}, "GT"));
  ASSERT_TRUE(narrow.ok()) << narrow.status();
  EXPECT_EQ(SideBySideReduction(outputs_of(**narrow)), nullptr);
  // An input computed from another reduce (a row value) is not taken.
  std::string nested = ArgModule("f32", {8, 100}, {1}, "GT", /*indices_only=*/true);
  nested =
      absl::StrReplaceAll(nested, {{"  r = (",
                                    "  z = f32[] constant(0)\n"
                                    "  sum = f32[8] reduce(x, z), dimensions={1}, to_apply=add\n"
                                    "  sumb = f32[8,100] broadcast(sum), dimensions={0}\n"
                                    "  y = f32[8,100] subtract(x, sumb)\n  r = ("},
                                   {"reduce(x, n,", "reduce(y, n,"},
                                   {"ENTRY e {",
                                    "add {\n  p = f32[] parameter(0)\n  q = f32[] parameter(1)\n"
                                    "  ROOT s = f32[] add(p, q)\n}\nENTRY e {"}});
  auto with_row_value = ParseAndReturnUnverifiedModule(nested);
  ASSERT_TRUE(with_row_value.ok()) << with_row_value.status() << nested;
  EXPECT_EQ(SideBySideReduction(outputs_of(**with_row_value)), nullptr);
  ExpectExact(nested, 14);
}

// Values that tie across the whole input: element i is (i * 7919) mod 997
// (negated for argmin), so the extreme value recurs in every run of a split
// fold and the first occurrence must win.
Literal SpreadTies(const Shape& shape, bool negate) {
  Literal literal(shape);
  for (int64_t i = 0; i < literal.element_count(); ++i) {
    const double v = static_cast<double>((i * 7919) % 997);
    literal.SetFromDouble(i, negate ? -v : v);
  }
  return literal;
}

TEST(SplitFoldReductionTest, ArgmaxAndArgminOfWholeVectors) {
  // 256 = 16 runs of 16; 257 and 4099 leave inputs past the last run.
  for (int64_t n : {256, 257, 1000, 4099, 100000}) {
    for (absl::string_view direction : {"GT", "LT"}) {
      SCOPED_TRACE(absl::StrCat(n, " ", direction));
      const std::string text = ArgModule("f32", {n}, {0}, direction);
      ExpectExact(text, n);
      ExpectExact(text, n + 1, /*nan_free=*/true);
      auto module = ParseAndReturnUnverifiedModule(text);
      ASSERT_TRUE(module.ok()) << module.status();
      std::vector<Literal> inputs;
      inputs.push_back(SpreadTies((*module)->entry_computation()->parameter_instruction(0)->shape(),
                                  direction == "LT"));
      auto run = RunAgainstInterpreter(text, {}, &inputs);
      ASSERT_TRUE(run.ok()) << run.status();
      for (size_t i = 0; i < run->actual.size(); ++i) {
        EXPECT_TRUE(LiteralsEqual(run->expected[i], run->actual[i]).ok()) << run->names[i];
      }
    }
  }
}

TEST(SplitFoldReductionTest, FewOutputsOfLongFolds) {
  // Rows shorter than a side-by-side block's minimum: three long rows, the
  // major dimension of three columns, two reduced dimensions at once.
  ExpectExact(ArgModule("f32", {3, 5000}, {1}, "GT"), 21);
  ExpectExact(ArgModule("f32", {3, 5000}, {1}, "LT"), 22, /*nan_free=*/true);
  ExpectExact(ArgModule("f32", {5000, 3}, {0}, "GT"), 23);
  ExpectExact(ArgModule("f32", {40, 2, 70}, {0, 2}, "LT"), 24);
  ExpectExact(ArgModule("f32", {2, 1, 3000}, {2}, "GT", /*indices_only=*/true), 25);
  // Long rows with enough of them for side by side: split too.
  ExpectExact(ArgModule("f32", {20, 4099}, {1}, "GT"), 30);
  ExpectExact(ArgModule("f32", {5, 4, 4100}, {2}, "LT"), 31, /*nan_free=*/true);
}

TEST(SplitFoldReductionTest, OtherValueTypes) {
  for (absl::string_view type : {"bf16", "f16", "f64", "s32"}) {
    SCOPED_TRACE(type);
    ExpectExact(ArgModule(type, {3001}, {0}, "GT"), 26);
    ExpectExact(ArgModule(type, {2, 999}, {1}, "LT"), 27);
  }
}

// Ranges [0, 1) and [1, 3) of three long rows give the whole run's results.
TEST(SplitFoldReductionTest, RangesOfRowsAddUpToTheWholeRun) {
  ExpectRangesAddUpToTheWholeRun({3, 2000}, {{0, 1}, {1, 3}}, 28);
}

TEST(SplitFoldReductionTest, TheRunsAreVectorized) {
  auto module = ParseAndReturnUnverifiedModule(ArgModule("f32", {100000}, {0}, "GT"));
  ASSERT_TRUE(module.ok()) << module.status();
  std::string after;
  CpuCompileOptions options;
  options.jit.ir_after_optimization = [&](absl::string_view, absl::string_view ir) {
    after = std::string(ir);
  };
  auto kernel = CompileLoopKernel(*(*module)->entry_computation(), options);
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  EXPECT_TRUE(absl::StrContains(after, "fcmp ogt <16 x float>")) << after;
}

// Folds to a scalar of at least 2 x kMinFoldChunk inputs are cut into
// chunks (whole vectors, all dimensions of a matrix, other types): a whole
// run (every chunk, then the combine, on one thread) is the interpreter's,
// ties and NaNs included.
TEST(SplitFoldReductionTest, ChunkedFoldsToAScalar) {
  for (int64_t n : {2 * kMinFoldChunk, int64_t{100003}, int64_t{262147}}) {
    for (absl::string_view direction : {"GT", "LT"}) {
      SCOPED_TRACE(absl::StrCat(n, " ", direction));
      const std::string text = ArgModule("f32", {n}, {0}, direction);
      ExpectExact(text, n);
      ExpectExact(text, n + 1, /*nan_free=*/true);
      auto module = ParseAndReturnUnverifiedModule(text);
      ASSERT_TRUE(module.ok()) << module.status();
      std::vector<Literal> inputs;
      inputs.push_back(SpreadTies((*module)->entry_computation()->parameter_instruction(0)->shape(),
                                  direction == "LT"));
      auto run = RunAgainstInterpreter(text, {}, &inputs);
      ASSERT_TRUE(run.ok()) << run.status();
      for (size_t i = 0; i < run->actual.size(); ++i) {
        EXPECT_TRUE(LiteralsEqual(run->expected[i], run->actual[i]).ok()) << run->names[i];
      }
    }
  }
  ExpectExact(ArgModule("f32", {300, 401}, {0, 1}, "GT"), 40);
  ExpectExact(ArgModule("f32", {70001}, {0}, "LT", /*indices_only=*/true), 41);
  for (absl::string_view type : {"bf16", "f16", "f64", "s32"}) {
    SCOPED_TRACE(type);
    ExpectExact(ArgModule(type, {50000}, {0}, "GT"), 42);
    ExpectExact(ArgModule(type, {40000}, {0}, "LT"), 43);
  }
}

// The chunks of a chunked fold run in any order and in any ranges (as the
// pool's threads claim them), then the combine: the result is the whole
// run's and the interpreter's.
TEST(SplitFoldReductionTest, ChunksInAnyOrderGiveTheWholeRun) {
  const std::string text = ArgModule("f32", {100003}, {0}, "GT");
  auto module = ParseAndReturnUnverifiedModule(text);
  ASSERT_TRUE(module.ok()) << module.status();
  const HloComputation& entry = *(*module)->entry_computation();
  const HloInstruction* root = entry.root_instruction();
  const int64_t chunks = FoldChunks({root->operands().begin(), root->operands().end()});
  ASSERT_EQ(chunks, 100003 / kMinFoldChunk);
  auto kernel = CompileLoopKernel(entry, {});
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  ASSERT_EQ((*kernel)->outer_size(), chunks + 1);
  ASSERT_EQ((*kernel)->partials_bytes(), 2 * chunks * 8);
  Literal x = TieHeavyLiteral(entry.parameter_instruction(0)->shape(), 44);
  const Shape f32 = ShapeUtil::MakeShape(F32, {});
  const Shape s32 = ShapeUtil::MakeShape(S32, {});
  Literal whole_v(f32), whole_k(s32), parts_v(f32), parts_k(s32);
  void* whole[] = {x.untyped_data(), whole_v.untyped_data(), whole_k.untyped_data()};
  (*kernel)->Run(whole);
  for (const std::vector<std::pair<int64_t, int64_t>>& ranges :
       std::vector<std::vector<std::pair<int64_t, int64_t>>>{
           {{chunks - 1, chunks}, {0, 2}, {2, chunks - 1}},
           {{3, chunks}, {0, 3}},
       }) {
    alignas(64) std::array<std::byte, CompiledKernel::kStackPartialsBytes> partials{};
    void* parts[] = {x.untyped_data(), parts_v.untyped_data(), parts_k.untyped_data(),
                     partials.data()};
    for (const auto& [from, to] : ranges) (*kernel)->RunRange(parts, from, to);
    (*kernel)->RunRange(parts, chunks, chunks + 1);
    EXPECT_TRUE(LiteralsEqual(whole_v, parts_v).ok());
    EXPECT_TRUE(LiteralsEqual(whole_k, parts_k).ok());
  }
  std::vector<Literal> inputs;
  inputs.push_back(std::move(x));
  auto run = RunAgainstInterpreter(text, {}, &inputs);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_TRUE(LiteralsEqual(run->expected[0], whole_v).ok());
  EXPECT_TRUE(LiteralsEqual(run->expected[1], whole_k).ok());
}

TEST(SplitFoldReductionTest, WhichReducesTakeIt) {
  auto outputs_of = [](const HloModule& module) {
    const HloInstruction* root = module.entry_computation()->root_instruction();
    return std::vector<const HloInstruction*>(root->operands().begin(), root->operands().end());
  };
  auto whole = ParseAndReturnUnverifiedModule(ArgModule("f32", {1000}, {0}, "GT"));
  ASSERT_TRUE(whole.ok()) << whole.status();
  const HloInstruction* reduce = SplitFoldReduction(outputs_of(**whole));
  ASSERT_NE(reduce, nullptr);
  EXPECT_EQ(SplitFoldVectorLanes(*reduce), 16);
  auto wide = ParseAndReturnUnverifiedModule(ArgModule("f64", {3, 1000}, {1}, "GT"));
  ASSERT_TRUE(wide.ok()) << wide.status();
  reduce = SplitFoldReduction(outputs_of(**wide));
  ASSERT_NE(reduce, nullptr);
  EXPECT_EQ(SplitFoldVectorLanes(*reduce), 8);
  // Side by side where that applies (rows shorter than kMinSplitFoldRow, or
  // a major dimension reduced); too short a fold: the plain one.
  auto many = ParseAndReturnUnverifiedModule(ArgModule("f32", {8, 1000}, {1}, "GT"));
  ASSERT_TRUE(many.ok()) << many.status();
  EXPECT_EQ(SplitFoldReduction(outputs_of(**many)), nullptr);
  auto columns = ParseAndReturnUnverifiedModule(ArgModule("f32", {5000, 8}, {0}, "GT"));
  ASSERT_TRUE(columns.ok()) << columns.status();
  EXPECT_EQ(SplitFoldReduction(outputs_of(**columns)), nullptr);
  auto long_rows = ParseAndReturnUnverifiedModule(ArgModule("f32", {8, 4096}, {1}, "GT"));
  ASSERT_TRUE(long_rows.ok()) << long_rows.status();
  EXPECT_NE(SplitFoldReduction(outputs_of(**long_rows)), nullptr);
  // Chunks: only for a scalar result of at least two chunks' inputs, at
  // most kMaxFoldChunks of them.
  EXPECT_EQ(FoldChunks(outputs_of(**whole)), 0);
  EXPECT_EQ(FoldChunks(outputs_of(**long_rows)), 0);
  auto chunked = ParseAndReturnUnverifiedModule(ArgModule("f64", {1 << 20}, {0}, "GT"));
  ASSERT_TRUE(chunked.ok()) << chunked.status();
  EXPECT_EQ(FoldChunks(outputs_of(**chunked)), kMaxFoldChunks);
  auto one_chunk =
      ParseAndReturnUnverifiedModule(ArgModule("f32", {2 * kMinFoldChunk - 1}, {0}, "GT"));
  ASSERT_TRUE(one_chunk.ok()) << one_chunk.status();
  EXPECT_EQ(FoldChunks(outputs_of(**one_chunk)), 0);
  auto short_fold = ParseAndReturnUnverifiedModule(ArgModule("f32", {255}, {0}, "GT"));
  ASSERT_TRUE(short_fold.ok()) << short_fold.status();
  EXPECT_EQ(SplitFoldReduction(outputs_of(**short_fold)), nullptr);
  // A combiner that is not associative: the plain fold, still exact.
  // (The value of the right operand, the index of the left one when it
  // wins; in the combiner only, the entry's root has the same text.)
  std::string last = ArgModule("f32", {1000}, {0}, "GT");
  const std::string root = "ROOT t = (f32[], s32[]) tuple(v, k)";
  last.replace(last.find(root), root.size(),
               "w = s32[] select(wins, i, j)\n  ROOT t = (f32[], s32[]) tuple(b, w)");
  auto not_associative = ParseAndReturnUnverifiedModule(last);
  ASSERT_TRUE(not_associative.ok()) << not_associative.status() << last;
  EXPECT_EQ(SplitFoldReduction(outputs_of(**not_associative)), nullptr);
  ExpectExact(last, 29);
}

}  // namespace
}  // namespace axle::cpu
