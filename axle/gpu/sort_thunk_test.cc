//===- sort_thunk_test.cc - sort as Axle's own GPU kernels -----------------===//
//
// Everywhere: each sort's PTX has the kernels it launches and ptxas accepts
// it for sm_90; malformed and unsupported sorts are errors naming the
// instruction. On a GPU (skipped, with a message, without one): each sort
// runs on device buffers and matches the interpreter exactly (the GPU's
// order is the stable one, as the interpreter's).
//
//===----------------------------------------------------------------------===//
#include "axle/gpu/sort_thunk.h"

#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "axle/gpu/gpu_thunk_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace axle::gpu {
namespace {

using ::testing::HasSubstr;

ThunkFactory SortFactory(int64_t max_tile = 0, const PtxOptions& options = PtxOptions()) {
  return [max_tile, options](const HloInstruction& instruction, GpuThunkValues values) {
    return MakeSortThunk(instruction, std::move(values), options, max_tile);
  };
}

// A sort of `shapes` (one parameter each) along `dimension` whose
// comparator compares the first operand by `direction` (and `type`).
std::string SortText(const std::vector<std::string>& shapes, int64_t dimension,
                     const std::string& direction, const std::string& type = "",
                     bool stable = false) {
  std::string key_type = shapes[0].substr(0, shapes[0].find('['));
  std::string comparator = "compare {\n";
  for (size_t i = 0; i < shapes.size(); ++i) {
    const std::string scalar = shapes[i].substr(0, shapes[i].find('[')) + "[]";
    absl::StrAppend(&comparator, "  a", i, " = ", scalar, " parameter(", 2 * i, ")\n", "  b", i,
                    " = ", scalar, " parameter(", 2 * i + 1, ")\n");
  }
  absl::StrAppend(&comparator, "  ROOT c = pred[] compare(a0, b0), direction=", direction,
                  type.empty() ? "" : absl::StrCat(", type=", type), "\n}\n");
  std::string entry = "ENTRY e {\n";
  std::string operands, result;
  for (size_t i = 0; i < shapes.size(); ++i) {
    absl::StrAppend(&entry, "  p", i, " = ", shapes[i], " parameter(", i, ")\n");
    absl::StrAppend(&operands, i == 0 ? "" : ", ", "p", i);
    absl::StrAppend(&result, i == 0 ? "" : ", ", shapes[i]);
  }
  if (shapes.size() > 1) result = absl::StrCat("(", result, ")");
  absl::StrAppend(&entry, "  ROOT s = ", result, " sort(", operands, "), dimensions={", dimension,
                  "}, to_apply=compare", stable ? ", is_stable=true" : "", "\n}\n");
  return absl::StrCat("HloModule m\n", comparator, entry);
}

// --- PTX, everywhere ------------------------------------------------------

TEST(SortThunkPtxTest, OneOperandFitsATile) {
  auto test = MakeFromText(SortText({"f32[1000]"}, 0, "LT"), SortFactory());
  ASSERT_TRUE(test.ok()) << test.status();
  EXPECT_EQ(test->ptx_thunk().kernel_names(), std::vector<std::string>{"sort_tile"});
  EXPECT_EQ(test->thunk->scratch_bytes(), 0);
  const std::string& ptx = test->ptx();
  EXPECT_THAT(ptx, HasSubstr(".entry sort_tile("));
  EXPECT_THAT(ptx, HasSubstr(".shared"));
  EXPECT_THAT(ptx, HasSubstr("bar.sync"));
  EXPECT_THAT(ptx, HasSubstr("setp.lt.f32"));
  ExpectPtxasAccepts(ptx);
}

TEST(SortThunkPtxTest, KeysAndIotaSpanningTiles) {
  // 12-byte records: 4096 a tile; rows of 5000 take several launches.
  auto test = MakeFromText(SortText({"f32[8,5000]", "s32[8,5000]"}, 1, "GT"), SortFactory());
  ASSERT_TRUE(test.ok()) << test.status();
  EXPECT_EQ(test->ptx_thunk().kernel_names(), (std::vector<std::string>{"sort_tile", "sort_step"}));
  EXPECT_EQ(test->thunk->scratch_bytes(), 8 * 5000 * 4);
  EXPECT_THAT(test->ptx(), HasSubstr(".entry sort_step("));
  ExpectPtxasAccepts(test->ptx());
}

TEST(SortThunkPtxTest, ThreeOperandsOfMixedTypes) {
  for (const char* direction : {"LT", "GT"}) {
    auto test = MakeFromText(
        SortText({"bf16[4,300]", "s32[4,300]", "f64[4,300]"}, 1, direction, "TOTALORDER"),
        SortFactory());
    ASSERT_TRUE(test.ok()) << test.status();
    ExpectPtxasAccepts(test->ptx());
  }
}

TEST(SortThunkPtxTest, KeyTypes) {
  for (const char* type :
       {"f32", "f64", "bf16", "f16", "s32", "u8", "s8", "s16", "u64", "s64", "pred", "u32"}) {
    SCOPED_TRACE(type);
    const std::string compare_type =
        std::string(type) == "f32" || std::string(type) == "f64" ? "TOTALORDER" : "";
    auto test =
        MakeFromText(SortText({absl::StrCat(type, "[37,65]"), "c64[37,65]"}, 0, "LT", compare_type),
                     SortFactory());
    ASSERT_TRUE(test.ok()) << test.status();
    ExpectPtxasAccepts(test->ptx());
  }
}

TEST(SortThunkPtxTest, MultiOpComparator) {
  // Lexicographic on (a, b), then by |c| descending.
  auto test = MakeFromText(R"(
HloModule m
compare {
  a0 = s32[] parameter(0)
  a1 = s32[] parameter(1)
  b0 = f32[] parameter(2)
  b1 = f32[] parameter(3)
  c0 = f64[] parameter(4)
  c1 = f64[] parameter(5)
  eq_a = pred[] compare(a0, a1), direction=EQ
  lt_a = pred[] compare(a0, a1), direction=LT
  eq_b = pred[] compare(b0, b1), direction=EQ
  lt_b = pred[] compare(b0, b1), direction=LT, type=TOTALORDER
  abs0 = f64[] abs(c0)
  abs1 = f64[] abs(c1)
  gt_c = pred[] compare(abs0, abs1), direction=GT
  by_c = pred[] select(eq_b, gt_c, lt_b)
  ROOT r = pred[] select(eq_a, by_c, lt_a)
}
ENTRY e {
  p0 = s32[2000] parameter(0)
  p1 = f32[2000] parameter(1)
  p2 = f64[2000] parameter(2)
  ROOT s = (s32[2000], f32[2000], f64[2000]) sort(p0, p1, p2), dimensions={0}, to_apply=compare
})",
                           SortFactory());
  ASSERT_TRUE(test.ok()) << test.status();
  ExpectPtxasAccepts(test->ptx());
}

// JAX's total order for floats as XLA leaves it: NaNs canonical, -0 as 0,
// then the bits as s32 (a scalar bitcast), negatives flipped.
constexpr char kJaxArgsort[] = R"(
HloModule m
compare {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ia = s32[] parameter(2)
  ib = s32[] parameter(3)
  c.nan = f32[] constant(nan)
  c.zero = f32[] constant(0)
  c.izero = s32[] constant(0)
  c.max = s32[] constant(2147483647)
  ne.a = pred[] compare(a, a), direction=NE
  ne.b = pred[] compare(b, b), direction=NE
  eq.a = pred[] compare(a, c.zero), direction=EQ
  eq.b = pred[] compare(b, c.zero), direction=EQ
  z.a = f32[] select(eq.a, c.zero, a)
  z.b = f32[] select(eq.b, c.zero, b)
  n.a = f32[] select(ne.a, c.nan, z.a)
  n.b = f32[] select(ne.b, c.nan, z.b)
  bits.a = s32[] bitcast(n.a)
  bits.b = s32[] bitcast(n.b)
  x.a = s32[] xor(c.max, bits.a)
  x.b = s32[] xor(c.max, bits.b)
  neg.a = pred[] compare(bits.a, c.izero), direction=LT
  neg.b = pred[] compare(bits.b, c.izero), direction=LT
  k.a = s32[] select(neg.a, x.a, bits.a)
  k.b = s32[] select(neg.b, x.b, bits.b)
  ROOT lt = pred[] compare(k.a, k.b), direction=LT
}
ENTRY e {
  keys = f32[5,3000] parameter(0)
  iota = s32[5,3000] parameter(1)
  ROOT s = (f32[5,3000], s32[5,3000]) sort(keys, iota), dimensions={1}, is_stable=true, to_apply=compare
})";

TEST(SortThunkPtxTest, JaxTotalOrderComparatorWithScalarBitcasts) {
  auto test = MakeFromText(kJaxArgsort, SortFactory());
  ASSERT_TRUE(test.ok()) << test.status();
  ExpectPtxasAccepts(test->ptx());
}

TEST(SortThunkPtxTest, ForcedSmallTile) {
  auto test = MakeFromText(SortText({"f32[3,100]"}, 1, "LT"), SortFactory(/*max_tile=*/16));
  ASSERT_TRUE(test.ok()) << test.status();
  EXPECT_EQ(test->ptx_thunk().kernel_names(), (std::vector<std::string>{"sort_tile", "sort_step"}));
  ExpectPtxasAccepts(test->ptx());
  auto bad = MakeFromText(SortText({"f32[3,100]"}, 1, "LT"), SortFactory(/*max_tile=*/12));
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(SortThunkPtxTest, Errors) {
  auto f8 = MakeFromText(SortText({"f8e4m3fn[10]"}, 0, "LT"), SortFactory());
  EXPECT_EQ(f8.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(f8.status().message(), HasSubstr("s"));
  EXPECT_THAT(f8.status().message(), HasSubstr("f8e4m3fn"));

  auto layout = MakeFromText(R"(
HloModule m
compare {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=LT
}
ENTRY e {
  p = f32[4,5]{0,1} parameter(0)
  ROOT s = f32[4,5]{0,1} sort(p), dimensions={1}, to_apply=compare
})",
                             SortFactory());
  EXPECT_EQ(layout.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(layout.status().message(), HasSubstr("row-major"));

  auto values = MakeFromText(SortText({"f32[10]"}, 0, "LT"),
                             [](const HloInstruction& instruction, GpuThunkValues values) {
                               values.outputs.push_back(7);
                               return MakeSortThunk(instruction, std::move(values));
                             });
  EXPECT_EQ(values.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(values.status().message(), HasSubstr("sort s"));

  auto arch = MakeFromText(SortText({"f32[10]"}, 0, "LT"),
                           SortFactory(0, PtxOptions{.arch = "compute_90"}));
  EXPECT_EQ(arch.status().code(), absl::StatusCode::kInvalidArgument);
}

// --- On a GPU -----------------------------------------------------------------

class SortThunkDeviceTest : public GpuThunkDeviceTest {
 protected:
  // Random operands for `text`'s parameters: keys (operand 0) in [low,
  // high], the others as `seed` gives.
  std::vector<Literal> Inputs(const std::string& text, double low, double high, uint32_t seed) {
    auto module = ParseAndReturnUnverifiedModule(text);
    EXPECT_TRUE(module.ok()) << module.status();
    std::vector<Literal> inputs;
    const HloComputation& entry = *(*module)->entry_computation();
    for (int64_t i = 0; i < entry.num_parameters(); ++i) {
      inputs.push_back(RandomLiteral(entry.parameter_instruction(i)->shape(),
                                     seed + static_cast<uint32_t>(i), i == 0 ? low : -1000,
                                     i == 0 ? high : 1000));
    }
    return inputs;
  }

  void ExpectSorts(const std::string& text, double low, double high, int64_t max_tile = 0,
                   bool in_place = false) {
    SCOPED_TRACE(absl::StrCat("max_tile=", max_tile, in_place ? ", in place" : ""));
    ExpectMatchesInterpreter(text, SortFactory(max_tile, DeviceOptions()),
                             Inputs(text, low, high, 7), nullptr, in_place);
  }
};

TEST_F(SortThunkDeviceTest, OneOperandFloats) {
  ExpectSorts(SortText({"f32[1000]"}, 0, "LT"), -100, 100);
  ExpectSorts(SortText({"f32[3,777]"}, 1, "GT"), -1, 1);
  ExpectSorts(SortText({"f64[5,129]"}, 1, "LT", "TOTALORDER"), -1e6, 1e6);
  ExpectSorts(SortText({"bf16[2,4096]"}, 1, "GT"), -30, 30);
  ExpectSorts(SortText({"f16[513]"}, 0, "LT"), -30, 30);
}

TEST_F(SortThunkDeviceTest, TotalOrderWithNansAndSignedZeros) {
  const std::string text = SortText({"f32[64]"}, 0, "LT", "TOTALORDER");
  std::vector<Literal> inputs;
  inputs.push_back(RandomLiteral(ShapeUtil::MakeShape(F32, {64}), 3, -2, 2));
  float* keys = inputs[0].data<float>().data();
  keys[3] = std::numeric_limits<float>::quiet_NaN();
  keys[10] = -std::numeric_limits<float>::quiet_NaN();
  keys[11] = 0.0f;
  keys[12] = -0.0f;
  keys[20] = std::numeric_limits<float>::infinity();
  keys[21] = -std::numeric_limits<float>::infinity();
  keys[30] = 0.0f;
  ExpectMatchesInterpreter(text, SortFactory(0, DeviceOptions()), inputs);
}

TEST_F(SortThunkDeviceTest, IntegerKeys) {
  ExpectSorts(SortText({"s32[1000,3]"}, 0, "LT"), -50, 50);
  ExpectSorts(SortText({"u8[7,300]"}, 1, "GT"), 0, 255);
  ExpectSorts(SortText({"s64[2,2,333]"}, 2, "LT"), -1e12, 1e12);
  ExpectSorts(SortText({"s16[9,5,11]"}, 1, "LT"), -5, 5);
}

TEST_F(SortThunkDeviceTest, ArgsortIsStableWithManyTies) {
  // Keys in [0, 9]: every position's value shows whether ties kept their
  // order.
  for (bool stable : {false, true}) {
    ExpectSorts(SortText({"f32[4,3000]", "s32[4,3000]"}, 1, "LT", "", stable), 0, 9);
    ExpectSorts(SortText({"s32[16,500]", "s32[16,500]"}, 1, "GT", "", stable), 0, 3);
  }
}

TEST_F(SortThunkDeviceTest, ThreeOperandsMixedTypes) {
  ExpectSorts(SortText({"bf16[4,300]", "s32[4,300]", "f64[4,300]"}, 1, "GT", "TOTALORDER"), -8, 8);
  ExpectSorts(SortText({"s8[1200]", "pred[1200]", "c64[1200]"}, 0, "LT"), -20, 20);
}

TEST_F(SortThunkDeviceTest, RowsSpanningTiles) {
  // 12-byte records: tiles of 4096, so rows of 5000 and 100000 merge in
  // global memory.
  ExpectSorts(SortText({"f32[8,5000]", "s32[8,5000]"}, 1, "GT"), -1000, 1000);
  ExpectSorts(SortText({"f32[100000]"}, 0, "LT"), -1e4, 1e4);
  ExpectSorts(SortText({"s32[3,20000]", "f32[3,20000]"}, 1, "LT"), 0, 100);
}

TEST_F(SortThunkDeviceTest, SmallTilesExerciseEveryLaunch) {
  // Tiles of 2, 16 and 64 elements: most steps in global memory.
  for (int64_t tile : {2, 16, 64}) {
    ExpectSorts(SortText({"f32[5,1000]", "s32[5,1000]", "bf16[5,1000]"}, 1, "LT"), 0, 50, tile);
    ExpectSorts(SortText({"s32[777,3]"}, 0, "GT"), -100, 100, tile);
    ExpectSorts(SortText({"f32[2,129]"}, 1, "LT"), -1, 1, tile);
  }
}

TEST_F(SortThunkDeviceTest, InPlace) {
  ExpectSorts(SortText({"f32[6,1000]", "s32[6,1000]"}, 1, "LT"), 0, 20, 0, /*in_place=*/true);
  ExpectSorts(SortText({"f32[6,1000]", "s32[6,1000]"}, 1, "LT"), 0, 20, 64, /*in_place=*/true);
}

TEST_F(SortThunkDeviceTest, ShortAndEmptyRows) {
  ExpectSorts(SortText({"f32[10,1]", "s32[10,1]"}, 1, "LT"), -5, 5);
  ExpectSorts(SortText({"f32[3,2]"}, 1, "GT"), -5, 5);
  ExpectSorts(SortText({"f32[0,7]"}, 1, "LT"), -5, 5);
  ExpectSorts(SortText({"f32[7,0]"}, 1, "LT"), -5, 5);
}

TEST_F(SortThunkDeviceTest, MultiOpComparatorTopKStyle) {
  // Lexicographic: key descending, then index ascending (top_k's order).
  const std::string text = R"(
HloModule m
compare {
  a0 = f32[] parameter(0)
  b0 = f32[] parameter(1)
  a1 = s32[] parameter(2)
  b1 = s32[] parameter(3)
  gt = pred[] compare(a0, b0), direction=GT, type=TOTALORDER
  eq = pred[] compare(a0, b0), direction=EQ
  lt = pred[] compare(a1, b1), direction=LT
  tie = pred[] and(eq, lt)
  ROOT r = pred[] or(gt, tie)
}
ENTRY e {
  p0 = f32[32,2500] parameter(0)
  p1 = s32[32,2500] parameter(1)
  ROOT s = (f32[32,2500], s32[32,2500]) sort(p0, p1), dimensions={1}, to_apply=compare
})";
  ExpectSorts(text, 0, 40);
  ExpectSorts(text, 0, 40, 128);
}

TEST_F(SortThunkDeviceTest, JaxArgsortWithNansAndZeros) {
  std::vector<Literal> inputs = Inputs(kJaxArgsort, -3, 3, 5);
  float* keys = inputs[0].data<float>().data();
  const int64_t count = int64_t{5} * 3000;
  for (int64_t i = 0; i < count; i += 97) keys[i] = std::numeric_limits<float>::quiet_NaN();
  for (int64_t i = 13; i < count; i += 89) keys[i] = -0.0f;
  for (int64_t i = 29; i < count; i += 83) keys[i] = 0.0f;
  ExpectMatchesInterpreter(kJaxArgsort, SortFactory(0, DeviceOptions()), inputs);
  ExpectMatchesInterpreter(kJaxArgsort, SortFactory(256, DeviceOptions()), inputs);
}

}  // namespace
}  // namespace axle::gpu
