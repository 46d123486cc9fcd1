//===- platform.h - Platforms and their compilers --------------------------===//
//
// A platform is a kind of device Axle compiles for and runs on. Platforms
// are registered by name with the compiler that builds executables for
// them:
//
//   name (Platform::Name)  also found as        custom calls registered for
//   "Interpreter"          "interpreter"        "Host"
//   "Host"                 "cpu", "host"        "Host"   (the CPU backend)
//   "CUDA"                 "cuda", "gpu"        "CUDA"   (axle/gpu/, made on first
//                                                        lookup where a GPU is:
//                                                        platform_provider.h)
//
// XLA's names: se::Platform, se::PlatformManager, xla::PlatformUtil.
// Lookup is case-insensitive.
//
// A platform owns what runs on its device (one device, ordinal 0, for the
// host platforms): its memory allocator, the device's stream (stream.h)
// that executables run on, its transfer manager (transfer_manager.h), and
// the copies between device and host memory those use. Host platforms use
// this class as it is; a platform whose device memory is not host memory
// (the `cuda` platform, axle/gpu/) subclasses it: its own allocator and
// transfer manager (UseDeviceMemory) and memcpys (SynchronousMemcpy).
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_RUNTIME_PLATFORM_H_
#define AXLE_RUNTIME_PLATFORM_H_

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "axle/runtime/device_memory.h"
#include "axle/runtime/stream.h"

namespace axle {
class Compiler;
class TransferManager;
}  // namespace axle

namespace axle::se {

class Platform {
 public:
  using Id = const void*;

  // `aliases`: other names PlatformManager finds it by ("cpu").
  // `custom_call_platform`: the platform name custom-call targets for it are
  // registered under ("Host").
  Platform(std::string name, std::vector<std::string> aliases, std::string custom_call_platform,
           std::function<std::unique_ptr<Compiler>()> compiler_factory);
  virtual ~Platform();

  Id id() const { return this; }
  const std::string& Name() const { return name_; }
  const std::vector<std::string>& aliases() const { return aliases_; }
  const std::string& custom_call_platform() const { return custom_call_platform_; }
  int VisibleDeviceCount() const { return 1; }
  bool Initialized() const { return true; }

  // The platform's compiler (created once; thread-safe to use).
  Compiler* compiler() const;

  // The platform's device memory: for host platforms a HostMemoryAllocator
  // of its own, whose frees are ordered on the device's stream.
  DeviceMemoryAllocator* memory_allocator() const { return memory_allocator_; }
  // The stream of device `device_ordinal` (XLA's backend stream): where
  // LocalExecutable::RunAsync enqueues runs by default. InvalidArgument for
  // a device the platform does not have.
  absl::StatusOr<Stream*> DefaultStream(int device_ordinal) const;
  // Moves and copies literals between host and device buffers.
  TransferManager* transfer_manager() const { return active_transfer_manager_; }

  // Copies `size` bytes now, on the calling thread (XLA's
  // StreamExecutor::SynchronousMemcpy); Stream::Memcpy enqueues these.
  // InvalidArgument when `size` exceeds either side.
  virtual absl::Status SynchronousMemcpy(DeviceMemoryBase* device_dst,
                                         const DeviceMemoryBase& device_src, uint64_t size) const;
  virtual absl::Status SynchronousMemcpy(DeviceMemoryBase* device_dst, const void* host_src,
                                         uint64_t size) const;
  virtual absl::Status SynchronousMemcpy(void* host_dst, const DeviceMemoryBase& device_src,
                                         uint64_t size) const;

 protected:
  // From now on memory_allocator() and transfer_manager() are these (a
  // subclass's, which must outlive every use of them; called from its
  // constructor).
  void UseDeviceMemory(DeviceMemoryAllocator* allocator, TransferManager* transfer_manager);
  // Waits for the work enqueued on the device's stream (a subclass's
  // destructor, before what that work may use goes).
  void WaitForStream() const;

 private:
  std::string name_;
  std::vector<std::string> aliases_;
  std::string custom_call_platform_;
  std::function<std::unique_ptr<Compiler>()> compiler_factory_;
  mutable std::unique_ptr<Compiler> compiler_;
  mutable std::once_flag compiler_once_;
  std::unique_ptr<HostMemoryAllocator> allocator_;
  std::unique_ptr<Stream> stream_;  // orders allocator_'s frees
  std::unique_ptr<TransferManager> transfer_manager_;
  // allocator_ and transfer_manager_, or a subclass's (UseDeviceMemory).
  DeviceMemoryAllocator* memory_allocator_;
  TransferManager* active_transfer_manager_;
};

class PlatformManager {
 public:
  // AlreadyExists when the name or an alias is taken.
  static absl::Status RegisterPlatform(std::unique_ptr<Platform> platform);
  // NotFound listing the registered platforms.
  static absl::StatusOr<Platform*> PlatformWithName(absl::string_view name);
  static std::vector<Platform*> AllPlatforms();
};

}  // namespace axle::se

namespace axle {

class PlatformUtil {
 public:
  // The platform by name or alias ("interpreter", "cpu", "Host", ...).
  static absl::StatusOr<se::Platform*> GetPlatform(absl::string_view name);
  // The CPU platform when it is linked in, else the interpreter.
  static absl::StatusOr<se::Platform*> GetDefaultPlatform();
  static absl::StatusOr<std::vector<se::Platform*>> GetSupportedPlatforms();
};

// Registers the interpreter platform (idempotent; PlatformManager calls it
// before any lookup).
void RegisterInterpreterPlatform();

}  // namespace axle

#endif  // AXLE_RUNTIME_PLATFORM_H_
