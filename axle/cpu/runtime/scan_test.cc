//===- scan_test.cc - Running folds (cumsum, cumprod, cummax) on cpu -------===//
//
// reduce-windows that fold every prefix or suffix of one dimension, as JAX
// lowers jnp.cumsum / cumprod / cummax / lax.cummin (reverse too), run as
// O(n) scan kernels (loop_kernel_plan.h: ScanOf) and agree with the
// interpreter: prefix scans bit for bit (the same folds in the same order,
// four lines of an innermost scan side by side; sixteen as vector lanes
// for an f32 combiner with a transcendental, such as cumlogsumexp's),
// suffix scans of floats within rounding. Windows that only look like
// scans (shorter windows, strides, dilations) keep the window loop.
//
//===----------------------------------------------------------------------===//
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "axle/cpu/cpu_test_util.h"
#include "axle/cpu/loop_kernel_plan.h"
#include "axle/cpu/runtime/platform_test_util.h"
#include "axle/hlo/text/hlo_parser.h"
#include "gtest/gtest.h"

namespace axle {
namespace {

// A module folding x: TYPE[DIMS] with OP under WINDOW.
std::string ScanModule(const std::string& type, const std::string& dims, const std::string& op,
                       const std::string& window, const std::string& init = "0") {
  return absl::StrCat(R"(
HloModule m
fold {
  a = )",
                      type, R"([] parameter(0)
  b = )",
                      type, R"([] parameter(1)
  ROOT c = )",
                      type, "[] ", op, R"((a, b)
}
ENTRY e {
  x = )",
                      type, "[", dims, R"(] parameter(0)
  z = )",
                      type, "[] constant(", init, R"()
  ROOT s = )",
                      type, "[", dims, "] reduce-window(x, z), window={", window,
                      R"(}, to_apply=fold
})");
}

std::optional<cpu::ScanPlan> PlanOf(const std::string& text) {
  auto module = ParseAndReturnUnverifiedModule(text);
  CHECK(module.ok()) << module.status();
  return cpu::ScanOf(*(*module)->entry_computation()->root_instruction());
}

void ExpectAgrees(const std::string& text, const ErrorSpec& error) {
  SCOPED_TRACE(text);
  testing::ExpectCpuAgrees(text, cpu::testing::MakeTestArguments(text), error);
}

TEST(CpuScanTest, PrefixScansAreExact) {
  struct Case {
    std::string type, dims, op, window, init;
    int64_t dimension;
  };
  const std::vector<Case> cases = {
      {"f32", "32,512", "add", "size=1x512 pad=0_0x511_0", "0", 1},
      {"f32", "37,5", "multiply", "size=37x1 pad=36_0x0_0", "1", 0},
      {"f32", "3,40,17", "maximum", "size=1x40x1 pad=0_0x39_0x0_0", "-inf", 1},
      {"s32", "100", "add", "size=100 pad=99_0", "0", 0},
      {"s32", "9,1000", "minimum", "size=1x1000 pad=0_0x999_0", "2147483647", 1},
      {"f64", "6,33", "add", "size=1x64 pad=0_0x63_0", "0", 1},  // window longer than n
      {"bf16", "4,130", "add", "size=1x130 pad=0_0x129_0", "0", 1},
      {"f32", "64,3", "add", "size=64x1 pad=63_0x0_0", "0", 0},  // rows shorter than a vector
      // Innermost scans run 4 lines side by side: groups and a rest.
      {"f32", "2,7,70", "add", "size=1x1x70 pad=0_0x0_0x69_0", "0", 2},
  };
  for (const Case& c : cases) {
    const std::string text = ScanModule(c.type, c.dims, c.op, c.window, c.init);
    std::optional<cpu::ScanPlan> plan = PlanOf(text);
    ASSERT_TRUE(plan.has_value()) << text;
    EXPECT_EQ(plan->dimension, c.dimension) << text;
    EXPECT_FALSE(plan->reverse) << text;
    ExpectAgrees(text, ErrorSpec(0, 0));
  }
}

TEST(CpuScanTest, SuffixScansOfCommutativeFolds) {
  const std::string int_sum = ScanModule("s32", "7,300", "add", "size=1x300 pad=0_0x0_299");
  ASSERT_TRUE(PlanOf(int_sum).has_value());
  EXPECT_TRUE(PlanOf(int_sum)->reverse);
  ExpectAgrees(int_sum, ErrorSpec(0, 0));  // integer sums are exact in any order
  const std::string max = ScanModule("f32", "300,7", "maximum", "size=300x1 pad=0_299x0_0", "-inf");
  ASSERT_TRUE(PlanOf(max).has_value());
  ExpectAgrees(max, ErrorSpec(0, 0));
  const std::string sum = ScanModule("f32", "5,200", "add", "size=1x200 pad=0_0x0_199");
  ASSERT_TRUE(PlanOf(sum).has_value());
  ExpectAgrees(sum, ErrorSpec(1e-4, 1e-4));
}

TEST(CpuScanTest, CumsumOfRandomValuesMatchesARunningSum) {
  const std::string text = ScanModule("f32", "3,1000", "add", "size=1x1000 pad=0_0x999_0");
  std::vector<float> values(3000);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>((i * 37) % 11) - 5.0f;
  std::vector<Literal> arguments;
  arguments.push_back(LiteralUtil::CreateFromDimensions<float>({3, 1000}, values));
  absl::StatusOr<Literal> result = testing::RunOn("cpu", text, arguments);
  ASSERT_TRUE(result.ok()) << result.status();
  for (int row = 0; row < 3; ++row) {
    float sum = 0;
    for (int i = 0; i < 1000; ++i) {
      sum += values[row * 1000 + i];
      ASSERT_EQ(result->data<float>()[row * 1000 + i], sum) << row << "," << i;
    }
  }
}

// lax.cumlogsumexp as JAX lowers it: a prefix reduce-window whose body is
// logaddexp (max + log1p(exp(-|a - b|)), a + b where a - b is NaN). Along
// the innermost dimension f32 lines run 16 at a time as vector lanes
// (groups of 16, then 4 side by side, then single lines: 37 = 2 x 16 +
// 4 + 1), along another dimension as rows. The corner-case inputs (NaN,
// +-inf, -0, 1e30, denormals) start lines; exp and log1p are the inline
// f32 functions, the interpreter's libm: within a few ulp per step.
TEST(CpuScanTest, LogAddExpScansAgreeWithTheInterpreter) {
  const std::string combiner = R"(
fold {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  m = f32[] maximum(a, b)
  d = f32[] subtract(a, b)
  unordered = pred[] compare(d, d), direction=NE
  sum = f32[] add(a, b)
  ad = f32[] abs(d)
  nd = f32[] negate(ad)
  e = f32[] exponential(nd)
  l = f32[] log-plus-one(e)
  r = f32[] add(m, l)
  ROOT c = f32[] select(unordered, sum, r)
})";
  struct Case {
    std::string dims, window;
    int64_t dimension;
  };
  const std::vector<Case> cases = {
      {"37,300", "size=1x300 pad=0_0x299_0", 1},
      {"2,21,50", "size=1x1x50 pad=0_0x0_0x49_0", 2},
      {"16,3", "size=1x3 pad=0_0x2_0", 1},
      {"300,19", "size=300x1 pad=299_0x0_0", 0},
  };
  for (const Case& c : cases) {
    const std::string text =
        absl::StrCat("HloModule m\n", combiner, R"(
ENTRY e {
  x = f32[)",
                     c.dims, R"(] parameter(0)
  z = f32[] constant(-inf)
  ROOT s = f32[)",
                     c.dims, "] reduce-window(x, z), window={", c.window, "}, to_apply=fold\n}\n");
    std::optional<cpu::ScanPlan> plan = PlanOf(text);
    ASSERT_TRUE(plan.has_value()) << text;
    EXPECT_EQ(plan->dimension, c.dimension) << text;
    ExpectAgrees(text, ErrorSpec(1e-5, 1e-5));
  }
}

TEST(CpuScanTest, WindowsThatAreNotScansKeepTheWindowLoop) {
  const std::vector<std::string> windows = {
      "size=1x8 pad=0_0x7_0",  // shorter than the dimension: a sliding sum
      "size=1x16 pad=0_0x15_0 stride=1x2",
      "size=1x16 pad=0_0x15_0 rhs_dilate=1x2",
      "size=2x16 pad=1_0x15_0",  // two folded dimensions
      "size=1x16 pad=0_0x8_7",   // centred
  };
  for (const std::string& window : windows) {
    const std::string text = ScanModule("f32", "4,16", "add", window);
    auto module = ParseAndReturnUnverifiedModule(text);
    if (!module.ok()) continue;  // a window whose output is not [4,16]
    EXPECT_FALSE(cpu::ScanOf(*(*module)->entry_computation()->root_instruction()).has_value())
        << window;
  }
  const std::string sliding = ScanModule("f32", "4,16", "add", "size=1x8 pad=0_0x7_0");
  ExpectAgrees(sliding, ErrorSpec(0, 0));
  // A suffix window over a fold that is not commutative is no scan.
  const std::string subtract = ScanModule("f32", "4,16", "subtract", "size=1x16 pad=0_0x0_15");
  EXPECT_FALSE(PlanOf(subtract).has_value());
  ExpectAgrees(subtract, ErrorSpec(0, 0));
}

}  // namespace
}  // namespace axle
