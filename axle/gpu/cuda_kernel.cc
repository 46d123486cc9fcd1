//===- cuda_kernel.cc - Loading PTX and launching kernels ------------------===//
#include "axle/gpu/cuda_kernel.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "axle/base/status_macros.h"

namespace axle::gpu {
namespace {

constexpr size_t kLogBytes = 16 << 10;
constexpr int64_t kMaxGridX = (int64_t{1} << 31) - 1;
constexpr int kMaxBlock = 1024;

}  // namespace

absl::StatusOr<std::unique_ptr<CudaModule>> CudaModule::LoadPtx(const CudaDevice& device,
                                                                absl::string_view ptx) {
  const CudaDriver& driver = device.driver();
  CudaDevice::ScopedActivation active(device);
  // The driver reads a NUL-terminated image.
  const std::string image(ptx);
  std::vector<char> error_log(kLogBytes, '\0');
  CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* values[] = {error_log.data(),
                    reinterpret_cast<void*>(kLogBytes)};  // NOLINT: the driver's option encoding
  CUmodule module = nullptr;
  const CUresult result = driver.cuModuleLoadDataEx(&module, image.c_str(), 2, options, values);
  if (result != CUDA_SUCCESS) {
    absl::Status status = driver.ToStatus(result, "cuModuleLoadDataEx");
    return absl::InvalidArgumentError(absl::StrCat("CUDA: the device (", device.ArchName(),
                                                   ") rejected the PTX: ", status.message(), ": ",
                                                   error_log.data()));
  }
  return std::unique_ptr<CudaModule>(new CudaModule(device, module));
}

CudaModule::~CudaModule() {
  CudaDevice::ScopedActivation active(device_);
  device_.driver().cuModuleUnload(module_);
}

absl::StatusOr<CUfunction> CudaModule::GetFunction(absl::string_view name) const {
  const CudaDriver& driver = device_.driver();
  CudaDevice::ScopedActivation active(device_);
  CUfunction function = nullptr;
  const std::string symbol(name);
  const CUresult result = driver.cuModuleGetFunction(&function, module_, symbol.c_str());
  if (result == CUDA_ERROR_NOT_FOUND) {
    return absl::NotFoundError(absl::StrCat("CUDA: the module has no kernel '", name, "'"));
  }
  AXLE_CUDA_RETURN_IF_ERROR(&driver, result, absl::StrCat("cuModuleGetFunction ", name));
  return function;
}

absl::Status LaunchKernel(CudaStream* stream, CUfunction function, int64_t grid, int block,
                          absl::Span<const se::DeviceMemoryBase> buffers) {
  if (grid < 0 || grid > kMaxGridX || block <= 0 || block > kMaxBlock) {
    return absl::InvalidArgumentError(absl::StrCat("CUDA launch: ", grid, " blocks of ", block,
                                                   " threads (at most ", kMaxGridX, " of ",
                                                   kMaxBlock, ")"));
  }
  if (grid == 0) return absl::OkStatus();
  // One .u64 parameter per buffer: kernelParams points at each value.
  std::vector<CUdeviceptr> values;
  values.reserve(buffers.size());
  for (const se::DeviceMemoryBase& buffer : buffers) values.push_back(DevicePointer(buffer));
  std::vector<void*> parameters;
  parameters.reserve(values.size());
  for (CUdeviceptr& value : values) parameters.push_back(&value);
  const CudaDriver& driver = stream->device().driver();
  CudaDevice::ScopedActivation active(stream->device());
  return driver.ToStatus(
      driver.cuLaunchKernel(function, static_cast<unsigned>(grid), 1, 1,
                            static_cast<unsigned>(block), 1, 1, /*sharedMemBytes=*/0,
                            stream->stream(), parameters.data(), /*extra=*/nullptr),
      "cuLaunchKernel");
}

}  // namespace axle::gpu
