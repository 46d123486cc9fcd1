//===- cuda_platform.cc - The `cuda` platform ------------------------------===//
#include "axle/gpu/cuda_platform.h"

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "axle/base/status_macros.h"
#include "axle/gpu/cuda_device.h"
#include "axle/runtime/platform_provider.h"

namespace axle::gpu {
namespace {

absl::StatusOr<std::unique_ptr<se::Platform>> MakeCudaPlatform() {
  AXLE_ASSIGN_OR_RETURN(std::unique_ptr<CudaDevice> device, CudaDevice::Open(0));
  return absl::UnimplementedError(absl::StrCat(
      "CUDA platform: found CUDA device 0 (", device->name(), ", ", device->ArchName(), ", ",
      device->total_memory() >> 20,
      " MiB), but the CUDA backend cannot run modules yet: executables on device memory are "
      "not implemented (axle/gpu/README.md)"));
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
