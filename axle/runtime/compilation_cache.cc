//===- compilation_cache.cc - Compiled executables by structural identity --===//
#include "axle/runtime/compilation_cache.h"

#include <cstdlib>
#include <utility>

#include "absl/strings/str_cat.h"
#include "axle/base/environment_options.h"

namespace axle {

Fingerprint128 CompilationKey::Digest() const {
  StructuralHasher hasher;
  hasher.Combine(module, options, platform);
  return hasher.Finish();
}

std::string CompilationKey::ToString() const {
  return absl::StrCat("module=", module.ToHex(), " platform=", platform, " options=", options);
}

CompilationKey MakeCompilationKey(const HloModule& module, const ExecutableBuildOptions& options,
                                  absl::string_view platform) {
  return CompilationKey{
      FingerprintModule(module),
      absl::StrCat(options.ToString(), " run_backend_only=", options.run_backend_only()),
      std::string(platform)};
}

CompilationCache& CompilationCache::Global() {
  static CompilationCache* cache = new CompilationCache();
  return *cache;
}

std::shared_ptr<const CompiledArtifact> CompilationCache::Find(const CompilationKey& key) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = entries_.find(key);
  if (it == entries_.end()) {
    ++stats_.memory_misses;
    return nullptr;
  }
  ++stats_.memory_hits;
  return it->second;
}

void CompilationCache::Insert(const CompilationKey& key,
                              std::shared_ptr<const CompiledArtifact> artifact) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto [it, inserted] = entries_.insert_or_assign(key, std::move(artifact));
  if (!inserted) return;
  order_.push_back(key);
  while (order_.size() > kMaxEntries) {
    entries_.erase(order_.front());
    order_.pop_front();
  }
}

void CompilationCache::Clear() {
  std::lock_guard<std::mutex> lock(mutex_);
  entries_.clear();
  order_.clear();
}

size_t CompilationCache::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return entries_.size();
}

std::string CompilationCache::DiskDirectory() { return EnvironmentOptions::Read().cache_dir; }

void CompilationCache::CountDisk(DiskEvent event) {
  std::lock_guard<std::mutex> lock(mutex_);
  switch (event) {
    case DiskEvent::kHit:
      ++stats_.disk_hits;
      break;
    case DiskEvent::kMiss:
      ++stats_.disk_misses;
      break;
    case DiskEvent::kRejected:
      ++stats_.disk_rejected;
      break;
    case DiskEvent::kWrite:
      ++stats_.disk_writes;
      break;
  }
}

CompilationCacheStats CompilationCache::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

void CompilationCache::ResetStats() {
  std::lock_guard<std::mutex> lock(mutex_);
  stats_ = CompilationCacheStats();
}

}  // namespace axle
