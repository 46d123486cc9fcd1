//===- jit.h - An LLVM ORC JIT for the host CPU ----------------------------===//
//
// One Jit per compiled executable: it owns the JIT-compiled code of the LLVM
// module (normally one, holding every kernel of the executable) added to it.
// Modules are optimized (O2 by default, through Axle's kernel pipeline) for
// the host CPU (its name and features, so AVX-512 is used where present)
// with the loop and SLP vectorizers on, then compiled. Symbols of the process (libm, ...) resolve.
// Lookups are thread-safe. The host is detected once per process.
//
// AddModules compiles several modules (each in its own LLVMContext) on up
// to JitOptions::compile_threads threads, one module per thread at a time:
// a program split into N modules compiles in about 1/N of the wall time when
// the cores are free (the CPU time stays the same).
//
// Object cache: with JitOptions::cache_dir set, AddModule first looks for
// the module's object code in that directory, keyed by a hash of the module's
// IR before optimization, the target (triple, CPU, features), the options
// that change code, and a format version. A hit skips LLVM optimization and
// code generation; a miss compiles and stores the object (written to a temp
// file, then renamed, so concurrent writers never leave a torn file). A file
// that is truncated or corrupt (size and SHA-256 are checked) is ignored and
// overwritten.
//
// This header is LLVM-free (the LLVM types are only forward declared); only
// code in axle/cpu that builds LLVM modules calls AddModule.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_CPU_JIT_H_
#define AXLE_CPU_JIT_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace llvm {
class LLVMContext;
class Module;
}  // namespace llvm

namespace axle::cpu {

// Receives a module's LLVM IR text (module name, text).
using IrHook = std::function<void(absl::string_view, absl::string_view)>;

struct JitOptions {
  // 0 to 3: the new pass manager's O0..O3 pipeline and the matching code
  // generation level (None, Less, Default, Aggressive). O2 is the default:
  // on the bench/ modules O3 gave no measurable run-time gain and took
  // about 1.3x the compile time.
  int optimization_level = 2;
  // Sets "prefer-vector-width"="512" on every function (the host must have
  // AVX-512 for it to matter).
  bool prefer_512_bit_vectors = true;
  // The SLP vectorizer (the loop vectorizer is always on at O2/O3).
  bool slp_vectorization = true;
  // At O1 and O2, Axle's own function pipeline for loop kernels
  // (kKernelPipeline in jit.cc: SROA, simplification, LICM, induction
  // variables, the vectorizers and their clean-up; no inliner beyond
  // alwaysinline, no GVN, no interprocedural passes) instead of LLVM's
  // per-module default one: the same vector loops on the bench/ modules for
  // about 0.6-0.8x the optimization time. False: LLVM's default pipeline.
  bool kernel_pipeline = true;
  // LLVM's loop unroll passes (full and partial). Off by default: the loop
  // vectorizer still interleaves vector bodies, and unrolling roughly
  // doubled optimization + code generation time of the MLP step for no
  // measurable run-time gain on the bench/ modules.
  bool loop_unrolling = false;
  // Called with the IR text before and after optimization when set (not on
  // object-cache hits: then nothing is optimized).
  IrHook ir_before_optimization;
  IrHook ir_after_optimization;
  // The object cache directory (created when missing); empty: no disk cache.
  std::string cache_dir;
  // Threads AddModules optimizes and compiles modules on (the calling one
  // included); 0: the host's hardware threads, at most 4. Does not change
  // the code (and is not part of the object cache key).
  int compile_threads = 0;
  // Position-independent code in the small code model (the JIT's default
  // is static code in the large one): objects a static linker can link
  // into a position-independent executable, as axle-aot does with the
  // objects of cache_dir (docs/graph_frontend.md, "AOT"). Part of the
  // object cache key.
  bool position_independent = false;
  // The CPU the code is for, as LLVM names it ("x86-64-v3",
  // "skylake-avx512", ...), and changes to its features ("+avx2,-avx512f");
  // both empty: the host's, detected (what code this process runs needs).
  // With only target_features, they change the host's. Code for another
  // CPU may use instructions the host lacks: axle-aot compiles for one
  // (--target_cpu, --target_features) and does not run it here. An unknown
  // CPU or feature makes Jit::Create fail with InvalidArgument. Part of the
  // object cache key. (The loop emitters' other host-specific choices, like
  // the last-level cache below, stay the host's.)
  std::string target_cpu;
  std::string target_features;
  // The target's last-level cache in bytes (loop kernels store outputs at
  // least this large non-temporally); 0: what the host reports
  // (host_cache_sizes.h).
  int64_t last_level_cache_bytes = 0;
};

// A loop property (`!{!"axle.nontemporal_stores"}` in a loop's !llvm.loop):
// after optimization, the loop's vector stores that are aligned to their
// size (and not to the stack) become !nontemporal (see
// loop_kernel_emitter.cc for who sets it and why after optimization).
inline constexpr char kNonTemporalStoresLoopProperty[] = "axle.nontemporal_stores";

// LLVM's command-line options are process-wide. The first Jit::Create of
// the process sets these, before AXLE_LLVM_OPTIONS (a space-separated list
// of LLVM options for investigations, e.g. "-time-passes"; later ones win):
//   -enable-epilogue-vectorization=false: no second, narrower vector loop
//     for the remainder of each vectorized loop (the scalar loop takes it);
//   -disable-lsr: no loop strength reduction in code generation (the
//     kernels' loops address base + index * size, which x86 addressing
//     modes take as is).
// Together they cut optimization + code generation of the MLP step by
// about a quarter with the same run times of the bench/ modules. Both are
// part of the object cache key.

// The magic of the object cache's files (object_cache.h's checked files
// holding one ELF object each).
inline constexpr char kObjectCacheMagic[] = "AXLEOBJ1";

// compile_threads with 0 resolved.
int CompileThreads(const JitOptions& options);

// Process-wide counters (for tests and timing reports).
struct JitStats {
  int64_t modules_optimized = 0;  // modules that went through LLVM (optimize + codegen)
  int64_t object_cache_hits = 0;  // modules loaded from cache_dir instead
  int64_t object_cache_writes = 0;
};
JitStats GetJitStats();

class Jit {
 public:
  static absl::StatusOr<std::unique_ptr<Jit>> Create(const JitOptions& options = {});
  ~Jit();
  Jit(const Jit&) = delete;
  Jit& operator=(const Jit&) = delete;

  // Target description for building modules that this JIT compiles.
  const std::string& target_triple() const;
  const std::string& data_layout() const;
  const std::string& cpu_name() const;
  // "+avx512f,+fma,..." as LLVM spells them.
  const std::string& cpu_features() const;
  // JitOptions::last_level_cache_bytes, or the host's.
  int64_t last_level_cache_bytes() const;

  // Optimizes `module` (whose context is `context`) and compiles it. The Jit
  // keeps both.
  absl::Status AddModule(std::unique_ptr<llvm::Module> module,
                         std::unique_ptr<llvm::LLVMContext> context);
  // The same for modules[i] in contexts[i] (one context per module, none
  // shared), compiled concurrently (compile_threads). Symbols may refer
  // across the modules. The IR hooks are called on the calling thread, in
  // module order.
  absl::Status AddModules(std::vector<std::unique_ptr<llvm::Module>> modules,
                          std::vector<std::unique_ptr<llvm::LLVMContext>> contexts);

  // The address of a function or global defined by an added module. The
  // first lookup in a module generates its machine code.
  absl::StatusOr<void*> Lookup(absl::string_view name) const;

  // Where this Jit's time went so far, in milliseconds.
  struct Timings {
    // Summed over modules (so over threads: more than the wall time when
    // modules compiled concurrently).
    double optimize_ms = 0;  // verification + the optimization pipeline
    double codegen_ms = 0;   // instruction selection .. object file
    double cache_ms = 0;     // hashing the IR, reading and writing cache files
    double wall_ms = 0;      // AddModule(s) from start to end, wall clock
  };
  Timings timings() const;
  // The cache file AddModule looked up or wrote last ("" without cache_dir).
  std::string last_cache_path() const;

 private:
  struct Impl;
  explicit Jit(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace axle::cpu

#endif  // AXLE_CPU_JIT_H_
