//===- kernel_jit_cache.h - Compiled loop kernels reused within a process --===//
//
// Compiling the same module twice in one process reuses the machine code of
// its loop kernels (and of the scalar functions compiled with them: sort
// comparators, scatter combiners): the cpu compiler keys the Jit that
// ProgramBuilder made (program_builder.h, kernels_jit()) by the module's
// canonical text, the build options and the platform, and hands it to the
// next ProgramBuilder of an equal key (set_precompiled_kernels), which then
// runs no LLVM. The
// HLO passes, the thunks (oneDNN primitives, constants) and the arenas are
// still made per executable, so executables stay independent; only the
// immutable code is shared. Each entry also holds the kernels' signature
// (LoopKernelModule::signature): the compiler uses the Jit only when the new
// build's kernels have the same one, else it compiles afresh.
//
// The key is the full text (no hash collisions); at most kMaxEntries Jits
// are kept, the oldest dropped first. Thread-safe.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_CPU_RUNTIME_KERNEL_JIT_CACHE_H_
#define AXLE_CPU_RUNTIME_KERNEL_JIT_CACHE_H_

#include <cstddef>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "absl/strings/string_view.h"
#include "axle/cpu/jit.h"
#include "axle/hlo/ir/hlo_module.h"
#include "axle/runtime/executable.h"

namespace axle::cpu {

// The key of `module` (as given to the compiler, before its passes).
std::string CompilationFingerprint(const HloModule& module, const ExecutableBuildOptions& options,
                                   absl::string_view platform);

struct CachedKernels {
  std::shared_ptr<const Jit> jit;
  std::string signature;
};

class KernelJitCache {
 public:
  static constexpr size_t kMaxEntries = 64;

  // The process's cache.
  static KernelJitCache& Global();

  // The kernels stored under `key` (a null jit when none).
  CachedKernels Find(const std::string& key) const;
  void Insert(const std::string& key, CachedKernels kernels);
  void Clear();
  size_t size() const;

 private:
  mutable std::mutex mutex_;
  std::map<std::string, CachedKernels> entries_;
  std::deque<std::string> order_;  // insertion order, for eviction
};

}  // namespace axle::cpu

#endif  // AXLE_CPU_RUNTIME_KERNEL_JIT_CACHE_H_
