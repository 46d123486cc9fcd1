//===- custom_call_registry.h - Custom-call targets by name and platform ---===//
//
// XLA's CustomCallTargetRegistry: a process-wide map from (target name,
// platform name) to the address of the function that implements the target.
// The platform names are XLA's: "Host" for code that runs on the CPU (used by
// Axle's `interpreter` and `cpu` platforms alike), "CUDA" for GPU code. The
// registry only stores addresses; how a function is called depends on the
// platform and on the custom call's api_version (see host_custom_call.h).
//
// One difference from XLA: registering a name for a platform a second time
// with a *different* function is not a process exit. `Register` (void, as in
// XLA) keeps the first function and records the conflict; from then on the
// target cannot be looked up (`Lookup` returns null, `LookupOrError` says
// which target was registered twice), so a module that uses it fails with a
// message naming it. `RegisterOrError` reports the conflict directly.
// Registering the same function again is fine.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_RUNTIME_CUSTOM_CALL_REGISTRY_H_
#define AXLE_RUNTIME_CUSTOM_CALL_REGISTRY_H_

#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace axle {

// XLA's platform names for custom-call registration.
inline constexpr char kHostPlatformName[] = "Host";
inline constexpr char kCudaPlatformName[] = "CUDA";

class CustomCallTargetRegistry {
 public:
  // The registry the XLA_REGISTER_CUSTOM_CALL_TARGET macros fill.
  static CustomCallTargetRegistry* Global();

  // Registers `address` for (`symbol`, `platform`). A conflicting
  // registration (another address for the same pair) is recorded, see above.
  void Register(const std::string& symbol, void* address, const std::string& platform);
  // Same, but a conflicting registration is an AlreadyExists error naming the
  // target (the registry is left as it was: the first function stays).
  absl::Status RegisterOrError(const std::string& symbol, void* address,
                               const std::string& platform);

  // The registered address, or null when there is none or the pair was
  // registered with conflicting functions.
  void* Lookup(const std::string& symbol, const std::string& platform) const;
  // The registered address; NotFound naming the target and platform (and the
  // platforms it *is* registered for, if any), or FailedPrecondition for a
  // target registered with conflicting functions.
  absl::StatusOr<void*> LookupOrError(const std::string& symbol, const std::string& platform) const;

  // Every usable (not conflicting) target of `platform`, as XLA's
  // registered_symbols().
  std::unordered_map<std::string, void*> registered_symbols(const std::string& platform) const;
  // The platforms `symbol` is registered for, sorted.
  std::vector<std::string> PlatformsOf(const std::string& symbol) const;

 private:
  struct Entry {
    void* address = nullptr;
    // Other addresses registered for the same (symbol, platform).
    std::vector<void*> conflicting;
  };
  absl::Status RegisterLocked(const std::string& symbol, void* address, const std::string& platform,
                              bool record_conflict);

  mutable std::mutex mu_;
  std::map<std::pair<std::string, std::string>, Entry> entries_;
};

// Registers a target from a static initializer (the macros below).
class RegisterCustomCallTarget {
 public:
  RegisterCustomCallTarget(const std::string& name, void* address, const std::string& platform) {
    CustomCallTargetRegistry::Global()->Register(name, address, platform);
  }
};

}  // namespace axle

#define XLA_REGISTER_CUSTOM_CALL_CONCAT(a, b) a##b

#define XLA_REGISTER_CUSTOM_CALL_TARGET_WITH_SYM_HELPER(symbol, address, platform, counter) \
  static ::axle::RegisterCustomCallTarget XLA_REGISTER_CUSTOM_CALL_CONCAT(                  \
      custom_call_target_register, counter)(symbol, reinterpret_cast<void*>(address), platform)

// Registers `function` under its own name.
#define XLA_REGISTER_CUSTOM_CALL_TARGET(function, platform) \
  XLA_REGISTER_CUSTOM_CALL_TARGET_WITH_SYM(#function, function, platform)

#define XLA_REGISTER_CUSTOM_CALL_TARGET_WITH_SYM(symbol, address, platform) \
  XLA_REGISTER_CUSTOM_CALL_TARGET_WITH_SYM_HELPER(symbol, address, platform, __COUNTER__)

// Registration for the CPU ("Host").
#define XLA_CPU_REGISTER_CUSTOM_CALL_TARGET(function) \
  XLA_REGISTER_CUSTOM_CALL_TARGET_WITH_SYM(#function, function, "Host")

#define XLA_CPU_REGISTER_CUSTOM_CALL_TARGET_WITH_SYM(symbol, address) \
  XLA_REGISTER_CUSTOM_CALL_TARGET_WITH_SYM(symbol, address, "Host")

#endif  // AXLE_RUNTIME_CUSTOM_CALL_REGISTRY_H_
