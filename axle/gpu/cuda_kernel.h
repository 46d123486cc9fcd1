//===- cuda_kernel.h - Loading PTX and launching kernels -------------------===//
//
// The run-time half of the GPU's code generator (ptx_compiler.h makes the
// PTX): CudaModule loads PTX text into a device's context (the driver
// compiles it for the device's architecture; its error log is part of the
// error), GetFunction finds a kernel in it, and LaunchKernel enqueues a
// kernel on a stream with device buffers as its parameters, the calling
// convention of every kernel ptx_compiler.h emits (one .u64 pointer per
// buffer: the fusion's parameters, then its outputs).
//
// Internal to axle/gpu: this header includes cuda.h.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_GPU_CUDA_KERNEL_H_
#define AXLE_GPU_CUDA_KERNEL_H_

#include <cuda.h>

#include <cstdint>
#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "axle/gpu/cuda_device.h"
#include "axle/gpu/cuda_stream.h"
#include "axle/runtime/device_memory.h"

namespace axle::gpu {

class CudaModule {
 public:
  // InvalidArgument with the driver's log when it rejects the PTX.
  static absl::StatusOr<std::unique_ptr<CudaModule>> LoadPtx(const CudaDevice& device,
                                                             absl::string_view ptx);
  ~CudaModule();
  CudaModule(const CudaModule&) = delete;
  CudaModule& operator=(const CudaModule&) = delete;

  // NotFound naming the kernel when the module has none of that name.
  absl::StatusOr<CUfunction> GetFunction(absl::string_view name) const;

 private:
  CudaModule(const CudaDevice& device, CUmodule module) : device_(device), module_(module) {}
  const CudaDevice& device_;
  CUmodule module_;
};

// Enqueues `function` on `stream` with `grid` x `block` threads (x only) and
// `buffers` as its pointer parameters. Nothing is launched for a grid of 0.
// InvalidArgument for launch dimensions the device cannot take.
absl::Status LaunchKernel(CudaStream* stream, CUfunction function, int64_t grid, int block,
                          absl::Span<const se::DeviceMemoryBase> buffers);

}  // namespace axle::gpu

#endif  // AXLE_GPU_CUDA_KERNEL_H_
