//===- environment_options_test.cc - Reading Axle's environment variables ---===//
#include "axle/base/environment_options.h"

#include <cstdlib>

#include "gtest/gtest.h"

namespace axle {
namespace {

// Sets the variables for one test and restores them after.
class EnvironmentOptionsTest : public ::testing::Test {
 protected:
  void TearDown() override {
    for (const char* name : {"AXLE_DUMP_TO", "AXLE_PROFILE", "AXLE_CACHE_DIR",
                             "AXLE_COMPILE_THREADS", "AXLE_LLVM_OPTIONS", "AXLE_NUM_THREADS"}) {
      unsetenv(name);
    }
  }
};

TEST_F(EnvironmentOptionsTest, UnsetMeansDefaults) {
  TearDown();
  EnvironmentOptions options = EnvironmentOptions::Read();
  EXPECT_EQ(options.dump_to, "");
  EXPECT_FALSE(options.profile);
  EXPECT_EQ(options.cache_dir, "");
  EXPECT_EQ(options.compile_threads, 0);
  EXPECT_TRUE(options.llvm_options.empty());
  EXPECT_FALSE(options.num_threads.has_value());
}

TEST_F(EnvironmentOptionsTest, ReadsEachVariableWhenAsked) {
  setenv("AXLE_DUMP_TO", "/tmp/dump", 1);
  setenv("AXLE_PROFILE", "1", 1);
  setenv("AXLE_CACHE_DIR", "/tmp/cache", 1);
  setenv("AXLE_COMPILE_THREADS", "3", 1);
  setenv("AXLE_LLVM_OPTIONS", "  -a  -b=2 ", 1);
  setenv("AXLE_NUM_THREADS", "lots", 1);
  EnvironmentOptions options = EnvironmentOptions::Read();
  EXPECT_EQ(options.dump_to, "/tmp/dump");
  EXPECT_TRUE(options.profile);
  EXPECT_EQ(options.cache_dir, "/tmp/cache");
  EXPECT_EQ(options.compile_threads, 3);
  EXPECT_EQ(options.llvm_options, (std::vector<std::string>{"-a", "-b=2"}));
  EXPECT_EQ(options.num_threads, "lots");  // ThreadPool validates it.
  // A change between two reads shows in the second.
  setenv("AXLE_PROFILE", "0", 1);
  EXPECT_FALSE(EnvironmentOptions::Read().profile);
}

TEST_F(EnvironmentOptionsTest, BadOrNegativeCompileThreadsMeanTheDefault) {
  setenv("AXLE_COMPILE_THREADS", "two", 1);
  EXPECT_EQ(EnvironmentOptions::Read().compile_threads, 0);
  setenv("AXLE_COMPILE_THREADS", "-4", 1);
  EXPECT_EQ(EnvironmentOptions::Read().compile_threads, 0);
  setenv("AXLE_PROFILE", "", 1);
  EXPECT_FALSE(EnvironmentOptions::Read().profile);
}

}  // namespace
}  // namespace axle
