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
    for (const char* name : {"AXLE_DUMP_TO",
                             "AXLE_PROFILE",
                             "AXLE_CACHE_DIR",
                             "AXLE_COMPILE_THREADS",
                             "AXLE_LLVM_OPTIONS",
                             "AXLE_NUM_THREADS",
                             "AXLE_FEED_TIMEOUT",
                             "AXLE_DEBUG",
                             "AXLE_LAZY_PLATFORM",
                             "AXLE_CUDA_DRIVER",
                             "AXLE_CUBLAS",
                             "AXLE_CUDNN",
                             "AXLE_GPU_TF32",
                             "AXLE_GPU_UNROLL",
                             "AXLE_GPU_SELECT_CONDITIONALS",
                             "AXLE_GPU_GRAPHS",
                             "AXLE_NCCL",
                             "AXLE_GPU_COLLECTIVES_ON_ONE_DEVICE",
                             "AXLE_CPU_CONCAT_IN_PLACE",
                             "AXLE_CPU_CONV_CHAIN",
                             "AXLE_CPU_SPIN_BETWEEN_THUNKS",
                             "CXX"}) {
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
  EXPECT_EQ(options.feed_timeout, std::chrono::seconds(60));
  EXPECT_FALSE(options.debug);
  EXPECT_EQ(options.lazy_platform, "");
  EXPECT_EQ(options.cuda_driver, "");
  EXPECT_EQ(options.cudnn, "");
  EXPECT_FALSE(options.gpu_tf32.has_value());
  EXPECT_FALSE(options.gpu_unroll.has_value());
  EXPECT_FALSE(options.gpu_graphs.has_value());
  EXPECT_FALSE(options.cpu_conv_chain.has_value());
  EXPECT_EQ(options.nccl, "");
  EXPECT_FALSE(options.gpu_collectives_on_one_device);
  EXPECT_EQ(options.cxx, "");
}

TEST_F(EnvironmentOptionsTest, NcclPathAndOneDeviceCollectives) {
  setenv("AXLE_NCCL", "/opt/nccl/libnccl.so.2", 1);
  setenv("AXLE_GPU_COLLECTIVES_ON_ONE_DEVICE", "1", 1);
  EnvironmentOptions options = EnvironmentOptions::Read();
  EXPECT_EQ(options.nccl, "/opt/nccl/libnccl.so.2");
  EXPECT_TRUE(options.gpu_collectives_on_one_device);
  // Only "1" turns it on.
  setenv("AXLE_GPU_COLLECTIVES_ON_ONE_DEVICE", "yes", 1);
  EXPECT_FALSE(EnvironmentOptions::Read().gpu_collectives_on_one_device);
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

TEST_F(EnvironmentOptionsTest, ReadsTheFrontEndAndCudaVariables) {
  setenv("AXLE_FEED_TIMEOUT", "250", 1);
  setenv("AXLE_DEBUG", "1", 1);
  setenv("AXLE_LAZY_PLATFORM", "interpreter", 1);
  setenv("AXLE_CUDA_DRIVER", "/opt/libcuda.so", 1);
  setenv("AXLE_CUBLAS", "/opt/libcublas.so", 1);
  setenv("AXLE_CUDNN", "0", 1);
  setenv("AXLE_GPU_TF32", "0", 1);
  setenv("AXLE_GPU_UNROLL", "Yes", 1);
  setenv("AXLE_GPU_SELECT_CONDITIONALS", "off", 1);
  setenv("AXLE_GPU_GRAPHS", "maybe", 1);
  setenv("AXLE_CPU_CONCAT_IN_PLACE", "off", 1);
  setenv("AXLE_CPU_CONV_CHAIN", "0", 1);
  setenv("AXLE_CPU_SPIN_BETWEEN_THUNKS", "no", 1);
  setenv("CXX", "clang++", 1);
  EnvironmentOptions options = EnvironmentOptions::Read();
  EXPECT_EQ(options.feed_timeout, std::chrono::milliseconds(250));
  EXPECT_TRUE(options.debug);
  EXPECT_EQ(options.lazy_platform, "interpreter");
  EXPECT_EQ(options.cuda_driver, "/opt/libcuda.so");
  EXPECT_EQ(options.cublas, "/opt/libcublas.so");
  EXPECT_EQ(options.cudnn, "0");
  EXPECT_EQ(options.gpu_tf32, false);  // exact f32 forced
  EXPECT_EQ(options.gpu_unroll, true);
  EXPECT_EQ(options.gpu_select_conditionals, false);
  EXPECT_FALSE(options.gpu_graphs.has_value());  // not a recognised switch value
  EXPECT_EQ(options.cpu_concat_in_place, false);
  EXPECT_EQ(options.cpu_conv_chain, false);
  EXPECT_EQ(options.cpu_spin_between_thunks, false);
  EXPECT_EQ(options.cxx, "clang++");
}

TEST_F(EnvironmentOptionsTest, BadFeedTimeoutOrDebugZeroMeanTheDefaults) {
  setenv("AXLE_FEED_TIMEOUT", "-5", 1);
  setenv("AXLE_DEBUG", "0", 1);
  setenv("AXLE_GPU_TF32", "sometimes", 1);  // not a switch value: XLA's rule
  EnvironmentOptions options = EnvironmentOptions::Read();
  EXPECT_EQ(options.feed_timeout, std::chrono::seconds(60));
  EXPECT_FALSE(options.debug);
  EXPECT_FALSE(options.gpu_tf32.has_value());
}

}  // namespace
}  // namespace axle
