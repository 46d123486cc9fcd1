//===- gpu_custom_call_test.cc - XLA's GPU custom calls compile and register -===//
//
// Code written for XLA's GPU custom calls, against XLA's include paths and
// the toolkit's headers, compiles and registers for "CUDA" unchanged. Until
// the cuda platform runs modules, a host platform refuses a module that uses
// such a target, naming CUDA.
//
//===----------------------------------------------------------------------===//
#include "axle/gpu/gpu_custom_call.h"

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <type_traits>

#include "axle/hlo/text/hlo_parser.h"
#include "axle/runtime/executable.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "xla/service/custom_call_status.h"
#include "xla/service/custom_call_target_registry.h"

// As XLA's custom-call guide writes them.
void do_custom_call_on_gpu(CUstream stream, void** buffers, const char* opaque, size_t opaque_len) {
}
XLA_REGISTER_CUSTOM_CALL_TARGET(do_custom_call_on_gpu, "CUDA");

void gpu_call_with_status(cudaStream_t stream, void** buffers, const char* opaque,
                          size_t opaque_len, XlaCustomCallStatus* status) {
  XlaCustomCallStatusSetFailure(status, "failed on purpose", 17);
}
XLA_REGISTER_CUSTOM_CALL_TARGET(gpu_call_with_status, "CUDA");

namespace axle::gpu {
namespace {

using ::testing::HasSubstr;

static_assert(std::is_same_v<cudaStream_t, CUstream>);
static_assert(std::is_same_v<decltype(&do_custom_call_on_gpu), CudaCustomCallFunction>);
static_assert(std::is_same_v<decltype(&gpu_call_with_status), CudaCustomCallWithStatusFunction>);

TEST(GpuCustomCallTest, RegisteredForCuda) {
  xla::CustomCallTargetRegistry* registry = xla::CustomCallTargetRegistry::Global();
  EXPECT_EQ(registry->Lookup("do_custom_call_on_gpu", "CUDA"),
            reinterpret_cast<void*>(&do_custom_call_on_gpu));
  EXPECT_EQ(registry->Lookup("gpu_call_with_status", kCudaPlatformName),
            reinterpret_cast<void*>(&gpu_call_with_status));
  EXPECT_EQ(registry->Lookup("do_custom_call_on_gpu", "Host"), nullptr);
  EXPECT_THAT(registry->PlatformsOf("gpu_call_with_status"), ::testing::ElementsAre("CUDA"));
}

TEST(GpuCustomCallTest, TheStatusVersionReportsThroughXlasCApi) {
  // Called as the runtime will call it, on a null stream and no buffers.
  auto function = reinterpret_cast<CudaCustomCallWithStatusFunction>(
      xla::CustomCallTargetRegistry::Global()->Lookup("gpu_call_with_status", "CUDA"));
  ASSERT_NE(function, nullptr);
  CustomCallStatus status;
  function(nullptr, nullptr, "", 0, status.get());
  EXPECT_EQ(status.failure_message(), "failed on purpose");
}

TEST(GpuCustomCallTest, AHostPlatformRefusesACudaTarget) {
  auto module = ParseAndReturnUnverifiedModule(R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  ROOT r = f32[4] custom-call(p), custom_call_target="do_custom_call_on_gpu"
})");
  ASSERT_TRUE(module.ok()) << module.status();
  auto interpreter = PlatformUtil::GetPlatform("interpreter");
  ASSERT_TRUE(interpreter.ok()) << interpreter.status();
  absl::Status status = CheckModuleForPlatform(**module, **interpreter);
  EXPECT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr("do_custom_call_on_gpu"));
  EXPECT_THAT(status.message(), HasSubstr("CUDA"));
}

}  // namespace
}  // namespace axle::gpu
