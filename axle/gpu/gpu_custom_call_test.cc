//===- gpu_custom_call_test.cc - XLA's GPU custom calls compile and register -===//
//
// Code written for XLA's GPU custom calls, against XLA's include paths and
// the toolkit's headers, compiles and registers for "CUDA" unchanged, and is
// called in XLA's convention (cuda_custom_call.h; these targets run on the
// host, so no GPU is needed). A host platform refuses a module that uses
// such a target, naming CUDA.
//
//===----------------------------------------------------------------------===//
#include "axle/gpu/gpu_custom_call.h"

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <string>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "axle/gpu/cuda_custom_call.h"
#include "axle/hlo/text/hlo_parser.h"
#include "axle/runtime/executable.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "xla/ffi/api/ffi.h"
#include "xla/service/custom_call_status.h"
#include "xla/service/custom_call_target_registry.h"

// As XLA's custom-call guide writes them. These run on the host (they
// never touch the stream), so the calling convention can be checked here:
// out[i] = in0[i] + in1[i] + opaque's length, over the first 4 elements.
void do_custom_call_on_gpu(CUstream stream, void** buffers, const char* opaque, size_t opaque_len) {
  const auto* x = static_cast<const float*>(buffers[0]);
  const auto* y = static_cast<const float*>(buffers[1]);
  auto* out = static_cast<float*>(buffers[2]);
  for (int i = 0; i < 4; ++i) out[i] = x[i] + y[i] + static_cast<float>(opaque_len);
}
XLA_REGISTER_CUSTOM_CALL_TARGET(do_custom_call_on_gpu, "CUDA");

// Fails when its opaque is "fail"; otherwise out = 2 * in.
void gpu_call_with_status(cudaStream_t stream, void** buffers, const char* opaque,
                          size_t opaque_len, XlaCustomCallStatus* status) {
  if (std::string(opaque, opaque_len) == "fail") {
    XlaCustomCallStatusSetFailure(status, "failed on purpose", 17);
    return;
  }
  *static_cast<float*>(buffers[1]) = *static_cast<const float*>(buffers[0]) * 2;
}
XLA_REGISTER_CUSTOM_CALL_TARGET(gpu_call_with_status, "CUDA");

// A typed FFI handler for CUDA as XLA's FFI guide writes one: the stream is
// an execution-context argument. Runs on the host here (it only records the
// stream): out = scale * x + (stream's address % 7).
static xla::ffi::Error ScaleOnGpu(cudaStream_t stream, xla::ffi::Buffer<xla::ffi::F32> x,
                                  xla::ffi::ResultBuffer<xla::ffi::F32> out, float scale) {
  if (scale < 0) return xla::ffi::Error::InvalidArgument("negative scale");
  const auto offset = static_cast<float>(reinterpret_cast<uintptr_t>(stream) % 7);
  for (size_t i = 0; i < x.element_count(); ++i) {
    out->typed_data()[i] = scale * x.typed_data()[i] + offset;
  }
  return xla::ffi::Error::Success();
}
XLA_FFI_DEFINE_HANDLER_SYMBOL(axle_gpu_test_scale, ScaleOnGpu,
                              xla::ffi::Ffi::Bind()
                                  .Ctx<xla::ffi::PlatformStream<cudaStream_t>>()
                                  .Arg<xla::ffi::Buffer<xla::ffi::F32>>()
                                  .Ret<xla::ffi::Buffer<xla::ffi::F32>>()
                                  .Attr<float>("scale"));
XLA_FFI_REGISTER_HANDLER(xla::ffi::GetXlaFfiApi(), "axle_gpu_test.scale", "CUDA",
                         axle_gpu_test_scale);

void host_only_target(void* out, const void** in) {}
XLA_REGISTER_CUSTOM_CALL_TARGET(host_only_target, "Host");

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

// The custom call of `text`'s root.
const HloCustomCallInstruction& RootCall(const HloModule& module) {
  return *cast<HloCustomCallInstruction>(module.entry_computation()->root_instruction());
}

TEST(GpuCustomCallTest, CalledInXlasConvention) {
  auto module = ParseAndReturnUnverifiedModule(R"(
HloModule m
ENTRY e {
  x = f32[4] parameter(0)
  y = f32[4] parameter(1)
  ROOT r = f32[4] custom-call(x, y), custom_call_target="do_custom_call_on_gpu", opaque="abc"
})");
  ASSERT_TRUE(module.ok()) << module.status();
  auto target = CudaCustomCallTarget::Resolve(RootCall(**module));
  ASSERT_TRUE(target.ok()) << target.status();
  float x[4] = {1, 2, 3, 4};
  float y[4] = {10, 20, 30, 40};
  float out[4] = {};
  void* buffers[] = {x, y, out};
  ASSERT_TRUE(target->Call(nullptr, buffers).ok());
  EXPECT_EQ(out[0], 14);
  EXPECT_EQ(out[3], 47);
}

TEST(GpuCustomCallTest, TheStatusVersionsFailureIsTheRunsError) {
  for (const char* version :
       {"API_VERSION_STATUS_RETURNING", "API_VERSION_STATUS_RETURNING_UNIFIED"}) {
    for (const char* opaque : {"ok", "fail"}) {
      auto module = ParseAndReturnUnverifiedModule(
          absl::StrCat("HloModule m\nENTRY e {\n  x = f32[] parameter(0)\n  ROOT r = f32[] "
                       "custom-call(x), custom_call_target=\"gpu_call_with_status\", opaque=\"",
                       opaque, "\", api_version=", version, "\n}\n"));
      ASSERT_TRUE(module.ok()) << module.status();
      auto target = CudaCustomCallTarget::Resolve(RootCall(**module));
      ASSERT_TRUE(target.ok()) << target.status();
      float x = 3;
      float out = 0;
      void* buffers[] = {&x, &out};
      absl::Status status = target->Call(nullptr, buffers);
      if (std::string(opaque) == "ok") {
        EXPECT_TRUE(status.ok()) << status;
        EXPECT_EQ(out, 6);
      } else {
        EXPECT_EQ(status.code(), absl::StatusCode::kInternal);
        EXPECT_THAT(status.message(), HasSubstr("custom-call 'gpu_call_with_status' (r)"));
        EXPECT_THAT(status.message(), HasSubstr("failed on purpose"));
      }
    }
  }
}

TEST(GpuCustomCallTest, ResolvingNamesWhatIsMissing) {
  auto resolve = [](const std::string& target, const std::string& version) {
    auto module = ParseAndReturnUnverifiedModule(
        absl::StrCat("HloModule m\nENTRY e {\n  x = f32[] parameter(0)\n  ROOT r = f32[] "
                     "custom-call(x), custom_call_target=\"",
                     target, "\", api_version=", version, "\n}\n"));
    EXPECT_TRUE(module.ok()) << module.status();
    return CudaCustomCallTarget::Resolve(RootCall(**module)).status();
  };
  absl::Status host_only = resolve("host_only_target", "API_VERSION_ORIGINAL");
  EXPECT_EQ(host_only.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(host_only.message()), HasSubstr("CUDA"));
  EXPECT_THAT(std::string(host_only.message()), HasSubstr("Host"));
  absl::Status unknown = resolve("no_such_target", "API_VERSION_ORIGINAL");
  EXPECT_EQ(unknown.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(unknown.message()), HasSubstr("no_such_target"));
  absl::Status ffi = resolve("do_custom_call_on_gpu", "API_VERSION_TYPED_FFI");
  EXPECT_EQ(ffi.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(ffi.message()), HasSubstr("registered as an untyped target"));
}

TEST(GpuCustomCallTest, TypedFfiHandlerGetsTheStream) {
  for (const char* scale : {"2.0", "-1.0"}) {
    auto module = ParseAndReturnUnverifiedModule(
        absl::StrCat("HloModule m\nENTRY e {\n  x = f32[3] parameter(0)\n  ROOT r = f32[3] "
                     "custom-call(x), custom_call_target=\"axle_gpu_test.scale\", "
                     "api_version=API_VERSION_TYPED_FFI, backend_config=\"{scale = ",
                     scale, " : f32}\"\n}\n"));
    ASSERT_TRUE(module.ok()) << module.status();
    auto target = CudaCustomCallTarget::Resolve(RootCall(**module));
    ASSERT_TRUE(target.ok()) << target.status();
    float x[3] = {1, 2, 3};
    float out[3] = {};
    void* buffers[] = {x, out};
    // A fake stream handle: the handler only reads its address.
    alignas(8) char marker[8] = {};
    auto* stream = reinterpret_cast<CUstream>(&marker[0]);
    const auto offset = static_cast<float>(reinterpret_cast<uintptr_t>(stream) % 7);
    absl::Status status = target->Call(stream, buffers);
    if (std::string(scale) == "2.0") {
      ASSERT_TRUE(status.ok()) << status;
      EXPECT_EQ(out[0], 2 + offset);
      EXPECT_EQ(out[2], 6 + offset);
    } else {
      EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
      EXPECT_THAT(status.message(), HasSubstr("custom-call 'axle_gpu_test.scale' (r)"));
      EXPECT_THAT(status.message(), HasSubstr("negative scale"));
    }
  }
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
