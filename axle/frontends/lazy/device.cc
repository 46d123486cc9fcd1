//===- device.cc - The platform lazy tensors run on -------------------------===//
#include "axle/frontends/lazy/device.h"

#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
#include "axle/base/environment_options.h"

namespace axle::lazy {

absl::StatusOr<LocalClient*> GetClient() {
  static const absl::StatusOr<LocalClient*> client = []() -> absl::StatusOr<LocalClient*> {
    const std::string name = EnvironmentOptions::Read().lazy_platform;
    absl::StatusOr<se::Platform*> platform =
        name.empty() ? PlatformUtil::GetDefaultPlatform() : PlatformUtil::GetPlatform(name);
    if (!platform.ok()) {
      return absl::Status(platform.status().code(),
                          absl::StrCat("lazy tensors' platform (AXLE_LAZY_PLATFORM='", name,
                                       "'): ", platform.status().message()));
    }
    return ClientLibrary::GetOrCreateLocalClient(*platform);
  }();
  return client;
}

}  // namespace axle::lazy
