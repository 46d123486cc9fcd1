#include "axle/runtime/platform.h"

#include <algorithm>
#include <mutex>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "axle/runtime/executable.h"

namespace axle::se {
namespace {

struct Registry {
  std::mutex mu;
  std::vector<std::unique_ptr<Platform>> platforms;
};

Registry& GetRegistry() {
  static Registry* registry = new Registry();
  return *registry;
}

bool NameMatches(const Platform& platform, absl::string_view name) {
  if (absl::EqualsIgnoreCase(platform.Name(), name)) return true;
  for (const std::string& alias : platform.aliases()) {
    if (absl::EqualsIgnoreCase(alias, name)) return true;
  }
  return false;
}

}  // namespace

Platform::Platform(std::string name, std::vector<std::string> aliases,
                   std::string custom_call_platform,
                   std::function<std::unique_ptr<Compiler>()> compiler_factory)
    : name_(std::move(name)),
      aliases_(std::move(aliases)),
      custom_call_platform_(std::move(custom_call_platform)),
      compiler_factory_(std::move(compiler_factory)) {}

Platform::~Platform() = default;

Compiler* Platform::compiler() const {
  std::call_once(compiler_once_, [&] { compiler_ = compiler_factory_(); });
  return compiler_.get();
}

absl::Status PlatformManager::RegisterPlatform(std::unique_ptr<Platform> platform) {
  Registry& registry = GetRegistry();
  std::lock_guard<std::mutex> lock(registry.mu);
  for (const auto& existing : registry.platforms) {
    std::vector<std::string> names = platform->aliases();
    names.push_back(platform->Name());
    for (const std::string& name : names) {
      if (NameMatches(*existing, name)) {
        return absl::AlreadyExistsError(absl::StrCat(
            "platform name '", name, "' is already registered (by '", existing->Name(), "')"));
      }
    }
  }
  registry.platforms.push_back(std::move(platform));
  return absl::OkStatus();
}

absl::StatusOr<Platform*> PlatformManager::PlatformWithName(absl::string_view name) {
  RegisterInterpreterPlatform();
  Registry& registry = GetRegistry();
  std::lock_guard<std::mutex> lock(registry.mu);
  std::vector<std::string> known;
  for (const auto& platform : registry.platforms) {
    if (NameMatches(*platform, name)) return platform.get();
    known.push_back(platform->Name());
    for (const std::string& alias : platform->aliases()) known.push_back(alias);
  }
  return absl::NotFoundError(absl::StrCat("no platform named '", name,
                                          "'; known platforms: ", absl::StrJoin(known, ", ")));
}

std::vector<Platform*> PlatformManager::AllPlatforms() {
  RegisterInterpreterPlatform();
  Registry& registry = GetRegistry();
  std::lock_guard<std::mutex> lock(registry.mu);
  std::vector<Platform*> result;
  for (const auto& platform : registry.platforms) result.push_back(platform.get());
  return result;
}

}  // namespace axle::se

namespace axle {

absl::StatusOr<se::Platform*> PlatformUtil::GetPlatform(absl::string_view name) {
  return se::PlatformManager::PlatformWithName(name);
}

absl::StatusOr<se::Platform*> PlatformUtil::GetDefaultPlatform() {
  absl::StatusOr<se::Platform*> cpu = se::PlatformManager::PlatformWithName("cpu");
  if (cpu.ok()) return cpu;
  return se::PlatformManager::PlatformWithName("interpreter");
}

absl::StatusOr<std::vector<se::Platform*>> PlatformUtil::GetSupportedPlatforms() {
  return se::PlatformManager::AllPlatforms();
}

}  // namespace axle
