//===- device_memory.h - Device memory handles and allocators --------------===//
//
// StreamExecutor's memory vocabulary, with XLA's names (reachable as
// `se::...` / `stream_executor::...` through the compatibility headers):
//
//   DeviceMemoryBase       an address and a size; owns nothing.
//   OwningDeviceMemory     an allocation that frees itself (move-only).
//   DeviceMemoryAllocator  allocates and frees on a device ordinal.
//
// Axle's platforms all run on the host, so "device memory" is host memory.
// HostMemoryAllocator hands out 64-byte aligned blocks (from 4 MiB: 2 MiB
// aligned and advised as transparent huge pages) and keeps freed blocks
// for reuse (first-touch page faults cost 11-14 us per page here, see
// PEERS.md), so a steady stream of runs allocates nothing from the OS.
// Each platform owns one (se::Platform::memory_allocator()), whose frees
// are ordered on the device's stream (stream.h): a block freed while work
// enqueued before the free may still use it is handed out again only after
// that work is done.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_RUNTIME_DEVICE_MEMORY_H_
#define AXLE_RUNTIME_DEVICE_MEMORY_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace axle::se {

class Platform;
class Stream;

class DeviceMemoryBase {
 public:
  explicit DeviceMemoryBase(void* opaque = nullptr, uint64_t size = 0)
      : opaque_(opaque), size_(size) {}

  bool is_null() const { return opaque_ == nullptr; }
  uint64_t size() const { return size_; }
  void* opaque() { return opaque_; }
  const void* opaque() const { return opaque_; }
  bool IsSameAs(const DeviceMemoryBase& other) const {
    return opaque_ == other.opaque_ && size_ == other.size_;
  }
  bool operator==(std::nullptr_t) const { return is_null(); }
  bool operator!=(std::nullptr_t) const { return !is_null(); }
  bool operator<(const DeviceMemoryBase& other) const { return opaque_ < other.opaque_; }

 private:
  void* opaque_;
  uint64_t size_;
};

// A typed view (XLA's se::DeviceMemory<T>).
template <typename T>
class DeviceMemory : public DeviceMemoryBase {
 public:
  DeviceMemory() = default;
  explicit DeviceMemory(const DeviceMemoryBase& other) : DeviceMemoryBase(other) {}
  uint64_t ElementCount() const { return size() / sizeof(T); }
  T* base() { return static_cast<T*>(opaque()); }
};

class OwningDeviceMemory;

class DeviceMemoryAllocator {
 public:
  explicit DeviceMemoryAllocator(const Platform* platform) : platform_(platform) {}
  virtual ~DeviceMemoryAllocator() = default;

  // `size` bytes on `device_ordinal`. A zero-byte request gives a null
  // allocation (as XLA's allocators do).
  virtual absl::StatusOr<OwningDeviceMemory> Allocate(int device_ordinal, uint64_t size,
                                                      bool retry_on_failure, int64_t memory_space);
  absl::StatusOr<OwningDeviceMemory> Allocate(int device_ordinal, uint64_t size);

  virtual absl::Status Deallocate(int device_ordinal, DeviceMemoryBase mem) = 0;

  const Platform* platform() const { return platform_; }

 protected:
  virtual absl::StatusOr<DeviceMemoryBase> AllocateRaw(int device_ordinal, uint64_t size) = 0;

 private:
  const Platform* platform_;
};

// Frees its memory through its allocator when destroyed or reset.
class OwningDeviceMemory {
 public:
  OwningDeviceMemory() = default;
  OwningDeviceMemory(DeviceMemoryBase mem, int device_ordinal, DeviceMemoryAllocator* allocator)
      : mem_(mem), device_ordinal_(device_ordinal), allocator_(allocator) {}
  OwningDeviceMemory(OwningDeviceMemory&& other) noexcept { *this = std::move(other); }
  OwningDeviceMemory& operator=(OwningDeviceMemory&& other) noexcept;
  OwningDeviceMemory(const OwningDeviceMemory&) = delete;
  OwningDeviceMemory& operator=(const OwningDeviceMemory&) = delete;
  ~OwningDeviceMemory() { Free().IgnoreError(); }

  bool is_null() const { return mem_.is_null(); }
  bool operator==(std::nullptr_t) const { return is_null(); }
  bool operator!=(std::nullptr_t) const { return !is_null(); }

  DeviceMemoryBase operator*() const { return mem_; }
  const DeviceMemoryBase* operator->() const { return &mem_; }
  DeviceMemoryBase cref() const { return mem_; }
  DeviceMemoryBase* ptr() { return &mem_; }
  int device_ordinal() const { return device_ordinal_; }
  DeviceMemoryAllocator* allocator() const { return allocator_; }

  // Gives up ownership: the memory is no longer freed by this object.
  DeviceMemoryBase Release();
  // Frees the memory now (no-op when null).
  absl::Status Free();

 private:
  DeviceMemoryBase mem_;
  int device_ordinal_ = 0;
  DeviceMemoryAllocator* allocator_ = nullptr;
};

template <typename T>
using ScopedDeviceMemory = OwningDeviceMemory;

}  // namespace axle::se

namespace axle {

// Host memory: 64-byte aligned blocks; freed blocks are kept in size
// classes and handed out again. Thread-safe.
class HostMemoryAllocator : public se::DeviceMemoryAllocator {
 public:
  // `platform` may be null (memory of no platform, e.g. in tests).
  explicit HostMemoryAllocator(const se::Platform* platform = nullptr);
  ~HostMemoryAllocator() override;

  // Frees from now on wait for the work enqueued on `stream` before them
  // (a free from that work itself is immediate). `stream` must outlive the
  // allocator.
  void OrderFreesOn(se::Stream* stream) { stream_ = stream; }

  absl::Status Deallocate(int device_ordinal, se::DeviceMemoryBase mem) override;

  // Bytes handed out and not yet deallocated; blocks kept for reuse.
  int64_t bytes_in_use() const;
  int64_t bytes_cached() const;
  // Returns the cached blocks to the OS.
  void ReleaseCache();

 protected:
  absl::StatusOr<se::DeviceMemoryBase> AllocateRaw(int device_ordinal, uint64_t size) override;

 private:
  static uint64_t RoundUp(uint64_t size);
  // Keeps a freed block for reuse (or returns it to the OS).
  void Recycle(void* block, uint64_t capacity);
  void RecycleLocked(void* block, uint64_t capacity);

  se::Stream* stream_ = nullptr;

  mutable std::mutex mu_;
  std::multimap<uint64_t, void*> free_blocks_;  // capacity -> block
  std::map<void*, uint64_t> live_blocks_;       // block -> capacity
  int64_t bytes_in_use_ = 0;
  int64_t bytes_cached_ = 0;
};

}  // namespace axle

#endif  // AXLE_RUNTIME_DEVICE_MEMORY_H_
