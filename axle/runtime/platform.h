//===- platform.h - Platforms and their compilers --------------------------===//
//
// A platform is a kind of device Axle compiles for and runs on. Platforms
// are registered by name with the compiler that builds executables for
// them:
//
//   name (Platform::Name)  also found as        custom calls registered for
//   "Interpreter"          "interpreter"        "Host"
//   "Host"                 "cpu", "host"        "Host"   (the CPU backend)
//
// XLA's names: se::Platform, se::PlatformManager, xla::PlatformUtil.
// Lookup is case-insensitive.
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

namespace axle {
class Compiler;
}

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

 private:
  std::string name_;
  std::vector<std::string> aliases_;
  std::string custom_call_platform_;
  std::function<std::unique_ptr<Compiler>()> compiler_factory_;
  mutable std::unique_ptr<Compiler> compiler_;
  mutable std::once_flag compiler_once_;
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
