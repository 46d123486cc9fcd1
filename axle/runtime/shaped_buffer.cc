#include "axle/runtime/shaped_buffer.h"

#include <algorithm>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace axle {

int64_t DeviceBufferSize(const Shape& shape) {
  if (shape.IsTuple()) return shape.tuple_shapes_size() * static_cast<int64_t>(sizeof(void*));
  if (shape.IsArray()) return ShapeUtil::ByteSizeOfElements(shape);
  return 0;
}

void WriteTupleIndexTables(const ShapedBuffer& buffer) {
  const Shape& shape = buffer.on_device_shape();
  for (const auto& [index, memory] : buffer.buffers()) {
    const Shape& subshape = ShapeUtil::GetSubshape(shape, index);
    if (!subshape.IsTuple() || memory.is_null()) continue;
    auto* table = static_cast<void**>(const_cast<void*>(memory.opaque()));
    for (int64_t i = 0; i < subshape.tuple_shapes_size(); ++i) {
      ShapeIndex element = index;
      element.push_back(i);
      table[i] = const_cast<void*>(buffer.buffer(element).opaque());
    }
  }
}

ShapedBuffer::ShapedBuffer(Shape on_device_shape, int device_ordinal)
    : device_ordinal_(device_ordinal), buffers_(std::move(on_device_shape)) {}

ShapedBuffer::ShapedBuffer(std::shared_ptr<const IndexedShape> on_device_shape, int device_ordinal)
    : device_ordinal_(device_ordinal), buffers_(std::move(on_device_shape)) {}

// Moves are O(1), as XLA's: the buffer tree (and with it the shape) changes
// hands and the moved-from tree is left with no shape
// (PRIMITIVE_TYPE_INVALID) and a single null buffer, which CheckValid
// reports. Copying the shape here (and rebuilding a tree for the
// moved-from value) cost deep shape copies per move, several moves per
// run: half of a small program's run time.
// (Reverted once, in a54b213, for a torch test failure that turned out to
// be the test's: random inputs and an x gradient that cancels to noise.)
ShapedBuffer::ShapedBuffer(ShapedBuffer&& other) noexcept
    : device_ordinal_(other.device_ordinal_), buffers_(std::move(other.buffers_)) {}

ShapedBuffer& ShapedBuffer::operator=(ShapedBuffer&& other) noexcept {
  if (this != &other) {
    device_ordinal_ = other.device_ordinal_;
    buffers_ = std::move(other.buffers_);
  }
  return *this;
}

void ShapedBuffer::clear() {
  for (auto&& node : buffers_) node.second = se::DeviceMemoryBase();
}

absl::Status ShapedBuffer::CheckValid(absl::string_view what) const {
  if (on_device_shape().element_type() == PRIMITIVE_TYPE_INVALID) {
    return absl::FailedPreconditionError(
        absl::StrCat(what, ": the buffer was moved away (it has no shape any more)"));
  }
  for (const auto& [index, buffer] : buffers_) {
    const Shape& shape = ShapeUtil::GetSubshape(on_device_shape(), index);
    int64_t needed = DeviceBufferSize(shape);
    if (needed == 0) continue;
    if (buffer.is_null()) {
      return absl::FailedPreconditionError(
          absl::StrCat(what, ": the buffer at index {", absl::StrJoin(index, ","), "} of ",
                       on_device_shape().ToString(true),
                       " is null: the value was donated to an earlier execution or released"));
    }
    if (buffer.size() < static_cast<uint64_t>(needed)) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, ": the buffer at index {", absl::StrJoin(index, ","), "} has ",
                       buffer.size(), " bytes; ", shape.ToString(true), " needs ", needed));
    }
  }
  return absl::OkStatus();
}

std::string ShapedBuffer::ToString() const {
  std::string out = absl::StrCat("ShapedBuffer(", on_device_shape().ToString(true), ", device ",
                                 device_ordinal_, "):\n");
  for (const auto& [index, buffer] : buffers_) {
    absl::StrAppend(&out, "  {", absl::StrJoin(index, ","),
                    "}: ", ShapeUtil::GetSubshape(on_device_shape(), index).ToString(true), " at ",
                    absl::Hex(reinterpret_cast<uintptr_t>(buffer.opaque())), " (", buffer.size(),
                    " bytes)\n");
  }
  return out;
}

ScopedShapedBuffer::ScopedShapedBuffer(Shape on_device_shape, se::DeviceMemoryAllocator* allocator,
                                       int device_ordinal)
    : ShapedBuffer(std::move(on_device_shape), device_ordinal), allocator_(allocator) {}

ScopedShapedBuffer::ScopedShapedBuffer(std::shared_ptr<const IndexedShape> on_device_shape,
                                       se::DeviceMemoryAllocator* allocator, int device_ordinal)
    : ShapedBuffer(std::move(on_device_shape), device_ordinal), allocator_(allocator) {}

ScopedShapedBuffer::ScopedShapedBuffer(ShapedBuffer shaped_buffer,
                                       se::DeviceMemoryAllocator* allocator)
    : ShapedBuffer(std::move(shaped_buffer)), allocator_(allocator) {}

ScopedShapedBuffer::ScopedShapedBuffer(ScopedShapedBuffer&& other) noexcept
    : ShapedBuffer(static_cast<ShapedBuffer&&>(other)), allocator_(other.allocator_) {}

ScopedShapedBuffer& ScopedShapedBuffer::operator=(ScopedShapedBuffer&& other) noexcept {
  if (this != &other) {
    Deallocate();
    allocator_ = other.allocator_;
    ShapedBuffer::operator=(static_cast<ShapedBuffer&&>(other));
  }
  return *this;
}

ScopedShapedBuffer::~ScopedShapedBuffer() { Deallocate(); }

void ScopedShapedBuffer::set_buffer(se::OwningDeviceMemory buffer, const ShapeIndex& index) {
  *buffers_.mutable_element(index) = buffer.Release();
}

ShapedBuffer ScopedShapedBuffer::release() {
  // The buffers leave; this keeps its shape, with null buffers.
  ShapedBuffer released(static_cast<ShapedBuffer&&>(*this));
  buffers_ = ShapeTree<se::DeviceMemoryBase>(released.buffers().indexed_shape());
  return released;
}

void ScopedShapedBuffer::Deallocate() {
  if (allocator_ == nullptr) return;
  // A buffer may appear at several indices (an output aliased twice is
  // rejected, but be safe): free each address once.
  absl::InlinedVector<void*, 8> freed;
  for (auto&& [index, buffer] : buffers_) {
    if (buffer.is_null()) continue;
    void* address = buffer.opaque();
    if (std::find(freed.begin(), freed.end(), address) != freed.end()) continue;
    freed.push_back(address);
    allocator_->Deallocate(device_ordinal_, buffer).IgnoreError();
    buffer = se::DeviceMemoryBase();
  }
}

}  // namespace axle
