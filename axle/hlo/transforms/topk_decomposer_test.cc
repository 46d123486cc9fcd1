//===- topk_decomposer_test.cc - Tests of topk-decomposer ------------------===//
//
// topk becomes a stable sort of (values, iota) and two slices, with the
// interpreter's values before and after; the predicate keeps the topk ops a
// backend runs itself. Runs on cpu (ties, NaNs, -0) are in
// cpu/runtime/collectives_test.cc.
//
//===----------------------------------------------------------------------===//
#include "axle/hlo/transforms/topk_decomposer.h"

#include "absl/strings/match.h"
#include "axle/hlo/transforms/cleanup_test_util.h"

namespace axle {
namespace {

using cleanup_test::CountOpcode;
using cleanup_test::RunAndCompare;

constexpr absl::string_view kTopK = R"(
HloModule m
ENTRY e {
  x = f32[3,5] parameter(0)
  ROOT t = (f32[3,2], s32[3,2]) topk(x), k=2, largest=true
})";

TEST(TopKDecomposer, BecomesAStableSortOfValuesAndIndices) {
  TopKDecomposer pass;
  auto module = RunAndCompare(pass, kTopK);
  ASSERT_NE(module, nullptr);
  const std::string after = module->ToString();
  EXPECT_EQ(CountOpcode(*module, HloOpcode::kTopK), 0) << after;
  EXPECT_TRUE(absl::StrContains(after, "iota(), iota_dimension=1")) << after;
  EXPECT_TRUE(absl::StrContains(after, "dimensions={1}, is_stable=true")) << after;
  EXPECT_TRUE(absl::StrContains(after, "direction=GT, type=TOTALORDER")) << after;
  EXPECT_TRUE(absl::StrContains(after, "slice={[0:3], [0:2]}")) << after;
}

TEST(TopKDecomposer, SmallestSortsAscending) {
  TopKDecomposer pass;
  auto module = RunAndCompare(pass, R"(
HloModule m
ENTRY e {
  x = s32[7] parameter(0)
  ROOT t = (s32[3], s32[3]) topk(x), k=3, largest=false
})");
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(CountOpcode(*module, HloOpcode::kTopK), 0);
  EXPECT_TRUE(absl::StrContains(module->ToString(), "direction=LT")) << module->ToString();
}

TEST(TopKDecomposer, ThePredicateKeepsWhatTheBackendRuns) {
  TopKDecomposer pass(
      [](const HloInstruction& topk) { return topk.operand(0)->shape().element_type() != F32; });
  auto module = RunAndCompare(pass, kTopK, /*expect_change=*/false);
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(CountOpcode(*module, HloOpcode::kTopK), 1);
}

TEST(TopKDecomposer, ComplexIsUnimplementedNamingTheInstruction) {
  TopKDecomposer pass;
  std::unique_ptr<HloModule> module = cleanup_test::Parse(R"(
HloModule m
ENTRY e {
  x = c64[4] parameter(0)
  ROOT t = (c64[2], s32[2]) topk(x), k=2, largest=true
})");
  ASSERT_NE(module, nullptr);
  absl::StatusOr<bool> changed = pass.Run(module.get());
  ASSERT_FALSE(changed.ok());
  EXPECT_TRUE(absl::IsUnimplemented(changed.status())) << changed.status();
  EXPECT_TRUE(absl::StrContains(changed.status().message(), "topk-decomposer: "))
      << changed.status();
  EXPECT_TRUE(absl::StrContains(changed.status().message(), "(instruction %t, topk)"))
      << changed.status();
}

}  // namespace
}  // namespace axle
