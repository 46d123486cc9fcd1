//===- object_cache.h - Checked cache files on disk ------------------------===//
//
// The files of Axle's disk caches (the Jit's object cache, jit.h, and the
// executable cache, runtime/executable_cache.h): an 8-byte magic naming the
// kind of file, the payload size (8 bytes, little endian), the SHA-256 of the
// payload (32 bytes), the payload. A file is written to a temp file in the
// same directory and renamed into place, so readers see the old file, no
// file, or the whole new one, and concurrent writers never leave a torn
// file. Reading checks magic, size and hash: a truncated or corrupt file
// reads as missing.
//
// LLVM-free header (the SHA-256 is LLVM's).
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_CPU_OBJECT_CACHE_H_
#define AXLE_CPU_OBJECT_CACHE_H_

#include <optional>
#include <string>

#include "absl/strings/string_view.h"

namespace axle::cpu {

// Why ReadCheckedFile found no payload.
enum class CheckedFileError { kMissing, kCorrupt };

struct CheckedFileRead {
  std::optional<std::string> payload;  // set when valid
  CheckedFileError error = CheckedFileError::kMissing;
};

// `magic` has 8 characters.
CheckedFileRead ReadCheckedFile(const std::string& path, absl::string_view magic);
// False when the file could not be written (the cache is then only slower).
bool WriteCheckedFile(const std::string& path, absl::string_view magic, absl::string_view payload);

// Lowercase hex SHA-256 of `data`.
std::string Sha256Hex(absl::string_view data);

// LLVM's version and the host CPU's name and features as LLVM detects them:
// what, besides Axle's own build, decides the code a cache file holds.
std::string HostCodeVersion();

}  // namespace axle::cpu

#endif  // AXLE_CPU_OBJECT_CACHE_H_
