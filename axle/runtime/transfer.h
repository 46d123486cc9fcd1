//===- transfer.h - Literals to and from host-platform device buffers ------===//
//
// Device buffers of host platforms are host memory laid out as
// shaped_buffer.h describes: arrays dense in their shape's layout, tuples as
// index tables. These functions copy between them and Literals (row-major)
// now, on the calling thread: what a run does inside its own work, and what
// the transfer manager (transfer_manager.h) orders on a stream.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_RUNTIME_TRANSFER_H_
#define AXLE_RUNTIME_TRANSFER_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "axle/core/literal.h"
#include "axle/runtime/device_memory.h"
#include "axle/runtime/shaped_buffer.h"

namespace axle {

// Fresh buffers for a value of `on_host_shape` (array leaves in its layout,
// or the default one), tuple index tables written.
absl::StatusOr<ScopedShapedBuffer> AllocateDeviceBuffers(const Shape& on_host_shape,
                                                         se::DeviceMemoryAllocator* allocator,
                                                         int device_ordinal);
// Fresh buffers holding `literal` (array leaves in the literal's layout, or
// the default one where it has none).
absl::StatusOr<ScopedShapedBuffer> TransferLiteralToDevice(const Literal& literal,
                                                           se::DeviceMemoryAllocator* allocator,
                                                           int device_ordinal = 0);
// Reads `buffer`; `what` names it in errors ("argument 0", "result"). An
// invalid (donated) buffer is a FailedPrecondition.
absl::StatusOr<Literal> TransferLiteralFromDevice(const ShapedBuffer& buffer,
                                                  absl::string_view what = "buffer");
// Writes the array leaves of `literal` into `buffer`'s existing buffers
// (same shape; index tables are left alone).
absl::Status TransferLiteralIntoBuffer(const Literal& literal, const ShapedBuffer& buffer);

}  // namespace axle

#endif  // AXLE_RUNTIME_TRANSFER_H_
