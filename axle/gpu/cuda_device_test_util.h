//===- cuda_device_test_util.h - A GPU test's device, stream and allocator -===//
//
// The fixture the device tests of axle/gpu share: device 0, a stream on it
// and an allocator whose frees wait for that stream. Without a GPU the test
// is skipped with a message naming why (the driver's error), as every device
// test here must be on a machine without one.
//
//   class FooDeviceTest : public CudaDeviceTest<> {};                  // TEST_F
//   class BarDeviceTest : public CudaDeviceTest<::testing::TestWithParam<Case>> {};
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_GPU_CUDA_DEVICE_TEST_UTIL_H_
#define AXLE_GPU_CUDA_DEVICE_TEST_UTIL_H_

#include <memory>
#include <utility>

#include "absl/status/statusor.h"
#include "axle/gpu/cuda_device.h"
#include "axle/gpu/cuda_memory_allocator.h"
#include "axle/gpu/cuda_stream.h"
#include "gtest/gtest.h"

namespace axle::gpu {

template <typename Base = ::testing::Test>
class CudaDeviceTest : public Base {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<CudaDevice>> device = CudaDevice::Open(0);
    if (!device.ok()) GTEST_SKIP() << "no CUDA device: " << device.status().message();
    UseDevice(*std::move(device));
  }
  void TearDown() override {
    if (allocator_ != nullptr) allocator_->OrderFreesOn(nullptr);
  }

  // Takes `device`, with a stream on it and an allocator whose frees wait
  // for that stream (for a SetUp of its own).
  void UseDevice(std::unique_ptr<CudaDevice> device) {
    device_ = std::move(device);
    absl::StatusOr<std::unique_ptr<CudaStream>> stream = CudaStream::Create(*device_);
    ASSERT_TRUE(stream.ok()) << stream.status();
    stream_ = *std::move(stream);
    allocator_ = std::make_unique<CudaMemoryAllocator>(nullptr, *device_);
    allocator_->OrderFreesOn(stream_.get());
  }

  std::unique_ptr<CudaDevice> device_;
  std::unique_ptr<CudaStream> stream_;
  std::unique_ptr<CudaMemoryAllocator> allocator_;
};

}  // namespace axle::gpu

#endif  // AXLE_GPU_CUDA_DEVICE_TEST_UTIL_H_
