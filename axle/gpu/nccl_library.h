//===- nccl_library.h - NCCL, opened at run time ----------------------------===//
//
// The cuda backend's collectives among several GPUs run on NCCL
// (nccl_collective_thunk.h). Like the driver and cuBLAS (cuda_driver.h,
// cublas_library.h), NCCL is opened with dlopen on first use, never linked,
// so every binary still starts where it is missing:
//
//   libnccl.so.2   (AXLE_NCCL names another path)
//
// found by the loader or, failing that, in the build's toolkit folder
// (CudaLibraryPath). NcclLibrary::Get() opens it once and resolves the
// functions of AXLE_NCCL_FUNCTIONS; a missing library or symbol is
// Unavailable naming NCCL, the file and AXLE_NCCL. ToStatus turns an
// ncclResult_t into an absl error naming the call, ncclGetErrorString's text
// and, where the communicator has one, ncclGetLastError's.
//
// Only the types come from the toolkit's nccl.h (CMake defines
// AXLE_HAVE_NCCL_H where it finds it; without it the backend builds with
// collectives among several GPUs Unimplemented).
//
// Internal to axle/gpu: this header includes nccl.h (and cuda_runtime.h).
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_GPU_NCCL_LIBRARY_H_
#define AXLE_GPU_NCCL_LIBRARY_H_

#include <nccl.h>

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace axle::gpu {

// The NCCL functions the backend calls, by their names in nccl.h.
#define AXLE_NCCL_FUNCTIONS(X) \
  X(ncclGetVersion)            \
  X(ncclGetUniqueId)           \
  X(ncclGetErrorString)        \
  X(ncclGetLastError)          \
  X(ncclCommInitRankConfig)    \
  X(ncclCommGetAsyncError)     \
  X(ncclCommAbort)             \
  X(ncclCommDestroy)           \
  X(ncclCommCount)             \
  X(ncclGroupStart)            \
  X(ncclGroupEnd)              \
  X(ncclAllReduce)             \
  X(ncclAllGather)             \
  X(ncclReduceScatter)         \
  X(ncclBroadcast)             \
  X(ncclSend)                  \
  X(ncclRecv)

class NcclLibrary {
 public:
  // The library, opened once per process (AXLE_NCCL, else libnccl.so.2 on
  // the loader's path, else the toolkit's); Unavailable naming NCCL and what
  // was missing where it cannot be.
  static absl::StatusOr<const NcclLibrary*> Get();
  // Opens the library at `path` (not cached; kept open): what Get() does
  // with the environment's path. Tests check the error and symbols with it.
  static absl::StatusOr<const NcclLibrary*> Open(const std::string& path);

#define AXLE_NCCL_MEMBER(name) decltype(&::name) name = nullptr;
  AXLE_NCCL_FUNCTIONS(AXLE_NCCL_MEMBER)
#undef AXLE_NCCL_MEMBER

  // NCCL's version code (22809 for 2.28.9).
  int version() const { return version_; }
  const std::string& path() const { return path_; }

  // OK for ncclSuccess; otherwise an error "NCCL `what`: <ncclGetErrorString>
  // (<ncclGetLastError>)": Unavailable for a system or remote error (a peer
  // that went away), InvalidArgument for invalid arguments or usage,
  // Internal for the rest. `comm` may be null.
  absl::Status ToStatus(ncclResult_t result, absl::string_view what,
                        ncclComm_t comm = nullptr) const;

 private:
  NcclLibrary() = default;
  int version_ = 0;
  std::string path_;
};

}  // namespace axle::gpu

#endif  // AXLE_GPU_NCCL_LIBRARY_H_
