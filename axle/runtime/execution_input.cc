#include "axle/runtime/execution_input.h"

namespace axle {

se::DeviceMemoryBase MaybeOwningDeviceMemory::AsDeviceMemoryBase() const {
  if (const auto* owned = std::get_if<se::OwningDeviceMemory>(&mem_)) return owned->cref();
  return std::get<se::DeviceMemoryBase>(mem_);
}

std::optional<se::OwningDeviceMemory> MaybeOwningDeviceMemory::Release() {
  auto* owned = std::get_if<se::OwningDeviceMemory>(&mem_);
  if (owned == nullptr) return std::nullopt;
  se::OwningDeviceMemory result = std::move(*owned);
  mem_ = result.cref();
  return result;
}

void MaybeOwningDeviceMemory::Disown() noexcept {
  if (auto* owned = std::get_if<se::OwningDeviceMemory>(&mem_)) owned->Release();
}

ExecutionInput::~ExecutionInput() {
  // Owned buffers marked unowned stay with whoever really owns them. (A walk
  // over the nodes: finding one by index checks the index, and a destructor
  // must not fail.)
  if (unowned_indices_.empty()) return;
  for (auto&& [index, buffer] : buffers_) {
    if (unowned_indices_.count(index) != 0) buffer.Disown();
  }
}

void ExecutionInput::SetUnownedBuffer(const ShapeIndex& index, MaybeOwningDeviceMemory buffer) {
  *buffers_.mutable_element(index) = std::move(buffer);
  unowned_indices_.insert(index);
}

// The trees below are of one shape: their nodes correspond one to one, in
// order (no lookup by index per node).

ExecutionInput ExecutionInput::Borrow(const ShapedBuffer& buffer) {
  ExecutionInput input(buffer.buffers().indexed_shape());
  auto node = input.buffers_.begin();
  for (const auto& [index, mem] : buffer.buffers()) {
    (node++)->second = MaybeOwningDeviceMemory(mem);
  }
  return input;
}

ExecutionInput ExecutionInput::Donate(ScopedShapedBuffer* buffer) {
  se::DeviceMemoryAllocator* allocator = buffer->memory_allocator();
  int device_ordinal = buffer->device_ordinal();
  ShapedBuffer released = buffer->release();
  ExecutionInput input(released.buffers().indexed_shape());
  auto node = input.buffers_.begin();
  for (const auto& [index, mem] : released.buffers()) {
    if (mem.is_null()) {
      (node++)->second = MaybeOwningDeviceMemory(mem);
    } else {
      (node++)->second =
          MaybeOwningDeviceMemory(se::OwningDeviceMemory(mem, device_ordinal, allocator));
    }
  }
  return input;
}

ShapedBuffer ExecutionInput::ToShapedBuffer(int device_ordinal) const {
  ShapedBuffer result(buffers_.indexed_shape(), device_ordinal);
  auto node = result.buffers().begin();
  for (const auto& [index, mem] : buffers_) (node++)->second = mem.AsDeviceMemoryBase();
  return result;
}

}  // namespace axle
