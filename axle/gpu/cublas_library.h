//===- cublas_library.h - cuBLAS and cuBLASLt, opened at run time ----------===//
//
// The dots of the CUDA backend run on cuBLAS (gemm_thunk.h). Like the
// driver (cuda_driver.h), the libraries are opened with dlopen on first use,
// never linked, so every binary still starts on a machine without them:
//
//   libcublasLt.so.13  (AXLE_CUBLASLT names another path)
//   libcublas.so.13    (AXLE_CUBLAS names another path)
//
// found by the loader or, failing that, in the build's toolkit folder
// (CudaLibraryPath).
//
// cuBLASLt is opened first: libcublas needs it, and an overridden path is
// then the one libcublas finds. CublasLibrary::Get() opens both once and
// resolves the functions of AXLE_CUBLAS_FUNCTIONS / AXLE_CUBLASLT_FUNCTIONS
// by their real symbols (cublasCreate is cublasCreate_v2); a missing library
// or symbol is Unavailable naming cuBLAS and the library.
//
// CublasHandle is one cuBLAS handle of one device, shared by every gemm
// thunk of that device. cuBLAS handles carry a stream and a workspace, so
// each call holds the handle's mutex while it sets both and enqueues its
// work (Lock()): thunks may execute from several threads, each on its own
// stream and with its own scratch workspace.
//
// Internal to axle/gpu: this header includes cuda.h and cublas_api.h.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_GPU_CUBLAS_LIBRARY_H_
#define AXLE_GPU_CUBLAS_LIBRARY_H_

#include <cublasLt.h>
#include <cublas_api.h>
#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "axle/gpu/cuda_device.h"

namespace axle::gpu {

// X(member, symbol, type): the cuBLAS functions the backend calls. The
// types are spelled out: cublas_api.h overloads some names with inline
// wrappers (cublasGemmStridedBatchedEx taking a cudaDataType compute type).
#define AXLE_CUBLAS_FUNCTIONS(X)                                                                 \
  X(cublasCreate, "cublasCreate_v2", cublasStatus_t (*)(cublasHandle_t*))                        \
  X(cublasDestroy, "cublasDestroy_v2", cublasStatus_t (*)(cublasHandle_t))                       \
  X(cublasGetVersion, "cublasGetVersion_v2", cublasStatus_t (*)(cublasHandle_t, int*))           \
  X(cublasSetStream, "cublasSetStream_v2", cublasStatus_t (*)(cublasHandle_t, cudaStream_t))     \
  X(cublasSetWorkspace, "cublasSetWorkspace_v2",                                                 \
    cublasStatus_t (*)(cublasHandle_t, void*, size_t))                                           \
  X(cublasSetMathMode, "cublasSetMathMode", cublasStatus_t (*)(cublasHandle_t, cublasMath_t))    \
  X(cublasGetStatusName, "cublasGetStatusName", const char* (*)(cublasStatus_t))                 \
  X(cublasGetStatusString, "cublasGetStatusString", const char* (*)(cublasStatus_t))             \
  X(cublasGemmStridedBatchedEx, "cublasGemmStridedBatchedEx",                                    \
    cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,      \
                       const void*, const void*, cudaDataType, int, long long, const void*,      \
                       cudaDataType, int, long long, const void*, void*, cudaDataType, int,      \
                       long long, int, cublasComputeType_t, cublasGemmAlgo_t))                   \
  X(cublasSgemm, "cublasSgemm_v2",                                                               \
    cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,      \
                       const float*, const float*, int, const float*, int, const float*, float*, \
                       int))                                                                     \
  AXLE_CUBLAS_TRSM(X, cublasStrsm, "cublasStrsm_v2", float)                                      \
  AXLE_CUBLAS_TRSM(X, cublasDtrsm, "cublasDtrsm_v2", double)                                     \
  AXLE_CUBLAS_TRSM(X, cublasCtrsm, "cublasCtrsm_v2", cuComplex)                                  \
  AXLE_CUBLAS_TRSM(X, cublasZtrsm, "cublasZtrsm_v2", cuDoubleComplex)                            \
  AXLE_CUBLAS_TRSM_BATCHED(X, cublasStrsmBatched, "cublasStrsmBatched", float)                   \
  AXLE_CUBLAS_TRSM_BATCHED(X, cublasDtrsmBatched, "cublasDtrsmBatched", double)                  \
  AXLE_CUBLAS_TRSM_BATCHED(X, cublasCtrsmBatched, "cublasCtrsmBatched", cuComplex)               \
  AXLE_CUBLAS_TRSM_BATCHED(X, cublasZtrsmBatched, "cublasZtrsmBatched", cuDoubleComplex)
// cublas<t>trsm: op(A) X = alpha B (or X op(A) = alpha B) in place on B.
#define AXLE_CUBLAS_TRSM(X, member, symbol, T)                                                \
  X(member, symbol,                                                                           \
    cublasStatus_t (*)(cublasHandle_t, cublasSideMode_t, cublasFillMode_t, cublasOperation_t, \
                       cublasDiagType_t, int, int, const T*, const T*, int, T*, int))

// cublas<t>trsmBatched: the same over device arrays of matrix pointers.
#define AXLE_CUBLAS_TRSM_BATCHED(X, member, symbol, T)                                             \
  X(member, symbol,                                                                                \
    cublasStatus_t (*)(cublasHandle_t, cublasSideMode_t, cublasFillMode_t, cublasOperation_t,      \
                       cublasDiagType_t, int, int, const T*, const T* const*, int, T* const*, int, \
                       int))

// The cuBLASLt functions (for the epilogue dots to come; the version today).
#define AXLE_CUBLASLT_FUNCTIONS(X) X(cublasLtGetVersion, "cublasLtGetVersion", size_t (*)())

// The library to open: `from_environment` (its variable's value in
// EnvironmentOptions) when not empty, else `soname` when the loader finds it,
// else the toolkit's copy of the build machine's toolkit folder
// (/usr/local/cuda/lib64/...) when it exists there, else `soname`.
std::string CudaLibraryPath(const std::string& from_environment, const char* soname);

class CublasLibrary {
 public:
  // Both libraries, opened once per process; Unavailable naming cuBLAS and
  // what was missing where they cannot be.
  static absl::StatusOr<const CublasLibrary*> Get();
  // Opens the libraries at these paths (not cached; kept open): what Get()
  // does with the environment's paths. Tests check symbols with it.
  static absl::StatusOr<const CublasLibrary*> Open(const std::string& cublaslt_path,
                                                   const std::string& cublas_path);

#define AXLE_CUBLAS_MEMBER(member, symbol, type) std::type_identity_t<type> member = nullptr;
  AXLE_CUBLAS_FUNCTIONS(AXLE_CUBLAS_MEMBER)
  AXLE_CUBLASLT_FUNCTIONS(AXLE_CUBLAS_MEMBER)
#undef AXLE_CUBLAS_MEMBER

  // OK for CUBLAS_STATUS_SUCCESS; otherwise an error "`what`:
  // CUBLAS_STATUS_X (description)": ResourceExhausted for allocation
  // failures, InvalidArgument for invalid values, Unimplemented for
  // not-supported, Internal for the rest.
  absl::Status ToStatus(cublasStatus_t status, absl::string_view what) const;

 private:
  CublasLibrary() = default;
};

// A cuBLAS handle of one device (created with its context current).
class CublasHandle {
 public:
  // The handle of `device` (one per device ordinal, created on first use,
  // kept for the process).
  static absl::StatusOr<CublasHandle*> ForDevice(const CudaDevice& device);
  ~CublasHandle();
  CublasHandle(const CublasHandle&) = delete;
  CublasHandle& operator=(const CublasHandle&) = delete;

  const CublasLibrary& library() const { return library_; }

  // Holds the handle for one enqueue: sets `stream` and, when `workspace`
  // is not null, `workspace_bytes` of device memory at `workspace` as its
  // workspace (the default workspace pool otherwise), and math mode `math`.
  class Lock {
   public:
    Lock(const Lock&) = delete;
    Lock& operator=(const Lock&) = delete;
    cublasHandle_t get() const { return handle_.handle_; }

   private:
    friend class CublasHandle;
    explicit Lock(CublasHandle& handle) : handle_(handle), lock_(handle.mutex_) {}
    CublasHandle& handle_;
    std::lock_guard<std::mutex> lock_;
  };
  absl::StatusOr<std::unique_ptr<Lock>> Acquire(CUstream stream, CUdeviceptr workspace,
                                                size_t workspace_bytes, cublasMath_t math);

 private:
  CublasHandle(const CublasLibrary& library, cublasHandle_t handle)
      : library_(library), handle_(handle) {}
  const CublasLibrary& library_;
  std::mutex mutex_;
  cublasHandle_t handle_;
};

}  // namespace axle::gpu

#endif  // AXLE_GPU_CUBLAS_LIBRARY_H_
