//===- object_cache.cc - Checked cache files on disk -----------------------===//
#include "axle/cpu/object_cache.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "axle/base/logging.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/SHA256.h"
#include "llvm/TargetParser/Host.h"

namespace axle::cpu {
namespace {

constexpr size_t kMagicSize = 8;
constexpr size_t kHeaderSize = kMagicSize + 8 + 32;

std::array<uint8_t, 32> Sha256(absl::string_view data) {
  llvm::SHA256 hasher;
  hasher.update(llvm::StringRef(data.data(), data.size()));
  return hasher.final();
}

absl::string_view AsText(const std::array<uint8_t, 32>& hash) {
  return absl::string_view(reinterpret_cast<const char*>(hash.data()), hash.size());
}

}  // namespace

std::string Sha256Hex(absl::string_view data) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string text;
  for (uint8_t byte : Sha256(data)) {
    text.push_back(kDigits[byte >> 4]);
    text.push_back(kDigits[byte & 15]);
  }
  return text;
}

std::string HostCodeVersion() {
  static const std::string* version = [] {
    std::string text = absl::StrCat("llvm ", LLVM_VERSION_STRING, " cpu ",
                                    llvm::sys::getHostCPUName().str(), " features");
    llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
    std::vector<std::string> enabled;
    for (const auto& feature : features) {
      if (feature.getValue()) enabled.push_back(feature.getKey().str());
    }
    std::sort(enabled.begin(), enabled.end());
    for (const std::string& feature : enabled) absl::StrAppend(&text, " +", feature);
    return new std::string(std::move(text));
  }();
  return *version;
}

CheckedFileRead ReadCheckedFile(const std::string& path, absl::string_view magic) {
  CHECK_EQ(magic.size(), kMagicSize);
  CheckedFileRead read;
  std::ifstream in(path, std::ios::binary);
  if (!in) return read;
  std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  read.error = CheckedFileError::kCorrupt;
  if (data.size() < kHeaderSize || !absl::StartsWith(data, magic)) return read;
  uint64_t size = 0;
  for (size_t i = 0; i < 8; ++i) {
    size |= uint64_t{static_cast<uint8_t>(data[kMagicSize + i])} << (8 * i);
  }
  if (size != data.size() - kHeaderSize) return read;
  absl::string_view payload = absl::string_view(data).substr(kHeaderSize);
  if (AsText(Sha256(payload)) != absl::string_view(data).substr(kMagicSize + 8, 32)) return read;
  read.payload = std::string(payload);
  return read;
}

bool WriteCheckedFile(const std::string& path, absl::string_view magic, absl::string_view payload) {
  CHECK_EQ(magic.size(), kMagicSize);
  static std::atomic<int64_t> counter{0};
  const std::string temp = absl::StrCat(path, ".tmp.", getpid(), ".", counter++);
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    char size[8];
    for (int i = 0; i < 8; ++i) size[i] = static_cast<char>(uint64_t{payload.size()} >> (8 * i));
    out.write(magic.data(), static_cast<std::streamsize>(magic.size()));
    out.write(size, 8);
    const std::array<uint8_t, 32> hash = Sha256(payload);
    out.write(reinterpret_cast<const char*>(hash.data()), 32);
    out.write(payload.data(), static_cast<std::streamsize>(payload.size()));
    if (!out) {
      std::error_code ignored;
      std::filesystem::remove(temp, ignored);
      return false;
    }
  }
  std::error_code error;
  std::filesystem::rename(temp, path, error);
  if (error) std::filesystem::remove(temp, error);
  return !error;
}

}  // namespace axle::cpu
