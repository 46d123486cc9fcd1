//===- cuda_device.cc - One GPU: its context and properties ----------------===//
#include "axle/gpu/cuda_device.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "axle/base/status_macros.h"

namespace axle::gpu {

absl::StatusOr<int> CudaDeviceCount() {
  AXLE_ASSIGN_OR_RETURN(const CudaDriver* driver, CudaDriver::Get());
  int count = 0;
  AXLE_CUDA_RETURN_IF_ERROR(driver, driver->cuDeviceGetCount(&count), "cuDeviceGetCount");
  return count;
}

absl::StatusOr<std::unique_ptr<CudaDevice>> CudaDevice::Open(int ordinal) {
  AXLE_ASSIGN_OR_RETURN(const CudaDriver* driver, CudaDriver::Get());
  AXLE_ASSIGN_OR_RETURN(int count, CudaDeviceCount());
  if (count == 0) {
    return absl::UnavailableError("CUDA platform unavailable: no CUDA device");
  }
  if (ordinal < 0 || ordinal >= count) {
    return absl::InvalidArgumentError(
        absl::StrCat("CUDA device ", ordinal, " does not exist (the machine has ", count, ")"));
  }
  std::unique_ptr<CudaDevice> device(new CudaDevice(driver, ordinal));
  AXLE_CUDA_RETURN_IF_ERROR(driver, driver->cuDeviceGet(&device->device_, ordinal), "cuDeviceGet");
  char name[256] = {};
  AXLE_CUDA_RETURN_IF_ERROR(driver, driver->cuDeviceGetName(name, sizeof(name), device->device_),
                            "cuDeviceGetName");
  device->name_ = name;
  AXLE_CUDA_RETURN_IF_ERROR(
      driver,
      driver->cuDeviceGetAttribute(&device->cc_major_, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                                   device->device_),
      "cuDeviceGetAttribute");
  AXLE_CUDA_RETURN_IF_ERROR(
      driver,
      driver->cuDeviceGetAttribute(&device->cc_minor_, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                                   device->device_),
      "cuDeviceGetAttribute");
  AXLE_CUDA_RETURN_IF_ERROR(
      driver,
      driver->cuDeviceGetAttribute(&device->multiprocessors_,
                                   CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device->device_),
      "cuDeviceGetAttribute");
  size_t total = 0;
  AXLE_CUDA_RETURN_IF_ERROR(driver, driver->cuDeviceTotalMem(&total, device->device_),
                            "cuDeviceTotalMem");
  device->total_memory_ = static_cast<int64_t>(total);
  AXLE_CUDA_RETURN_IF_ERROR(driver,
                            driver->cuDevicePrimaryCtxRetain(&device->context_, device->device_),
                            "cuDevicePrimaryCtxRetain");
  return device;
}

CudaDevice::~CudaDevice() {
  if (context_ != nullptr) driver_->cuDevicePrimaryCtxRelease(device_);
}

std::string CudaDevice::ArchName() const { return absl::StrCat("sm_", cc_major_, cc_minor_); }

CudaDevice::ScopedActivation::ScopedActivation(const CudaDevice& device)
    : driver_(device.driver()) {
  if (driver_.cuCtxGetCurrent(&previous_) != CUDA_SUCCESS) previous_ = nullptr;
  if (previous_ != device.context()) driver_.cuCtxSetCurrent(device.context());
}

CudaDevice::ScopedActivation::~ScopedActivation() {
  CUcontext current = nullptr;
  if (driver_.cuCtxGetCurrent(&current) == CUDA_SUCCESS && current != previous_) {
    driver_.cuCtxSetCurrent(previous_);
  }
}

}  // namespace axle::gpu
