//===- cuda_memory_allocator.h - Pooled device memory of one GPU -----------===//
//
// The device memory allocator of the `cuda` platform: cuMemAlloc blocks
// (device memory, never managed or host memory; the driver aligns them to
// 256 bytes, checked against Axle's 64-byte kBufferAlignment), kept in a
// pool once freed and handed out again, so a steady stream of runs asks the
// driver for nothing (cuMemAlloc/cuMemFree synchronize the device and cost
// tens of microseconds).
//
// Sizes are rounded up to 512 bytes (to 2 MiB from 1 MiB on); a freed block
// serves a later request of up to its capacity and at least half of it.
// When the driver runs out of memory the pool's free blocks are returned to
// it and the allocation is tried once more.
//
// Frees are ordered on a stream (OrderFreesOn): a block freed while work
// enqueued before the free may still use it is handed out again only once
// the stream has passed the free (an event recorded at the free, polled by
// later allocations; Synchronize-free). The platform's allocator also
// orders frees on its host stream (OrderFreesOnHostStream), where
// asynchronous runs are queued.
//
// Internal to axle/gpu: this header includes cuda.h.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_GPU_CUDA_MEMORY_ALLOCATOR_H_
#define AXLE_GPU_CUDA_MEMORY_ALLOCATOR_H_

#include <cuda.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "axle/gpu/cuda_device.h"
#include "axle/gpu/cuda_stream.h"
#include "axle/runtime/device_memory.h"
#include "axle/runtime/stream.h"

namespace axle::gpu {

class CudaMemoryAllocator : public se::DeviceMemoryAllocator {
 public:
  // Memory of `device` (whose ordinal is the only one it serves);
  // `platform` may be null.
  CudaMemoryAllocator(const se::Platform* platform, const CudaDevice& device);
  // Returns every block to the driver; blocks still handed out are a bug
  // of the caller and are freed too.
  ~CudaMemoryAllocator() override;

  // Frees from now on wait for the work enqueued on `stream` before them.
  // `stream` must outlive the allocator (or be unset first).
  void OrderFreesOn(CudaStream* stream);
  // Frees from now on also wait for the work enqueued on host stream
  // `stream` before them (the platform's se::Stream, on which
  // ExecuteAsyncOnStream enqueues runs; a free from that work itself is
  // immediate), as HostMemoryAllocator's do. `stream` must outlive the
  // allocator's last free.
  void OrderFreesOnHostStream(se::Stream* stream);

  absl::Status Deallocate(int device_ordinal, se::DeviceMemoryBase mem) override;

  int64_t bytes_in_use() const;
  int64_t bytes_cached() const;
  // Returns the free blocks (those the stream has passed) to the driver.
  absl::Status ReleaseCache();

  // The capacity a request of `size` bytes is rounded to.
  static uint64_t RoundUp(uint64_t size);

 protected:
  absl::StatusOr<se::DeviceMemoryBase> AllocateRaw(int device_ordinal, uint64_t size) override;

 private:
  struct Pending {
    CUdeviceptr block;
    uint64_t capacity;
    std::unique_ptr<CudaEvent> freed;  // the stream passed the free
  };
  // Moves the pending frees the stream has passed into the pool.
  absl::Status ReclaimLocked();
  // Puts a freed block in the pool (after the CUDA stream's event, if any).
  absl::Status RecycleLocked(CUdeviceptr block, uint64_t capacity);
  absl::Status ReleaseCacheLocked();
  absl::Status CheckOrdinal(int device_ordinal) const;

  const CudaDevice& device_;
  CudaStream* stream_ = nullptr;
  se::Stream* host_stream_ = nullptr;

  mutable std::mutex mu_;
  std::multimap<uint64_t, CUdeviceptr> free_blocks_;  // capacity -> block
  std::map<CUdeviceptr, uint64_t> live_blocks_;       // block -> capacity
  std::vector<Pending> pending_;
  std::vector<std::unique_ptr<CudaEvent>> spare_events_;
  int64_t bytes_in_use_ = 0;
  int64_t bytes_cached_ = 0;
};

}  // namespace axle::gpu

#endif  // AXLE_GPU_CUDA_MEMORY_ALLOCATOR_H_
