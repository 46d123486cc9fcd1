//===- dynamic_library.h - A CUDA library opened at run time ---------------===//
//
// cuBLAS, cuSOLVER, cuDNN and cuFFT are opened with dlopen the first time a
// thunk needs them, so that Axle builds, and runs without them, on machines
// that lack them. OpenLibrary opens one; SymbolResolver fills a library's
// table of function pointers and names the first symbol the file lacks.
// Both failures are Unavailable, saying which library and which file.
// OnePerDevice keeps a library's handle of each device for the process.
//
// Internal to axle/gpu.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_GPU_DYNAMIC_LIBRARY_H_
#define AXLE_GPU_DYNAMIC_LIBRARY_H_

#include <dlfcn.h>

#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "axle/gpu/cuda_device.h"

namespace axle::gpu {

// dlopen(path, flags), or Unavailable "<library> unavailable: <path> not
// found (<dlerror>); <variable> names another path".
absl::StatusOr<void*> OpenLibrary(const std::string& path, absl::string_view library,
                                  absl::string_view variable, int flags = RTLD_NOW | RTLD_LOCAL);

// Sets function pointers to the symbols of an open library (`path`, for the
// message); a symbol it lacks leaves its pointer null.
class SymbolResolver {
 public:
  SymbolResolver(void* handle, std::string path) : handle_(handle), path_(std::move(path)) {}

  template <typename Function>
  void operator()(Function& function, const char* symbol) {
    function = reinterpret_cast<Function>(dlsym(handle_, symbol));
    if (function == nullptr && missing_.empty()) NoteMissing(symbol);
  }

  // "<path> lacks <symbol>" for the first symbol that was missing; empty
  // when every one resolved.
  const std::string& missing() const { return missing_; }

 private:
  void NoteMissing(const char* symbol);

  void* handle_;
  std::string path_;
  std::string missing_;
};

// The object of `device` (one per device ordinal and type T), made by
// `create` with the device's context current the first time it is asked
// for and kept for the process; an error of `create` is returned and the
// next call tries again.
template <typename T>
absl::StatusOr<T*> OnePerDevice(const CudaDevice& device,
                                absl::FunctionRef<absl::StatusOr<T*>()> create) {
  static auto* mutex = new std::mutex;
  static auto* objects = new std::map<int, T*>;
  std::lock_guard<std::mutex> lock(*mutex);
  auto it = objects->find(device.ordinal());
  if (it != objects->end()) return it->second;
  CudaDevice::ScopedActivation activation(device);
  absl::StatusOr<T*> created = create();
  if (created.ok()) (*objects)[device.ordinal()] = *created;
  return created;
}

}  // namespace axle::gpu

#endif  // AXLE_GPU_DYNAMIC_LIBRARY_H_
