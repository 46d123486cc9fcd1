//===- sharding_remover_test.cc - Tests of sharding-remover ----------------===//
//
// JAX's sharding annotations (Sharding, Shardy's shard_map custom calls,
// GSPMD's shape changes) become their operands; the values are those of the
// same module written without them. An annotation that changes shape is an
// Unimplemented error naming it.
//
//===----------------------------------------------------------------------===//
#include "axle/hlo/transforms/sharding_remover.h"

#include "absl/strings/match.h"
#include "axle/hlo/transforms/cleanup_test_util.h"

namespace axle {
namespace {

using cleanup_test::CountOpcode;
using cleanup_test::Evaluate;
using cleanup_test::Parse;
using cleanup_test::RunPass;

// shard_map over a one-device mesh, as Shardy's round trip writes it.
constexpr absl::string_view kShardMap = R"(
HloModule jit_f, frontend_attributes={xla.sdy.meshes={mesh = #sdy.mesh<["x"=1]>}}

xla.sdy.manual_computation_body.1 {
  a = f32[4,8] parameter(0)
  b = f32[8] parameter(1)
  bb = f32[4,8] broadcast(b), dimensions={1}
  m = f32[4,8] multiply(a, bb)
  ROOT t = (f32[4,8], f32[8]) tuple(m, b)
}

ENTRY main {
  x = f32[4,8] parameter(0)
  c = f32[4,8] custom-call(x), custom_call_target="Sharding", sharding={replicated}, frontend_attributes={xla.sdy.sharding="#sdy.sharding_per_value<[<@mesh, [{\"x\"}, {}]>]>"}
  y = f32[8] parameter(1)
  g = (f32[4,8], f32[8]) custom-call(c, y), custom_call_target="xla.sdy.GlobalToLocalShape", custom_call_has_side_effect=true
  g0 = f32[4,8] get-tuple-element(g), index=0
  g1 = f32[8] get-tuple-element(g), index=1
  body = (f32[4,8], f32[8]) call(g0, g1), to_apply=xla.sdy.manual_computation_body.1, frontend_attributes={inlineable="false"}
  b0 = f32[4,8] get-tuple-element(body), index=0
  b1 = f32[8] get-tuple-element(body), index=1
  l = (f32[4,8], f32[8]) custom-call(b0, b1), custom_call_target="xla.sdy.LocalToGlobalShape", custom_call_has_side_effect=true
  l0 = f32[4,8] get-tuple-element(l), index=0
  l1 = f32[8] get-tuple-element(l), index=1
  r = f32[4,8] custom-call(l0), custom_call_target="xla.sdy.FuncResultSharding", custom_call_has_side_effect=true
  grp = () custom-call(r), custom_call_target="xla.sdy.ShardingGroup", custom_call_has_side_effect=true
  ROOT out = (f32[4,8], f32[8]) tuple(r, l1)
})";

constexpr absl::string_view kWithout = R"(
HloModule plain
ENTRY main {
  x = f32[4,8] parameter(0)
  y = f32[8] parameter(1)
  bb = f32[4,8] broadcast(y), dimensions={1}
  m = f32[4,8] multiply(x, bb)
  ROOT out = (f32[4,8], f32[8]) tuple(m, y)
})";

TEST(ShardingRemover, OneDeviceShardMapIsTheBodyOnItsOperands) {
  std::unique_ptr<HloModule> module = Parse(kShardMap);
  ASSERT_NE(module, nullptr);
  ShardingRemover pass;
  EXPECT_TRUE(RunPass(pass, module.get()));
  EXPECT_EQ(CountOpcode(*module, HloOpcode::kCustomCall), 0) << module->ToString();
  std::unique_ptr<HloModule> plain = Parse(kWithout);
  ASSERT_NE(plain, nullptr);
  EXPECT_EQ(Evaluate(*module), Evaluate(*plain));
  EXPECT_FALSE(RunPass(pass, module.get()));
}

TEST(ShardingRemover, GspmdShapeChangesInTheSameShapeAreIdentities) {
  std::unique_ptr<HloModule> module = Parse(R"(
HloModule m
ENTRY e {
  x = f32[2,4]{1,0} parameter(0)
  s = f32[2,4]{0,1} custom-call(x), custom_call_target="Sharding", sharding={replicated}
  f = f32[2,4]{1,0} custom-call(s), custom_call_target="SPMDFullToShardShape", sharding={manual}
  n = f32[2,4]{1,0} negate(f)
  ROOT b = f32[2,4]{1,0} custom-call(n), custom_call_target="SPMDShardToFullShape", sharding={maximal device=0}
})");
  ASSERT_NE(module, nullptr);
  ShardingRemover pass;
  EXPECT_TRUE(RunPass(pass, module.get()));
  EXPECT_EQ(CountOpcode(*module, HloOpcode::kCustomCall), 0) << module->ToString();
  // The annotation's own layout {0,1} stays, as a copy.
  EXPECT_EQ(CountOpcode(*module, HloOpcode::kCopy), 2) << module->ToString();
  EXPECT_EQ(module->entry_computation()->root_instruction()->opcode(), HloOpcode::kNegate);
}

TEST(ShardingRemover, AShardOfSeveralDevicesIsUnimplementedNamingIt) {
  std::unique_ptr<HloModule> module = Parse(R"(
HloModule m, frontend_attributes={xla.sdy.meshes={mesh = #sdy.mesh<["x"=2]>}}
ENTRY e {
  x = f32[8,4] parameter(0)
  ROOT g = f32[4,4] custom-call(x), custom_call_target="xla.sdy.GlobalToLocalShape", custom_call_has_side_effect=true
})");
  ASSERT_NE(module, nullptr);
  absl::StatusOr<bool> changed = ShardingRemover().Run(module.get());
  ASSERT_FALSE(changed.ok());
  EXPECT_EQ(changed.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_TRUE(absl::StrContains(changed.status().message(), "xla.sdy.GlobalToLocalShape"))
      << changed.status();
  EXPECT_TRUE(absl::StrContains(changed.status().message(), "%g")) << changed.status();
}

TEST(ShardingRemover, OtherCustomCallsStay) {
  std::unique_ptr<HloModule> module = Parse(R"(
HloModule m
ENTRY e {
  x = f32[4] parameter(0)
  ROOT c = f32[4] custom-call(x), custom_call_target="my_op"
})");
  ASSERT_NE(module, nullptr);
  ShardingRemover pass;
  EXPECT_FALSE(RunPass(pass, module.get()));
  EXPECT_EQ(CountOpcode(*module, HloOpcode::kCustomCall), 1);
}

}  // namespace
}  // namespace axle
