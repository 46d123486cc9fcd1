//===- cuda_memory_allocator.cc - Pooled device memory of one GPU ----------===//
#include "axle/gpu/cuda_memory_allocator.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "axle/base/alignment.h"
#include "axle/base/status_macros.h"

namespace axle::gpu {
namespace {

constexpr uint64_t kSmallGranule = 512;
constexpr uint64_t kLargeGranule = uint64_t{2} << 20;
constexpr uint64_t kLargeFrom = uint64_t{1} << 20;

uint64_t RoundTo(uint64_t size, uint64_t granule) {
  return (size + granule - 1) / granule * granule;
}

}  // namespace

CudaMemoryAllocator::CudaMemoryAllocator(const se::Platform* platform, const CudaDevice& device)
    : se::DeviceMemoryAllocator(platform), device_(device) {}

CudaMemoryAllocator::~CudaMemoryAllocator() {
  const CudaDriver& driver = device_.driver();
  CudaDevice::ScopedActivation active(device_);
  if (stream_ != nullptr) stream_->Synchronize().IgnoreError();
  std::lock_guard<std::mutex> lock(mu_);
  for (const Pending& pending : pending_) driver.cuMemFree(pending.block);
  for (const auto& [capacity, block] : free_blocks_) driver.cuMemFree(block);
  for (const auto& [block, capacity] : live_blocks_) driver.cuMemFree(block);
}

void CudaMemoryAllocator::OrderFreesOn(CudaStream* stream) {
  std::lock_guard<std::mutex> lock(mu_);
  stream_ = stream;
}

void CudaMemoryAllocator::OrderFreesOnHostStream(se::Stream* stream) {
  std::lock_guard<std::mutex> lock(mu_);
  host_stream_ = stream;
}

uint64_t CudaMemoryAllocator::RoundUp(uint64_t size) {
  return size < kLargeFrom ? RoundTo(size, kSmallGranule) : RoundTo(size, kLargeGranule);
}

absl::Status CudaMemoryAllocator::CheckOrdinal(int device_ordinal) const {
  if (device_ordinal == device_.ordinal()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("CUDA memory of device ", device_.ordinal(),
                                                 " asked for device ", device_ordinal));
}

absl::StatusOr<se::DeviceMemoryBase> CudaMemoryAllocator::AllocateRaw(int device_ordinal,
                                                                      uint64_t size) {
  AXLE_RETURN_IF_ERROR(CheckOrdinal(device_ordinal));
  const uint64_t capacity = RoundUp(size);
  std::lock_guard<std::mutex> lock(mu_);
  AXLE_RETURN_IF_ERROR(ReclaimLocked());
  // The smallest free block that fits and wastes at most half of itself.
  auto it = free_blocks_.lower_bound(capacity);
  if (it != free_blocks_.end() && it->first / 2 <= capacity) {
    const auto [block_capacity, block] = *it;
    free_blocks_.erase(it);
    bytes_cached_ -= static_cast<int64_t>(block_capacity);
    live_blocks_.emplace(block, block_capacity);
    bytes_in_use_ += static_cast<int64_t>(block_capacity);
    return se::DeviceMemoryBase(DeviceAddress(block), size);
  }
  const CudaDriver& driver = device_.driver();
  CudaDevice::ScopedActivation active(device_);
  CUdeviceptr block = 0;
  CUresult result = driver.cuMemAlloc(&block, capacity);
  if (result == CUDA_ERROR_OUT_OF_MEMORY && !free_blocks_.empty()) {
    AXLE_RETURN_IF_ERROR(ReleaseCacheLocked());
    result = driver.cuMemAlloc(&block, capacity);
  }
  AXLE_RETURN_IF_ERROR(driver.ToStatus(
      result, absl::StrCat("cuMemAlloc of ", capacity, " bytes on CUDA device ", device_ordinal)));
  if (block % kBufferAlignment != 0) {
    driver.cuMemFree(block);
    return absl::InternalError(
        absl::StrCat("cuMemAlloc returned a block not aligned to ", kBufferAlignment, " bytes"));
  }
  live_blocks_.emplace(block, capacity);
  bytes_in_use_ += static_cast<int64_t>(capacity);
  return se::DeviceMemoryBase(DeviceAddress(block), size);
}

absl::Status CudaMemoryAllocator::Deallocate(int device_ordinal, se::DeviceMemoryBase mem) {
  if (mem.is_null()) return absl::OkStatus();
  AXLE_RETURN_IF_ERROR(CheckOrdinal(device_ordinal));
  const CUdeviceptr block = DevicePointer(mem);
  std::lock_guard<std::mutex> lock(mu_);
  auto live = live_blocks_.find(block);
  if (live == live_blocks_.end()) {
    return absl::InvalidArgumentError(absl::StrCat("CUDA memory at 0x", absl::Hex(block),
                                                   " was not allocated by this allocator"));
  }
  const uint64_t capacity = live->second;
  live_blocks_.erase(live);
  bytes_in_use_ -= static_cast<int64_t>(capacity);
  bytes_cached_ += static_cast<int64_t>(capacity);
  if (host_stream_ != nullptr && !host_stream_->IsIdle() && !host_stream_->OnWorkerThread()) {
    // Runs enqueued on the host stream before this free may still use the
    // block: it joins the pool once the stream gets here.
    absl::Status enqueued = host_stream_->DoHostCallbackWithStatus([this, block, capacity] {
      std::lock_guard<std::mutex> lock(mu_);
      return RecycleLocked(block, capacity);
    });
    if (enqueued.ok()) return absl::OkStatus();
  }
  return RecycleLocked(block, capacity);
}

absl::Status CudaMemoryAllocator::RecycleLocked(CUdeviceptr block, uint64_t capacity) {
  if (stream_ == nullptr) {
    free_blocks_.emplace(capacity, block);
    return absl::OkStatus();
  }
  Pending pending{block, capacity, nullptr};
  if (!spare_events_.empty()) {
    pending.freed = std::move(spare_events_.back());
    spare_events_.pop_back();
  } else {
    AXLE_ASSIGN_OR_RETURN(pending.freed, CudaEvent::Create(device_));
  }
  AXLE_RETURN_IF_ERROR(stream_->RecordEvent(pending.freed.get()));
  pending_.push_back(std::move(pending));
  return absl::OkStatus();
}

absl::Status CudaMemoryAllocator::ReclaimLocked() {
  // Frees were recorded in stream order: once one is not passed, the later
  // ones are not either.
  size_t passed = 0;
  for (; passed < pending_.size(); ++passed) {
    AXLE_ASSIGN_OR_RETURN(bool complete, pending_[passed].freed->IsComplete());
    if (!complete) break;
    free_blocks_.emplace(pending_[passed].capacity, pending_[passed].block);
    spare_events_.push_back(std::move(pending_[passed].freed));
  }
  pending_.erase(pending_.begin(), pending_.begin() + static_cast<std::ptrdiff_t>(passed));
  return absl::OkStatus();
}

absl::Status CudaMemoryAllocator::ReleaseCacheLocked() {
  const CudaDriver& driver = device_.driver();
  CudaDevice::ScopedActivation active(device_);
  for (const auto& [capacity, block] : free_blocks_) {
    AXLE_CUDA_RETURN_IF_ERROR(&driver, driver.cuMemFree(block), "cuMemFree");
    bytes_cached_ -= static_cast<int64_t>(capacity);
  }
  free_blocks_.clear();
  return absl::OkStatus();
}

absl::Status CudaMemoryAllocator::ReleaseCache() {
  std::lock_guard<std::mutex> lock(mu_);
  AXLE_RETURN_IF_ERROR(ReclaimLocked());
  return ReleaseCacheLocked();
}

int64_t CudaMemoryAllocator::bytes_in_use() const {
  std::lock_guard<std::mutex> lock(mu_);
  return bytes_in_use_;
}

int64_t CudaMemoryAllocator::bytes_cached() const {
  std::lock_guard<std::mutex> lock(mu_);
  return bytes_cached_;
}

}  // namespace axle::gpu
