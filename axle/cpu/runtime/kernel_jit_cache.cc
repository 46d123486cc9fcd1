//===- kernel_jit_cache.cc - Compiled loop kernels reused within a process -===//
#include "axle/cpu/runtime/kernel_jit_cache.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "axle/hlo/text/hlo_printer.h"

namespace axle::cpu {

std::string CompilationFingerprint(const HloModule& module, const ExecutableBuildOptions& options,
                                   absl::string_view platform) {
  // Metadata (source locations) does not change the code; everything else
  // printed does, constants included.
  return absl::StrCat("platform=", platform, "\noptions=", options.ToString(), "\n",
                      module.ToString(HloPrintOptions::ShortParsable()));
}

KernelJitCache& KernelJitCache::Global() {
  static KernelJitCache* cache = new KernelJitCache();
  return *cache;
}

CachedKernels KernelJitCache::Find(const std::string& key) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = entries_.find(key);
  return it == entries_.end() ? CachedKernels() : it->second;
}

void KernelJitCache::Insert(const std::string& key, CachedKernels kernels) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!entries_.emplace(key, std::move(kernels)).second) return;
  order_.push_back(key);
  while (order_.size() > kMaxEntries) {
    entries_.erase(order_.front());
    order_.pop_front();
  }
}

void KernelJitCache::Clear() {
  std::lock_guard<std::mutex> lock(mutex_);
  entries_.clear();
  order_.clear();
}

size_t KernelJitCache::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return entries_.size();
}

}  // namespace axle::cpu
