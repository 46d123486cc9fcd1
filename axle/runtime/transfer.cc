// Literal <-> device buffer transfers for host platforms (local_client.h).
// A literal stores arrays row-major; a device buffer stores them in the
// shape's layout, so non-default layouts are permuted element by element.
#include "axle/runtime/transfer.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "axle/base/status_macros.h"
#include "axle/runtime/relayout.h"

namespace axle {
namespace {

// The layout a device buffer of `shape` stores its elements in.
Layout DeviceLayout(const Shape& shape) {
  return shape.has_layout() ? shape.layout() : ShapeUtil::MakeDescendingLayout(shape.rank());
}

}  // namespace

absl::StatusOr<ScopedShapedBuffer> AllocateDeviceBuffers(const Shape& on_host_shape,
                                                         se::DeviceMemoryAllocator* allocator,
                                                         int device_ordinal) {
  Shape shape = on_host_shape;
  ShapeUtil::SetToDefaultLayoutIfMissing(&shape);
  ScopedShapedBuffer result(shape, allocator, device_ordinal);
  for (auto&& [index, buffer] : result.buffers()) {
    int64_t size = DeviceBufferSize(ShapeUtil::GetSubshape(shape, index));
    if (size == 0) continue;
    AXLE_ASSIGN_OR_RETURN(se::OwningDeviceMemory memory, allocator->Allocate(device_ordinal, size));
    buffer = memory.Release();
  }
  WriteTupleIndexTables(result);
  return result;
}

absl::StatusOr<ScopedShapedBuffer> TransferLiteralToDevice(const Literal& literal,
                                                           se::DeviceMemoryAllocator* allocator,
                                                           int device_ordinal) {
  AXLE_ASSIGN_OR_RETURN(ScopedShapedBuffer result,
                        AllocateDeviceBuffers(literal.shape(), allocator, device_ordinal));
  AXLE_RETURN_IF_ERROR(TransferLiteralIntoBuffer(literal, result));
  return result;
}

absl::StatusOr<Literal> TransferLiteralFromDevice(const ShapedBuffer& buffer,
                                                  absl::string_view what) {
  AXLE_RETURN_IF_ERROR(buffer.CheckValid(what));
  const Shape& shape = buffer.on_device_shape();
  Literal literal(shape);
  for (const auto& [index, mem] : buffer.buffers()) {
    const Shape& subshape = ShapeUtil::GetSubshape(shape, index);
    if (!subshape.IsArray() || mem.is_null()) continue;
    Literal& piece = literal.GetMutableSubliteral(index);
    Relayout(subshape, DeviceLayout(subshape), mem.opaque(), piece.untyped_data(),
             /*to_layout=*/false);
  }
  return literal;
}

absl::Status TransferLiteralIntoBuffer(const Literal& literal, const ShapedBuffer& buffer) {
  const Shape& shape = buffer.on_device_shape();
  if (!ShapeUtil::Compatible(literal.shape(), shape)) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot write a value of shape ", literal.shape().ToString(false),
                     " into buffers of shape ", shape.ToString(false)));
  }
  for (const auto& [index, mem] : buffer.buffers()) {
    const Shape& subshape = ShapeUtil::GetSubshape(shape, index);
    if (!subshape.IsArray() || mem.is_null()) continue;
    const Literal& piece = literal.GetSubliteral(index);
    Relayout(subshape, DeviceLayout(subshape), piece.untyped_data(),
             const_cast<void*>(mem.opaque()), /*to_layout=*/true);
  }
  return absl::OkStatus();
}

}  // namespace axle
