//===- cuda_device.h - One GPU: its context and properties -----------------===//
//
// A CudaDevice is one GPU of the machine, opened through the driver
// (cuda_driver.h): its primary context (the one the CUDA runtime and
// libraries such as cuBLAS share, so custom calls written for XLA see the
// same context), its name, compute capability and memory. Every driver call
// that touches the device first makes the context current on the calling
// thread (ScopedActivation).
//
//   CudaDeviceCount()     the GPUs the driver sees; Unavailable (naming
//                         CUDA) without a driver.
//   CudaDevice::Open(n)   device n; Unavailable "no CUDA device" when the
//                         machine has none, InvalidArgument for an ordinal
//                         it does not have.
//
// Internal to axle/gpu: this header includes cuda.h.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_GPU_CUDA_DEVICE_H_
#define AXLE_GPU_CUDA_DEVICE_H_

#include <cuda.h>

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "axle/gpu/cuda_driver.h"

namespace axle::gpu {

absl::StatusOr<int> CudaDeviceCount();

class CudaDevice {
 public:
  static absl::StatusOr<std::unique_ptr<CudaDevice>> Open(int ordinal);
  ~CudaDevice();
  CudaDevice(const CudaDevice&) = delete;
  CudaDevice& operator=(const CudaDevice&) = delete;

  const CudaDriver& driver() const { return *driver_; }
  int ordinal() const { return ordinal_; }
  CUcontext context() const { return context_; }
  const std::string& name() const { return name_; }
  // sm_90 is {9, 0}.
  int compute_capability_major() const { return cc_major_; }
  int compute_capability_minor() const { return cc_minor_; }
  // "sm_90".
  std::string ArchName() const;
  int64_t total_memory() const { return total_memory_; }
  int multiprocessor_count() const { return multiprocessors_; }

  // Makes the device's context current on this thread for the scope.
  class ScopedActivation {
   public:
    explicit ScopedActivation(const CudaDevice& device);
    ~ScopedActivation();
    ScopedActivation(const ScopedActivation&) = delete;
    ScopedActivation& operator=(const ScopedActivation&) = delete;

   private:
    const CudaDriver& driver_;
    CUcontext previous_ = nullptr;
  };

 private:
  CudaDevice(const CudaDriver* driver, int ordinal) : driver_(driver), ordinal_(ordinal) {}

  const CudaDriver* driver_;
  int ordinal_;
  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
  std::string name_;
  int cc_major_ = 0;
  int cc_minor_ = 0;
  int64_t total_memory_ = 0;
  int multiprocessors_ = 0;
};

}  // namespace axle::gpu

#endif  // AXLE_GPU_CUDA_DEVICE_H_
