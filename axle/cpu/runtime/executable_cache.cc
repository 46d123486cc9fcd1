//===- executable_cache.cc - The cpu backend's compilations, kept ----------===//
#include "axle/cpu/runtime/executable_cache.h"

#include <cstdio>
#include <filesystem>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "axle/base/build_id.h"
#include "axle/cpu/object_cache.h"
#include "axle/hlo/text/hlo_parser.h"
#include "axle/hlo/text/hlo_printer.h"

#ifndef AXLE_VERSION_STRING
#error "AXLE_VERSION_STRING is set by axle/cpu/runtime/CMakeLists.txt"
#endif

namespace axle::cpu {
namespace {

// Bump when the file layout changes.
constexpr char kFormat[] = "axle-executable-cache-1";
constexpr char kMagic[] = "AXLEEXE1";

void AppendField(std::string& payload, absl::string_view field) {
  const uint64_t size = field.size();
  for (int i = 0; i < 8; ++i) payload.push_back(static_cast<char>(size >> (8 * i)));
  payload.append(field.data(), field.size());
}

// Reads the fields AppendField wrote, in order.
class FieldReader {
 public:
  explicit FieldReader(absl::string_view payload) : rest_(payload) {}
  std::optional<absl::string_view> Next() {
    if (rest_.size() < 8) return std::nullopt;
    uint64_t size = 0;
    for (int i = 0; i < 8; ++i) size |= uint64_t{static_cast<uint8_t>(rest_[i])} << (8 * i);
    rest_.remove_prefix(8);
    if (size > rest_.size()) return std::nullopt;
    absl::string_view field = rest_.substr(0, size);
    rest_.remove_prefix(size);
    return field;
  }
  bool done() const { return rest_.empty(); }

 private:
  absl::string_view rest_;
};

void Warn(const std::string& path, absl::string_view why) {
  std::fprintf(stderr, "axle: warning: executable cache file %s ignored: %s\n", path.c_str(),
               std::string(why).c_str());
}

std::shared_ptr<const CpuCompiledArtifact> Reject(const std::string& path, absl::string_view why) {
  Warn(path, why);
  CompilationCache::Global().CountDisk(CompilationCache::DiskEvent::kRejected);
  return nullptr;
}

}  // namespace

std::string ExecutableCachePath(const std::string& dir, const CompilationKey& key) {
  return absl::StrCat(dir, "/", key.Digest().ToHex(), ".axle-exe");
}

const std::string& ExecutableCacheVersion() {
  static const std::string* version = new std::string(absl::StrCat(
      kFormat, "\naxle ", AXLE_VERSION_STRING, " build ", AxleBuildId(), "\n", HostCodeVersion()));
  return *version;
}

std::shared_ptr<const CpuCompiledArtifact> ReadExecutableCacheFile(const std::string& dir,
                                                                   const CompilationKey& key) {
  const std::string path = ExecutableCachePath(dir, key);
  CheckedFileRead read = ReadCheckedFile(path, kMagic);
  if (!read.payload.has_value()) {
    if (read.error == CheckedFileError::kCorrupt) {
      return Reject(path, "corrupt or truncated (checksum)");
    }
    CompilationCache::Global().CountDisk(CompilationCache::DiskEvent::kMiss);
    return nullptr;
  }
  FieldReader fields(*read.payload);
  std::optional<absl::string_view> version = fields.Next();
  std::optional<absl::string_view> file_key = fields.Next();
  std::optional<absl::string_view> module_text = fields.Next();
  std::optional<absl::string_view> signature = fields.Next();
  if (!signature.has_value() || !fields.done()) return Reject(path, "malformed");
  if (*version != ExecutableCacheVersion()) {
    return Reject(path, "written by another build of Axle or for another CPU");
  }
  if (*file_key != key.ToString()) return Reject(path, "written for another compilation");
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseAndReturnUnverifiedModule(*module_text);
  if (!module.ok()) return Reject(path, module.status().ToString());
  auto artifact = std::make_shared<CpuCompiledArtifact>();
  artifact->optimized = std::move(*module);
  artifact->signature = std::string(*signature);
  return artifact;
}

void WriteExecutableCacheFile(const std::string& dir, const CompilationKey& key,
                              const CpuCompiledArtifact& artifact) {
  std::string payload;
  AppendField(payload, ExecutableCacheVersion());
  AppendField(payload, key.ToString());
  AppendField(payload, artifact.optimized->ToString(HloPrintOptions::Canonical()));
  AppendField(payload, artifact.signature);
  std::error_code ignored;
  std::filesystem::create_directories(dir, ignored);
  if (WriteCheckedFile(ExecutableCachePath(dir, key), kMagic, payload)) {
    CompilationCache::Global().CountDisk(CompilationCache::DiskEvent::kWrite);
  }
}

}  // namespace axle::cpu
