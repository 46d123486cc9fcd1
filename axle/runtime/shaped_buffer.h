//===- shaped_buffer.h - A value of a shape in device memory ---------------===//
//
// XLA's ShapedBuffer: the device buffers of a value, one per node of its
// on-device shape. As in XLA:CPU, an array's buffer holds its elements dense
// in the shape's layout; a tuple's buffer is its index table, an array of
// pointers to its elements' buffers (nested tuples nest); a token has no
// buffer. ShapedBuffer owns nothing. ScopedShapedBuffer owns its buffers and
// frees them through its allocator; release() hands them over.
//
// A buffer that is null where the shape needs memory is an *invalid*
// handle: what a ScopedShapedBuffer holds after its memory was donated to an
// execution (see execution_input.h). Using it is a clear error.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_RUNTIME_SHAPED_BUFFER_H_
#define AXLE_RUNTIME_SHAPED_BUFFER_H_

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "axle/core/shape.h"
#include "axle/runtime/device_memory.h"
#include "axle/runtime/shape_tree.h"

namespace axle {

class ShapedBuffer {
 public:
  ShapedBuffer(Shape on_device_shape, int device_ordinal);
  // Of a shared shape (shape_tree.h): copies neither the shape nor the
  // indices of its nodes.
  ShapedBuffer(std::shared_ptr<const IndexedShape> on_device_shape, int device_ordinal);
  // XLA's older form; the host shape is the device shape here.
  ShapedBuffer(Shape on_host_shape, Shape on_device_shape, int device_ordinal)
      : ShapedBuffer(std::move(on_device_shape), device_ordinal) {}
  // O(1). A moved-from ShapedBuffer has no shape (PRIMITIVE_TYPE_INVALID)
  // and one null buffer; CheckValid says it was moved away. release() and
  // donation keep the shape and null the buffers.
  ShapedBuffer(ShapedBuffer&& other) noexcept;
  ShapedBuffer& operator=(ShapedBuffer&& other) noexcept;
  ShapedBuffer(const ShapedBuffer&) = delete;
  ShapedBuffer& operator=(const ShapedBuffer&) = delete;
  virtual ~ShapedBuffer() = default;

  const Shape& on_host_shape() const { return buffers_.shape(); }
  const Shape& on_device_shape() const { return buffers_.shape(); }
  int device_ordinal() const { return device_ordinal_; }

  const se::DeviceMemoryBase& root_buffer() const { return buffer({}); }
  const se::DeviceMemoryBase& buffer(const ShapeIndex& index) const {
    return buffers_.element(index);
  }
  void set_buffer(const se::DeviceMemoryBase& buffer, const ShapeIndex& index) {
    *buffers_.mutable_element(index) = buffer;
  }
  const ShapeTree<se::DeviceMemoryBase>& buffers() const { return buffers_; }
  // The tree holds the shape: assigning another tree changes both.
  ShapeTree<se::DeviceMemoryBase>& buffers() { return buffers_; }

  // Null buffers everywhere.
  void clear();

  // OK when every node that needs memory has a buffer of at least the
  // node's size; otherwise FailedPrecondition naming `what` (e.g.
  // "argument 1"), the node and the shape.
  absl::Status CheckValid(absl::string_view what) const;

  std::string ToString() const;

 protected:
  int device_ordinal_;
  // The buffers and the on-device shape (one copy of it: the tree's).
  ShapeTree<se::DeviceMemoryBase> buffers_;
};

class ScopedShapedBuffer : public ShapedBuffer {
 public:
  ScopedShapedBuffer(Shape on_device_shape, se::DeviceMemoryAllocator* allocator,
                     int device_ordinal);
  ScopedShapedBuffer(std::shared_ptr<const IndexedShape> on_device_shape,
                     se::DeviceMemoryAllocator* allocator, int device_ordinal);
  ScopedShapedBuffer(Shape on_host_shape, Shape on_device_shape,
                     se::DeviceMemoryAllocator* allocator, int device_ordinal)
      : ScopedShapedBuffer(std::move(on_device_shape), allocator, device_ordinal) {}
  // Takes ownership of `shaped_buffer`'s buffers.
  ScopedShapedBuffer(ShapedBuffer shaped_buffer, se::DeviceMemoryAllocator* allocator);
  ScopedShapedBuffer(ScopedShapedBuffer&& other) noexcept;
  ScopedShapedBuffer& operator=(ScopedShapedBuffer&& other) noexcept;
  ~ScopedShapedBuffer() override;

  se::DeviceMemoryAllocator* memory_allocator() const { return allocator_; }

  // Takes ownership of `buffer` at `index` (the old buffer there must be
  // null or already released).
  void set_buffer(se::OwningDeviceMemory buffer, const ShapeIndex& index);
  // Gives up ownership of every buffer; this becomes an invalid handle.
  ShapedBuffer release();

 private:
  void Deallocate();

  se::DeviceMemoryAllocator* allocator_;
};

// Points every tuple's index table at its elements' buffers.
void WriteTupleIndexTables(const ShapedBuffer& buffer);

// Bytes a node of an on-device shape needs: an array's dense elements, a
// tuple's index table (one pointer per element), nothing for a token.
int64_t DeviceBufferSize(const Shape& shape);

}  // namespace axle

#endif  // AXLE_RUNTIME_SHAPED_BUFFER_H_
