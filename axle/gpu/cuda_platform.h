//===- cuda_platform.h - The `cuda` platform -------------------------------===//
//
// Platform "CUDA" (also "cuda", "gpu"; custom calls registered for XLA's
// "CUDA"). It is made on first lookup (platform_provider.h): linking
// axle_gpu registers its provider, which opens the driver and device 0.
// Without a driver or a GPU the lookup is an Unavailable error naming CUDA
// and what is missing; `axle-run --platform=cuda` prints it and exits 1.
//
// With a GPU the platform exists: its device memory is device 0's
// (CudaMemoryAllocator: pooled cuMemAlloc blocks), its transfer manager
// moves literals and ShapedBuffers to and from it (cuda_transfer.h), and
// its SynchronousMemcpy is the driver's, so LocalClient's transfers and
// the streams' copies work. Its compiler is the GPU compiler
// (gpu_compiler.h): modules run as thunks on the device (README.md says
// which ops do not yet).
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
