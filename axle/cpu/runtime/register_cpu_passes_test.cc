#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "axle/hlo/pass/pass_registry.h"
#include "gtest/gtest.h"

namespace axle::cpu {
namespace {

// The cpu backend's own passes are registered by linking its library
// (register_cpu_passes.cc), under the names cpu-prepare and axle-opt use.
TEST(RegisterCpuPasses, CpuFusionPassesAreFoundByName) {
  const std::vector<std::string> names = RegisteredPassNames();
  for (const char* name : {"dot-epilogue-fusion", "cpu-multi-output-fusion"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << name;
    absl::StatusOr<std::unique_ptr<HloPassInterface>> pass = CreatePass(name);
    ASSERT_TRUE(pass.ok()) << pass.status();
    EXPECT_EQ((*pass)->name(), name);
  }
  // The shared pass of the same family keeps its own name.
  absl::StatusOr<std::unique_ptr<HloPassInterface>> shared = CreatePass("multi-output-fusion");
  ASSERT_TRUE(shared.ok()) << shared.status();
  EXPECT_EQ((*shared)->name(), "multi-output-fusion");
}

}  // namespace
}  // namespace axle::cpu
