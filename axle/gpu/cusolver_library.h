//===- cusolver_library.h - cuSOLVER, opened at run time -------------------===//
//
// cuSOLVER's dense API (Cholesky: cholesky_thunk.h; getrf, geqrf, orgqr,
// syevd, gesvd and gesvdj: solver_thunk.h), opened with
// dlopen on first use like cuBLAS (cublas_library.h): libcusolver.so.12,
// or the path AXLE_CUSOLVER names. It needs libcublas.so.13,
// libcublasLt.so.13, libcusparse.so.12 and libnvJitLink.so.13: cuBLAS is
// opened first (its overridden paths hold), the others must be on the
// loader's path. A missing library or symbol is Unavailable naming
// cuSOLVER. CusolverHandle: one handle per device, its stream set under a
// mutex for each enqueue, as CublasHandle.
//
// Internal to axle/gpu: this header includes cuda.h and cusolverDn.h.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_GPU_CUSOLVER_LIBRARY_H_
#define AXLE_GPU_CUSOLVER_LIBRARY_H_

#include <cuda.h>
#include <cusolverDn.h>

#include <memory>
#include <mutex>
#include <string>
#include <type_traits>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "axle/gpu/cuda_device.h"

namespace axle::gpu {

#define AXLE_CUSOLVER_POTRF(X, T, prefix)                                           \
  X(prefix##potrf_bufferSize, #prefix "potrf_bufferSize",                           \
    cusolverStatus_t (*)(cusolverDnHandle_t, cublasFillMode_t, int, T*, int, int*)) \
  X(prefix##potrf, #prefix "potrf",                                                 \
    cusolverStatus_t (*)(cusolverDnHandle_t, cublasFillMode_t, int, T*, int, T*, int, int*))

// The LAPACK-style routines of jaxlib's targets (solver_thunk.h).
#define AXLE_CUSOLVER_GETRF(X, T, prefix)                              \
  X(prefix##getrf_bufferSize, #prefix "getrf_bufferSize",              \
    cusolverStatus_t (*)(cusolverDnHandle_t, int, int, T*, int, int*)) \
  X(prefix##getrf, #prefix "getrf",                                    \
    cusolverStatus_t (*)(cusolverDnHandle_t, int, int, T*, int, T*, int*, int*))
#define AXLE_CUSOLVER_GEQRF(X, T, prefix)                              \
  X(prefix##geqrf_bufferSize, #prefix "geqrf_bufferSize",              \
    cusolverStatus_t (*)(cusolverDnHandle_t, int, int, T*, int, int*)) \
  X(prefix##geqrf, #prefix "geqrf",                                    \
    cusolverStatus_t (*)(cusolverDnHandle_t, int, int, T*, int, T*, T*, int, int*))
// orgqr (real) and ungqr (complex).
#define AXLE_CUSOLVER_ORGQR(X, T, prefix, routine)                                          \
  X(prefix##routine##_bufferSize, #prefix #routine "_bufferSize",                           \
    cusolverStatus_t (*)(cusolverDnHandle_t, int, int, int, const T*, int, const T*, int*)) \
  X(prefix##routine, #prefix #routine,                                                      \
    cusolverStatus_t (*)(cusolverDnHandle_t, int, int, int, T*, int, const T*, T*, int, int*))
// syevd (real) and heevd (complex); R is the eigenvalues' real type.
#define AXLE_CUSOLVER_SYEVD(X, T, R, prefix, routine)                                            \
  X(prefix##routine##_bufferSize, #prefix #routine "_bufferSize",                                \
    cusolverStatus_t (*)(cusolverDnHandle_t, cusolverEigMode_t, cublasFillMode_t, int, const T*, \
                         int, const R*, int*))                                                   \
  X(prefix##routine, #prefix #routine,                                                           \
    cusolverStatus_t (*)(cusolverDnHandle_t, cusolverEigMode_t, cublasFillMode_t, int, T*, int,  \
                         R*, T*, int, int*))
#define AXLE_CUSOLVER_GESVD(X, T, R, prefix)                                                      \
  X(prefix##gesvd_bufferSize, #prefix "gesvd_bufferSize",                                         \
    cusolverStatus_t (*)(cusolverDnHandle_t, int, int, int*))                                     \
  X(prefix##gesvd, #prefix "gesvd",                                                               \
    cusolverStatus_t (*)(cusolverDnHandle_t, signed char, signed char, int, int, T*, int, R*, T*, \
                         int, T*, int, T*, int, R*, int*))
// Jacobi SVD (V, not V^H; any m, n).
#define AXLE_CUSOLVER_GESVDJ(X, T, R, prefix)                                                   \
  X(prefix##gesvdj_bufferSize, #prefix "gesvdj_bufferSize",                                     \
    cusolverStatus_t (*)(cusolverDnHandle_t, cusolverEigMode_t, int, int, int, const T*, int,   \
                         const R*, const T*, int, const T*, int, int*, gesvdjInfo_t))           \
  X(prefix##gesvdj, #prefix "gesvdj",                                                           \
    cusolverStatus_t (*)(cusolverDnHandle_t, cusolverEigMode_t, int, int, int, T*, int, R*, T*, \
                         int, T*, int, T*, int, int*, gesvdjInfo_t))
#define AXLE_CUSOLVER_LAPACK(X, T, R, prefix, orgqr, syevd) \
  AXLE_CUSOLVER_GETRF(X, T, prefix)                         \
  AXLE_CUSOLVER_GEQRF(X, T, prefix)                         \
  AXLE_CUSOLVER_ORGQR(X, T, prefix, orgqr)                  \
  AXLE_CUSOLVER_SYEVD(X, T, R, prefix, syevd)               \
  AXLE_CUSOLVER_GESVD(X, T, R, prefix)                      \
  AXLE_CUSOLVER_GESVDJ(X, T, R, prefix)

// X(member, symbol, type).
#define AXLE_CUSOLVER_FUNCTIONS(X)                                                                 \
  X(cusolverDnCreate, "cusolverDnCreate", cusolverStatus_t (*)(cusolverDnHandle_t*))               \
  X(cusolverDnDestroy, "cusolverDnDestroy", cusolverStatus_t (*)(cusolverDnHandle_t))              \
  X(cusolverDnSetStream, "cusolverDnSetStream",                                                    \
    cusolverStatus_t (*)(cusolverDnHandle_t, cudaStream_t))                                        \
  X(cusolverDnCreateGesvdjInfo, "cusolverDnCreateGesvdjInfo", cusolverStatus_t (*)(gesvdjInfo_t*)) \
  X(cusolverDnDestroyGesvdjInfo, "cusolverDnDestroyGesvdjInfo",                                    \
    cusolverStatus_t (*)(gesvdjInfo_t))                                                            \
  AXLE_CUSOLVER_POTRF(X, float, cusolverDnS)                                                       \
  AXLE_CUSOLVER_POTRF(X, double, cusolverDnD)                                                      \
  AXLE_CUSOLVER_POTRF(X, cuComplex, cusolverDnC)                                                   \
  AXLE_CUSOLVER_POTRF(X, cuDoubleComplex, cusolverDnZ)                                             \
  AXLE_CUSOLVER_LAPACK(X, float, float, cusolverDnS, orgqr, syevd)                                 \
  AXLE_CUSOLVER_LAPACK(X, double, double, cusolverDnD, orgqr, syevd)                               \
  AXLE_CUSOLVER_LAPACK(X, cuComplex, float, cusolverDnC, ungqr, heevd)                             \
  AXLE_CUSOLVER_LAPACK(X, cuDoubleComplex, double, cusolverDnZ, ungqr, heevd)

class CusolverLibrary {
 public:
  // Opened once per process (after cuBLAS); Unavailable naming cuSOLVER.
  static absl::StatusOr<const CusolverLibrary*> Get();
  // Opens the library at `path` (not cached; kept open): for tests.
  static absl::StatusOr<const CusolverLibrary*> Open(const std::string& path);

#define AXLE_CUSOLVER_MEMBER(member, symbol, type) std::type_identity_t<type> member = nullptr;
  AXLE_CUSOLVER_FUNCTIONS(AXLE_CUSOLVER_MEMBER)
#undef AXLE_CUSOLVER_MEMBER

  // OK for CUSOLVER_STATUS_SUCCESS; else "`what`: CUSOLVER_STATUS_X".
  absl::Status ToStatus(cusolverStatus_t status, absl::string_view what) const;

 private:
  CusolverLibrary() = default;
};

class CusolverHandle {
 public:
  static absl::StatusOr<CusolverHandle*> ForDevice(const CudaDevice& device);
  CusolverHandle(const CusolverHandle&) = delete;
  CusolverHandle& operator=(const CusolverHandle&) = delete;

  const CusolverLibrary& library() const { return library_; }

  // Holds the handle, set to `stream`, for one enqueue.
  class Lock {
   public:
    Lock(const Lock&) = delete;
    Lock& operator=(const Lock&) = delete;
    cusolverDnHandle_t get() const { return handle_.handle_; }

   private:
    friend class CusolverHandle;
    explicit Lock(CusolverHandle& handle) : handle_(handle), lock_(handle.mutex_) {}
    CusolverHandle& handle_;
    std::lock_guard<std::mutex> lock_;
  };
  absl::StatusOr<std::unique_ptr<Lock>> Acquire(CUstream stream);

 private:
  CusolverHandle(const CusolverLibrary& library, cusolverDnHandle_t handle)
      : library_(library), handle_(handle) {}
  const CusolverLibrary& library_;
  std::mutex mutex_;
  cusolverDnHandle_t handle_;
};

}  // namespace axle::gpu

#endif  // AXLE_GPU_CUSOLVER_LIBRARY_H_
