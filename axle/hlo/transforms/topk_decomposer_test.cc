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

namespace axle {
namespace {

// XLA's TopK custom calls take their own comparator: with GT under total
// order (TopkRewriter's) and with XLA:GPU's bit trick on the s32 image of
// the floats, the rewrite computes what topk(largest=true) computes, ties
// included (lower index first), on floats without NaNs.
TEST(TopKDecomposer, TopKCustomCallsAreSortsByTheirComparator) {
  constexpr absl::string_view kReference = R"(
HloModule m
ENTRY e {
  x = f32[4,16] parameter(0)
  ROOT t = (f32[4,5], s32[4,5]) topk(x), k=5, largest=true
})";
  constexpr absl::string_view kCalls[] = {R"(
HloModule m
gt {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  i = s32[] parameter(2)
  j = s32[] parameter(3)
  ROOT c = pred[] compare(a, b), direction=GT, type=TOTALORDER
}
ENTRY e {
  x = f32[4,16] parameter(0)
  ROOT t = (f32[4,5], s32[4,5]) custom-call(x), custom_call_target="TopK", to_apply=gt
})",
                                          R"(
HloModule m
bits {
  i = s32[] parameter(2)
  j = s32[] parameter(3)
  a = f32[] parameter(0)
  ab = s32[] bitcast-convert(a)
  zero = s32[] constant(0)
  an = pred[] compare(ab, zero), direction=LT
  max = s32[] constant(2147483647)
  ax = s32[] xor(max, ab)
  ak = s32[] select(an, ax, ab)
  b = f32[] parameter(1)
  bb = s32[] bitcast-convert(b)
  bn = pred[] compare(bb, zero), direction=LT
  bx = s32[] xor(max, bb)
  bk = s32[] select(bn, bx, bb)
  ROOT c = pred[] compare(ak, bk), direction=GT
}
ENTRY e {
  x = f32[4,16] parameter(0)
  ROOT t = (f32[4,5], s32[4,5]) custom-call(x), custom_call_target="__gpu$TopK", called_computations={bits}, api_version=API_VERSION_TYPED_FFI
})"};
  Literal x(ShapeUtil::MakeShape(F32, {4, 16}));
  absl::Span<float> data = x.data<float>();
  for (size_t i = 0; i < data.size(); ++i) {
    // Repeated values (ties), both signs, -0 and +0.
    data[i] = static_cast<float>(static_cast<int>((i * 37) % 11) - 5) * 0.5f;
  }
  data[3] = -0.0f;
  std::vector<const Literal*> arguments = {&x};
  auto reference = ParseAndReturnUnverifiedModule(kReference);
  ASSERT_TRUE(reference.ok()) << reference.status();
  HloEvaluator evaluator;
  absl::StatusOr<Literal> want = evaluator.Evaluate(**reference, arguments);
  ASSERT_TRUE(want.ok()) << want.status();
  for (absl::string_view text : kCalls) {
    auto module = ParseAndReturnUnverifiedModule(text);
    ASSERT_TRUE(module.ok()) << module.status();
    TopKDecomposer pass(TopKDecomposer::Predicate(), /*custom_calls=*/true);
    absl::StatusOr<bool> changed = pass.Run(module->get());
    ASSERT_TRUE(changed.ok()) << changed.status();
    EXPECT_TRUE(*changed);
    EXPECT_EQ(CountOpcode(**module, HloOpcode::kCustomCall), 0) << (*module)->ToString();
    EXPECT_EQ(CountOpcode(**module, HloOpcode::kSort), 1) << (*module)->ToString();
    ASSERT_TRUE(VerifyHloModule(**module).ok()) << (*module)->ToString();
    HloEvaluator again;
    absl::StatusOr<Literal> got = again.Evaluate(**module, arguments);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(*want, *got) << "want " << want->ToString() << "\ngot  " << got->ToString();
  }
}

// Without `custom_calls` (the cpu backend's use) the calls stay; a call
// whose comparator does not fit is Unimplemented naming it.
TEST(TopKDecomposer, TopKCustomCallsOnlyWhenAskedAndOnlyOfTheirForm) {
  constexpr absl::string_view kCall = R"(
HloModule m
gt {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=GT
}
ENTRY e {
  x = f32[8] parameter(0)
  ROOT t = (f32[2], s32[2]) custom-call(x), custom_call_target="TopK", to_apply=gt
})";
  auto kept = ParseAndReturnUnverifiedModule(kCall);
  ASSERT_TRUE(kept.ok()) << kept.status();
  TopKDecomposer plain;
  absl::StatusOr<bool> changed = plain.Run(kept->get());
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_FALSE(*changed);
  auto refused = ParseAndReturnUnverifiedModule(kCall);
  ASSERT_TRUE(refused.ok()) << refused.status();
  TopKDecomposer with_calls(TopKDecomposer::Predicate(), /*custom_calls=*/true);
  changed = with_calls.Run(refused->get());
  ASSERT_FALSE(changed.ok());
  EXPECT_EQ(changed.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_TRUE(absl::StrContains(changed.status().message(), "no top-k of the last dimension"))
      << changed.status();
}

}  // namespace
}  // namespace axle
