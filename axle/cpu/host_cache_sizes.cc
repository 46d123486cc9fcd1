#include "axle/cpu/host_cache_sizes.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"

namespace axle::cpu {
namespace {

constexpr int64_t kDefaultL2Bytes = int64_t{1} << 20;
constexpr int64_t kDefaultLastLevelBytes = int64_t{32} << 20;

std::string ReadLine(const std::filesystem::path& path) {
  std::ifstream file(path);
  std::string line;
  std::getline(file, line);
  return std::string(absl::StripAsciiWhitespace(line));
}

int64_t Sysconf(int name) {
#ifdef _SC_LEVEL1_DCACHE_SIZE
  const long value = sysconf(name);  // NOLINT(google-runtime-int): sysconf's type
  return value > 0 ? value : 0;
#else
  return 0;
#endif
}

CacheSizes ReadHostCacheSizes() {
  CacheSizes sizes;
#ifdef _SC_LEVEL2_CACHE_SIZE
  sizes.l2_bytes = Sysconf(_SC_LEVEL2_CACHE_SIZE);
  sizes.last_level_bytes = Sysconf(_SC_LEVEL3_CACHE_SIZE);
#endif
  const CacheSizes sysfs = ReadSysfsCacheSizes("/sys/devices/system/cpu/cpu0/cache");
  if (sizes.l2_bytes == 0) sizes.l2_bytes = sysfs.l2_bytes;
  if (sizes.last_level_bytes == 0) sizes.last_level_bytes = sysfs.last_level_bytes;
  if (sizes.l2_bytes == 0) sizes.l2_bytes = kDefaultL2Bytes;
  if (sizes.last_level_bytes == 0)
    sizes.last_level_bytes = std::max(sizes.l2_bytes, kDefaultLastLevelBytes);
  return sizes;
}

}  // namespace

std::optional<int64_t> ParseCacheSize(absl::string_view text) {
  text = absl::StripAsciiWhitespace(text);
  int64_t scale = 1;
  if (!text.empty() && (text.back() == 'K' || text.back() == 'k')) {
    scale = int64_t{1} << 10;
    text.remove_suffix(1);
  } else if (!text.empty() && (text.back() == 'M' || text.back() == 'm')) {
    scale = int64_t{1} << 20;
    text.remove_suffix(1);
  }
  int64_t value = 0;
  if (!absl::SimpleAtoi(text, &value) || value < 0) return std::nullopt;
  return value * scale;
}

CacheSizes ReadSysfsCacheSizes(const std::string& directory) {
  CacheSizes sizes;
  int highest_level = 0;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(directory, error)) {
    if (entry.path().filename().string().rfind("index", 0) != 0) continue;
    const std::string type = ReadLine(entry.path() / "type");
    if (type != "Data" && type != "Unified") continue;
    int level = 0;
    if (!absl::SimpleAtoi(ReadLine(entry.path() / "level"), &level)) continue;
    const std::optional<int64_t> bytes = ParseCacheSize(ReadLine(entry.path() / "size"));
    if (!bytes.has_value() || *bytes == 0) continue;
    if (level == 2) sizes.l2_bytes = *bytes;
    if (level >= 2 && level >= highest_level) {
      highest_level = level;
      sizes.last_level_bytes = *bytes;
    }
  }
  return sizes;
}

const CacheSizes& HostCacheSizes() {
  static const CacheSizes sizes = ReadHostCacheSizes();
  return sizes;
}

}  // namespace axle::cpu
