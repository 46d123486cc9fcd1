//===- call_inliner_test.cc - Tests of call-inliner ------------------------===//
#include "axle/hlo/transforms/call_inliner.h"

#include "absl/container/flat_hash_set.h"
#include "axle/hlo/transforms/cleanup_test_util.h"

namespace axle {
namespace {

using cleanup_test::CountOpcode;
using cleanup_test::RunAndCompare;

TEST(CallInliner, InlinesNestedCallsWithUniqueNames) {
  CallInliner pass;
  auto module = RunAndCompare(pass, R"(
HloModule m
inner {
  x = f32[4] parameter(0)
  ROOT add = f32[4] add(x, x)
}
outer {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  add = f32[4] call(a), to_apply=inner
  ROOT mul = f32[4] multiply(add, b)
}
ENTRY e {
  p = f32[4] parameter(0)
  q = f32[4] parameter(1)
  c1 = f32[4] call(p, q), to_apply=outer
  c2 = f32[4] call(q, p), to_apply=outer
  ROOT add = f32[4] add(c1, c2)
}
)");
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(CountOpcode(*module, HloOpcode::kCall), 0);
  EXPECT_EQ(module->computation_count(), 1);
  // add(c1, c2) + 2 x (add, multiply): five adds/multiplies, names unique.
  absl::flat_hash_set<std::string> names;
  for (const HloInstruction* instruction : module->entry_computation()->instructions()) {
    EXPECT_TRUE(names.insert(instruction->name()).second) << instruction->name();
  }
  EXPECT_EQ(CountOpcode(*module, HloOpcode::kAdd), 3);
  EXPECT_EQ(CountOpcode(*module, HloOpcode::kMultiply), 2);
}

TEST(CallInliner, KeepsSideEffectsOfTheCallee) {
  CallInliner pass;
  auto module = cleanup_test::Parse(R"(
HloModule m
callee {
  x = f32[2] parameter(0)
  log = f32[2] custom-call(x), custom_call_target="Log", custom_call_has_side_effect=true
  ROOT n = f32[2] negate(x)
}
ENTRY e {
  p = f32[2] parameter(0)
  ROOT c = f32[2] call(p), to_apply=callee
}
)");
  ASSERT_NE(module, nullptr);
  EXPECT_TRUE(cleanup_test::RunPass(pass, module.get()));
  EXPECT_EQ(CountOpcode(*module, HloOpcode::kCall), 0);
  EXPECT_EQ(CountOpcode(*module, HloOpcode::kCustomCall), 1);
  EXPECT_EQ(module->entry_computation()->root_instruction()->opcode(), HloOpcode::kNegate);
}

TEST(CallInliner, CalleeReturningItsParameter) {
  CallInliner pass;
  auto module = RunAndCompare(pass, R"(
HloModule m
id {
  ROOT x = s32[3] parameter(0)
}
ENTRY e {
  p = s32[3] parameter(0)
  c = s32[3] call(p), to_apply=id
  ROOT r = s32[3] add(c, p)
}
)");
  ASSERT_NE(module, nullptr);
  const HloInstruction* root = module->entry_computation()->root_instruction();
  EXPECT_EQ(root->operand(0)->name(), "p");
  EXPECT_EQ(root->operand(1)->name(), "p");
}

}  // namespace
}  // namespace axle
