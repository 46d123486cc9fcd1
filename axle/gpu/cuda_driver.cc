//===- cuda_driver.cc - The CUDA driver API, opened at run time ------------===//
#include "axle/gpu/cuda_driver.h"

#include <dlfcn.h>

#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
#include "axle/base/environment_options.h"

namespace axle::gpu {
namespace {

#define AXLE_CUDA_STRINGIFY_EXPANDED(name) #name
// The symbol cuda.h's name stands for (cuMemAlloc -> "cuMemAlloc_v2").
#define AXLE_CUDA_SYMBOL(name) AXLE_CUDA_STRINGIFY_EXPANDED(name)

// The library to open: AXLE_CUDA_DRIVER when set (a driver outside the
// loader's path), else the soname every driver installs.
std::string DriverLibrary() {
  const std::string path = EnvironmentOptions::Read().cuda_driver;
  return !path.empty() ? path : std::string("libcuda.so.1");
}

// Names of the errors a machine without a working driver gives, for when
// the driver cannot name them itself (the toolkit's stub library cannot).
const char* FallbackErrorName(CUresult result) {
  switch (result) {
    case CUDA_ERROR_STUB_LIBRARY:
      return "CUDA_ERROR_STUB_LIBRARY (the toolkit's stub libcuda, not a driver)";
    case CUDA_ERROR_NO_DEVICE:
      return "CUDA_ERROR_NO_DEVICE (no CUDA-capable device)";
    case CUDA_ERROR_NOT_INITIALIZED:
      return "CUDA_ERROR_NOT_INITIALIZED";
    case CUDA_ERROR_OUT_OF_MEMORY:
      return "CUDA_ERROR_OUT_OF_MEMORY";
    default:
      return nullptr;
  }
}

}  // namespace

absl::StatusOr<const CudaDriver*> CudaDriver::Get() {
  // Loaded once; the driver stays open for the process (the GPU's contexts
  // and allocations live in it).
  static const absl::StatusOr<const CudaDriver*>* driver =
      new absl::StatusOr<const CudaDriver*>(Load());
  return *driver;
}

absl::StatusOr<const CudaDriver*> CudaDriver::Load() {
  const std::string library = DriverLibrary();
  void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* error = dlerror();
    return absl::UnavailableError(
        absl::StrCat("CUDA platform unavailable: no CUDA driver (", library,
                     " not found: ", error != nullptr ? error : "dlopen failed", ")"));
  }
  auto* driver = new CudaDriver();
  driver->library_ = handle;
#define AXLE_CUDA_DRIVER_RESOLVE(name)                                                         \
  driver->name = reinterpret_cast<decltype(&::name)>(dlsym(handle, AXLE_CUDA_SYMBOL(name)));   \
  if (driver->name == nullptr) {                                                               \
    delete driver;                                                                             \
    dlclose(handle);                                                                           \
    return absl::UnavailableError(absl::StrCat("CUDA platform unavailable: the CUDA driver ",  \
                                               library, " lacks ", AXLE_CUDA_SYMBOL(name),     \
                                               " (a driver for CUDA 12 or newer is needed)")); \
  }
  AXLE_CUDA_DRIVER_FUNCTIONS(AXLE_CUDA_DRIVER_RESOLVE)
#undef AXLE_CUDA_DRIVER_RESOLVE
#define AXLE_CUDA_DRIVER_RESOLVE_OPTIONAL(name)                                              \
  driver->name = reinterpret_cast<decltype(&::name)>(dlsym(handle, AXLE_CUDA_SYMBOL(name))); \
  if (driver->name == nullptr) {                                                             \
    driver->name = reinterpret_cast<decltype(&::name)>(dlsym(handle, #name));                \
  }
  AXLE_CUDA_DRIVER_OPTIONAL_FUNCTIONS(AXLE_CUDA_DRIVER_RESOLVE_OPTIONAL)
#undef AXLE_CUDA_DRIVER_RESOLVE_OPTIONAL
  if (absl::Status status = driver->ToStatus(driver->cuInit(0), "cuInit"); !status.ok()) {
    delete driver;
    dlclose(handle);
    return absl::UnavailableError(absl::StrCat("CUDA platform unavailable: ", status.message()));
  }
  if (absl::Status status =
          driver->ToStatus(driver->cuDriverGetVersion(&driver->version_), "cuDriverGetVersion");
      !status.ok()) {
    delete driver;
    dlclose(handle);
    return absl::UnavailableError(absl::StrCat("CUDA platform unavailable: ", status.message()));
  }
  return driver;
}

absl::Status CudaDriver::ToStatus(CUresult result, absl::string_view what) const {
  if (result == CUDA_SUCCESS) return absl::OkStatus();
  const char* name = nullptr;
  const char* description = nullptr;
  if (cuGetErrorName == nullptr || cuGetErrorName(result, &name) != CUDA_SUCCESS) name = nullptr;
  if (cuGetErrorString == nullptr || cuGetErrorString(result, &description) != CUDA_SUCCESS) {
    description = nullptr;
  }
  if (name == nullptr && description == nullptr) name = FallbackErrorName(result);
  std::string message =
      absl::StrCat(what, ": ", name != nullptr ? name : absl::StrCat("CUresult ", result));
  if (description != nullptr) absl::StrAppend(&message, " (", description, ")");
  if (result == CUDA_ERROR_OUT_OF_MEMORY) return absl::ResourceExhaustedError(message);
  return absl::InternalError(message);
}

}  // namespace axle::gpu
