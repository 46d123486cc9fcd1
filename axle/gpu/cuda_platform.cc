//===- cuda_platform.cc - The `cuda` platform ------------------------------===//
//
// CudaPlatform: se::Platform on device 0 of the driver. Its device memory
// is a CudaMemoryAllocator, its transfer manager copies through
// cuda_transfer.h on a CUDA stream of its own (ordered after the platform's
// stream as every transfer manager is), and its memcpys are the driver's.
// Its compiler is the GPU compiler (gpu_compiler.h), whose executables run
// on this device with this allocator.
//
//===----------------------------------------------------------------------===//
#include "axle/gpu/cuda_platform.h"

#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "axle/base/status_macros.h"
#include "axle/gpu/cuda_device.h"
#include "axle/gpu/cuda_memory_allocator.h"
#include "axle/gpu/cuda_stream.h"
#include "axle/gpu/cuda_transfer.h"
#include "axle/gpu/gpu_compiler.h"
#include "axle/runtime/custom_call_registry.h"
#include "axle/runtime/executable.h"
#include "axle/runtime/platform_provider.h"
#include "axle/runtime/transfer_manager.h"

namespace axle::gpu {
namespace {

// Copies through a CUDA stream of its own, serialized: each copy returns
// once done.
class CudaTransferManager : public TransferManager {
 public:
  CudaTransferManager(const se::Platform* platform, CudaStream* stream)
      : TransferManager(platform), stream_(stream) {}

  absl::StatusOr<ScopedShapedBuffer> AllocateScopedShapedBuffer(
      const Shape& on_host_shape, se::DeviceMemoryAllocator* allocator,
      int device_ordinal) override {
    if (device_ordinal != stream_->device().ordinal()) {
      return absl::InvalidArgumentError(
          absl::StrCat("CUDA device ", device_ordinal, " does not exist on platform '",
                       platform()->Name(), "' (it has device ", stream_->device().ordinal(), ")"));
    }
    std::lock_guard<std::mutex> lock(mu_);
    return AllocateCudaShapedBuffer(on_host_shape, allocator, stream_);
  }

 protected:
  absl::Status WriteLiteral(const Literal& literal, const ShapedBuffer& buffer) override {
    std::lock_guard<std::mutex> lock(mu_);
    return TransferLiteralToCuda(stream_, literal, buffer);
  }
  absl::StatusOr<Literal> ReadLiteral(const ShapedBuffer& buffer) override {
    std::lock_guard<std::mutex> lock(mu_);
    return TransferLiteralFromCuda(stream_, buffer);
  }

 private:
  CudaStream* stream_;
  std::mutex mu_;
};

class CudaPlatform : public se::Platform {
 public:
  CudaPlatform(std::unique_ptr<CudaDevice> device, std::unique_ptr<CudaStream> copies)
      : se::Platform("CUDA", {"cuda", "gpu"}, kCudaPlatformName,
                     [this] { return MakeGpuCompiler(this, *device_, &allocator_); }),
        device_(std::move(device)),
        copies_(std::move(copies)),
        allocator_(this, *device_),
        transfer_manager_(this, copies_.get()) {
    UseDeviceMemory(&allocator_, &transfer_manager_);
  }
  ~CudaPlatform() override { WaitForStream(); }

  absl::Status SynchronousMemcpy(se::DeviceMemoryBase* device_dst,
                                 const se::DeviceMemoryBase& device_src,
                                 uint64_t size) const override {
    std::lock_guard<std::mutex> lock(mu_);
    AXLE_RETURN_IF_ERROR(copies_->MemcpyDeviceToDevice(device_dst, device_src, size));
    return copies_->Synchronize();
  }
  absl::Status SynchronousMemcpy(se::DeviceMemoryBase* device_dst, const void* host_src,
                                 uint64_t size) const override {
    std::lock_guard<std::mutex> lock(mu_);
    AXLE_RETURN_IF_ERROR(copies_->MemcpyHostToDevice(device_dst, host_src, size));
    return copies_->Synchronize();
  }
  absl::Status SynchronousMemcpy(void* host_dst, const se::DeviceMemoryBase& device_src,
                                 uint64_t size) const override {
    std::lock_guard<std::mutex> lock(mu_);
    AXLE_RETURN_IF_ERROR(copies_->MemcpyDeviceToHost(host_dst, device_src, size));
    return copies_->Synchronize();
  }

  static std::string Describe(const CudaDevice& device) {
    return absl::StrCat(device.name(), ", ", device.ArchName(), ", ", device.total_memory() >> 20,
                        " MiB");
  }

 private:
  std::unique_ptr<CudaDevice> device_;
  std::unique_ptr<CudaStream> copies_;
  CudaMemoryAllocator allocator_;
  CudaTransferManager transfer_manager_;
  mutable std::mutex mu_;
};

absl::StatusOr<std::unique_ptr<se::Platform>> MakeCudaPlatform() {
  AXLE_ASSIGN_OR_RETURN(std::unique_ptr<CudaDevice> device, CudaDevice::Open(0));
  AXLE_ASSIGN_OR_RETURN(std::unique_ptr<CudaStream> copies, CudaStream::Create(*device));
  return std::unique_ptr<se::Platform>(
      std::make_unique<CudaPlatform>(std::move(device), std::move(copies)));
}

}  // namespace

void RegisterCudaPlatform() {
  static std::once_flag once;
  std::call_once(once, [] {
    se::RegisterPlatformProvider({"CUDA", "cuda", "gpu"}, MakeCudaPlatform).IgnoreError();
  });
}

namespace {
struct Registrar {
  Registrar() { RegisterCudaPlatform(); }
};
const Registrar registrar;
}  // namespace

}  // namespace axle::gpu

// Referenced by the link options of axle_gpu so that this object file,
// and the registration above, is kept in every program.
extern "C" {
int axle_gpu_platform_anchor = 0;
}
