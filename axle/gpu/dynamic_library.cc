//===- dynamic_library.cc - A CUDA library opened at run time --------------===//
#include "axle/gpu/dynamic_library.h"

#include "absl/strings/str_cat.h"

namespace axle::gpu {

absl::StatusOr<void*> OpenLibrary(const std::string& path, absl::string_view library,
                                  absl::string_view variable, int flags) {
  void* handle = dlopen(path.c_str(), flags);
  if (handle == nullptr) {
    const char* error = dlerror();
    return absl::UnavailableError(absl::StrCat(library, " unavailable: ", path, " not found (",
                                               error != nullptr ? error : "dlopen failed", "); ",
                                               variable, " names another path"));
  }
  return handle;
}

void SymbolResolver::NoteMissing(const char* symbol) {
  missing_ = absl::StrCat(path_, " lacks ", symbol);
}

}  // namespace axle::gpu
