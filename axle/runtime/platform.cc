#include "axle/runtime/platform.h"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "axle/runtime/executable.h"
#include "axle/runtime/platform_provider.h"
#include "axle/runtime/transfer_manager.h"

namespace axle::se {
namespace {

// A provider (platform_provider.h): called once, on the first lookup of
// one of its names; `error` keeps its failure for every later lookup.
struct Provider {
  std::vector<std::string> names;
  PlatformProvider make;
  std::once_flag once;
  absl::Status error;
  Platform* platform = nullptr;
};

struct Registry {
  std::mutex mu;
  std::vector<std::unique_ptr<Platform>> platforms;
  std::vector<std::unique_ptr<Provider>> providers;
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
      compiler_factory_(std::move(compiler_factory)),
      allocator_(std::make_unique<HostMemoryAllocator>(this)),
      stream_(std::make_unique<Stream>(this, /*device_ordinal=*/0)),
      transfer_manager_(std::make_unique<TransferManager>(this)),
      memory_allocator_(allocator_.get()),
      active_transfer_manager_(transfer_manager_.get()) {
  allocator_->OrderFreesOn(stream_.get());
}

void Platform::UseDeviceMemory(DeviceMemoryAllocator* allocator,
                               TransferManager* transfer_manager) {
  memory_allocator_ = allocator;
  active_transfer_manager_ = transfer_manager;
}

void Platform::WaitForStream() const {
  Event done;
  if (stream_->RecordEvent(&done).ok()) done.Synchronize();
}

Platform::~Platform() {
  // The stream's last work may still free blocks into the allocator.
  stream_.reset();
  allocator_->OrderFreesOn(nullptr);
}

absl::StatusOr<Stream*> Platform::DefaultStream(int device_ordinal) const {
  if (device_ordinal != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "device ordinal ", device_ordinal, " does not exist on platform '", name_, "' (it has 0)"));
  }
  return stream_.get();
}

// Host platforms: device memory is host memory.
absl::Status Platform::SynchronousMemcpy(DeviceMemoryBase* device_dst,
                                         const DeviceMemoryBase& device_src, uint64_t size) const {
  if (absl::Status status = CheckMemcpySize(size, device_dst->size(), device_src.size());
      !status.ok()) {
    return status;
  }
  if (size > 0) std::memcpy(device_dst->opaque(), device_src.opaque(), size);
  return absl::OkStatus();
}

absl::Status Platform::SynchronousMemcpy(DeviceMemoryBase* device_dst, const void* host_src,
                                         uint64_t size) const {
  if (absl::Status status = CheckMemcpySize(size, device_dst->size(), size); !status.ok()) {
    return status;
  }
  if (size > 0) std::memcpy(device_dst->opaque(), host_src, size);
  return absl::OkStatus();
}

absl::Status Platform::SynchronousMemcpy(void* host_dst, const DeviceMemoryBase& device_src,
                                         uint64_t size) const {
  if (absl::Status status = CheckMemcpySize(size, size, device_src.size()); !status.ok()) {
    return status;
  }
  if (size > 0) std::memcpy(host_dst, device_src.opaque(), size);
  return absl::OkStatus();
}

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

absl::Status RegisterPlatformProvider(std::vector<std::string> names, PlatformProvider provider) {
  Registry& registry = GetRegistry();
  std::lock_guard<std::mutex> lock(registry.mu);
  for (const std::string& name : names) {
    for (const auto& existing : registry.platforms) {
      if (NameMatches(*existing, name)) {
        return absl::AlreadyExistsError(absl::StrCat(
            "platform name '", name, "' is already registered (by '", existing->Name(), "')"));
      }
    }
    for (const auto& existing : registry.providers) {
      for (const std::string& taken : existing->names) {
        if (absl::EqualsIgnoreCase(taken, name)) {
          return absl::AlreadyExistsError(
              absl::StrCat("platform name '", name, "' already has a provider"));
        }
      }
    }
  }
  auto entry = std::make_unique<Provider>();
  entry->names = std::move(names);
  entry->make = std::move(provider);
  registry.providers.push_back(std::move(entry));
  return absl::OkStatus();
}

absl::StatusOr<Platform*> PlatformManager::PlatformWithName(absl::string_view name) {
  RegisterInterpreterPlatform();
  Registry& registry = GetRegistry();
  Provider* provider = nullptr;
  {
    std::lock_guard<std::mutex> lock(registry.mu);
    for (const auto& platform : registry.platforms) {
      if (NameMatches(*platform, name)) return platform.get();
    }
    for (const auto& entry : registry.providers) {
      for (const std::string& provided : entry->names) {
        if (absl::EqualsIgnoreCase(provided, name)) provider = entry.get();
      }
    }
  }
  if (provider != nullptr) {
    // Outside the registry's lock: making a platform may take a while
    // (a driver's initialization) and registers it.
    std::call_once(provider->once, [&] {
      absl::StatusOr<std::unique_ptr<Platform>> made = provider->make();
      if (!made.ok()) {
        provider->error = made.status();
        return;
      }
      Platform* platform = made->get();
      provider->error = RegisterPlatform(*std::move(made));
      if (provider->error.ok()) provider->platform = platform;
    });
    if (!provider->error.ok()) return provider->error;
    return provider->platform;
  }
  std::lock_guard<std::mutex> lock(registry.mu);
  std::vector<std::string> known;
  for (const auto& platform : registry.platforms) {
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
