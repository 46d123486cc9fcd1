//===- omp_team_test.cc - libgomp's wait policy defaults to passive --------===//
//
// The test binary links the cpu runtime like any Axle program: unless the
// environment chose a wait policy, Axle's .preinit_array entry set
// OMP_WAIT_POLICY=PASSIVE before libgomp read its environment.
//
//===----------------------------------------------------------------------===//
#include "axle/cpu/runtime/omp_team.h"

#include <cstdlib>
#include <string>

#include "gtest/gtest.h"

extern "C" void omp_display_env(int verbose);  // libgomp

namespace axle::cpu {
namespace {

TEST(OmpTeamTest, WaitPolicyIsPassiveUnlessTheUserChoseOne) {
  // libgomp's own view of its settings (OpenMP 5.1's omp_display_env).
  ::testing::internal::CaptureStderr();
  omp_display_env(0);
  const std::string settings = ::testing::internal::GetCapturedStderr();
  if (OmpPassiveWaitSetByAxle()) {
    EXPECT_NE(settings.find("OMP_WAIT_POLICY = 'PASSIVE'"), std::string::npos) << settings;
  } else {
    // Only a user's own setting stops Axle from choosing.
    EXPECT_TRUE(std::getenv("OMP_WAIT_POLICY") != nullptr ||
                std::getenv("GOMP_SPINCOUNT") != nullptr);
  }
}

}  // namespace
}  // namespace axle::cpu
