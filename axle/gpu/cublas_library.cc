//===- cublas_library.cc - cuBLAS and cuBLASLt, opened at run time ---------===//
#include "axle/gpu/cublas_library.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
#include "axle/base/environment_options.h"
#include "axle/base/status_macros.h"
#include "axle/gpu/cuda_stream.h"
#include "axle/gpu/dynamic_library.h"

namespace axle::gpu {

std::string CudaLibraryPath(const std::string& from_environment, const char* soname) {
  if (!from_environment.empty()) return from_environment;
  // On the loader's path?
  if (void* handle = dlopen(soname, RTLD_LAZY | RTLD_LOCAL); handle != nullptr) {
    dlclose(handle);
    return soname;
  }
#ifdef AXLE_CUDA_LIBRARY_DIR
  // The toolkit's folder of the build (its libraries find their
  // dependencies beside them: RUNPATH $ORIGIN).
  std::string in_toolkit = absl::StrCat(AXLE_CUDA_LIBRARY_DIR, "/", soname);
  if (access(in_toolkit.c_str(), R_OK) == 0) return in_toolkit;
#endif
  return soname;
}

absl::StatusOr<const CublasLibrary*> CublasLibrary::Get() {
  // Loaded once; the libraries stay open for the process.
  static const absl::StatusOr<const CublasLibrary*>* library =
      new absl::StatusOr<const CublasLibrary*>(
          Open(CudaLibraryPath(EnvironmentOptions::Read().cublaslt, "libcublasLt.so.13"),
               CudaLibraryPath(EnvironmentOptions::Read().cublas, "libcublas.so.13")));
  return *library;
}

absl::StatusOr<const CublasLibrary*> CublasLibrary::Open(const std::string& lt_path,
                                                         const std::string& path) {
  // cuBLASLt first: libcublas.so.13 needs it (an overridden path is then
  // the one already loaded).
  auto lt = OpenLibrary(lt_path, "cuBLAS", "AXLE_CUBLASLT", RTLD_NOW | RTLD_GLOBAL);
  if (!lt.ok()) return lt.status();
  auto blas = OpenLibrary(path, "cuBLAS", "AXLE_CUBLAS", RTLD_NOW | RTLD_GLOBAL);
  if (!blas.ok()) {
    dlclose(*lt);
    return blas.status();
  }
  // Kept for the process, as the handles made from it.
  auto* library = new CublasLibrary();
  SymbolResolver resolve_blas(*blas, path);
  SymbolResolver resolve_lt(*lt, lt_path);
#define AXLE_CUBLAS_RESOLVE(member, symbol, type) resolve_blas(library->member, symbol);
  AXLE_CUBLAS_FUNCTIONS(AXLE_CUBLAS_RESOLVE)
#undef AXLE_CUBLAS_RESOLVE
#define AXLE_CUBLASLT_RESOLVE(member, symbol, type) resolve_lt(library->member, symbol);
  AXLE_CUBLASLT_FUNCTIONS(AXLE_CUBLASLT_RESOLVE)
#undef AXLE_CUBLASLT_RESOLVE
  const std::string& missing =
      !resolve_blas.missing().empty() ? resolve_blas.missing() : resolve_lt.missing();
  if (!missing.empty()) {
    delete library;
    dlclose(*blas);
    dlclose(*lt);
    return absl::UnavailableError(
        absl::StrCat("cuBLAS unavailable: ", missing, " (cuBLAS 13 is needed)"));
  }
  return library;
}

absl::Status CublasLibrary::ToStatus(cublasStatus_t status, absl::string_view what) const {
  if (status == CUBLAS_STATUS_SUCCESS) return absl::OkStatus();
  const char* name = cublasGetStatusName != nullptr ? cublasGetStatusName(status) : nullptr;
  const char* description =
      cublasGetStatusString != nullptr ? cublasGetStatusString(status) : nullptr;
  std::string message = absl::StrCat(
      what, ": ", name != nullptr ? std::string(name) : absl::StrCat("cublasStatus_t ", status));
  if (description != nullptr) absl::StrAppend(&message, " (", description, ")");
  switch (status) {
    case CUBLAS_STATUS_ALLOC_FAILED:
      return absl::ResourceExhaustedError(message);
    case CUBLAS_STATUS_INVALID_VALUE:
      return absl::InvalidArgumentError(message);
    case CUBLAS_STATUS_NOT_SUPPORTED:
    case CUBLAS_STATUS_ARCH_MISMATCH:
      return absl::UnimplementedError(message);
    default:
      return absl::InternalError(message);
  }
}

absl::StatusOr<CublasHandle*> CublasHandle::ForDevice(const CudaDevice& device) {
  auto library = CublasLibrary::Get();
  if (!library.ok()) return library.status();
  // Thunks of every executable on the device share it.
  return OnePerDevice<CublasHandle>(device, [&]() -> absl::StatusOr<CublasHandle*> {
    cublasHandle_t handle = nullptr;
    AXLE_RETURN_IF_ERROR((*library)->ToStatus((*library)->cublasCreate(&handle),
                                              absl::StrCat("cublasCreate on ", device.name())));
    return new CublasHandle(**library, handle);
  });
}

CublasHandle::~CublasHandle() { library_.cublasDestroy(handle_); }

absl::StatusOr<std::unique_ptr<CublasHandle::Lock>> CublasHandle::Acquire(CUstream stream,
                                                                          CUdeviceptr workspace,
                                                                          size_t workspace_bytes,
                                                                          cublasMath_t math) {
  auto lock = std::unique_ptr<Lock>(new Lock(*this));
  // cudaStream_t and CUstream are the same type.
  if (absl::Status status =
          library_.ToStatus(library_.cublasSetStream(handle_, stream), "cublasSetStream");
      !status.ok()) {
    return status;
  }
  // cublasSetStream went back to the default workspace pool.
  if (workspace != 0 && workspace_bytes > 0) {
    if (absl::Status status = library_.ToStatus(
            library_.cublasSetWorkspace(handle_, DeviceAddress(workspace), workspace_bytes),
            "cublasSetWorkspace");
        !status.ok()) {
      return status;
    }
  }
  if (absl::Status status =
          library_.ToStatus(library_.cublasSetMathMode(handle_, math), "cublasSetMathMode");
      !status.ok()) {
    return status;
  }
  return lock;
}

}  // namespace axle::gpu
