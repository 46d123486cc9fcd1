#include "axle/runtime/device_memory.h"

#include <sys/mman.h>

#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "axle/base/alignment.h"
#include "axle/runtime/stream.h"

namespace axle::se {

absl::StatusOr<OwningDeviceMemory> DeviceMemoryAllocator::Allocate(int device_ordinal,
                                                                   uint64_t size,
                                                                   bool retry_on_failure,
                                                                   int64_t memory_space) {
  if (size == 0) return OwningDeviceMemory(DeviceMemoryBase(), device_ordinal, this);
  absl::StatusOr<DeviceMemoryBase> mem = AllocateRaw(device_ordinal, size);
  if (!mem.ok()) return mem.status();
  return OwningDeviceMemory(*mem, device_ordinal, this);
}

absl::StatusOr<OwningDeviceMemory> DeviceMemoryAllocator::Allocate(int device_ordinal,
                                                                   uint64_t size) {
  return Allocate(device_ordinal, size, /*retry_on_failure=*/true, /*memory_space=*/0);
}

OwningDeviceMemory& OwningDeviceMemory::operator=(OwningDeviceMemory&& other) noexcept {
  if (this != &other) {
    Free().IgnoreError();
    mem_ = other.mem_;
    device_ordinal_ = other.device_ordinal_;
    allocator_ = other.allocator_;
    other.mem_ = DeviceMemoryBase();
  }
  return *this;
}

DeviceMemoryBase OwningDeviceMemory::Release() {
  DeviceMemoryBase mem = mem_;
  mem_ = DeviceMemoryBase();
  return mem;
}

absl::Status OwningDeviceMemory::Free() {
  if (mem_.is_null() || allocator_ == nullptr) {
    mem_ = DeviceMemoryBase();
    return absl::OkStatus();
  }
  DeviceMemoryBase mem = Release();
  return allocator_->Deallocate(device_ordinal_, mem);
}

}  // namespace axle::se

namespace axle {
namespace {

// Blocks kept for reuse beyond this total are returned to the OS.
constexpr int64_t kMaxCachedBytes = int64_t{4} << 30;
// Blocks this large are backed by transparent huge pages when possible: they
// start on a huge page (madvise fails on a start that is not page-aligned,
// which a 64-byte aligned block from malloc's mmap never is, and only whole
// aligned 2 MiB ranges can become huge pages). Before, no block got huge
// pages, and bench/'s chain (4 streams of 64 MiB) ran 10-20% slower.
constexpr uint64_t kHugePageThreshold = uint64_t{4} << 20;
constexpr uint64_t kHugePage = uint64_t{2} << 20;

}  // namespace

HostMemoryAllocator::HostMemoryAllocator(const se::Platform* platform)
    : se::DeviceMemoryAllocator(platform) {}

HostMemoryAllocator::~HostMemoryAllocator() {
  ReleaseCache();
  // Blocks still handed out belong to buffers that outlive the allocator;
  // they are leaked rather than freed under their owners.
}

// Size classes: multiples of kBufferAlignment up to 4 KiB, then 8 steps per power of
// two, so a block is at most 12.5% larger than asked for.
uint64_t HostMemoryAllocator::RoundUp(uint64_t size) {
  if (size <= 4096) return static_cast<uint64_t>(RoundUpToAlignment(static_cast<int64_t>(size)));
  int log2 = 63 - __builtin_clzll(size - 1);
  uint64_t step = (uint64_t{1} << log2) / 8;
  return (size + step - 1) / step * step;
}

absl::StatusOr<se::DeviceMemoryBase> HostMemoryAllocator::AllocateRaw(int device_ordinal,
                                                                      uint64_t size) {
  if (device_ordinal != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("host memory: device ordinal ", device_ordinal, " does not exist (only 0)"));
  }
  uint64_t capacity = RoundUp(size);
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = free_blocks_.find(capacity);
    if (it != free_blocks_.end()) {
      void* block = it->second;
      free_blocks_.erase(it);
      bytes_cached_ -= capacity;
      live_blocks_[block] = capacity;
      bytes_in_use_ += capacity;
      return se::DeviceMemoryBase(block, size);
    }
  }
  void* block = nullptr;
  const uint64_t alignment = capacity >= kHugePageThreshold ? kHugePage : kBufferAlignment;
  if (posix_memalign(&block, alignment, capacity) != 0) block = nullptr;
  if (block == nullptr) {
    return absl::ResourceExhaustedError(
        absl::StrCat("host memory: out of memory allocating ", size, " bytes"));
  }
  if (capacity >= kHugePageThreshold) madvise(block, capacity, MADV_HUGEPAGE);
  std::lock_guard<std::mutex> lock(mu_);
  live_blocks_[block] = capacity;
  bytes_in_use_ += capacity;
  return se::DeviceMemoryBase(block, size);
}

absl::Status HostMemoryAllocator::Deallocate(int device_ordinal, se::DeviceMemoryBase mem) {
  if (mem.is_null()) return absl::OkStatus();
  void* block = mem.opaque();
  std::unique_lock<std::mutex> lock(mu_);
  auto it = live_blocks_.find(block);
  if (it == live_blocks_.end()) {
    return absl::InvalidArgumentError(
        "host memory: deallocating a block this allocator did not hand out (or freed twice)");
  }
  uint64_t capacity = it->second;
  live_blocks_.erase(it);
  bytes_in_use_ -= capacity;
  if (stream_ != nullptr && !stream_->IsIdle() && !stream_->OnWorkerThread()) {
    lock.unlock();
    // Work enqueued before this free may still read or write the block.
    absl::Status enqueued =
        stream_->DoHostCallback([this, block, capacity] { Recycle(block, capacity); });
    if (enqueued.ok()) return absl::OkStatus();
    lock.lock();
  }
  RecycleLocked(block, capacity);
  return absl::OkStatus();
}

void HostMemoryAllocator::Recycle(void* block, uint64_t capacity) {
  std::lock_guard<std::mutex> lock(mu_);
  RecycleLocked(block, capacity);
}

void HostMemoryAllocator::RecycleLocked(void* block, uint64_t capacity) {
  if (bytes_cached_ + static_cast<int64_t>(capacity) > kMaxCachedBytes) {
    std::free(block);
  } else {
    free_blocks_.emplace(capacity, block);
    bytes_cached_ += capacity;
  }
}

int64_t HostMemoryAllocator::bytes_in_use() const {
  std::lock_guard<std::mutex> lock(mu_);
  return bytes_in_use_;
}

int64_t HostMemoryAllocator::bytes_cached() const {
  std::lock_guard<std::mutex> lock(mu_);
  return bytes_cached_;
}

void HostMemoryAllocator::ReleaseCache() {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [capacity, block] : free_blocks_) std::free(block);
  free_blocks_.clear();
  bytes_cached_ = 0;
}

}  // namespace axle
