#include "axle/hlo/pass/pass_registry.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace axle {
namespace {

bool IsRegistered(absl::string_view name) {
  for (const std::string& registered : RegisteredPassNames()) {
    if (registered == name) return true;
  }
  return false;
}

// A pass a backend would register: changes nothing.
class BackendOnlyPass : public HloPassInterface {
 public:
  absl::string_view name() const override { return "test-backend-only"; }
  absl::StatusOr<bool> Run(HloModule* /*module*/) override { return false; }
};

void AddTestBackendPasses(PassFactoryMap* registry) {
  (*registry)["test-backend-only"] = [] { return std::make_unique<BackendOnlyPass>(); };
}

void AddDuplicateOfShared(PassFactoryMap* registry) {
  (*registry)["dce"] = [] { return std::make_unique<BackendOnlyPass>(); };
}

TEST(PassRegistry, SharedPassesAreRegisteredAndBackendOnlyOnesAreNot) {
  EXPECT_TRUE(IsRegistered("fusion"));
  EXPECT_TRUE(IsRegistered("multi-output-fusion"));
  // The cpu backend registers these from its own library (axle_cpu_passes),
  // which this test does not link.
  EXPECT_FALSE(IsRegistered("dot-epilogue-fusion"));
  EXPECT_FALSE(IsRegistered("cpu-multi-output-fusion"));
  absl::StatusOr<std::unique_ptr<HloPassInterface>> missing = CreatePass("dot-epilogue-fusion");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(absl::StrContains(missing.status().message(), "known passes: "));
}

TEST(PassRegistry, BackendPassesAreFoundByName) {
  ASSERT_FALSE(IsRegistered("test-backend-only"));
  EXPECT_TRUE(RegisterBackendPasses(AddTestBackendPasses));
  EXPECT_TRUE(IsRegistered("test-backend-only"));
  absl::StatusOr<std::unique_ptr<HloPassInterface>> pass = CreatePass("test-backend-only");
  ASSERT_TRUE(pass.ok()) << pass.status();
  EXPECT_EQ((*pass)->name(), "test-backend-only");
}

TEST(PassRegistryDeathTest, ABackendCannotRegisterANameTwice) {
  EXPECT_DEATH(RegisterBackendPasses(AddDuplicateOfShared), "");
}

}  // namespace
}  // namespace axle
