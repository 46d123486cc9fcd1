// XLA's custom-call guide, "Signalling an error", on GPU: the
// status-returning signature (API_VERSION_STATUS_RETURNING) with XLA's
// stream. The guide leaves the work and `bad_condition` open; as in
// examples/custom_call/do_custom_call_with_status.cc, the work is
// do_custom_call's and the bad condition is a NaN in B. The condition is
// computed on the device, so the function waits for its stream to read it
// back: a target that fails must know it before it returns.

#include <cuda.h>
#include <cuda_runtime.h>

#include <cstring>

#include "xla/service/custom_call_status.h"
#include "xla/service/custom_call_target_registry.h"

__global__ void custom_call_with_status_kernel(const float* in0, const float* in1, float* out,
                                               int* bad) {
  size_t idx = blockIdx.x * blockDim.x + threadIdx.x;
  if (idx < 128 && isnan(in0[idx])) atomicExch(bad, 1);
  out[idx] = in0[idx % 128] + in1[idx];
}

void do_custom_call_with_status(CUstream stream, void** buffers, const char* opaque,
                                size_t opaque_len, XlaCustomCallStatus* status) {
  const float* in0 = reinterpret_cast<const float*>(buffers[0]);
  const float* in1 = reinterpret_cast<const float*>(buffers[1]);
  float* out = reinterpret_cast<float*>(buffers[2]);

  int* bad = nullptr;
  int bad_condition = 0;
  cudaError_t error = cudaMallocAsync(&bad, sizeof(int), stream);
  if (error == cudaSuccess) error = cudaMemsetAsync(bad, 0, sizeof(int), stream);
  if (error == cudaSuccess) {
    const int64_t block_dim = 64;
    const int64_t grid_dim = 2048 / block_dim;
    custom_call_with_status_kernel<<<grid_dim, block_dim, 0, stream>>>(in0, in1, out, bad);
    error = cudaGetLastError();
  }
  if (error == cudaSuccess) {
    error = cudaMemcpyAsync(&bad_condition, bad, sizeof(int), cudaMemcpyDeviceToHost, stream);
  }
  if (bad != nullptr) cudaFreeAsync(bad, stream);
  if (error == cudaSuccess) error = cudaStreamSynchronize(stream);
  if (error != cudaSuccess) {
    const char* message = cudaGetErrorString(error);
    XlaCustomCallStatusSetFailure(status, message, strlen(message));
    return;
  }
  if (bad_condition) {
    const char* error_message = "An error occurred";
    XlaCustomCallStatusSetFailure(status, error_message, strlen(error_message));
  }
}
XLA_REGISTER_CUSTOM_CALL_TARGET(do_custom_call_with_status, "CUDA");
