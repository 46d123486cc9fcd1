// Literal <-> device buffer transfers for host platforms (local_client.h).
// A literal stores arrays row-major; a device buffer stores them in the
// shape's layout, so non-default layouts are permuted element by element.
#include "axle/runtime/transfer.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "axle/base/status_macros.h"

namespace axle {
namespace {

bool IsRowMajor(const Shape& shape) {
  if (!shape.has_layout()) return true;
  const std::vector<int64_t>& m2m = shape.layout().minor_to_major();
  for (size_t i = 0; i < m2m.size(); ++i) {
    if (m2m[i] != static_cast<int64_t>(m2m.size() - 1 - i)) return false;
  }
  return true;
}

// Physical strides (in elements) of each logical dimension under the layout.
std::vector<int64_t> PhysicalStrides(const Shape& shape) {
  std::vector<int64_t> strides(shape.rank(), 1);
  int64_t stride = 1;
  for (int64_t dim : shape.layout().minor_to_major()) {
    strides[dim] = stride;
    stride *= shape.dimensions(dim);
  }
  return strides;
}

// Copies an array between row-major `logical` and `physical` (in the shape's
// layout) storage.
void Relayout(const Shape& shape, const uint8_t* from, uint8_t* to, bool to_physical) {
  int64_t bytes = ShapeUtil::ByteSizeOfElements(shape);
  if (IsRowMajor(shape) || shape.num_elements() <= 1) {
    std::memcpy(to, from, bytes);
    return;
  }
  int64_t width = bytes / shape.num_elements();
  std::vector<int64_t> strides = PhysicalStrides(shape);
  int64_t linear = 0;
  ShapeUtil::ForEachIndex(shape.dimensions(), [&](absl::Span<const int64_t> index) {
    int64_t physical = 0;
    for (size_t d = 0; d < index.size(); ++d) physical += index[d] * strides[d];
    if (to_physical) {
      std::memcpy(to + physical * width, from + linear * width, width);
    } else {
      std::memcpy(to + linear * width, from + physical * width, width);
    }
    ++linear;
    return true;
  });
}

}  // namespace

absl::StatusOr<ScopedShapedBuffer> AllocateDeviceBuffers(const Shape& on_host_shape,
                                                         se::DeviceMemoryAllocator* allocator,
                                                         int device_ordinal) {
  Shape shape = on_host_shape;
  ShapeUtil::SetToDefaultLayoutIfMissing(&shape);
  ScopedShapedBuffer result(shape, allocator, device_ordinal);
  for (auto& [index, buffer] : result.buffers()) {
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
    Relayout(subshape, static_cast<const uint8_t*>(mem.opaque()),
             static_cast<uint8_t*>(piece.untyped_data()), /*to_physical=*/false);
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
    Relayout(subshape, static_cast<const uint8_t*>(piece.untyped_data()),
             static_cast<uint8_t*>(const_cast<void*>(mem.opaque())), /*to_physical=*/true);
  }
  return absl::OkStatus();
}

}  // namespace axle
