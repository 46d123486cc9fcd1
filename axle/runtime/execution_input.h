//===- execution_input.h - Arguments that may be donated -------------------===//
//
// XLA's execution inputs and outputs:
//
//   MaybeOwningDeviceMemory  a buffer passed to an execution, either owned
//                            (se::OwningDeviceMemory: the caller donates it)
//                            or not (se::DeviceMemoryBase: only lent).
//   ExecutionInput           one argument: a tree of such buffers.
//   ExecutionOutput          the result, plus donated inputs the execution
//                            did not reuse (to be freed by the caller, or
//                            dropped).
//
// Donation: an argument buffer passed with ownership, at a parameter index
// aliased to an output (input_output_alias), becomes that output's buffer:
// same address, no copy. A buffer passed without ownership at such an index
// is copied first so the caller's value is untouched (copy protection); if
// the alias is `must-alias`, that is an InvalidArgument instead.
//
// ExecutionInput::Donate(ScopedShapedBuffer*) moves a buffer's memory into
// the input and leaves the caller's ScopedShapedBuffer invalid: passing it to
// a later run is an error naming the argument.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_RUNTIME_EXECUTION_INPUT_H_
#define AXLE_RUNTIME_EXECUTION_INPUT_H_

#include <memory>
#include <optional>
#include <set>
#include <utility>
#include <variant>
#include <vector>

#include "axle/core/shape.h"
#include "axle/runtime/device_memory.h"
#include "axle/runtime/shape_tree.h"
#include "axle/runtime/shaped_buffer.h"

namespace axle {

class MaybeOwningDeviceMemory {
 public:
  MaybeOwningDeviceMemory() = default;
  explicit MaybeOwningDeviceMemory(se::OwningDeviceMemory owned) : mem_(std::move(owned)) {}
  explicit MaybeOwningDeviceMemory(se::DeviceMemoryBase unowned) : mem_(unowned) {}
  MaybeOwningDeviceMemory(MaybeOwningDeviceMemory&&) noexcept = default;
  MaybeOwningDeviceMemory& operator=(MaybeOwningDeviceMemory&&) noexcept = default;
  MaybeOwningDeviceMemory& operator=(se::DeviceMemoryBase unowned) {
    mem_ = unowned;
    return *this;
  }
  MaybeOwningDeviceMemory& operator=(se::OwningDeviceMemory owned) {
    mem_ = std::move(owned);
    return *this;
  }

  // The address, owned or not.
  se::DeviceMemoryBase AsDeviceMemoryBase() const;
  bool HasOwnership() const { return std::holds_alternative<se::OwningDeviceMemory>(mem_); }
  // The owned memory (leaving this unowned, same address), or nullopt when
  // this does not own it.
  std::optional<se::OwningDeviceMemory> Release();
  // Gives up ownership without freeing (whoever really owns the memory
  // frees it); the address stays. For destructors: never fails.
  void Disown() noexcept;
  // The owned memory, if any (null otherwise).
  const se::OwningDeviceMemory* AsOwningDeviceMemory() const {
    return std::get_if<se::OwningDeviceMemory>(&mem_);
  }

 private:
  std::variant<se::DeviceMemoryBase, se::OwningDeviceMemory> mem_;
};

class ExecutionInput {
 public:
  explicit ExecutionInput(Shape shape) : buffers_(std::move(shape)) {}
  // Of a shared shape: copies neither the shape nor its nodes' indices.
  explicit ExecutionInput(std::shared_ptr<const IndexedShape> shape) : buffers_(std::move(shape)) {}
  explicit ExecutionInput(ShapeTree<MaybeOwningDeviceMemory> buffers)
      : buffers_(std::move(buffers)) {}
  ExecutionInput(ExecutionInput&&) = default;
  ExecutionInput& operator=(ExecutionInput&&) = default;
  ~ExecutionInput();

  // Lends `buffer`'s memory (no ownership): aliased outputs are copy
  // protected.
  static ExecutionInput Borrow(const ShapedBuffer& buffer);
  // Donates `buffer`'s memory: the input owns it and `*buffer` becomes an
  // invalid handle.
  static ExecutionInput Donate(ScopedShapedBuffer* buffer);

  const Shape& shape() const { return buffers_.shape(); }
  const Shape& host_shape() const { return shape(); }

  void SetBuffer(const ShapeIndex& index, MaybeOwningDeviceMemory buffer) {
    *buffers_.mutable_element(index) = std::move(buffer);
  }
  // Stores an owned buffer but marks it unowned: the memory stays the
  // caller's (XLA's ownership transfer for buffers aliased elsewhere).
  void SetUnownedBuffer(const ShapeIndex& index, MaybeOwningDeviceMemory buffer);
  void SetUnownedIndex(const ShapeIndex& index) { unowned_indices_.insert(index); }
  void ClearUnownedIndex(const ShapeIndex& index) { unowned_indices_.erase(index); }
  const std::set<ShapeIndex>& unowned_indices() const { return unowned_indices_; }

  const ShapeTree<MaybeOwningDeviceMemory>& Buffers() const { return buffers_; }
  ShapeTree<MaybeOwningDeviceMemory>* MutableBuffers() { return &buffers_; }
  MaybeOwningDeviceMemory* MutableBuffer(const ShapeIndex& index) {
    return buffers_.mutable_element(index);
  }
  const MaybeOwningDeviceMemory& Buffer(const ShapeIndex& index) const {
    return buffers_.element(index);
  }

  // A non-owning view of the buffers.
  ShapedBuffer ToShapedBuffer(int device_ordinal = 0) const;

 private:
  ShapeTree<MaybeOwningDeviceMemory> buffers_;
  // Owned buffers that must not be freed here (released on destruction).
  std::set<ShapeIndex> unowned_indices_;
};

class ExecutionOutput {
 public:
  explicit ExecutionOutput(ScopedShapedBuffer result) : result_(std::move(result)) {}
  ExecutionOutput(ExecutionOutput&&) = default;
  ExecutionOutput& operator=(ExecutionOutput&&) = default;

  const ScopedShapedBuffer& Result() const { return result_; }
  ScopedShapedBuffer* MutableResult() { return &result_; }
  ScopedShapedBuffer ConsumeResult() { return std::move(result_); }

  // Donated argument buffers the execution did not reuse for its result.
  void AddToBeReleased(se::OwningDeviceMemory mem) { to_be_released_.push_back(std::move(mem)); }
  std::vector<se::OwningDeviceMemory> ConsumeToBeReleased() { return std::move(to_be_released_); }
  // Output indices whose buffer is a donated argument buffer.
  void AddAliasedIndex(const ShapeIndex& index) { aliased_indices_.push_back(index); }
  const std::vector<ShapeIndex>& aliased_indices() const { return aliased_indices_; }

 private:
  ScopedShapedBuffer result_;
  std::vector<se::OwningDeviceMemory> to_be_released_;
  std::vector<ShapeIndex> aliased_indices_;
};

}  // namespace axle

#endif  // AXLE_RUNTIME_EXECUTION_INPUT_H_
