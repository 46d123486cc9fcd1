//===- cuda_stream.h - CUDA streams and events -----------------------------===//
//
// A CudaStream is an ordered queue of one device's work on the GPU (a
// CUstream, non-blocking with respect to the legacy default stream): copies
// between host and device memory, memsets, kernel launches, custom calls
// (which receive stream() as XLA's `CUstream`). Enqueuing returns at once;
// every enqueue's error is returned by that call, and errors of the work
// itself by the next Synchronize (the driver reports them there).
//
// A CudaEvent marks a point in a stream (Record); other streams can wait
// for it, the host can Synchronize on it or Query it.
//
// Host memory given to the async copies must stay valid until the copy is
// done (synchronize first); pageable host memory is staged by the driver.
//
// Internal to axle/gpu: this header includes cuda.h.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_GPU_CUDA_STREAM_H_
#define AXLE_GPU_CUDA_STREAM_H_

#include <cuda.h>

#include <cstdint>
#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "axle/gpu/cuda_device.h"
#include "axle/runtime/device_memory.h"

namespace axle::gpu {

class CudaEvent {
 public:
  // An event without timing (the cheapest kind).
  static absl::StatusOr<std::unique_ptr<CudaEvent>> Create(const CudaDevice& device);
  ~CudaEvent();
  CudaEvent(const CudaEvent&) = delete;
  CudaEvent& operator=(const CudaEvent&) = delete;

  CUevent event() const { return event_; }
  // Whether the work before the last Record is done (true before any).
  absl::StatusOr<bool> IsComplete() const;
  // Blocks the host until it is.
  absl::Status Synchronize() const;

 private:
  CudaEvent(const CudaDevice& device, CUevent event) : device_(device), event_(event) {}
  const CudaDevice& device_;
  CUevent event_;
};

class CudaStream {
 public:
  static absl::StatusOr<std::unique_ptr<CudaStream>> Create(const CudaDevice& device);
  // Waits for the stream's work, then destroys it.
  ~CudaStream();
  CudaStream(const CudaStream&) = delete;
  CudaStream& operator=(const CudaStream&) = delete;

  const CudaDevice& device() const { return device_; }
  CUstream stream() const { return stream_; }

  // Enqueued copies; InvalidArgument when `size` exceeds either side.
  absl::Status MemcpyHostToDevice(se::DeviceMemoryBase* device_dst, const void* host_src,
                                  uint64_t size);
  absl::Status MemcpyDeviceToHost(void* host_dst, const se::DeviceMemoryBase& device_src,
                                  uint64_t size);
  absl::Status MemcpyDeviceToDevice(se::DeviceMemoryBase* device_dst,
                                    const se::DeviceMemoryBase& device_src, uint64_t size);
  absl::Status Memset8(se::DeviceMemoryBase* device_dst, uint8_t value, uint64_t size);

  absl::Status RecordEvent(CudaEvent* event);
  // Work enqueued from now on waits until `event` completes.
  absl::Status WaitFor(const CudaEvent& event);

  // Waits for everything enqueued; the first error of that work.
  absl::Status Synchronize();

  // Copies `size` bytes (at most kMaxHostReadBytes) of `device_src` to
  // `host_dst` once the stream's work so far is done, and returns then (a
  // loop's predicate, a conditional's selector): an asynchronous copy into
  // the stream's pinned staging buffer (made on first use), an event after
  // it, the host waiting on that event alone. Larger reads go through
  // pageable memory and a stream synchronization. The work's errors are
  // returned as by Synchronize.
  static constexpr uint64_t kMaxHostReadBytes = 64;
  absl::Status ReadToHost(void* host_dst, const se::DeviceMemoryBase& device_src, uint64_t size);

 private:
  CudaStream(const CudaDevice& device, CUstream stream) : device_(device), stream_(stream) {}
  const CudaDevice& device_;
  CUstream stream_;
  // ReadToHost's pinned staging buffer and its event (null until used).
  void* pinned_ = nullptr;
  std::unique_ptr<CudaEvent> read_done_;
};

// A DeviceMemoryBase's address as the driver's CUdeviceptr, and back.
inline CUdeviceptr DevicePointer(const se::DeviceMemoryBase& memory) {
  return reinterpret_cast<CUdeviceptr>(memory.opaque());
}
inline void* DeviceAddress(CUdeviceptr pointer) {
  // The driver hands out device addresses as integers; the host never
  // dereferences them.
  return reinterpret_cast<void*>(pointer);  // NOLINT(performance-no-int-to-ptr)
}

}  // namespace axle::gpu

#endif  // AXLE_GPU_CUDA_STREAM_H_
