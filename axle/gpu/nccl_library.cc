//===- nccl_library.cc - NCCL, opened at run time ---------------------------===//
#include "axle/gpu/nccl_library.h"

#include <dlfcn.h>

#include "absl/strings/str_cat.h"
#include "axle/base/environment_options.h"
#include "axle/gpu/cublas_library.h"
#include "axle/gpu/dynamic_library.h"

namespace axle::gpu {

absl::StatusOr<const NcclLibrary*> NcclLibrary::Get() {
  // Loaded once; the library stays open for the process (its communicators
  // live as long).
  static const absl::StatusOr<const NcclLibrary*>* library = new absl::StatusOr<const NcclLibrary*>(
      Open(CudaLibraryPath(EnvironmentOptions::Read().nccl, "libnccl.so.2")));
  return *library;
}

absl::StatusOr<const NcclLibrary*> NcclLibrary::Open(const std::string& path) {
  auto handle = OpenLibrary(path, "NCCL", "AXLE_NCCL");
  if (!handle.ok()) return handle.status();
  auto* library = new NcclLibrary();
  library->path_ = path;
  SymbolResolver resolve(*handle, path);
#define AXLE_NCCL_RESOLVE(name) resolve(library->name, #name);
  AXLE_NCCL_FUNCTIONS(AXLE_NCCL_RESOLVE)
#undef AXLE_NCCL_RESOLVE
  if (!resolve.missing().empty()) {
    delete library;
    dlclose(*handle);
    return absl::UnavailableError(absl::StrCat("NCCL unavailable: ", resolve.missing(),
                                               " (NCCL 2.14 or newer is needed; AXLE_NCCL "
                                               "names another path)"));
  }
  if (ncclResult_t result = library->ncclGetVersion(&library->version_); result != ncclSuccess) {
    absl::Status status = library->ToStatus(result, "ncclGetVersion");
    delete library;
    dlclose(*handle);
    return absl::UnavailableError(absl::StrCat("NCCL unavailable: ", status.message()));
  }
  return library;
}

absl::Status NcclLibrary::ToStatus(ncclResult_t result, absl::string_view what,
                                   ncclComm_t comm) const {
  if (result == ncclSuccess) return absl::OkStatus();
  const char* text = ncclGetErrorString != nullptr ? ncclGetErrorString(result) : nullptr;
  std::string message = absl::StrCat(
      "NCCL ", what, ": ", text != nullptr ? text : absl::StrCat("ncclResult_t ", result));
  const char* last = ncclGetLastError != nullptr ? ncclGetLastError(comm) : nullptr;
  if (last != nullptr && last[0] != '\0') absl::StrAppend(&message, " (", last, ")");
  switch (result) {
    case ncclSystemError:
    case ncclRemoteError:
      return absl::UnavailableError(message);
    case ncclInvalidArgument:
    case ncclInvalidUsage:
      return absl::InvalidArgumentError(message);
    default:
      return absl::InternalError(message);
  }
}

}  // namespace axle::gpu
