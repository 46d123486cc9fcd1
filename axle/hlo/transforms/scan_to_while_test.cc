//===- scan_to_while_test.cc - Tests of scan-to-while ----------------------===//
//
// A scan becomes a while loop that slices element k, calls to_apply and
// writes the outputs at k, with the interpreter's values before and after,
// forward and reverse; shapes the pass does not take are Unimplemented
// naming the scan. Runs on cpu are in cpu/runtime/scan_to_while_test.cc.
//
//===----------------------------------------------------------------------===//
#include "axle/hlo/transforms/scan_to_while.h"

#include "absl/strings/match.h"
#include "absl/strings/str_replace.h"
#include "axle/hlo/transforms/cleanup_test_util.h"

namespace axle {
namespace {

using cleanup_test::CountOpcode;
using cleanup_test::RunAndCompare;

constexpr absl::string_view kCumulativeSum = R"(
HloModule m
add_both {
  x = f32[] parameter(0)
  c = f32[] parameter(1)
  s = f32[] add(x, c)
  ROOT t = (f32[], f32[]) tuple(s, s)
}
ENTRY e {
  p = f32[5] parameter(0)
  z = f32[] parameter(1)
  ROOT r = (f32[5], f32[]) scan(p, z), dimensions={0}, num_carries=1, to_apply=add_both$REVERSE
})";

TEST(ScanToWhile, BecomesAWhileLoopCallingToApplyForwardAndReverse) {
  for (bool reverse : {false, true}) {
    ScanToWhile pass;
    auto module = RunAndCompare(
        pass,
        absl::StrReplaceAll(kCumulativeSum, {{"$REVERSE", reverse ? ", is_reverse=true" : ""}}));
    ASSERT_NE(module, nullptr);
    const std::string after = module->ToString();
    EXPECT_EQ(CountOpcode(*module, HloOpcode::kScan), 0) << after;
    for (absl::string_view expected : {"while(", "to_apply=%add_both", "dynamic-slice(",
                                       "dynamic-update-slice(", "direction=LT"}) {
      EXPECT_TRUE(absl::StrContains(after, expected)) << expected << " not in\n" << after;
    }
  }
}

TEST(ScanToWhile, AScanDimensionOutsideTheInputsIsUnimplementedNamingTheScan) {
  ScanToWhile pass;
  std::unique_ptr<HloModule> module = cleanup_test::Parse(absl::StrReplaceAll(
      kCumulativeSum, {{"dimensions={0}", "dimensions={3}"}, {"$REVERSE", ""}}));
  ASSERT_NE(module, nullptr);
  absl::StatusOr<bool> changed = pass.Run(module.get());
  ASSERT_FALSE(changed.ok());
  EXPECT_TRUE(absl::IsUnimplemented(changed.status())) << changed.status();
  EXPECT_TRUE(absl::StrContains(changed.status().message(), "scan-to-while: ")) << changed.status();
  EXPECT_TRUE(absl::StrContains(changed.status().message(), "(instruction %r, scan)"))
      << changed.status();
}

}  // namespace
}  // namespace axle
