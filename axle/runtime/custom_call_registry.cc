//===- custom_call_registry.cc - Custom-call targets by name and platform --===//
#include "axle/runtime/custom_call_registry.h"

#include <algorithm>
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace axle {
namespace {

std::string Describe(const std::string& symbol, const std::string& platform) {
  return absl::StrCat("custom-call target '", symbol, "' for platform \"", platform, "\"");
}

std::string ConflictMessage(const std::string& symbol, const std::string& platform, void* first,
                            void* other) {
  return absl::StrFormat("%s was registered with two different functions (%p, then %p)",
                         Describe(symbol, platform), first, other);
}

}  // namespace

CustomCallTargetRegistry* CustomCallTargetRegistry::Global() {
  static auto* registry = new CustomCallTargetRegistry;
  return registry;
}

absl::Status CustomCallTargetRegistry::RegisterLocked(const std::string& symbol, void* address,
                                                      const std::string& platform,
                                                      bool record_conflict) {
  auto [it, inserted] = entries_.try_emplace({symbol, platform});
  Entry& entry = it->second;
  if (inserted) {
    entry.address = address;
    return absl::OkStatus();
  }
  if (entry.address == address) return absl::OkStatus();
  std::string message = ConflictMessage(symbol, platform, entry.address, address);
  if (record_conflict && std::find(entry.conflicting.begin(), entry.conflicting.end(), address) ==
                             entry.conflicting.end()) {
    entry.conflicting.push_back(address);
  }
  return absl::AlreadyExistsError(message);
}

void CustomCallTargetRegistry::Register(const std::string& symbol, void* address,
                                        const std::string& platform) {
  std::lock_guard<std::mutex> lock(mu_);
  absl::Status status = RegisterLocked(symbol, address, platform, /*record_conflict=*/true);
  // Registration usually runs in a static initializer, where nobody can see a
  // status: say it now, and again when the target is used.
  if (!status.ok())
    std::fprintf(stderr, "axle: warning: %s\n", std::string(status.message()).c_str());
}

absl::Status CustomCallTargetRegistry::RegisterOrError(const std::string& symbol, void* address,
                                                       const std::string& platform) {
  std::lock_guard<std::mutex> lock(mu_);
  return RegisterLocked(symbol, address, platform, /*record_conflict=*/false);
}

void* CustomCallTargetRegistry::Lookup(const std::string& symbol,
                                       const std::string& platform) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find({symbol, platform});
  if (it == entries_.end() || !it->second.conflicting.empty()) return nullptr;
  return it->second.address;
}

absl::StatusOr<void*> CustomCallTargetRegistry::LookupOrError(const std::string& symbol,
                                                              const std::string& platform) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find({symbol, platform});
  if (it != entries_.end()) {
    const Entry& entry = it->second;
    if (entry.conflicting.empty()) return entry.address;
    return absl::FailedPreconditionError(
        absl::StrCat(ConflictMessage(symbol, platform, entry.address, entry.conflicting.front()),
                     "; it cannot be used until only one function is registered under that name"));
  }
  std::vector<std::string> elsewhere;
  for (const auto& [key, entry] : entries_) {
    if (key.first == symbol) elsewhere.push_back(absl::StrCat("\"", key.second, "\""));
  }
  std::string message = absl::StrCat(Describe(symbol, platform), " is not registered");
  if (!elsewhere.empty()) {
    absl::StrAppend(&message, " (it is registered for ", absl::StrJoin(elsewhere, ", "),
                    ", whose calling convention differs)");
  }
  return absl::NotFoundError(message);
}

std::unordered_map<std::string, void*> CustomCallTargetRegistry::registered_symbols(
    const std::string& platform) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::unordered_map<std::string, void*> symbols;
  for (const auto& [key, entry] : entries_) {
    if (key.second == platform && entry.conflicting.empty()) symbols[key.first] = entry.address;
  }
  return symbols;
}

std::vector<std::string> CustomCallTargetRegistry::PlatformsOf(const std::string& symbol) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> platforms;
  for (const auto& [key, entry] : entries_) {
    if (key.first == symbol) platforms.push_back(key.second);
  }
  return platforms;  // std::map keeps them sorted by (symbol, platform)
}

}  // namespace axle
