//===- cuda_platform.h - The `cuda` platform -------------------------------===//
//
// Platform "CUDA" (also "cuda", "gpu"; custom calls registered for XLA's
// "CUDA"). It is made on first lookup (platform_provider.h): linking
// axle_gpu registers its provider, which opens the driver and device 0.
// Without a driver or a GPU the lookup is an Unavailable error naming CUDA
// and what is missing; `axle-run --platform=cuda` prints it and exits 1.
//
// With a GPU the lookup is still an error for now (Unimplemented, naming
// the device found): the device's pieces exist and are tested on their own
// (cuda_device.h, cuda_stream.h, cuda_memory_allocator.h, cuda_transfer.h,
// the NVPTX codegen in ptx_compiler.h), but se::Platform is host-only (its
// allocator, memcpys and transfer manager are host memory), so an
// executable cannot run on it yet. README.md says what comes next.
//
// This header is CUDA- and LLVM-free.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_GPU_CUDA_PLATFORM_H_
#define AXLE_GPU_CUDA_PLATFORM_H_

namespace axle::gpu {

// Registers the provider (idempotent; a static initializer of axle_gpu
// calls it, and programs that link the library keep that initializer).
void RegisterCudaPlatform();

}  // namespace axle::gpu

#endif  // AXLE_GPU_CUDA_PLATFORM_H_
