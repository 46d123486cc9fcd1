//===- cusolver_library.cc - cuSOLVER, opened at run time ------------------===//
#include "axle/gpu/cusolver_library.h"

#include <dlfcn.h>

#include <map>

#include "absl/strings/str_cat.h"
#include "axle/base/environment_options.h"
#include "axle/gpu/cublas_library.h"

namespace axle::gpu {
namespace {

const char* StatusName(cusolverStatus_t status) {
  switch (status) {
    case CUSOLVER_STATUS_NOT_INITIALIZED:
      return "CUSOLVER_STATUS_NOT_INITIALIZED";
    case CUSOLVER_STATUS_ALLOC_FAILED:
      return "CUSOLVER_STATUS_ALLOC_FAILED";
    case CUSOLVER_STATUS_INVALID_VALUE:
      return "CUSOLVER_STATUS_INVALID_VALUE";
    case CUSOLVER_STATUS_ARCH_MISMATCH:
      return "CUSOLVER_STATUS_ARCH_MISMATCH";
    case CUSOLVER_STATUS_EXECUTION_FAILED:
      return "CUSOLVER_STATUS_EXECUTION_FAILED";
    case CUSOLVER_STATUS_INTERNAL_ERROR:
      return "CUSOLVER_STATUS_INTERNAL_ERROR";
    case CUSOLVER_STATUS_NOT_SUPPORTED:
      return "CUSOLVER_STATUS_NOT_SUPPORTED";
    default:
      return nullptr;
  }
}

}  // namespace

absl::StatusOr<const CusolverLibrary*> CusolverLibrary::Get() {
  static const absl::StatusOr<const CusolverLibrary*>* library =
      new absl::StatusOr<const CusolverLibrary*>([]() -> absl::StatusOr<const CusolverLibrary*> {
        // cuBLAS first, so that overridden cuBLAS paths are the ones used.
        if (auto blas = CublasLibrary::Get(); !blas.ok()) {
          return absl::UnavailableError(
              absl::StrCat("cuSOLVER unavailable: it needs cuBLAS: ", blas.status().message()));
        }
        return Open(CudaLibraryPath(EnvironmentOptions::Read().cusolver, "libcusolver.so.12"));
      }());
  return *library;
}

absl::StatusOr<const CusolverLibrary*> CusolverLibrary::Open(const std::string& path) {
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* error = dlerror();
    return absl::UnavailableError(absl::StrCat("cuSOLVER unavailable: ", path, " not found (",
                                               error != nullptr ? error : "dlopen failed",
                                               "); AXLE_CUSOLVER names another path"));
  }
  auto* library = new CusolverLibrary();  // kept for the process
  std::string missing;
  auto resolve = [&](auto& member, const char* symbol) {
    member = reinterpret_cast<std::remove_reference_t<decltype(member)>>(dlsym(handle, symbol));
    if (member == nullptr && missing.empty()) missing = symbol;
  };
#define AXLE_CUSOLVER_RESOLVE(member, symbol, type) resolve(library->member, symbol);
  AXLE_CUSOLVER_FUNCTIONS(AXLE_CUSOLVER_RESOLVE)
#undef AXLE_CUSOLVER_RESOLVE
  if (!missing.empty()) {
    delete library;
    dlclose(handle);
    return absl::UnavailableError(absl::StrCat("cuSOLVER unavailable: ", path, " lacks ", missing));
  }
  return library;
}

absl::Status CusolverLibrary::ToStatus(cusolverStatus_t status, absl::string_view what) const {
  if (status == CUSOLVER_STATUS_SUCCESS) return absl::OkStatus();
  const char* name = StatusName(status);
  std::string message = absl::StrCat(
      what, ": ", name != nullptr ? std::string(name) : absl::StrCat("cusolverStatus_t ", status));
  if (status == CUSOLVER_STATUS_ALLOC_FAILED) return absl::ResourceExhaustedError(message);
  if (status == CUSOLVER_STATUS_INVALID_VALUE) return absl::InvalidArgumentError(message);
  return absl::InternalError(message);
}

absl::StatusOr<CusolverHandle*> CusolverHandle::ForDevice(const CudaDevice& device) {
  auto library = CusolverLibrary::Get();
  if (!library.ok()) return library.status();
  static std::mutex* mutex = new std::mutex;
  static auto* handles = new std::map<int, CusolverHandle*>;
  std::lock_guard<std::mutex> lock(*mutex);
  auto it = handles->find(device.ordinal());
  if (it != handles->end()) return it->second;
  CudaDevice::ScopedActivation activation(device);
  cusolverDnHandle_t handle = nullptr;
  if (absl::Status status =
          (*library)->ToStatus((*library)->cusolverDnCreate(&handle),
                               absl::StrCat("cusolverDnCreate on ", device.name()));
      !status.ok()) {
    return status;
  }
  auto* created = new CusolverHandle(**library, handle);  // kept for the process
  (*handles)[device.ordinal()] = created;
  return created;
}

absl::StatusOr<std::unique_ptr<CusolverHandle::Lock>> CusolverHandle::Acquire(CUstream stream) {
  auto lock = std::unique_ptr<Lock>(new Lock(*this));
  if (absl::Status status =
          library_.ToStatus(library_.cusolverDnSetStream(handle_, stream), "cusolverDnSetStream");
      !status.ok()) {
    return status;
  }
  return lock;
}

}  // namespace axle::gpu
