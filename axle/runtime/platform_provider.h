//===- platform_provider.h - Platforms made on first lookup ----------------===//
//
// Some platforms can only be made on a machine that has their device: the
// `cuda` platform needs a CUDA driver and a GPU. Such a backend registers a
// provider under the platform's names instead of a platform. The first
// lookup of one of those names (PlatformManager::PlatformWithName,
// PlatformUtil::GetPlatform) calls the provider once: the platform it makes
// is registered and returned from then on; the error it returns instead
// ("CUDA platform unavailable: no CUDA driver ...") is what every lookup of
// those names returns, so asking for a platform the machine cannot run is a
// clear error, never a crash. Providers that were never asked for make
// nothing: linking a backend costs a program nothing until it is used.
//
// Kept out of platform.h, which most of the runtime includes.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_RUNTIME_PLATFORM_PROVIDER_H_
#define AXLE_RUNTIME_PLATFORM_PROVIDER_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "axle/runtime/platform.h"

namespace axle::se {

using PlatformProvider = std::function<absl::StatusOr<std::unique_ptr<Platform>>()>;

// Registers `provider` for `names` (looked up case-insensitively; the made
// platform's own names and aliases should be among them). AlreadyExists
// when a name is taken by a platform or another provider.
absl::Status RegisterPlatformProvider(std::vector<std::string> names, PlatformProvider provider);

}  // namespace axle::se

#endif  // AXLE_RUNTIME_PLATFORM_PROVIDER_H_
