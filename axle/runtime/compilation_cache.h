//===- compilation_cache.h - Compiled executables by structural identity ---===//
//
// A compilation is identified by its CompilationKey: the module's structural
// fingerprint (hlo_structural_hash.h: names, ids and metadata do not count),
// the build options and the platform. A backend's compiler looks its key up
// before running any pass; on a hit it builds the executable from what it
// stored (the cpu backend: the optimized module and the kernels' machine
// code, cpu/runtime/executable_cache.h; the CUDA backend: the prepared
// module, its kernels' PTX staying in the kernel cache, gpu/gpu_compiler.h),
// so a second Compile of the same computation runs no pass and no code
// generation. Executables themselves
// are not shared: each owns its arena and run state.
//
// In memory: one process-wide cache, at most kMaxEntries compilations, the
// oldest dropped first; thread-safe. On disk: when AXLE_CACHE_DIR is set,
// backends (the cpu backend; not CUDA yet) also store and look up their
// compilations there (the cpu backend says what it stores and how stale or
// corrupt files are treated); the counters below count both.
//
// Front ends (the graph front end's JIT cache, the lazy tensors' graph
// cache) stand on this: MakeCompilationKey for the identity of a graph,
// LocalClient::Compile for the executable, CompilationCacheStats to report.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_RUNTIME_COMPILATION_CACHE_H_
#define AXLE_RUNTIME_COMPILATION_CACHE_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "absl/strings/string_view.h"
#include "axle/hlo/ir/hlo_module.h"
#include "axle/hlo/ir/hlo_structural_hash.h"
#include "axle/runtime/executable.h"

namespace axle {

struct CompilationKey {
  Fingerprint128 module;  // FingerprintModule
  std::string options;    // the build options that change the executable
  std::string platform;   // the platform's name
  bool operator==(const CompilationKey&) const = default;
  auto operator<=>(const CompilationKey&) const = default;
  // One fingerprint of all three (a disk cache's file name).
  Fingerprint128 Digest() const;
  std::string ToString() const;
};

CompilationKey MakeCompilationKey(const HloModule& module, const ExecutableBuildOptions& options,
                                  absl::string_view platform);

// Process-wide counters since the start (or ResetStats).
struct CompilationCacheStats {
  int64_t memory_hits = 0;
  int64_t memory_misses = 0;
  int64_t disk_hits = 0;
  int64_t disk_misses = 0;    // no file
  int64_t disk_rejected = 0;  // a file ignored: corrupt, stale (other version) or unusable
  int64_t disk_writes = 0;
};

// What a backend keeps of one compilation; only that backend reads it (the
// key names the platform).
class CompiledArtifact {
 public:
  virtual ~CompiledArtifact() = default;
};

class CompilationCache {
 public:
  static constexpr size_t kMaxEntries = 64;

  // The process's cache.
  static CompilationCache& Global();

  // The artifact stored under `key`, else null; counts a memory hit or miss.
  std::shared_ptr<const CompiledArtifact> Find(const CompilationKey& key);
  // Stores `artifact` under `key`, replacing an older one.
  void Insert(const CompilationKey& key, std::shared_ptr<const CompiledArtifact> artifact);
  // Drops the entries in memory (not the files on disk).
  void Clear();
  size_t size() const;

  // The disk cache's directory: AXLE_CACHE_DIR, "" when unset.
  static std::string DiskDirectory();
  enum class DiskEvent { kHit, kMiss, kRejected, kWrite };
  void CountDisk(DiskEvent event);

  CompilationCacheStats stats() const;
  void ResetStats();

 private:
  mutable std::mutex mutex_;
  std::map<CompilationKey, std::shared_ptr<const CompiledArtifact>> entries_;
  std::deque<CompilationKey> order_;  // insertion order, for eviction
  CompilationCacheStats stats_;
};

}  // namespace axle

#endif  // AXLE_RUNTIME_COMPILATION_CACHE_H_
