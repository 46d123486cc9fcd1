//===- cuda_transfer.h - Literals to and from a GPU's buffers --------------===//
//
// The `cuda` platform's buffers are device memory laid out as
// shaped_buffer.h describes for every platform: arrays dense in their
// shape's layout, tuples as index tables (of device addresses). Literals
// (row-major, host memory) are laid out in a host staging copy of the same
// buffers (transfer.h does the relayout) and copied on the stream; each
// function returns once its copies are done, so the staging memory can go.
//
//   AllocateCudaShapedBuffer   buffers for a value of a shape, tuple index
//                              tables written on the device.
//   TransferLiteralToCuda      a literal into existing buffers, after the
//                              stream's earlier work.
//   TransferLiteralFromCuda    the buffers' value, after the stream's work
//                              (whose error it returns).
//
// Internal to axle/gpu: this header includes cuda.h.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_GPU_CUDA_TRANSFER_H_
#define AXLE_GPU_CUDA_TRANSFER_H_

#include <cuda.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "axle/core/literal.h"
#include "axle/gpu/cuda_memory_allocator.h"
#include "axle/gpu/cuda_stream.h"
#include "axle/runtime/shaped_buffer.h"

namespace axle::gpu {

absl::StatusOr<ScopedShapedBuffer> AllocateCudaShapedBuffer(const Shape& on_host_shape,
                                                            se::DeviceMemoryAllocator* allocator,
                                                            CudaStream* stream);

// `buffer` must be valid and of the literal's shape (InvalidArgument /
// FailedPrecondition otherwise).
absl::Status TransferLiteralToCuda(CudaStream* stream, const Literal& literal,
                                   const ShapedBuffer& buffer);

absl::StatusOr<Literal> TransferLiteralFromCuda(CudaStream* stream, const ShapedBuffer& buffer);

}  // namespace axle::gpu

#endif  // AXLE_GPU_CUDA_TRANSFER_H_
