// sort, scatter and select-and-scatter on the `cpu` platform: every result
// equals the interpreter's exactly, and where easy to state, values worked
// out by hand: sorts along each dimension, multi-operand, stable with ties,
// descending, NaN keys under a total order, empty; scatter with add and
// overwrite combiners, out-of-bounds windows, 2-d windows, variadic;
// select-and-scatter with padding, dilation and overlapping windows.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "axle/cpu/cpu_test_util.h"
#include "axle/cpu/runtime/platform_test_util.h"
#include "axle/cpu/runtime/scatter_thunk.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/text/hlo_parser.h"
#include "gtest/gtest.h"

namespace axle {
namespace {

using testing::RunOn;

// Runs `text` on cpu and on the interpreter; both must succeed and agree
// bit for bit. Returns the cpu result.
Literal RunBoth(absl::string_view text, const std::vector<Literal>& arguments) {
  absl::StatusOr<Literal> cpu = RunOn("cpu", text, arguments);
  EXPECT_TRUE(cpu.ok()) << cpu.status();
  if (!cpu.ok()) return Literal();
  absl::StatusOr<Literal> reference = RunOn("interpreter", text, arguments);
  EXPECT_TRUE(reference.ok()) << reference.status();
  if (reference.ok()) {
    EXPECT_EQ(*cpu, *reference) << *cpu << "\nvs\n" << *reference;
  }
  return std::move(*cpu);
}

constexpr absl::string_view kSortF32 = R"(
HloModule sort
lt {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=LT
}
ENTRY e {
  p = f32[%s] parameter(0)
  ROOT s = f32[%s] sort(p), dimensions={%d}, to_apply=lt
}
)";

std::string SortF32(const std::string& dims, int dimension) {
  std::string text(kSortF32);
  auto replace = [&](const std::string& from, const std::string& to) {
    size_t at = text.find(from);
    text.replace(at, from.size(), to);
  };
  replace("%s", dims);
  replace("%s", dims);
  replace("%d", std::to_string(dimension));
  return text;
}

TEST(CpuSort, OneDimension) {
  Literal result =
      RunBoth(SortF32("6", 0), {LiteralUtil::CreateR1<float>({3, -1, 2.5f, 0, -7, 3})});
  EXPECT_EQ(result, LiteralUtil::CreateR1<float>({-7, -1, 0, 2.5f, 3, 3}));
}

TEST(CpuSort, TwoDimensionsAlongEachDimension) {
  Literal input = LiteralUtil::CreateR2<float>({{3, 1, 2}, {0, 5, -1}});
  EXPECT_EQ(RunBoth(SortF32("2,3", 1), {input.Clone()}),
            LiteralUtil::CreateR2<float>({{1, 2, 3}, {-1, 0, 5}}));
  EXPECT_EQ(RunBoth(SortF32("2,3", 0), {input.Clone()}),
            LiteralUtil::CreateR2<float>({{0, 1, -1}, {3, 5, 2}}));
}

TEST(CpuSort, RankThreeMiddleDimensionLarge) {
  // 4 x 300 x 5: large enough to split slices across the pool.
  std::vector<float> values(size_t{4} * 300 * 5);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>((i * 7919) % 1013);
  Literal input = LiteralUtil::CreateFromDimensions<float>({4, 300, 5}, values);
  RunBoth(SortF32("4,300,5", 1), {input.Clone()});
  RunBoth(SortF32("4,300,5", 2), {input.Clone()});
}

TEST(CpuSort, Empty) {
  Literal input(ShapeUtil::MakeShape(F32, {0, 3}));
  Literal result = RunBoth(SortF32("0,3", 1), {input.Clone()});
  EXPECT_EQ(result.element_count(), 0);
}

TEST(CpuSort, MultiOperandStableWithTiesKeepsValuesInOrder) {
  constexpr absl::string_view kText = R"(
HloModule sort
lt {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  c = f32[] parameter(2)
  d = f32[] parameter(3)
  ROOT lt = pred[] compare(a, b), direction=LT
}
ENTRY e {
  keys = s32[8] parameter(0)
  values = f32[8] parameter(1)
  ROOT s = (s32[8], f32[8]) sort(keys, values), dimensions={0}, is_stable=true, to_apply=lt
}
)";
  Literal result = RunBoth(kText, {LiteralUtil::CreateR1<int32_t>({2, 1, 2, 0, 1, 2, 0, 1}),
                                   LiteralUtil::CreateR1<float>({0, 1, 2, 3, 4, 5, 6, 7})});
  std::vector<Literal> parts = result.DecomposeTuple();
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[0], LiteralUtil::CreateR1<int32_t>({0, 0, 1, 1, 1, 2, 2, 2}));
  EXPECT_EQ(parts[1], LiteralUtil::CreateR1<float>({3, 6, 1, 4, 7, 0, 2, 5}));
}

TEST(CpuSort, ThreeOperandsAlongTheMiddleDimensionWithATieBreak) {
  // f32 keys, s32 and s8 values (9 bytes a record), sorted along the middle
  // dimension of [3,50,4] by key then by the s32 value: records of several
  // operands, slices strided in memory, every tie broken the same way as
  // the interpreter.
  constexpr absl::string_view kText = R"(
HloModule sort
lt {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  c = s32[] parameter(2)
  d = s32[] parameter(3)
  e = s8[] parameter(4)
  f = s8[] parameter(5)
  lt_key = pred[] compare(a, b), direction=LT
  eq_key = pred[] compare(a, b), direction=EQ
  lt_value = pred[] compare(c, d), direction=LT
  tie = pred[] and(eq_key, lt_value)
  ROOT lt = pred[] or(lt_key, tie)
}
ENTRY e {
  keys = f32[3,50,4] parameter(0)
  values = s32[3,50,4] parameter(1)
  bytes = s8[3,50,4] parameter(2)
  ROOT s = (f32[3,50,4], s32[3,50,4], s8[3,50,4]) sort(keys, values, bytes), dimensions={1},
      to_apply=lt
}
)";
  std::vector<Literal> arguments = cpu::testing::MakeTestArguments(std::string(kText));
  // Few distinct keys, so the tie-break decides most comparisons.
  for (int64_t i = 0; i < arguments[0].element_count(); ++i) {
    arguments[0].SetFromDouble(i, static_cast<double>((i * 7) % 5));
  }
  RunBoth(kText, arguments);
}

TEST(CpuSort, DescendingComparatorOnS64WithValues) {
  constexpr absl::string_view kText = R"(
HloModule sort
gt {
  a = s64[] parameter(0)
  b = s64[] parameter(1)
  c = u8[] parameter(2)
  d = u8[] parameter(3)
  ROOT gt = pred[] compare(a, b), direction=GT
}
ENTRY e {
  keys = s64[2,4] parameter(0)
  values = u8[2,4] parameter(1)
  ROOT s = (s64[2,4], u8[2,4]) sort(keys, values), dimensions={1}, to_apply=gt
}
)";
  Literal result = RunBoth(
      kText, {LiteralUtil::CreateR2<int64_t>({{5, -9, 100, 7}, {int64_t{1} << 40, 0, -1, 3}}),
              LiteralUtil::CreateR2<uint8_t>({{0, 1, 2, 3}, {4, 5, 6, 7}})});
  std::vector<Literal> parts = result.DecomposeTuple();
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[0],
            LiteralUtil::CreateR2<int64_t>({{100, 7, 5, -9}, {int64_t{1} << 40, 3, 0, -1}}));
  EXPECT_EQ(parts[1], LiteralUtil::CreateR2<uint8_t>({{2, 3, 0, 1}, {4, 7, 5, 6}}));
}

TEST(CpuSort, NanKeysUnderTotalOrder) {
  constexpr absl::string_view kText = R"(
HloModule sort
lt {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT lt = pred[] compare(a, b), direction=LT, type=TOTALORDER
}
ENTRY e {
  p = f32[7] parameter(0)
  ROOT s = f32[7] sort(p), dimensions={0}, to_apply=lt
}
)";
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  Literal result =
      RunBoth(kText, {LiteralUtil::CreateR1<float>({nan, 1, -inf, 0.0f, -0.0f, inf, -nan})});
  auto data = result.data<float>();
  ASSERT_EQ(data.size(), 7u);
  // -NaN < -inf < -0 < 0 < 1 < inf < NaN.
  EXPECT_TRUE(std::isnan(data[0]) && std::signbit(data[0]));
  EXPECT_EQ(data[1], -inf);
  EXPECT_TRUE(data[2] == 0 && std::signbit(data[2]));
  EXPECT_TRUE(data[3] == 0 && !std::signbit(data[3]));
  EXPECT_EQ(data[4], 1);
  EXPECT_EQ(data[5], inf);
  EXPECT_TRUE(std::isnan(data[6]) && !std::signbit(data[6]));
}

TEST(CpuSort, ComparatorThatIsNoOrderStaysInBounds) {
  // A constant-true comparator is no strict weak order: any permutation is
  // an answer, but the run must not crash.
  constexpr absl::string_view kText = R"(
HloModule sort
yes {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT t = pred[] constant(true)
}
ENTRY e {
  p = f32[100] parameter(0)
  ROOT s = f32[100] sort(p), dimensions={0}, to_apply=yes
}
)";
  std::vector<float> values(100);
  for (int i = 0; i < 100; ++i) values[i] = static_cast<float>(i);
  absl::StatusOr<Literal> result = RunOn("cpu", kText, {LiteralUtil::CreateR1<float>(values)});
  ASSERT_TRUE(result.ok()) << result.status();
  std::vector<float> sorted(result->data<float>().begin(), result->data<float>().end());
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, values);
}

TEST(CpuSort, ComparatorWithANonScalarIsUnimplementedNamingIt) {
  absl::StatusOr<Literal> result = RunOn("cpu", R"(
HloModule sort
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT z = f32[] add(x, y)
}
lt {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  v = f32[2] broadcast(a), dimensions={}
  zero = f32[] constant(0)
  s = f32[] reduce(v, zero), dimensions={0}, to_apply=add
  ROOT c = pred[] compare(s, b), direction=LT
}
ENTRY e {
  p = f32[4] parameter(0)
  ROOT s = f32[4] sort(p), dimensions={0}, to_apply=lt
}
)",
                                         {LiteralUtil::CreateR1<float>({1, 2, 3, 4})});
  ASSERT_FALSE(result.ok());
  EXPECT_TRUE(absl::IsUnimplemented(result.status())) << result.status();
  EXPECT_NE(result.status().message().find("lt"), absl::string_view::npos) << result.status();
}

TEST(CpuSort, InsideAWhileLoop) {
  constexpr absl::string_view kText = R"(
HloModule sort
lt {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT lt = pred[] compare(a, b), direction=LT
}
cond {
  s = (s32[], f32[5]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(3)
  ROOT c = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[5]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[5] get-tuple-element(s), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  neg = f32[5] negate(x)
  y = f32[5] sort(neg), dimensions={0}, to_apply=lt
  ROOT r = (s32[], f32[5]) tuple(j, y)
}
ENTRY e {
  p = f32[5] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[5]) tuple(zero, p)
  w = (s32[], f32[5]) while(init), condition=cond, body=body
  ROOT x = f32[5] get-tuple-element(w), index=1
}
)";
  Literal result = RunBoth(kText, {LiteralUtil::CreateR1<float>({4, -2, 9, 0, 1})});
  EXPECT_EQ(result, LiteralUtil::CreateR1<float>({-9, -4, -1, -0.0f, 2}));
}

TEST(CpuScatter, AddWithCollidingAndOutOfBoundsIndices) {
  constexpr absl::string_view kText = R"(
HloModule scatter
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}
ENTRY e {
  operand = f32[5,3] parameter(0)
  indices = s32[4] parameter(1)
  updates = f32[4,3] parameter(2)
  ROOT s = f32[5,3] scatter(operand, indices, updates), update_window_dims={1},
      inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
}
)";
  Literal operand =
      LiteralUtil::CreateR2<float>({{0, 0, 0}, {1, 1, 1}, {2, 2, 2}, {3, 3, 3}, {4, 4, 4}});
  Literal result = RunBoth(
      kText, {operand.Clone(), LiteralUtil::CreateR1<int32_t>({1, 3, 1, 5}),
              LiteralUtil::CreateR2<float>({{10, 20, 30}, {1, 2, 3}, {100, 200, 300}, {7, 7, 7}})});
  // Row 1 gets two updates, index 5 is out of bounds and skipped.
  EXPECT_EQ(result, LiteralUtil::CreateR2<float>(
                        {{0, 0, 0}, {111, 221, 331}, {2, 2, 2}, {4, 5, 6}, {4, 4, 4}}));
}

TEST(CpuScatter, OneRowPerIndexWithIndexVectorsAndEveryIndexType) {
  // An embedding gradient's scatter (one index per update, each update a
  // whole row): the row-per-index path, with indices below 0, past the end
  // and colliding, as [n] and as [n,1] index vectors of several types.
  for (const char* type : {"s32", "u8", "s64"}) {
    for (bool vectors : {false, true}) {
      const std::string indices = absl::StrCat(type, vectors ? "[7,1]" : "[7]", " parameter(1)");
      const std::string text = absl::StrCat(R"(
HloModule scatter
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}
ENTRY e {
  operand = f32[9,40] parameter(0)
  indices = )",
                                            indices, R"(
  updates = f32[7,40] parameter(2)
  ROOT s = f32[9,40] scatter(operand, indices, updates), update_window_dims={1},
      inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
})");
      SCOPED_TRACE(text);
      std::vector<Literal> arguments = cpu::testing::MakeTestArguments(text);
      const std::vector<int64_t> values = {3, 0, 8, 3, 9, 200, std::string(type) == "u8" ? 7 : -1};
      Literal index_literal(arguments[1].shape());
      for (size_t i = 0; i < values.size(); ++i) {
        index_literal.SetIntegral(static_cast<int64_t>(i), values[i]);
      }
      arguments[1] = std::move(index_literal);
      RunBoth(text, arguments);
    }
  }
}

// Enough rows for the one-row-per-update path to split the operand's rows
// across the pool: rows updated many times (by updates far apart) still
// combine in update order, bit for bit the interpreter's sums.
TEST(CpuScatter, OneRowPerIndexSplitAcrossThreadsKeepsUpdateOrder) {
  const std::string text = R"(
HloModule scatter
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}
ENTRY e {
  operand = f32[301,128] parameter(0)
  indices = s32[1100] parameter(1)
  updates = f32[1100,128] parameter(2)
  ROOT s = f32[301,128] scatter(operand, indices, updates), update_window_dims={1},
      inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
})";
  std::vector<Literal> arguments = cpu::testing::MakeTestArguments(text);
  Literal index_literal(arguments[1].shape());
  for (int64_t i = 0; i < 1100; ++i) {
    // Rows 0-9 and 291-300 collide often; some indices are out of bounds.
    const int64_t row = i % 7 == 0 ? i % 10 : i % 11 == 0 ? 300 - i % 10 : (i * 37) % 320 - 5;
    index_literal.SetIntegral(i, row);
  }
  arguments[1] = std::move(index_literal);
  RunBoth(text, arguments);
}

// The one-row-per-update path on rows of every length the AVX-512 add
// handles (whole vectors, a masked tail, less than one vector), f32 and
// 32-bit integers (wrapping), with fewer updates than the prefetch runs
// ahead and with colliding and out-of-bounds indices: bit for bit the
// interpreter's sums.
TEST(CpuScatter, OneRowPerIndexAddsRowsOfEveryLength) {
  for (const char* type : {"f32", "s32", "u32", "f64"}) {
    for (int64_t length : {1, 15, 16, 40, 64}) {
      for (int64_t count : {3, 90}) {
        const std::string text = absl::StrCat(
            "HloModule scatter\nadd {\n  a = ", type, "[] parameter(0)\n  b = ", type,
            "[] parameter(1)\n  ROOT c = ", type, "[] add(a, b)\n}\nENTRY e {\n  operand = ", type,
            "[37,", length, "] parameter(0)\n  indices = s32[", count,
            "] parameter(1)\n  updates = ", type, "[", count, ",", length,
            "] parameter(2)\n  ROOT s = ", type, "[37,", length,
            "] scatter(operand, indices, updates), update_window_dims={1}, "
            "inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, "
            "to_apply=add\n}\n");
        SCOPED_TRACE(text);
        std::vector<Literal> arguments = cpu::testing::MakeTestArguments(text);
        Literal index_literal(arguments[1].shape());
        for (int64_t i = 0; i < count; ++i) {
          index_literal.SetIntegral(i, i % 5 == 0 ? 3 : i % 7 == 0 ? -2 : (i * 13) % 41);
        }
        arguments[1] = std::move(index_literal);
        RunBoth(text, arguments);
      }
    }
  }
}

TEST(CpuScatter, RowCombinersOnEachTypeAndWindowPlacement) {
  // The inline row ops (add, multiply, overwrite on f32/f64/s32/u64, rows
  // along the minor dimension) and the element walk (a window that is not
  // the minor dimension; a combiner that is not one op) agree with the
  // interpreter bit for bit, wrapping integers and colliding indices too.
  struct Case {
    const char* type;
    const char* root;
  };
  for (const Case& c : std::vector<Case>{{"f32", "add(a, b)"},
                                         {"f64", "multiply(b, a)"},
                                         {"s32", "add(a, b)"},
                                         {"u64", "multiply(a, b)"},
                                         {"f32", "b"},
                                         {"f32", "subtract(a, b)"},
                                         {"s32", "maximum(a, b)"}}) {
    for (const char* window : {"update_window_dims={1,2}, inserted_window_dims={0}, "
                               "scatter_dims_to_operand_dims={0}",
                               "update_window_dims={0,2}, inserted_window_dims={1}, "
                               "scatter_dims_to_operand_dims={1}"}) {
      const bool rows_of_dim_0 = std::string(window).find("{1,2}") != std::string::npos;
      const std::string updates = rows_of_dim_0 ? "[6,4,33]" : "[6,6,33]";
      // "b": the combiner returns its update parameter (an overwrite).
      const std::string body =
          std::string(c.root) == "b"
              ? absl::StrCat("  a = ", c.type, "[] parameter(0)\n  ROOT b = ", c.type,
                             "[] parameter(1)\n")
              : absl::StrCat("  a = ", c.type, "[] parameter(0)\n  b = ", c.type,
                             "[] parameter(1)\n  ROOT c = ", c.type, "[] ", c.root, "\n");
      const std::string text = absl::StrCat(
          "HloModule scatter\ncombine {\n", body, "}\nENTRY e {\n", "  operand = ", c.type,
          "[6,4,33] parameter(0)\n  indices = s32[6] parameter(1)\n", "  updates = ", c.type,
          updates, " parameter(2)\n  ROOT s = ", c.type,
          "[6,4,33] scatter(operand, indices, updates), ", window,
          ", index_vector_dim=1, to_apply=combine\n}\n");
      SCOPED_TRACE(text);
      std::vector<Literal> arguments = cpu::testing::MakeTestArguments(text);
      arguments[1] = LiteralUtil::CreateR1<int32_t>({1, 0, 1, 7, -1, 3});
      RunBoth(text, arguments);
    }
  }
}

TEST(CpuScatter, MaxAndMinRowsKeepNanTieAndSignRules) {
  // The inline max / min rows (JAX's `.at[i].max` / `.at[i].min`, vmapped:
  // batching dimensions) against the interpreter bit for bit: NaNs in the
  // operand and in the updates, -0 against +0 both ways, negative s32 and
  // s64 (compared signed), colliding indices; maximum(b, a) (the update
  // first) stays on the combiner's walk.
  struct Case {
    const char* type;
    const char* root;
  };
  for (const Case& c : std::vector<Case>{{"f32", "maximum(a, b)"},
                                         {"f32", "minimum(a, b)"},
                                         {"f64", "maximum(a, b)"},
                                         {"f32", "maximum(b, a)"},
                                         {"s32", "minimum(a, b)"},
                                         {"s64", "maximum(a, b)"}}) {
    const std::string text = absl::StrCat(
        "HloModule scatter\ncombine {\n  a = ", c.type, "[] parameter(0)\n  b = ", c.type,
        "[] parameter(1)\n  ROOT c = ", c.type, "[] ", c.root,
        "\n}\nENTRY e {\n  operand = ", c.type,
        "[3,8,33] parameter(0)\n  indices = s32[3,5,1] parameter(1)\n  updates = ", c.type,
        "[3,5,33] parameter(2)\n  ROOT s = ", c.type,
        "[3,8,33] scatter(operand, indices, updates), update_window_dims={2}, "
        "inserted_window_dims={1}, scatter_dims_to_operand_dims={1}, input_batching_dims={0}, "
        "scatter_indices_batching_dims={0}, index_vector_dim=2, to_apply=combine\n}\n");
    SCOPED_TRACE(text);
    std::vector<Literal> arguments = cpu::testing::MakeTestArguments(text);
    arguments[1] = LiteralUtil::CreateFromDimensions<int32_t>(
        {3, 5, 1}, {1, 0, 1, 9, -1, 7, 7, 2, 3, 7, 0, 5, 0, 5, 0});
    const bool floating = c.type[0] == 'f';
    for (int64_t j = 0; j < 33; ++j) {
      for (int64_t b = 0; b < 3; ++b) {
        for (int64_t s = 0; s < 5; ++s) {
          const double nan = std::numeric_limits<double>::quiet_NaN();
          double update = (j % 5 == 0 && floating) ? nan : (j % 3 == 0 ? -0.0 : 0.5 * (j - s - 9));
          if (j % 7 == 1 && floating) update = 0.0;
          if (c.type[1] == '3' && c.type[0] == 'f') {
            arguments[2].Set<float>({b, s, j}, static_cast<float>(update));
          } else if (floating) {
            arguments[2].Set<double>({b, s, j}, update);
          } else if (c.type[1] == '3') {
            arguments[2].Set<int32_t>({b, s, j}, static_cast<int32_t>(update * 2));
          } else {
            arguments[2].Set<int64_t>({b, s, j}, static_cast<int64_t>(update * 2) << 40);
          }
        }
        for (int64_t r = 0; r < 8; ++r) {
          const double nan = std::numeric_limits<double>::quiet_NaN();
          const double value = j % 4 == 0 && floating ? nan : (j % 7 == 1 ? -0.0 : 0.25 * (r - j));
          if (c.type[1] == '3' && c.type[0] == 'f') {
            arguments[0].Set<float>({b, r, j}, static_cast<float>(value));
          } else if (floating) {
            arguments[0].Set<double>({b, r, j}, value);
          } else if (c.type[1] == '3') {
            arguments[0].Set<int32_t>({b, r, j}, static_cast<int32_t>(value * 4));
          } else {
            arguments[0].Set<int64_t>({b, r, j}, static_cast<int64_t>(value * 4) << 40);
          }
        }
      }
    }
    RunBoth(text, arguments);
  }
}

TEST(CpuScatter, OverwriteWithTwoDimensionalWindowsPartlyOutOfBounds) {
  // 2x2 windows of a 4x4 operand at (row, col) starts; a window that would
  // reach past the edge (start 3 in a dimension of 4) is skipped entirely,
  // as is a negative start.
  constexpr absl::string_view kText = R"(
HloModule scatter
take {
  a = s32[] parameter(0)
  ROOT b = s32[] parameter(1)
}
ENTRY e {
  operand = s32[4,4] parameter(0)
  indices = s64[4,2] parameter(1)
  updates = s32[4,2,2] parameter(2)
  ROOT s = s32[4,4] scatter(operand, indices, updates), update_window_dims={1,2},
      inserted_window_dims={}, scatter_dims_to_operand_dims={0,1}, index_vector_dim=1,
      to_apply=take
}
)";
  Literal operand(ShapeUtil::MakeShape(S32, {4, 4}));
  Literal updates = LiteralUtil::CreateFromDimensions<int32_t>(
      {4, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16});
  Literal result = RunBoth(
      kText, {operand.Clone(), LiteralUtil::CreateR2<int64_t>({{0, 0}, {2, 1}, {3, 0}, {-1, 2}}),
              updates.Clone()});
  EXPECT_EQ(result, LiteralUtil::CreateR2<int32_t>(
                        {{1, 2, 0, 0}, {3, 4, 0, 0}, {0, 5, 6, 0}, {0, 7, 8, 0}}));
}

TEST(CpuScatter, VariadicWithTupleCombinerAndScalarIndices) {
  // Two operands updated together; indices are a scalar per update
  // (index_vector_dim = rank of indices).
  constexpr absl::string_view kText = R"(
HloModule scatter
combine {
  a = f32[] parameter(0)
  b = s32[] parameter(1)
  c = f32[] parameter(2)
  d = s32[] parameter(3)
  m = f32[] maximum(a, c)
  s = s32[] add(b, d)
  ROOT t = (f32[], s32[]) tuple(m, s)
}
ENTRY e {
  x = f32[6] parameter(0)
  y = s32[6] parameter(1)
  indices = u32[5] parameter(2)
  ux = f32[5] parameter(3)
  uy = s32[5] parameter(4)
  ROOT s = (f32[6], s32[6]) scatter(x, y, indices, ux, uy), update_window_dims={},
      inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1,
      to_apply=combine
}
)";
  Literal result = RunBoth(kText, {LiteralUtil::CreateR1<float>({0, 1, 2, 3, 4, 5}),
                                   LiteralUtil::CreateR1<int32_t>({0, 0, 0, 0, 0, 0}),
                                   LiteralUtil::CreateR1<uint32_t>({2, 2, 0, 4000000000u, 5}),
                                   LiteralUtil::CreateR1<float>({-1, 9, 7, 1, 0.5f}),
                                   LiteralUtil::CreateR1<int32_t>({1, 10, 100, 1000, 10000})});
  std::vector<Literal> parts = result.DecomposeTuple();
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[0], LiteralUtil::CreateR1<float>({7, 1, 9, 3, 4, 5}));
  EXPECT_EQ(parts[1], LiteralUtil::CreateR1<int32_t>({100, 0, 11, 0, 0, 10000}));
}

TEST(CpuScatter, IndexVectorDimFirstAndRankThreeOperand) {
  constexpr absl::string_view kText = R"(
HloModule scatter
mul {
  a = f64[] parameter(0)
  b = f64[] parameter(1)
  ROOT c = f64[] multiply(a, b)
}
ENTRY e {
  operand = f64[3,4,2] parameter(0)
  indices = s32[2,3] parameter(1)
  updates = f64[3,2] parameter(2)
  ROOT s = f64[3,4,2] scatter(operand, indices, updates), update_window_dims={1},
      inserted_window_dims={0,1}, scatter_dims_to_operand_dims={0,1}, index_vector_dim=0,
      to_apply=mul
}
)";
  std::vector<double> values(24);
  for (int i = 0; i < 24; ++i) values[i] = i + 1;
  RunBoth(kText, {LiteralUtil::CreateFromDimensions<double>({3, 4, 2}, values),
                  LiteralUtil::CreateR2<int32_t>({{0, 2, 2}, {3, 1, 1}}),
                  LiteralUtil::CreateR2<double>({{2, 3}, {0.5, -1}, {4, 4}})});
}

TEST(CpuScatter, BatchingDimensions) {
  constexpr absl::string_view kText = R"(
HloModule scatter
add {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT c = s32[] add(a, b)
}
ENTRY e {
  operand = s32[2,5] parameter(0)
  indices = s32[2,3,1] parameter(1)
  updates = s32[2,3] parameter(2)
  ROOT s = s32[2,5] scatter(operand, indices, updates), update_window_dims={},
      inserted_window_dims={1}, input_batching_dims={0}, scatter_indices_batching_dims={0},
      scatter_dims_to_operand_dims={1}, index_vector_dim=2, to_apply=add
}
)";
  Literal operand(ShapeUtil::MakeShape(S32, {2, 5}));
  Literal indices = LiteralUtil::CreateFromDimensions<int32_t>({2, 3, 1}, {0, 4, 4, 1, 9, 2});
  Literal result = RunBoth(kText, {operand.Clone(), indices.Clone(),
                                   LiteralUtil::CreateR2<int32_t>({{1, 2, 3}, {4, 5, 6}})});
  EXPECT_EQ(result, LiteralUtil::CreateR2<int32_t>({{1, 0, 0, 0, 5}, {0, 4, 6, 0, 0}}));
}

// vmapped scatters (operand_batching_dims) over more than 1 MiB of
// operand: each thread copies and updates its own range of the batch
// (the outermost dimension), updates in order. Colliding indices (the
// sums' order shows), out-of-bounds ones, an add, a max, an overwrite,
// 9 batches over 2 threads (an uneven split); with the batching
// dimension not outermost, one thread as before. Bit for bit the
// interpreter's.
TEST(CpuScatter, BatchedScattersSplitByBatchKeepUpdateOrder) {
  const std::string combiners = R"(
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] maximum(a, b)
}
set {
  a = f32[] parameter(0)
  ROOT b = f32[] parameter(1)
}
)";
  for (const char* combiner : {"add", "max", "set"}) {
    SCOPED_TRACE(combiner);
    const std::string outer = absl::StrCat("HloModule m\n", combiners, R"(
ENTRY e {
  operand = f32[9,512,64] parameter(0)
  indices = s32[9,200,1] parameter(1)
  updates = f32[9,200,64] parameter(2)
  ROOT s = f32[9,512,64] scatter(operand, indices, updates), update_window_dims={2},
      inserted_window_dims={1}, input_batching_dims={0}, scatter_indices_batching_dims={0},
      scatter_dims_to_operand_dims={1}, index_vector_dim=2, to_apply=)",
                                           combiner, "\n}\n");
    const std::string inner = absl::StrCat("HloModule m\n", combiners, R"(
ENTRY e {
  operand = f32[512,9,64] parameter(0)
  indices = s32[9,200,1] parameter(1)
  updates = f32[9,200,64] parameter(2)
  ROOT s = f32[512,9,64] scatter(operand, indices, updates), update_window_dims={2},
      inserted_window_dims={0}, input_batching_dims={1}, scatter_indices_batching_dims={0},
      scatter_dims_to_operand_dims={0}, index_vector_dim=2, to_apply=)",
                                           combiner, "\n}\n");
    for (const std::string& text : {outer, inner}) {
      std::vector<Literal> arguments = cpu::testing::MakeTestArguments(text);
      Literal index_literal(arguments[1].shape());
      for (int64_t i = 0; i < 9 * 200; ++i) {
        // Rows 0-9 collide often; some indices are out of bounds.
        const int64_t row = i % 5 == 0 ? i % 10 : (i * 37) % 530 - 9;
        index_literal.SetIntegral(i, row);
      }
      arguments[1] = std::move(index_literal);
      RunBoth(text, arguments);
    }
  }
}

TEST(CpuScatter, EmptyUpdatesCopyTheOperand) {
  constexpr absl::string_view kText = R"(
HloModule scatter
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}
ENTRY e {
  operand = f32[3] parameter(0)
  indices = s32[0,1] parameter(1)
  updates = f32[0] parameter(2)
  ROOT s = f32[3] scatter(operand, indices, updates), update_window_dims={},
      inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
}
)";
  Literal result = RunBoth(
      kText, {LiteralUtil::CreateR1<float>({1, 2, 3}), Literal(ShapeUtil::MakeShape(S32, {0, 1})),
              Literal(ShapeUtil::MakeShape(F32, {0}))});
  EXPECT_EQ(result, LiteralUtil::CreateR1<float>({1, 2, 3}));
}

TEST(CpuScatter, IntoAScalarBroadcastTheThunkFills) {
  // The operand is a scalar constant broadcast (JAX's zeros for an
  // embedding's gradient) that the scatter thunk fills in itself: zero and
  // non-zero scalars of 2, 4 and 8 bytes; the parallel one-row-per-update
  // path (rows filled by the threads that combine into them; split for the
  // updates or for a large fill), the element
  // walk, a window along the minor dimension, and no updates at all.
  struct Case {
    const char* type;
    const char* value;
    const char* root;
    const char* shape;
    const char* indices;
    const char* updates;
    const char* window;
    int64_t bound;  // the size of the operand dimension indexed
  };
  const char* rows =
      "update_window_dims={1}, inserted_window_dims={0}, "
      "scatter_dims_to_operand_dims={0}, index_vector_dim=1";
  const char* columns =
      "update_window_dims={0}, inserted_window_dims={1}, "
      "scatter_dims_to_operand_dims={1}, index_vector_dim=1";
  for (const Case& c : std::vector<Case>{
           {"f32", "0", "add(a, b)", "[301,128]", "[1100]", "[1100,128]", rows, 301},
           {"f32", "1.5", "multiply(a, b)", "[301,128]", "[1100]", "[1100,128]", rows, 301},
           // Few updates into a filled table of more than 1 MiB: split for
           // its fill (an embedding's gradient).
           {"f32", "0", "add(a, b)", "[5000,64]", "[1024]", "[1024,64]", rows, 5000},
           {"f32", "-2", "add(a, b)", "[40,9]", "[7]", "[40,7]", columns, 9},
           {"f16", "0.25", "add(a, b)", "[33,17]", "[50]", "[50,17]", rows, 33},
           {"s64", "7", "maximum(a, b)", "[20,5]", "[30]", "[30,5]", rows, 20},
           {"f32", "3", "add(a, b)", "[3,4]", "[0]", "[0,4]", rows, 3}}) {
    const std::string text = absl::StrCat(
        "HloModule scatter\ncombine {\n  a = ", c.type, "[] parameter(0)\n  b = ", c.type,
        "[] parameter(1)\n  ROOT c = ", c.type, "[] ", c.root, "\n}\nENTRY e {\n  v = ", c.type,
        "[] constant(", c.value, ")\n  operand = ", c.type, c.shape,
        " broadcast(v), dimensions={}\n  indices = s32", c.indices,
        " parameter(0)\n  updates = ", c.type, c.updates, " parameter(1)\n  ROOT s = ", c.type,
        c.shape, " scatter(operand, indices, updates), ", c.window, ", to_apply=combine\n}\n");
    SCOPED_TRACE(text);
    std::vector<Literal> arguments = cpu::testing::MakeTestArguments(text);
    Literal index_literal(arguments[0].shape());
    const int64_t count = ShapeUtil::ElementsIn(arguments[0].shape());
    for (int64_t i = 0; i < count; ++i) {
      // Colliding indices and some out of bounds (skipped).
      index_literal.SetIntegral(i, (i * 37) % (c.bound + 10) - 5);
    }
    arguments[0] = std::move(index_literal);
    RunBoth(text, arguments);
  }
}

TEST(CpuScatter, ScatterFillsOnlyAnOperandBroadcastItAloneReads) {
  constexpr absl::string_view kText = R"(
HloModule m
fill {
  c = f32[] constant(0)
  ROOT b = f32[8,4] broadcast(c), dimensions={}
}
fill2 {
  c = f32[] constant(0)
  ROOT b = f32[8,4] broadcast(c), dimensions={}
}
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}
ENTRY e {
  indices = s32[3] parameter(0)
  updates = f32[3,4] parameter(1)
  zeros = f32[8,4] fusion(), kind=kLoop, calls=fill
  other = f32[8,4] fusion(), kind=kLoop, calls=fill2
  s = f32[8,4] scatter(zeros, indices, updates), update_window_dims={1}, inserted_window_dims={0},
      scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
  t = f32[8,4] scatter(other, indices, updates), update_window_dims={1}, inserted_window_dims={0},
      scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
  ROOT r = (f32[8,4], f32[8,4], f32[8,4]) tuple(s, t, other)
})";
  auto module = ParseAndReturnUnverifiedModule(kText);
  ASSERT_TRUE(module.ok()) << module.status();
  const HloComputation* entry = (*module)->entry_computation();
  const HloInstruction* zeros = nullptr;
  const HloInstruction* other = nullptr;
  for (const HloInstruction* instruction : entry->instructions()) {
    if (instruction->name() == "zeros") zeros = instruction;
    if (instruction->name() == "other") other = instruction;
  }
  ASSERT_NE(zeros, nullptr);
  ASSERT_NE(other, nullptr);
  const Literal* fill = cpu::ScatterFillsOperand(*zeros);
  ASSERT_NE(fill, nullptr);
  EXPECT_EQ(*fill, LiteralUtil::CreateR0<float>(0));
  // Also read by the tuple: it needs its own buffer.
  EXPECT_EQ(cpu::ScatterFillsOperand(*other), nullptr);
  std::vector<Literal> arguments;
  arguments.push_back(LiteralUtil::CreateR1<int32_t>({1, 7, 1}));
  arguments.push_back(cpu::testing::MakeTestArguments(std::string(kText))[1].Clone());
  RunBoth(kText, arguments);
}

constexpr absl::string_view kMaxPoolGrad = R"(
HloModule sas
ge {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=GE
}
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}
ENTRY e {
  operand = f32[4,5] parameter(0)
  source = f32[%s] parameter(1)
  init = f32[] constant(0)
  ROOT s = f32[4,5] select-and-scatter(operand, source, init), window={%s}, select=ge,
      scatter=add
}
)";

std::string MaxPoolGrad(const std::string& source_dims, const std::string& window) {
  std::string text(kMaxPoolGrad);
  text.replace(text.find("%s"), 2, source_dims);
  text.replace(text.find("%s"), 2, window);
  return text;
}

TEST(CpuSelectAndScatter, LargePoolsSplitAcrossThreadsWhereWindowsDoNotOverlap) {
  // Enough windows for the inline walk to split the source's dimension 0
  // across the pool: a batch dimension (window 1), a dimension 0 whose
  // windows leave gaps (stride 3, size 2), and one whose windows overlap
  // (stride 1, size 2: not split). Then padded pools, whose edge windows
  // leave out the padding: a flax max_pool(padding='SAME') gradient, one
  // with a last window wholly in the padding (nothing selected) and
  // negative padding, and one whose windows overlap along the innermost
  // dimension. Ties (repeated values) test the select order; results equal
  // the interpreter's bit for bit.
  struct Case {
    const char* operand;
    const char* source;
    const char* window;
  };
  for (const Case& c : std::vector<Case>{
           {"[8,32,32,16]", "[8,16,16,16]", "size=1x2x2x1 stride=1x2x2x1"},
           {"[32,16,64]", "[11,8,64]", "size=2x2x1 stride=3x2x1"},
           {"[20,16,64]", "[19,8,64]", "size=2x2x1 stride=1x2x1"},
           {"[8,32,32,16]", "[8,16,16,16]", "size=1x3x3x1 stride=1x2x2x1 pad=0_0x0_1x0_1x0_0"},
           {"[4,7,9,24]", "[4,4,6,24]", "size=1x3x3x1 stride=1x2x2x1 pad=0_0x1_2x0_4x0_0"},
           {"[4,9,24]", "[4,3,24]", "size=1x3x1 stride=1x2x1 pad=0_0x-1_0x0_0"},
           {"[6,40,70]", "[6,20,70]", "size=1x3x3 stride=1x2x1 pad=0_0x1_1x1_1"}}) {
    const std::string text =
        absl::StrCat(R"(
HloModule sas
ge {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=GE
}
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}
ENTRY e {
  operand = f32)",
                     c.operand, R"( parameter(0)
  source = f32)",
                     c.source, R"( parameter(1)
  init = f32[] constant(0.5)
  ROOT s = f32)",
                     c.operand, R"( select-and-scatter(operand, source, init), window={)", c.window,
                     R"(}, select=ge, scatter=add
})");
    SCOPED_TRACE(text);
    std::vector<Literal> arguments = cpu::testing::MakeTestArguments(text);
    Literal operand(arguments[0].shape());
    const int64_t count = ShapeUtil::ElementsIn(operand.shape());
    auto* values = static_cast<float*>(operand.untyped_data());
    for (int64_t i = 0; i < count; ++i) values[i] = static_cast<float>((i * 7919) % 13);
    arguments[0] = std::move(operand);
    RunBoth(text, arguments);
  }
}

TEST(CpuSelectAndScatter, NonOverlappingWindows) {
  Literal operand = LiteralUtil::CreateR2<float>(
      {{1, 9, 2, 3, 0}, {4, 5, 8, 1, 7}, {0, 0, 6, 6, 2}, {3, 2, 1, 6, 9}});
  Literal result = RunBoth(MaxPoolGrad("2,2", "size=2x2 stride=2x2"),
                           {operand.Clone(), LiteralUtil::CreateR2<float>({{10, 20}, {30, 40}})});
  // Maxima: 9 at (0,1), 8 at (1,2), 3 at (3,0), the first 6 at (2,2); GE keeps
  // the earlier of equal values.
  EXPECT_EQ(result, LiteralUtil::CreateR2<float>(
                        {{0, 10, 0, 0, 0}, {0, 0, 20, 0, 0}, {0, 0, 40, 0, 0}, {30, 0, 0, 0, 0}}));
}

TEST(CpuSelectAndScatter, OverlappingWindowsWithPadding) {
  Literal operand = LiteralUtil::CreateR2<float>(
      {{1, 9, 2, 3, 0}, {4, 5, 8, 1, 7}, {0, 0, 6, 6, 2}, {3, 2, 1, 6, 9}});
  // 3x3 windows, stride 1, padding 1 on each side: every window overlaps
  // its neighbours and the edge windows reach into padding.
  std::vector<float> source(20);
  for (int i = 0; i < 20; ++i) source[i] = static_cast<float>(i + 1);
  RunBoth(MaxPoolGrad("4,5", "size=3x3 stride=1x1 pad=1_1x1_1"),
          {operand.Clone(), LiteralUtil::CreateFromDimensions<float>({4, 5}, source)});
  // Asymmetric padding, stride 2, window dilation.
  RunBoth(MaxPoolGrad("2,3", "size=2x2 stride=2x2 pad=0_1x1_1"),
          {operand.Clone(), LiteralUtil::CreateR2<float>({{1, 2, 3}, {4, 5, 6}})});
  RunBoth(MaxPoolGrad("3,2", "size=2x2 stride=1x2 rhs_dilate=2x2 pad=1_0x0_0"),
          {operand.Clone(), LiteralUtil::CreateR2<float>({{1, 2}, {3, 4}, {5, 6}})});
}

TEST(CpuSelectAndScatter, EveryDirectionWithNansAndTiesInlineOrCompiled) {
  // The inline f32 path (IEEE compare, add) and the compiled one (a
  // total-order compare) pick the interpreter's elements bit for bit,
  // with NaNs, ties and overlapping windows inside the operand.
  std::vector<float> values(48);
  for (int i = 0; i < 48; ++i) values[i] = static_cast<float>((i * 7) % 5);
  values[5] = std::numeric_limits<float>::quiet_NaN();
  values[20] = std::numeric_limits<float>::quiet_NaN();
  values[33] = -std::numeric_limits<float>::infinity();
  for (const char* direction : {"GE", "GT", "LE", "LT"}) {
    for (const char* type : {"", ", type=TOTALORDER"}) {
      for (const char* window : {"size=2x2 stride=2x2", "size=3x3 stride=1x1"}) {
        const bool halves = std::string(window).find("stride=2x2") != std::string::npos;
        const std::string source_dims = halves ? "3,4" : "4,6";
        const std::string text = absl::StrCat(
            "HloModule sas\nselect {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
            "  ROOT c = pred[] compare(a, b), direction=",
            direction, type,
            "\n}\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
            "  ROOT c = f32[] add(a, b)\n}\nENTRY e {\n  operand = f32[6,8] parameter(0)\n"
            "  source = f32[",
            source_dims,
            "] parameter(1)\n  init = f32[] constant(0.5)\n"
            "  ROOT s = f32[6,8] select-and-scatter(operand, source, init), window={",
            window, "}, select=select, scatter=add\n}\n");
        SCOPED_TRACE(text);
        const int64_t sources = halves ? 12 : 24;
        std::vector<float> source(sources);
        for (int i = 0; i < sources; ++i) source[i] = 0.25f * static_cast<float>(i + 1);
        RunBoth(text, {LiteralUtil::CreateFromDimensions<float>({6, 8}, values),
                       LiteralUtil::CreateFromDimensions<float>({halves ? 3 : 4, halves ? 4 : 6},
                                                                source)});
      }
    }
  }
}

TEST(CpuSelectAndScatter, IntegerMinSelectWithMultiplyScatter) {
  constexpr absl::string_view kText = R"(
HloModule sas
le {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=LE
}
mul {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT c = s32[] multiply(a, b)
}
ENTRY e {
  operand = s32[6] parameter(0)
  source = s32[3] parameter(1)
  init = s32[] constant(1)
  ROOT s = s32[6] select-and-scatter(operand, source, init), window={size=3 stride=2 pad=1_0},
      select=le, scatter=mul
}
)";
  Literal result = RunBoth(kText, {LiteralUtil::CreateR1<int32_t>({5, 2, 7, 2, 9, -1}),
                                   LiteralUtil::CreateR1<int32_t>({3, 5, 7})});
  // Windows: [pad,5,2] -> 2 at 1; [2,7,2] -> first 2 at 1; [2,9,-1] -> -1 at 5.
  EXPECT_EQ(result, LiteralUtil::CreateR1<int32_t>({1, 15, 1, 1, 1, 7}));
}

}  // namespace
}  // namespace axle
