//===- cuda_driver.h - The CUDA driver API, opened at run time -------------===//
//
// The CUDA backend talks to the GPU through the driver API (libcuda.so.1),
// which it opens with dlopen when a program first asks for the `cuda`
// platform rather than linking it: the driver ships with the GPU's kernel
// module, not with the toolkit, so a binary linked against it would not even
// start on a machine without a GPU (CI, most developers' machines). Opened
// at run time, the same binaries run everywhere and asking for CUDA where
// there is no driver is an error (axle/gpu/README.md).
//
// CudaDriver::Get() opens the library once, resolves every function the
// backend uses (the versioned symbol cuda.h's macros name: cuMemAlloc is
// cuMemAlloc_v2), and calls cuInit. Its failure says what was missing:
//
//   CUDA platform unavailable: no CUDA driver (libcuda.so.1: cannot open ...)
//   CUDA platform unavailable: cuInit: CUDA_ERROR_NO_DEVICE (no CUDA-capable
//   device is detected)
//
// Internal to axle/gpu: this header includes cuda.h.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_GPU_CUDA_DRIVER_H_
#define AXLE_GPU_CUDA_DRIVER_H_

#include <cuda.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace axle::gpu {

// The driver functions the backend calls: X(name) for each, by its name in
// cuda.h (which may be a macro for a versioned symbol).
#define AXLE_CUDA_DRIVER_FUNCTIONS(X) \
  X(cuInit)                           \
  X(cuDriverGetVersion)               \
  X(cuGetErrorName)                   \
  X(cuGetErrorString)                 \
  X(cuDeviceGetCount)                 \
  X(cuDeviceGet)                      \
  X(cuDeviceGetName)                  \
  X(cuDeviceGetAttribute)             \
  X(cuDeviceTotalMem)                 \
  X(cuDevicePrimaryCtxRetain)         \
  X(cuDevicePrimaryCtxRelease)        \
  X(cuCtxSetCurrent)                  \
  X(cuCtxGetCurrent)                  \
  X(cuMemAlloc)                       \
  X(cuMemFree)                        \
  X(cuMemGetInfo)                     \
  X(cuMemcpyHtoDAsync)                \
  X(cuMemcpyDtoHAsync)                \
  X(cuMemcpyDtoDAsync)                \
  X(cuMemsetD8Async)                  \
  X(cuMemHostAlloc)                   \
  X(cuMemFreeHost)                    \
  X(cuStreamCreate)                   \
  X(cuStreamDestroy)                  \
  X(cuStreamSynchronize)              \
  X(cuStreamQuery)                    \
  X(cuStreamWaitEvent)                \
  X(cuEventCreate)                    \
  X(cuEventDestroy)                   \
  X(cuEventRecord)                    \
  X(cuEventSynchronize)               \
  X(cuEventQuery)                     \
  X(cuModuleLoadDataEx)               \
  X(cuModuleUnload)                   \
  X(cuModuleGetFunction)              \
  X(cuLaunchKernel)                   \
  X(cuStreamBeginCapture)             \
  X(cuStreamEndCapture)               \
  X(cuGraphInstantiate)               \
  X(cuGraphExecUpdate)                \
  X(cuGraphLaunch)                    \
  X(cuGraphGetNodes)                  \
  X(cuGraphDestroy)                   \
  X(cuGraphExecDestroy)

// Functions the backend can do without (null when the driver lacks them):
// cuEventElapsedTime is cuEventElapsedTime_v2 in CUDA 13's cuda.h, which
// older drivers lack; their unversioned symbol (same signature) is taken
// then. Only AXLE_PROFILE's timings use it.
#define AXLE_CUDA_DRIVER_OPTIONAL_FUNCTIONS(X) X(cuEventElapsedTime)

class CudaDriver {
 public:
  // The driver, opened and initialized once per process; Unavailable
  // (naming CUDA and what was missing) where it cannot be.
  static absl::StatusOr<const CudaDriver*> Get();

  // The driver's CUDA version (12080 for 12.8).
  int version() const { return version_; }

#define AXLE_CUDA_DRIVER_MEMBER(name) decltype(&::name) name = nullptr;
  AXLE_CUDA_DRIVER_FUNCTIONS(AXLE_CUDA_DRIVER_MEMBER)
  AXLE_CUDA_DRIVER_OPTIONAL_FUNCTIONS(AXLE_CUDA_DRIVER_MEMBER)
#undef AXLE_CUDA_DRIVER_MEMBER

  // OK for CUDA_SUCCESS; otherwise Internal "`what`: CUDA_ERROR_X
  // (description)" (ResourceExhausted for out-of-memory).
  absl::Status ToStatus(CUresult result, absl::string_view what) const;

 private:
  CudaDriver() = default;
  static absl::StatusOr<const CudaDriver*> Load();

  void* library_ = nullptr;
  int version_ = 0;
};

// Returns from the calling function when a driver call fails.
#define AXLE_CUDA_RETURN_IF_ERROR(driver, call, what)                       \
  do {                                                                      \
    if (absl::Status axle_cuda_status = (driver)->ToStatus((call), (what)); \
        !axle_cuda_status.ok()) {                                           \
      return axle_cuda_status;                                              \
    }                                                                       \
  } while (false)

}  // namespace axle::gpu

#endif  // AXLE_GPU_CUDA_DRIVER_H_
