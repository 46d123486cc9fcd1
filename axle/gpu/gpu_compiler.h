//===- gpu_compiler.h - HLO modules compiled for a CUDA device -------------===//
//
// The CUDA compiler: PrepareGpuModule runs the passes (below), then
// BuildGpuProgram (gpu_program.h) turns the entry into thunks, compiling
// each loop fusion to PTX, and GpuExecutable (gpu_executable.h) loads the
// kernels onto the device.
//
// The passes, as one HloPassPipeline ("gpu-prepare", so AXLE_DUMP_TO dumps
// and times them): the collectives of a one-device run become plumbing
// (single_device_collectives.h), every topk a sort (topk_decomposer.h),
// scans while loops (scan_to_while.h); then what the cpu backend runs
// before fusion, by registered name, minus its cpu-only passes (bf16 dot
// upcast, dot operand / output transposes, dot-epilogue-fusion):
// layout-normalization, batchnorm-expander, call-inliner, algsimp,
// tuple-simplifier, while-loop-simplifier, reshape-mover,
// constant-folding, cse, while-loop-constant-sinking,
// while-loop-simplifier, algsimp, dce, fusion, multi-output-fusion, cse
// (with run_backend_only, only layout-normalization and
// batchnorm-expander). Last, every op left that needs a kernel (not
// plumbing, control flow, a custom call, replica-id / partition-id or a
// library op: gpu_thunk_factories.h) is wrapped into a one-op loop fusion,
// in the entry and in every computation control flow runs, and dce.
//
// With AXLE_DUMP_TO set, the pipeline's dumps, each kernel's IR and PTX
// (ptx_compiler.h; only when compiled, not for a cache hit), and
// <module>.gpu-program.txt (the thunks with the values they read and
// write, then the arena's buffer assignment) are written there.
//
// Caches: a module compiled before (by structural identity, with the same
// build, prepare and PTX options) runs no pass: its prepared module comes
// from the process's compilation cache (runtime/compilation_cache.h, platform
// "CUDA"), shared read-only by the executables built from it, and only its
// thunks are built anew (each executable initializes, that is loads, its own
// on the device); CompileGpuProgramCached is that step without a device.
// Kernels are cached per process by the fused computation's structure
// (CompileLoopFusionCached): a module compiled again, or another with the
// same fusions, compiles no PTX; the thunks' hand-written kernels (sort,
// scatter, convolution, FFT, ...) are cached by their LLVM IR
// (ptx_compiler.h). Nothing is kept on disk yet
// (AXLE_CACHE_DIR is the cpu backend's). With AXLE_DUMP_TO set the
// compilation cache is bypassed, so that the dumps are complete.
//
// Internal to axle/gpu (gpu_executable.h includes cuda.h); the platform
// (cuda_platform.cc) makes its compiler with MakeGpuCompiler.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_GPU_GPU_COMPILER_H_
#define AXLE_GPU_GPU_COMPILER_H_

#include <memory>

#include "absl/status/status.h"
#include "axle/gpu/cuda_device.h"
#include "axle/gpu/gpu_program.h"
#include "axle/hlo/ir/hlo_module.h"
#include "axle/runtime/executable.h"

namespace axle::gpu {

struct GpuPrepareOptions {
  // The module is optimized already (ExecutableBuildOptions): only what
  // codegen needs.
  bool run_backend_only = false;
  // Small loops of known trip count unrolled before simplification and
  // fusion (gpu_while_unroller.h; not with run_backend_only), as XLA:GPU
  // does: threefry's rounds then fuse into one kernel per random array.
  // On unless AXLE_GPU_UNROLL=0 (GpuPrepareOptionsFromEnv).
  bool unroll_loops = true;
  // Conditionals whose branches are all cheap become selects between the
  // branches' results (gpu_conditional_to_select.h; not with
  // run_backend_only): no selector read on the host. On unless
  // AXLE_GPU_SELECT_CONDITIONALS=0.
  bool select_conditionals = true;
  // A one-device module keeps its collectives, run by NCCL with one rank
  // (nccl_collective_thunk.h), instead of becoming copies: how one GPU
  // tests the NCCL thunks. Off unless AXLE_GPU_COLLECTIVES_ON_ONE_DEVICE=1.
  bool collectives_on_one_device = false;
};
GpuPrepareOptions GpuPrepareOptionsFromEnv(bool run_backend_only = false);

// Runs the passes above on `module` (options from the environment).
absl::Status PrepareGpuModule(HloModule* module, bool run_backend_only = false);
absl::Status PrepareGpuModule(HloModule* module, const GpuPrepareOptions& options);

// The compile-only path (no device): PrepareGpuModule then BuildGpuProgram.
// `module` is left prepared.
absl::StatusOr<GpuProgram> CompileGpuProgram(HloModule* module,
                                             const PtxOptions& options = PtxOptions(),
                                             bool run_backend_only = false);
absl::StatusOr<GpuProgram> CompileGpuProgram(HloModule* module, const PtxOptions& options,
                                             const GpuPrepareOptions& prepare);

// A program with the module it was built from (shared: the compilation
// cache keeps it too).
struct GpuCompiledProgram {
  std::shared_ptr<const HloModule> module;  // prepared
  GpuProgram program;
};

// CompileGpuProgram through the compilation cache: a module structurally
// identical to one compiled before with the same options (`build`, `ptx`,
// `prepare`) gets a new program built from the prepared module kept then
// (no pass, no PTX: counted as a memory hit in CompilationCacheStats);
// otherwise `module` is prepared, built and kept. With AXLE_DUMP_TO set,
// always compiled afresh and not kept.
absl::StatusOr<GpuCompiledProgram> CompileGpuProgramCached(std::unique_ptr<HloModule> module,
                                                           const ExecutableBuildOptions& build,
                                                           const PtxOptions& ptx,
                                                           const GpuPrepareOptions& prepare);

// The compiler of `platform`, whose executables run on `device` with
// memory from `allocator` (both must outlive it).
std::unique_ptr<Compiler> MakeGpuCompiler(const se::Platform* platform, const CudaDevice& device,
                                          se::DeviceMemoryAllocator* allocator);

}  // namespace axle::gpu

#endif  // AXLE_GPU_GPU_COMPILER_H_
