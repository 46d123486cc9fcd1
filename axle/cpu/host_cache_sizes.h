//===- host_cache_sizes.h - The data caches the host reports --------------===//
//
// Thresholds in the code generators that depend on the machine's caches
// (non-temporal stores for outputs larger than the last-level cache; the
// packed dot rhs written non-temporally when it is larger than L2 several
// times over) come from here, not from one machine's benchmark sizes: the
// machine kind changes (a 32 MiB L3 Zen 5, a 300 MiB L3 Sapphire Rapids,
// a 36 MiB L3 Cascade Lake so far).
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_CPU_HOST_CACHE_SIZES_H_
#define AXLE_CPU_HOST_CACHE_SIZES_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"

namespace axle::cpu {

// The cache line of every x86 host (prefetches, the side-by-side
// reductions' runs).
inline constexpr int64_t kCacheLineBytes = 64;

struct CacheSizes {
  int64_t l2_bytes = 0;          // per core
  int64_t last_level_bytes = 0;  // L3 where there is one, else L2
};

// What the host reports (sysconf, else /sys/devices/system/cpu/cpu0/cache),
// read once. Sizes it does not report are 1 MiB (L2) and 32 MiB (last
// level).
const CacheSizes& HostCacheSizes();

// Reads the cache sizes from a sysfs cache directory like
// /sys/devices/system/cpu/cpu0/cache (index*/level, index*/type,
// index*/size); a size it does not find stays 0.
CacheSizes ReadSysfsCacheSizes(const std::string& directory);

// "36608K", "2M", "512": a sysfs cache size in bytes; nullopt when it is not
// one.
std::optional<int64_t> ParseCacheSize(absl::string_view text);

}  // namespace axle::cpu

#endif  // AXLE_CPU_HOST_CACHE_SIZES_H_
