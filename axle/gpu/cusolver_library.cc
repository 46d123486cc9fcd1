//===- cusolver_library.cc - cuSOLVER, opened at run time ------------------===//
#include "axle/gpu/cusolver_library.h"

#include <dlfcn.h>

#include "absl/strings/str_cat.h"
#include "axle/base/environment_options.h"
#include "axle/base/status_macros.h"
#include "axle/gpu/cublas_library.h"
#include "axle/gpu/dynamic_library.h"

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
  AXLE_ASSIGN_OR_RETURN(void* handle, OpenLibrary(path, "cuSOLVER", "AXLE_CUSOLVER"));
  auto* library = new CusolverLibrary();  // kept for the process
  SymbolResolver resolve(handle, path);
#define AXLE_CUSOLVER_RESOLVE(member, symbol, type) resolve(library->member, symbol);
  AXLE_CUSOLVER_FUNCTIONS(AXLE_CUSOLVER_RESOLVE)
#undef AXLE_CUSOLVER_RESOLVE
  if (!resolve.missing().empty()) {
    delete library;
    dlclose(handle);
    return absl::UnavailableError(absl::StrCat("cuSOLVER unavailable: ", resolve.missing()));
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
  return OnePerDevice<CusolverHandle>(device, [&]() -> absl::StatusOr<CusolverHandle*> {
    cusolverDnHandle_t handle = nullptr;
    AXLE_RETURN_IF_ERROR((*library)->ToStatus((*library)->cusolverDnCreate(&handle),
                                              absl::StrCat("cusolverDnCreate on ", device.name())));
    return new CusolverHandle(**library, handle);
  });
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
