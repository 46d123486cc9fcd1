//===- executable_cache.h - The cpu backend's compilations, kept -----------===//
//
// What the cpu compiler keeps of a compilation in the compilation cache
// (runtime/compilation_cache.h), and its file on disk.
//
// In memory: the optimized module (after cpu-prepare, shared read-only by the
// executables built from it) and the Jit holding the machine code of its loop
// kernels and scalar functions. A hit builds the thunks, oneDNN primitives
// and arena of a new executable from these (ProgramBuilder with precompiled
// kernels): no pass, no LLVM IR, no LLVM.
//
// On disk (AXLE_CACHE_DIR): the file `<key digest>.axle-exe`, a checked file
// (object_cache.h, magic "AXLEEXE1") whose payload is a list of
// length-prefixed fields: the version key (the file format, Axle's version
// and build ID, LLVM's version, the host CPU and its features), the
// compilation key's text, the optimized module as HLO text and the kernels'
// signature. The kernels' machine code is in the Jit's object cache in the
// same directory (jit.h, keyed by the kernels' LLVM IR). A new process
// parses the optimized module and builds the executable from it: no pass
// runs, the kernels' IR is emitted and their objects are loaded from the
// object cache (no LLVM optimization or code generation).
// A file that is corrupt (checksum), stale (another version key), for
// another key, or unusable (the module does not parse, the kernels built
// differ from the signature) is ignored with a warning on stderr and
// replaced by the next compile; it never fails a compile.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_CPU_RUNTIME_EXECUTABLE_CACHE_H_
#define AXLE_CPU_RUNTIME_EXECUTABLE_CACHE_H_

#include <memory>
#include <string>

#include "axle/cpu/jit.h"
#include "axle/hlo/ir/hlo_module.h"
#include "axle/runtime/compilation_cache.h"

namespace axle::cpu {

struct CpuCompiledArtifact : CompiledArtifact {
  std::shared_ptr<const HloModule> optimized;  // after cpu-prepare
  std::shared_ptr<const Jit> kernels;          // null when there are none
  std::string signature;                       // LoopKernelModule::signature
};

// The file of `key` under `dir`.
std::string ExecutableCachePath(const std::string& dir, const CompilationKey& key);

// The version key of the files this build writes on this host (see above).
const std::string& ExecutableCacheVersion();

// The artifact stored for `key` under `dir` (without kernels: they come from
// the object cache); null when there is none or it is rejected (counted in
// the compilation cache's stats).
std::shared_ptr<const CpuCompiledArtifact> ReadExecutableCacheFile(const std::string& dir,
                                                                   const CompilationKey& key);

// Stores `artifact`; a failure only costs the next process a compile.
void WriteExecutableCacheFile(const std::string& dir, const CompilationKey& key,
                              const CpuCompiledArtifact& artifact);

}  // namespace axle::cpu

#endif  // AXLE_CPU_RUNTIME_EXECUTABLE_CACHE_H_
