// HloModule::Clone keeps every computation and instruction, including
// computations nothing calls that call ones the entry calls too.
#include "axle/hlo/ir/hlo_module.h"
#include "axle/hlo/text/hlo_parser.h"
#include "gtest/gtest.h"

namespace axle {
namespace {

TEST(HloModuleCloneTest, UncalledComputationCallingASharedOne) {
  auto module = ParseAndReturnUnverifiedModule(R"(
HloModule m

shared {
  x = f32[] parameter(0)
  ROOT n = f32[] negate(x)
}

uncalled {
  a = f32[] parameter(0)
  ROOT c = f32[] call(a), to_apply=shared
}

ENTRY e {
  p = f32[] parameter(0)
  dead = f32[] add(p, p)
  ROOT r = f32[] call(p), to_apply=shared
})");
  ASSERT_TRUE(module.ok()) << module.status();
  std::unique_ptr<HloModule> clone = (*module)->Clone("");
  EXPECT_EQ(clone->ToString(), (*module)->ToString());
  EXPECT_EQ(clone->computations().size(), 3u);
}

}  // namespace
}  // namespace axle
