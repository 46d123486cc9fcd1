//===- cuda_transfer.cc - Literals to and from a GPU's buffers -------------===//
#include "axle/gpu/cuda_transfer.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "axle/base/status_macros.h"
#include "axle/core/shape_util.h"
#include "axle/runtime/transfer.h"

namespace axle::gpu {
namespace {

// Host buffers of the same shape as `buffer` (the staging copy).
absl::StatusOr<ScopedShapedBuffer> HostStaging(const ShapedBuffer& buffer,
                                               HostMemoryAllocator* host) {
  return AllocateDeviceBuffers(buffer.on_device_shape(), host, /*device_ordinal=*/0);
}

absl::Status CheckBuffer(CudaStream* stream, const ShapedBuffer& buffer, const char* what) {
  if (stream == nullptr) return absl::InvalidArgumentError("CUDA transfer: the stream is null");
  if (buffer.device_ordinal() != stream->device().ordinal()) {
    return absl::InvalidArgumentError(
        absl::StrCat("CUDA transfer: a buffer on device ", buffer.device_ordinal(),
                     " through a stream of device ", stream->device().ordinal()));
  }
  return buffer.CheckValid(what);
}

}  // namespace

absl::StatusOr<ScopedShapedBuffer> AllocateCudaShapedBuffer(const Shape& on_host_shape,
                                                            se::DeviceMemoryAllocator* allocator,
                                                            CudaStream* stream) {
  Shape shape = on_host_shape;
  ShapeUtil::SetToDefaultLayoutIfMissing(&shape);
  const int ordinal = stream->device().ordinal();
  ScopedShapedBuffer result(shape, allocator, ordinal);
  for (auto&& [index, buffer] : result.buffers()) {
    const int64_t size = DeviceBufferSize(ShapeUtil::GetSubshape(shape, index));
    if (size == 0) continue;
    AXLE_ASSIGN_OR_RETURN(se::OwningDeviceMemory memory, allocator->Allocate(ordinal, size));
    buffer = memory.Release();
  }
  // Tuple index tables: the children's device addresses, written from host
  // arrays that live until the copies are done.
  std::vector<std::vector<const void*>> tables;
  for (auto&& [index, buffer] : result.buffers()) {
    const Shape& subshape = ShapeUtil::GetSubshape(shape, index);
    if (!subshape.IsTuple() || buffer.is_null()) continue;
    std::vector<const void*>& table = tables.emplace_back();
    ShapeIndex child = index;
    child.push_back(0);
    for (int64_t i = 0; i < subshape.tuple_shapes_size(); ++i) {
      child.back() = i;
      table.push_back(result.buffer(child).opaque());
    }
    AXLE_RETURN_IF_ERROR(
        stream->MemcpyHostToDevice(&buffer, table.data(), table.size() * sizeof(void*)));
  }
  if (!tables.empty()) AXLE_RETURN_IF_ERROR(stream->Synchronize());
  return result;
}

absl::Status TransferLiteralToCuda(CudaStream* stream, const Literal& literal,
                                   const ShapedBuffer& buffer) {
  AXLE_RETURN_IF_ERROR(CheckBuffer(stream, buffer, "CUDA transfer destination"));
  if (!ShapeUtil::Compatible(literal.shape(), buffer.on_device_shape())) {
    return absl::InvalidArgumentError(
        absl::StrCat("CUDA transfer: a literal of shape ", literal.shape().ToString(false),
                     " into device buffers of shape ", buffer.on_device_shape().ToString(false)));
  }
  HostMemoryAllocator host;
  AXLE_ASSIGN_OR_RETURN(ScopedShapedBuffer staging, HostStaging(buffer, &host));
  AXLE_RETURN_IF_ERROR(TransferLiteralIntoBuffer(literal, staging));
  for (const auto& [index, mem] : buffer.buffers()) {
    if (!ShapeUtil::GetSubshape(buffer.on_device_shape(), index).IsArray() || mem.is_null()) {
      continue;
    }
    se::DeviceMemoryBase destination = mem;
    AXLE_RETURN_IF_ERROR(stream->MemcpyHostToDevice(&destination, staging.buffer(index).opaque(),
                                                    staging.buffer(index).size()));
  }
  return stream->Synchronize();
}

absl::StatusOr<Literal> TransferLiteralFromCuda(CudaStream* stream, const ShapedBuffer& buffer) {
  AXLE_RETURN_IF_ERROR(CheckBuffer(stream, buffer, "CUDA transfer source"));
  HostMemoryAllocator host;
  AXLE_ASSIGN_OR_RETURN(ScopedShapedBuffer staging, HostStaging(buffer, &host));
  for (const auto& [index, mem] : buffer.buffers()) {
    if (!ShapeUtil::GetSubshape(buffer.on_device_shape(), index).IsArray() || mem.is_null()) {
      continue;
    }
    AXLE_RETURN_IF_ERROR(stream->MemcpyDeviceToHost(
        const_cast<void*>(staging.buffer(index).opaque()), mem, mem.size()));
  }
  AXLE_RETURN_IF_ERROR(stream->Synchronize());
  return TransferLiteralFromDevice(staging, "CUDA buffer");
}

}  // namespace axle::gpu
