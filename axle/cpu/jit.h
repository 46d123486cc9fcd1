//===- jit.h - An LLVM ORC JIT for the host CPU ----------------------------===//
//
// One Jit per compiled executable: it owns the JIT-compiled code of the LLVM
// modules added to it. Modules are optimized at O3 for the host CPU (its name
// and features, so AVX-512 is used where present) with the loop and SLP
// vectorizers on, then compiled. Symbols of the process (libm, ...) resolve.
// Lookups are thread-safe.
//
// This header is LLVM-free (the LLVM types are only forward declared); only
// code in axle/cpu that builds LLVM modules calls AddModule.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_CPU_JIT_H_
#define AXLE_CPU_JIT_H_

#include <functional>
#include <memory>
#include <string>

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
  // 0 to 3 (the new pass manager's O0..O3 pipelines).
  int optimization_level = 3;
  // Sets "prefer-vector-width"="512" on every function (the host must have
  // AVX-512 for it to matter).
  bool prefer_512_bit_vectors = true;
  // The SLP vectorizer (the loop vectorizer is always on at O2/O3).
  bool slp_vectorization = true;
  // Called with the IR text before and after optimization when set.
  IrHook ir_before_optimization;
  IrHook ir_after_optimization;
};

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

  // Optimizes `module` (whose context is `context`) and compiles it. The Jit
  // keeps both.
  absl::Status AddModule(std::unique_ptr<llvm::Module> module,
                         std::unique_ptr<llvm::LLVMContext> context);

  // The address of a function or global defined by an added module.
  absl::StatusOr<void*> Lookup(absl::string_view name) const;

 private:
  struct Impl;
  explicit Jit(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace axle::cpu

#endif  // AXLE_CPU_JIT_H_
