// XLA's custom-call guide with XLA FFI on GPU: the typed-FFI handler for
// A[i] = B[i % 128] + C[i] as a CUDA kernel, registered for "CUDA". The
// stream is an execution-context argument (Ctx<PlatformStream<cudaStream_t>>)
// as in XLA's FFI documentation; the sizes come from the buffers'
// dimensions; a failed launch is the handler's Internal error.

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "xla/ffi/api/c_api.h"
#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

using BufferF32 = ffi::BufferR1<ffi::DataType::F32>;

__global__ void ffi_custom_call_kernel(const float* in0, size_t d0, const float* in1, float* out,
                                       size_t d1) {
  size_t idx = blockIdx.x * blockDim.x + threadIdx.x;
  if (idx < d1) out[idx] = in0[idx % d0] + in1[idx];
}

static ffi::Error DoCustomCallGpu(cudaStream_t stream, BufferF32 in0, BufferF32 in1,
                                  ffi::Result<BufferF32> out) {
  size_t d0 = in0.dimensions()[0];
  size_t d1 = in1.dimensions()[0];
  if (out->dimensions()[0] != d1 || d0 == 0) {
    return ffi::Error::InvalidArgument("unexpected dimensions");
  }
  const int64_t block_dim = 64;
  const int64_t grid_dim = (d1 + block_dim - 1) / block_dim;
  if (grid_dim > 0) {
    ffi_custom_call_kernel<<<grid_dim, block_dim, 0, stream>>>(
        in0.typed_data(), d0, in1.typed_data(), out->typed_data(), d1);
  }
  cudaError_t last_error = cudaGetLastError();
  if (last_error != cudaSuccess) {
    return ffi::Error::Internal(std::string("CUDA error: ") + cudaGetErrorString(last_error));
  }
  return ffi::Error::Success();
}

XLA_FFI_DEFINE_HANDLER(gpu_handler, DoCustomCallGpu,
                       ffi::Ffi::Bind()
                           .Ctx<ffi::PlatformStream<cudaStream_t>>()
                           .Arg<BufferF32>()
                           .Arg<BufferF32>()
                           .Ret<BufferF32>());

XLA_FFI_REGISTER_HANDLER(xla::ffi::GetXlaFfiApi(), "do_custom_call", "CUDA", gpu_handler);
