//===- cuda_stream.cc - CUDA streams and events ----------------------------===//
#include "axle/gpu/cuda_stream.h"

#include <cstring>

#include "axle/runtime/stream.h"

namespace axle::gpu {

absl::StatusOr<std::unique_ptr<CudaEvent>> CudaEvent::Create(const CudaDevice& device) {
  const CudaDriver& driver = device.driver();
  CudaDevice::ScopedActivation active(device);
  CUevent event = nullptr;
  AXLE_CUDA_RETURN_IF_ERROR(&driver, driver.cuEventCreate(&event, CU_EVENT_DISABLE_TIMING),
                            "cuEventCreate");
  return std::unique_ptr<CudaEvent>(new CudaEvent(device, event));
}

CudaEvent::~CudaEvent() {
  CudaDevice::ScopedActivation active(device_);
  device_.driver().cuEventDestroy(event_);
}

absl::StatusOr<bool> CudaEvent::IsComplete() const {
  const CudaDriver& driver = device_.driver();
  CudaDevice::ScopedActivation active(device_);
  const CUresult result = driver.cuEventQuery(event_);
  if (result == CUDA_ERROR_NOT_READY) return false;
  AXLE_CUDA_RETURN_IF_ERROR(&driver, result, "cuEventQuery");
  return true;
}

absl::Status CudaEvent::Synchronize() const {
  const CudaDriver& driver = device_.driver();
  CudaDevice::ScopedActivation active(device_);
  return driver.ToStatus(driver.cuEventSynchronize(event_), "cuEventSynchronize");
}

absl::StatusOr<std::unique_ptr<CudaStream>> CudaStream::Create(const CudaDevice& device) {
  const CudaDriver& driver = device.driver();
  CudaDevice::ScopedActivation active(device);
  CUstream stream = nullptr;
  AXLE_CUDA_RETURN_IF_ERROR(&driver, driver.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING),
                            "cuStreamCreate");
  return std::unique_ptr<CudaStream>(new CudaStream(device, stream));
}

CudaStream::~CudaStream() {
  CudaDevice::ScopedActivation active(device_);
  device_.driver().cuStreamSynchronize(stream_);
  device_.driver().cuStreamDestroy(stream_);
  if (pinned_ != nullptr) device_.driver().cuMemFreeHost(pinned_);
}

absl::Status CudaStream::MemcpyHostToDevice(se::DeviceMemoryBase* device_dst, const void* host_src,
                                            uint64_t size) {
  if (absl::Status status = se::CheckMemcpySize(size, device_dst->size(), size); !status.ok()) {
    return status;
  }
  if (size == 0) return absl::OkStatus();
  const CudaDriver& driver = device_.driver();
  CudaDevice::ScopedActivation active(device_);
  return driver.ToStatus(
      driver.cuMemcpyHtoDAsync(DevicePointer(*device_dst), host_src, size, stream_),
      "cuMemcpyHtoDAsync");
}

absl::Status CudaStream::MemcpyDeviceToHost(void* host_dst, const se::DeviceMemoryBase& device_src,
                                            uint64_t size) {
  if (absl::Status status = se::CheckMemcpySize(size, size, device_src.size()); !status.ok()) {
    return status;
  }
  if (size == 0) return absl::OkStatus();
  const CudaDriver& driver = device_.driver();
  CudaDevice::ScopedActivation active(device_);
  return driver.ToStatus(
      driver.cuMemcpyDtoHAsync(host_dst, DevicePointer(device_src), size, stream_),
      "cuMemcpyDtoHAsync");
}

absl::Status CudaStream::MemcpyDeviceToDevice(se::DeviceMemoryBase* device_dst,
                                              const se::DeviceMemoryBase& device_src,
                                              uint64_t size) {
  if (absl::Status status = se::CheckMemcpySize(size, device_dst->size(), device_src.size());
      !status.ok()) {
    return status;
  }
  if (size == 0) return absl::OkStatus();
  const CudaDriver& driver = device_.driver();
  CudaDevice::ScopedActivation active(device_);
  return driver.ToStatus(driver.cuMemcpyDtoDAsync(DevicePointer(*device_dst),
                                                  DevicePointer(device_src), size, stream_),
                         "cuMemcpyDtoDAsync");
}

absl::Status CudaStream::Memset8(se::DeviceMemoryBase* device_dst, uint8_t value, uint64_t size) {
  if (absl::Status status = se::CheckMemcpySize(size, device_dst->size(), size); !status.ok()) {
    return status;
  }
  if (size == 0) return absl::OkStatus();
  const CudaDriver& driver = device_.driver();
  CudaDevice::ScopedActivation active(device_);
  return driver.ToStatus(driver.cuMemsetD8Async(DevicePointer(*device_dst), value, size, stream_),
                         "cuMemsetD8Async");
}

absl::Status CudaStream::RecordEvent(CudaEvent* event) {
  const CudaDriver& driver = device_.driver();
  CudaDevice::ScopedActivation active(device_);
  return driver.ToStatus(driver.cuEventRecord(event->event(), stream_), "cuEventRecord");
}

absl::Status CudaStream::WaitFor(const CudaEvent& event) {
  const CudaDriver& driver = device_.driver();
  CudaDevice::ScopedActivation active(device_);
  return driver.ToStatus(driver.cuStreamWaitEvent(stream_, event.event(), 0), "cuStreamWaitEvent");
}

absl::Status CudaStream::Synchronize() {
  const CudaDriver& driver = device_.driver();
  CudaDevice::ScopedActivation active(device_);
  return driver.ToStatus(driver.cuStreamSynchronize(stream_), "cuStreamSynchronize");
}

absl::Status CudaStream::ReadToHost(void* host_dst, const se::DeviceMemoryBase& device_src,
                                    uint64_t size) {
  if (absl::Status status = se::CheckMemcpySize(size, size, device_src.size()); !status.ok()) {
    return status;
  }
  if (size > kMaxHostReadBytes) {
    if (absl::Status status = MemcpyDeviceToHost(host_dst, device_src, size); !status.ok()) {
      return status;
    }
    return Synchronize();
  }
  const CudaDriver& driver = device_.driver();
  CudaDevice::ScopedActivation active(device_);
  if (pinned_ == nullptr) {
    AXLE_CUDA_RETURN_IF_ERROR(&driver, driver.cuMemHostAlloc(&pinned_, kMaxHostReadBytes, 0),
                              "cuMemHostAlloc");
  }
  if (read_done_ == nullptr) {
    absl::StatusOr<std::unique_ptr<CudaEvent>> event = CudaEvent::Create(device_);
    if (!event.ok()) return event.status();
    read_done_ = *std::move(event);
  }
  if (size > 0) {
    AXLE_CUDA_RETURN_IF_ERROR(
        &driver, driver.cuMemcpyDtoHAsync(pinned_, DevicePointer(device_src), size, stream_),
        "cuMemcpyDtoHAsync");
  }
  AXLE_CUDA_RETURN_IF_ERROR(&driver, driver.cuEventRecord(read_done_->event(), stream_),
                            "cuEventRecord");
  AXLE_CUDA_RETURN_IF_ERROR(&driver, driver.cuEventSynchronize(read_done_->event()),
                            "cuEventSynchronize");
  if (size > 0) std::memcpy(host_dst, pinned_, size);
  return absl::OkStatus();
}

}  // namespace axle::gpu
