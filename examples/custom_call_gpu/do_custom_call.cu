// XLA's custom-call guide, "Custom-call on GPU": A[i] = B[i % 128] + C[i]
// as a CUDA kernel launched on XLA's stream. The code is the guide's; only
// the include paths are Axle's compat/include; the guide's kernel
// declaration, which lacks its `void` return type, has it; and cuda.h,
// which declares CUstream and which the guide's snippet leaves out, is
// included.

#include <cuda.h>

#include "xla/service/custom_call_target_registry.h"

__global__ void custom_call_kernel(const float* in0, const float* in1, float* out) {
  size_t idx = blockIdx.x * blockDim.x + threadIdx.x;
  out[idx] = in0[idx % 128] + in1[idx];
}

void do_custom_call(CUstream stream, void** buffers, const char* opaque, size_t opaque_len) {
  const float* in0 = reinterpret_cast<const float*>(buffers[0]);
  const float* in1 = reinterpret_cast<const float*>(buffers[1]);
  float* out = reinterpret_cast<float*>(buffers[2]);

  const int64_t block_dim = 64;
  const int64_t grid_dim = 2048 / block_dim;
  custom_call_kernel<<<grid_dim, block_dim,
                       /*dynamic_shared_mem_bytes=*/0, stream>>>(in0, in1, out);
}
XLA_REGISTER_CUSTOM_CALL_TARGET(do_custom_call, "CUDA");
