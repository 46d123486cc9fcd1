//===- scatter_thunk_test.cc - scatter and select-and-scatter on the GPU ---===//
//
// Everywhere: each kernel's PTX combines the way its computation allows
// (native atomics, a compare-and-swap loop, a lock, plain stores for unique
// indices) and ptxas accepts it for sm_90; malformed instructions are
// errors naming them. On a GPU (skipped, with a message, without one):
// each runs on device buffers and matches the interpreter (exactly, or
// within float rounding where atomics add in another order). Indices
// include out-of-bounds ones, which skip their whole update window.
//
//===----------------------------------------------------------------------===//
#include "axle/gpu/scatter_thunk.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "axle/gpu/gpu_thunk_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace axle::gpu {
namespace {

using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using ::testing::Not;

ThunkFactory ScatterFactory(const PtxOptions& options = PtxOptions()) {
  return [options](const HloInstruction& instruction, GpuThunkValues values) {
    return MakeScatterThunk(instruction, std::move(values), options);
  };
}

ThunkFactory SelectAndScatterFactory(const PtxOptions& options = PtxOptions()) {
  return [options](const HloInstruction& instruction, GpuThunkValues values) {
    return MakeSelectAndScatterThunk(instruction, std::move(values), options);
  };
}

// A one-operand scatter of type T whose combiner's root is `root` (on
// parameters `a` = current and `b` = update), with `attributes` after the
// to_apply.
std::string Scatter(const std::string& type, const std::string& root, const std::string& operand,
                    const std::string& indices, const std::string& updates,
                    const std::string& dimension_numbers, const std::string& extra = "") {
  // "assign": the root is the update parameter.
  const std::string combiner =
      root == "assign" ? "  a = $T[] parameter(0)\n  ROOT b = $T[] parameter(1)\n"
                       : "  a = $T[] parameter(0)\n  b = $T[] parameter(1)\n  ROOT" + root + "\n";
  return absl::StrReplaceAll(R"(
HloModule m
combine {
)" + combiner + R"(}
ENTRY e {
  operand = $T[$OPERAND] parameter(0)
  indices = $INDICES parameter(1)
  updates = $T[$UPDATES] parameter(2)
  ROOT s = $T[$OPERAND] scatter(operand, indices, updates), $DIMS, to_apply=combine $EXTRA
})",
                             {{"$T", type},
                              {"$OPERAND", operand},
                              {"$INDICES", indices},
                              {"$UPDATES", updates},
                              {"$DIMS", dimension_numbers},
                              {"$EXTRA", extra}});
}

// Rows of an embedding: f32[100,8] operand, s32[50,1] indices.
constexpr char kRows[] =
    "update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, "
    "index_vector_dim=1";

// --- PTX, everywhere ------------------------------------------------------

TEST(ScatterThunkPtxTest, AddIsANativeAtomic) {
  auto test =
      MakeFromText(Scatter("f32", " r = f32[] add(a, b)", "100,8", "s32[50,1]", "50,8", kRows),
                   ScatterFactory());
  ASSERT_TRUE(test.ok()) << test.status();
  EXPECT_EQ(test->ptx_thunk().kernel_names(), std::vector<std::string>{"scatter"});
  EXPECT_EQ(test->thunk->scratch_bytes(), 0);
  EXPECT_THAT(test->ptx(),
              ContainsRegex("(atom|red)(\\.relaxed\\.gpu|\\.gpu)?\\.global\\.add\\.f32"));
  EXPECT_THAT(test->ptx(), Not(HasSubstr("cas")));
  ExpectPtxasAccepts(test->ptx());
  for (const char* type : {"f64", "s32", "u32", "s64", "u64", "c64", "c128"}) {
    SCOPED_TRACE(type);
    auto typed = MakeFromText(Scatter(type, absl::StrCat(" r = ", type, "[] add(b, a)"), "100,8",
                                      "s32[50,1]", "50,8", kRows),
                              ScatterFactory());
    ASSERT_TRUE(typed.ok()) << typed.status();
    EXPECT_THAT(typed->ptx(), Not(HasSubstr("cas")));
    EXPECT_THAT(typed->ptx(), ContainsRegex("(atom|red)[a-z.]*\\.add"));
    ExpectPtxasAccepts(typed->ptx());
  }
}

TEST(ScatterThunkPtxTest, IntegerMaxMinAndBitwiseAreNativeAtomics) {
  for (const auto& [type, op, instruction] :
       std::vector<std::tuple<std::string, std::string, std::string>>{{"s32", "maximum", "max.s32"},
                                                                      {"u32", "minimum", "min.u32"},
                                                                      {"s64", "minimum", "min.s64"},
                                                                      {"u64", "or", "or.b64"},
                                                                      {"s32", "xor", "xor.b32"}}) {
    SCOPED_TRACE(absl::StrCat(type, " ", op));
    auto test = MakeFromText(Scatter(type, absl::StrCat(" r = ", type, "[] ", op, "(a, b)"),
                                     "100,8", "s32[50,1]", "50,8", kRows),
                             ScatterFactory());
    ASSERT_TRUE(test.ok()) << test.status();
    EXPECT_THAT(test->ptx(), HasSubstr(instruction));
    EXPECT_THAT(test->ptx(), Not(HasSubstr("cas")));
    ExpectPtxasAccepts(test->ptx());
  }
}

TEST(ScatterThunkPtxTest, OtherComputationsUseCompareAndSwap) {
  // Float max (NaN-propagating), a multi-op computation, sub-word types.
  for (const auto& [type, root, width] :
       std::vector<std::tuple<std::string, std::string, std::string>>{
           {"f32", " r = f32[] maximum(a, b)", "b32"},
           {"f64", " r = f64[] multiply(a, b)", "b64"},
           {"bf16", " r = bf16[] add(a, b)", "b32"},
           {"f16", " r = f16[] minimum(a, b)", "b32"},
           {"s8", " r = s8[] add(a, b)", "b32"},
           {"pred", " r = pred[] or(a, b)", "b32"},
           {"s16", " r = s16[] multiply(a, b)", "b32"},
           {"c64", " r = c64[] multiply(a, b)", "b64"}}) {
    SCOPED_TRACE(absl::StrCat(type, root));
    auto test =
        MakeFromText(Scatter(type, root, "100,8", "s32[50,1]", "50,8", kRows), ScatterFactory());
    ASSERT_TRUE(test.ok()) << test.status();
    EXPECT_THAT(test->ptx(), ContainsRegex("atom(\\.global)?\\.cas\\." + width));
    ExpectPtxasAccepts(test->ptx());
  }
  // a * b + a, where a is the current value.
  auto multi = MakeFromText(R"(
HloModule m
combine {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  m = f32[] multiply(a, b)
  ROOT r = f32[] add(m, a)
}
ENTRY e {
  operand = f32[100,8] parameter(0)
  indices = s32[50,1] parameter(1)
  updates = f32[50,8] parameter(2)
  ROOT s = f32[100,8] scatter(operand, indices, updates), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=combine
})",
                            ScatterFactory());
  ASSERT_TRUE(multi.ok()) << multi.status();
  EXPECT_THAT(multi->ptx(), HasSubstr("atom.global.cas.b32"));
  ExpectPtxasAccepts(multi->ptx());
}

TEST(ScatterThunkPtxTest, UniqueIndicesAndAssignmentStorePlainly) {
  auto unique = MakeFromText(Scatter("f32", " r = f32[] multiply(a, b)", "100,8", "s32[50,1]",
                                     "50,8", kRows, ", unique_indices=true"),
                             ScatterFactory());
  ASSERT_TRUE(unique.ok()) << unique.status();
  EXPECT_THAT(unique->ptx(), Not(HasSubstr("atom")));
  EXPECT_THAT(unique->ptx(), HasSubstr("mul.rn.f32"));
  ExpectPtxasAccepts(unique->ptx());
  auto assign = MakeFromText(Scatter("bf16", "assign", "100,8", "s32[50,1]", "50,8", kRows),
                             ScatterFactory());
  ASSERT_TRUE(assign.ok()) << assign.status();
  EXPECT_THAT(assign->ptx(), Not(HasSubstr("atom")));
  ExpectPtxasAccepts(assign->ptx());
}

TEST(ScatterThunkPtxTest, SeveralOperandsTakeALockPerElement) {
  auto test = MakeFromText(R"(
HloModule m
combine {
  a0 = f32[] parameter(0)
  a1 = s32[] parameter(1)
  b0 = f32[] parameter(2)
  b1 = s32[] parameter(3)
  s0 = f32[] add(a0, b0)
  s1 = s32[] maximum(a1, b1)
  ROOT r = (f32[], s32[]) tuple(s0, s1)
}
ENTRY e {
  o0 = f32[64] parameter(0)
  o1 = s32[64] parameter(1)
  i = s64[300] parameter(2)
  u0 = f32[300] parameter(3)
  u1 = s32[300] parameter(4)
  ROOT s = (f32[64], s32[64]) scatter(o0, o1, i, u0, u1), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=combine
})",
                           ScatterFactory());
  ASSERT_TRUE(test.ok()) << test.status();
  EXPECT_EQ(test->thunk->scratch_bytes(), 64 * 4);
  EXPECT_THAT(test->ptx(), HasSubstr("atom.global.cas.b32"));
  EXPECT_THAT(test->ptx(), HasSubstr("ld.volatile.global"));
  EXPECT_THAT(test->ptx(), HasSubstr("membar.gl"));
  ExpectPtxasAccepts(test->ptx());
}

TEST(ScatterThunkPtxTest, DimensionNumbers) {
  // Index vectors along dimension 0, windows in the middle of the updates,
  // batching dimensions, scalar indices.
  const std::vector<std::string> texts = {
      Scatter("f32", " r = f32[] add(a, b)", "10,9,8", "s32[2,5,3]", "5,3,4,8",
              "update_window_dims={2,3}, inserted_window_dims={0}, "
              "scatter_dims_to_operand_dims={0,1}, index_vector_dim=0"),
      Scatter("s32", " r = s32[] add(a, b)", "6,7,5", "u8[6,4]", "6,4,5",
              "update_window_dims={2}, inserted_window_dims={1}, input_batching_dims={0}, "
              "scatter_indices_batching_dims={0}, scatter_dims_to_operand_dims={1}, "
              "index_vector_dim=2"),
      Scatter("f64", " r = f64[] add(a, b)", "17", "s64[]", "3",
              "update_window_dims={0}, inserted_window_dims={}, "
              "scatter_dims_to_operand_dims={0}, index_vector_dim=0"),
  };
  for (const std::string& text : texts) {
    auto test = MakeFromText(text, ScatterFactory());
    ASSERT_TRUE(test.ok()) << test.status() << "\n" << text;
    ExpectPtxasAccepts(test->ptx());
  }
}

TEST(ScatterThunkPtxTest, Errors) {
  auto mismatch =
      MakeFromText(Scatter("f32", " r = f32[] add(a, b)", "100,8", "s32[50,1]", "51,8", kRows),
                   ScatterFactory());
  EXPECT_EQ(mismatch.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(mismatch.status().message(), HasSubstr("scatter s"));
  auto float_indices =
      MakeFromText(Scatter("f32", " r = f32[] add(a, b)", "100,8", "f32[50,1]", "50,8", kRows),
                   ScatterFactory());
  EXPECT_EQ(float_indices.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(float_indices.status().message(), HasSubstr("f32"));
  auto f8 = MakeFromText(
      Scatter("f8e5m2", " r = f8e5m2[] add(a, b)", "100,8", "s32[50,1]", "50,8", kRows),
      ScatterFactory());
  EXPECT_EQ(f8.status().code(), absl::StatusCode::kUnimplemented);
}

const char kMaxPoolGradient[] = R"(
HloModule m
select {
  a = $T[] parameter(0)
  b = $T[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=$SELECT
}
scatter {
  a = $T[] parameter(0)
  b = $T[] parameter(1)
  ROOT s = $T[] add(a, b)
}
ENTRY e {
  operand = $T[$OPERAND] parameter(0)
  source = $T[$SOURCE] parameter(1)
  init = $T[] parameter(2)
  ROOT r = $T[$OPERAND] select-and-scatter(operand, source, init), window={$WINDOW}, select=select, scatter=scatter
})";

std::string SelectAndScatter(const std::string& type, const std::string& operand,
                             const std::string& source, const std::string& window,
                             const std::string& direction = "GE") {
  return absl::StrReplaceAll(kMaxPoolGradient, {{"$T", type},
                                                {"$OPERAND", operand},
                                                {"$SOURCE", source},
                                                {"$WINDOW", window},
                                                {"$SELECT", direction}});
}

TEST(SelectAndScatterThunkPtxTest, MaxPoolGradient) {
  auto test = MakeFromText(SelectAndScatter("f32", "8,32,32,16", "8,16,16,16",
                                            "size=1x3x3x1 stride=1x2x2x1 pad=0_0x1_1x1_1x0_0"),
                           SelectAndScatterFactory());
  ASSERT_TRUE(test.ok()) << test.status();
  EXPECT_EQ(test->ptx_thunk().kernel_names(),
            (std::vector<std::string>{"fill", "select_and_scatter"}));
  EXPECT_THAT(test->ptx(), ContainsRegex("setp\\.(ge|ltu)\\.f32"));
  EXPECT_THAT(test->ptx(), ContainsRegex("(atom|red)[a-z.]*\\.add\\.f32"));
  ExpectPtxasAccepts(test->ptx());
  for (const char* type : {"f64", "bf16", "s32", "f16"}) {
    SCOPED_TRACE(type);
    auto typed =
        MakeFromText(SelectAndScatter(type, "5,11", "5,11",
                                      "size=1x3 stride=1x2 lhs_dilate=1x2 pad=0_0x1_1", "LT"),
                     SelectAndScatterFactory());
    ASSERT_TRUE(typed.ok()) << typed.status();
    ExpectPtxasAccepts(typed->ptx());
  }
}

TEST(SelectAndScatterThunkPtxTest, Errors) {
  auto bad_source = MakeFromText(SelectAndScatter("f32", "8,8", "3,3", "size=2x2 stride=2x2"),
                                 SelectAndScatterFactory());
  EXPECT_EQ(bad_source.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad_source.status().message(), HasSubstr("select-and-scatter r"));
}

// --- On a GPU -----------------------------------------------------------------

class ScatterThunkDeviceTest : public GpuThunkDeviceTest {
 protected:
  // Inputs for `text`'s parameters: operands and updates in [low, high],
  // indices (the parameter named "indices" or "i") in [index_low, index_high].
  std::vector<Literal> Inputs(const std::string& text, double low, double high, double index_low,
                              double index_high, uint32_t seed = 11) {
    auto module = ParseAndReturnUnverifiedModule(text);
    EXPECT_TRUE(module.ok()) << module.status();
    std::vector<Literal> inputs;
    const HloComputation& entry = *(*module)->entry_computation();
    for (int64_t p = 0; p < entry.num_parameters(); ++p) {
      const HloInstruction* parameter = entry.parameter_instruction(p);
      const bool is_index = parameter->name() == "indices" || parameter->name() == "i";
      inputs.push_back(RandomLiteral(parameter->shape(), seed + static_cast<uint32_t>(p),
                                     is_index ? index_low : low, is_index ? index_high : high));
    }
    return inputs;
  }

  void Expect(const std::string& text, double low, double high, double index_low, double index_high,
              const ErrorSpec* error = nullptr, bool in_place = false) {
    ExpectMatchesInterpreter(text, ScatterFactory(DeviceOptions()),
                             Inputs(text, low, high, index_low, index_high), error, in_place);
  }
};

TEST_F(ScatterThunkDeviceTest, EmbeddingGradientAdd) {
  // Many updates to the same rows; some rows out of bounds (-3..102).
  const ErrorSpec error(1e-4, 1e-5);
  Expect(Scatter("f32", " r = f32[] add(a, b)", "100,8", "s32[500,1]", "500,8", kRows), -1, 1, -3,
         102, &error);
  Expect(Scatter("f64", " r = f64[] add(a, b)", "100,8", "s64[500,1]", "500,8", kRows), -1, 1, -3,
         102, &error);
  // Integer sums are exact in any order.
  Expect(Scatter("s32", " r = s32[] add(a, b)", "100,8", "u16[500,1]", "500,8", kRows), -100, 100,
         0, 105);
  Expect(Scatter("u64", " r = u64[] add(a, b)", "100,8", "s8[500,1]", "500,8", kRows), 0, 1000, -3,
         102);
  Expect(Scatter("c64", " r = c64[] add(a, b)", "100,8", "s32[500,1]", "500,8", kRows), -1, 1, -3,
         102, &error);
}

TEST_F(ScatterThunkDeviceTest, MaxMinAndBitwise) {
  Expect(Scatter("s32", " r = s32[] maximum(a, b)", "100,8", "s32[500,1]", "500,8", kRows), -1000,
         1000, -3, 102);
  Expect(Scatter("u32", " r = u32[] minimum(b, a)", "100,8", "s32[500,1]", "500,8", kRows), 0, 1000,
         -3, 102);
  Expect(Scatter("f32", " r = f32[] maximum(a, b)", "100,8", "s32[500,1]", "500,8", kRows), -10, 10,
         -3, 102);
  Expect(Scatter("f64", " r = f64[] minimum(a, b)", "100,8", "s32[500,1]", "500,8", kRows), -10, 10,
         -3, 102);
  Expect(Scatter("s64", " r = s64[] xor(a, b)", "100,8", "s32[500,1]", "500,8", kRows), -1e9, 1e9,
         -3, 102);
  Expect(Scatter("pred", " r = pred[] or(a, b)", "100,8", "s32[500,1]", "500,8", kRows), 0, 1, -3,
         102);
}

TEST_F(ScatterThunkDeviceTest, SubWordCompareAndSwap) {
  // Neighbouring elements of one 32-bit word updated at once.
  const ErrorSpec error(0.5, 1e-2);
  Expect(Scatter("bf16", " r = bf16[] maximum(a, b)", "100,8", "s32[500,1]", "500,8", kRows), -10,
         10, -3, 102);
  Expect(Scatter("f16", " r = f16[] minimum(a, b)", "100,8", "s32[500,1]", "500,8", kRows), -10, 10,
         -3, 102);
  Expect(Scatter("s8", " r = s8[] maximum(a, b)", "100,3", "s32[500,1]", "500,3", kRows), -100, 100,
         -3, 102);
  Expect(Scatter("u16", " r = u16[] add(a, b)", "100,5", "s32[500,1]", "500,5", kRows), 0, 100, -3,
         102);
  // bf16 sums round differently in another order: a tolerance.
  Expect(Scatter("bf16", " r = bf16[] add(a, b)", "100,8", "s32[200,1]", "200,8", kRows), -1, 1, -3,
         102, &error);
}

TEST_F(ScatterThunkDeviceTest, MultiOpComputation) {
  // max(a, b) * 2 - a is not commutative across updates: the indices are
  // unique (a permutation) so the result is order-free.
  const std::string text = R"(
HloModule m
combine {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  m = f32[] maximum(a, b)
  two = f32[] constant(2)
  t = f32[] multiply(m, two)
  ROOT r = f32[] subtract(t, a)
}
ENTRY e {
  operand = f32[64,4] parameter(0)
  indices = s32[64] parameter(1)
  updates = f32[64,4] parameter(2)
  ROOT s = f32[64,4] scatter(operand, indices, updates), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=combine
})";
  std::vector<Literal> inputs = Inputs(text, -5, 5, 0, 0);
  for (int32_t i = 0; i < 64; ++i) inputs[1].data<int32_t>()[i] = (i * 37 + 5) % 64;
  ExpectMatchesInterpreter(text, ScatterFactory(DeviceOptions()), inputs);
  // The same with duplicates through the compare-and-swap loop, with an
  // order-free computation: sum of squares of updates.
  const std::string squares = R"(
HloModule m
combine {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  bb = f32[] multiply(b, b)
  ROOT r = f32[] add(a, bb)
}
ENTRY e {
  operand = f32[50,4] parameter(0)
  indices = s32[400] parameter(1)
  updates = f32[400,4] parameter(2)
  ROOT s = f32[50,4] scatter(operand, indices, updates), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=combine
})";
  const ErrorSpec error(1e-4, 1e-5);
  Expect(squares, -2, 2, -2, 52, &error);
}

TEST_F(ScatterThunkDeviceTest, AssignWithUniqueIndices) {
  const std::string text =
      Scatter("s32", "assign", "64,3", "s32[64,1]", "64,3", kRows, ", unique_indices=true");
  std::vector<Literal> inputs = Inputs(text, -100, 100, 0, 0);
  for (int32_t i = 0; i < 64; ++i) inputs[1].data<int32_t>()[i] = (i * 13 + 7) % 64;
  inputs[1].data<int32_t>()[5] = 64;  // out of bounds: skipped
  inputs[1].data<int32_t>()[9] = -1;
  ExpectMatchesInterpreter(text, ScatterFactory(DeviceOptions()), inputs);
  // Assignment without the attribute (native store: still one writer each).
  const std::string plain = Scatter("bf16", "assign", "64,3", "s32[64,1]", "64,3", kRows);
  std::vector<Literal> plain_inputs = Inputs(plain, -100, 100, 0, 0);
  for (int32_t i = 0; i < 64; ++i) plain_inputs[1].data<int32_t>()[i] = (i * 13 + 7) % 64;
  ExpectMatchesInterpreter(plain, ScatterFactory(DeviceOptions()), plain_inputs);
}

TEST_F(ScatterThunkDeviceTest, DimensionNumbers) {
  const ErrorSpec error(1e-4, 1e-5);
  // Index vectors along dimension 0 of the indices; 2-d windows.
  Expect(Scatter("f32", " r = f32[] add(a, b)", "10,9,8", "s32[2,5,3]", "5,3,4,8",
                 "update_window_dims={2,3}, inserted_window_dims={0}, "
                 "scatter_dims_to_operand_dims={0,1}, index_vector_dim=0"),
         -1, 1, -1, 7, &error);
  // Window dimensions before the scatter dimensions, scatter into dim 1.
  Expect(Scatter("s32", " r = s32[] add(a, b)", "4,30,3", "s32[7,2]", "4,3,7,2",
                 "update_window_dims={0,1}, inserted_window_dims={1}, "
                 "scatter_dims_to_operand_dims={1}, index_vector_dim=2"),
         -10, 10, -1, 31);
  // Batching dimensions (a batched gather's gradient).
  Expect(Scatter("s32", " r = s32[] add(a, b)", "6,7,5", "u8[6,4]", "6,4,5",
                 "update_window_dims={2}, inserted_window_dims={1}, input_batching_dims={0}, "
                 "scatter_indices_batching_dims={0}, scatter_dims_to_operand_dims={1}, "
                 "index_vector_dim=2"),
         -10, 10, 0, 7);
  // A scalar index: one update window.
  Expect(Scatter("f64", " r = f64[] add(a, b)", "17", "s64[]", "3",
                 "update_window_dims={0}, inserted_window_dims={}, "
                 "scatter_dims_to_operand_dims={0}, index_vector_dim=0"),
         -1, 1, 0, 14, &error);
  // Windows partly out of bounds in a window dimension: skipped whole.
  Expect(Scatter("s32", " r = s32[] add(a, b)", "20,6", "s32[30,2]", "30,3,4",
                 "update_window_dims={1,2}, inserted_window_dims={}, "
                 "scatter_dims_to_operand_dims={0,1}, index_vector_dim=1"),
         -10, 10, -1, 19);
}

TEST_F(ScatterThunkDeviceTest, SeveralOperandsUnderLocks) {
  const std::string text = R"(
HloModule m
combine {
  a0 = f32[] parameter(0)
  a1 = s32[] parameter(1)
  b0 = f32[] parameter(2)
  b1 = s32[] parameter(3)
  s0 = f32[] add(a0, b0)
  s1 = s32[] maximum(a1, b1)
  ROOT r = (f32[], s32[]) tuple(s0, s1)
}
ENTRY e {
  o0 = f32[64] parameter(0)
  o1 = s32[64] parameter(1)
  i = s64[3000] parameter(2)
  u0 = f32[3000] parameter(3)
  u1 = s32[3000] parameter(4)
  ROOT s = (f32[64], s32[64]) scatter(o0, o1, i, u0, u1), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=combine
})";
  const ErrorSpec error(1e-3, 1e-5);
  Expect(text, -10, 10, -1, 64, &error);
  // Argmax-style: the pair (value, index) of the largest value; ties keep
  // the smaller index, so the result is order-free.
  const std::string argmax = R"(
HloModule m
combine {
  a0 = f32[] parameter(0)
  a1 = s32[] parameter(1)
  b0 = f32[] parameter(2)
  b1 = s32[] parameter(3)
  gt = pred[] compare(b0, a0), direction=GT
  eq = pred[] compare(b0, a0), direction=EQ
  lt = pred[] compare(b1, a1), direction=LT
  tie = pred[] and(eq, lt)
  take = pred[] or(gt, tie)
  v = f32[] select(take, b0, a0)
  k = s32[] select(take, b1, a1)
  ROOT r = (f32[], s32[]) tuple(v, k)
}
ENTRY e {
  o0 = f32[40] parameter(0)
  o1 = s32[40] parameter(1)
  i = s32[2000] parameter(2)
  u0 = f32[2000] parameter(3)
  u1 = s32[2000] parameter(4)
  ROOT s = (f32[40], s32[40]) scatter(o0, o1, i, u0, u1), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=combine
})";
  Expect(argmax, 0, 50, 0, 39);
}

TEST_F(ScatterThunkDeviceTest, InPlaceAndEmpty) {
  const ErrorSpec error(1e-4, 1e-5);
  Expect(Scatter("f32", " r = f32[] add(a, b)", "100,8", "s32[500,1]", "500,8", kRows), -1, 1, -3,
         102, &error, /*in_place=*/true);
  Expect(Scatter("f32", " r = f32[] add(a, b)", "100,8", "s32[0,1]", "0,8", kRows), -1, 1, 0, 5);
}

class SelectAndScatterThunkDeviceTest : public GpuThunkDeviceTest {
 protected:
  void Expect(const std::string& text, double low, double high, const ErrorSpec* error) {
    auto module = ParseAndReturnUnverifiedModule(text);
    ASSERT_TRUE(module.ok()) << module.status();
    const HloComputation& entry = *(*module)->entry_computation();
    std::vector<Literal> inputs;
    for (int64_t p = 0; p < entry.num_parameters(); ++p) {
      inputs.push_back(RandomLiteral(entry.parameter_instruction(p)->shape(),
                                     21 + static_cast<uint32_t>(p), low, high));
    }
    ExpectMatchesInterpreter(text, SelectAndScatterFactory(DeviceOptions()), inputs, error);
  }
};

TEST_F(SelectAndScatterThunkDeviceTest, MaxPoolGradients) {
  const ErrorSpec error(1e-4, 1e-5);
  // Overlapping 3x3 windows, stride 2, padding: elements selected by
  // several windows sum their sources atomically.
  Expect(SelectAndScatter("f32", "4,17,17,8", "4,9,9,8",
                          "size=1x3x3x1 stride=1x2x2x1 pad=0_0x1_1x1_1x0_0"),
         -10, 10, &error);
  // Integer values: ties between window elements (the first one wins).
  Expect(SelectAndScatter("s32", "3,12,12", "3,6,6", "size=1x2x2 stride=1x2x2"), -3, 3, nullptr);
  Expect(SelectAndScatter("f64", "5,11", "5,5", "size=1x3 stride=1x2 pad=0_0x0_0", "LE"), -4, 4,
         &error);
  // Base and window dilation.
  Expect(SelectAndScatter("f32", "5,11", "5,11", "size=1x3 stride=1x2 lhs_dilate=1x2 pad=0_0x1_1"),
         -5, 5, &error);
  Expect(SelectAndScatter("s32", "2,20", "2,8", "size=1x3 stride=1x2 rhs_dilate=1x2"), -9, 9,
         nullptr);
  // bf16 through the compare-and-swap loop.
  const ErrorSpec loose(0.1, 1e-2);
  Expect(SelectAndScatter("bf16", "2,16,16", "2,8,8", "size=1x3x3 stride=1x2x2 pad=0_0x1_1x1_1"),
         -4, 4, &loose);
}

}  // namespace
}  // namespace axle::gpu
