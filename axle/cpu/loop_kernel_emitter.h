//===- loop_kernel_emitter.h - Compile a loop fusion to a JIT function -----===//
//
// A "loop fusion" is an HloComputation whose root is an array (or a tuple of
// arrays of one shape, for multi-output fusion) computed from its
// parameters by the ops the elemental emitter knows (elementwise ops, index
// remapping, gather, map, reduce-window, ...). The root may also be a
// `reduce` of such an expression (a reduction kernel: f32/f64 add and
// multiply are reassociated into vector lanes, as XLA:CPU does, f32/f64
// max/min vectorized; other combiners fold in row-major order); a variadic
// reduce's results are the elements of a root tuple of get-tuple-elements,
// and its output elements fold side by side, one per vector lane
// (loop_kernel_plan.h: SideBySideReduction).
// CompileLoopKernel turns either into a native function
//
//   void kernel(void** buffers, int64_t begin, int64_t end);
//
// `buffers` holds the parameters in order, then the outputs; [begin, end) is
// a range of the output's outermost dimension that is not of size one
// (loop_kernel_plan.h: RangeDimension; of [0, 1) for a scalar output), so
// a runtime can split the work across threads. Buffers are dense
// and row-major (descending layout); outputs must not overlap parameters or
// each other (the kernel marks every buffer noalias).
//
// The inner loop is written so that LLVM's loop vectorizer vectorizes it
// (16 lanes for f32 with AVX-512). Ops the emitter does not support make
// compilation fail with an Unimplemented error naming the op.
//
// A program with many fusions compiles them together: LoopKernelModule
// emits the kernels into a few LLVM modules (one per compile thread, see
// JitOptions::compile_threads; a new module only once the others hold
// enough code, so a small program is one module and pays LLVM's per-module
// costs once) and compiles them concurrently with one Jit; the disk object
// cache stores one file per module. Kernels whose fused computations are
// structurally identical (the same instructions, shapes, attributes and
// operand wiring, names aside) share one function. CompileLoopKernel is the
// one-kernel case. The module also compiles the executable's scalar
// functions (sort comparators, scatter combiners: scalar_function_emitter.h),
// so they cost no Jit of their own and are cached with the kernels.
//
// This header is LLVM-free.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_CPU_LOOP_KERNEL_EMITTER_H_
#define AXLE_CPU_LOOP_KERNEL_EMITTER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "axle/cpu/jit.h"
#include "axle/cpu/scalar_function_emitter.h"
#include "axle/hlo/ir/hlo_computation.h"

namespace axle::cpu {

struct CpuCompileOptions {
  JitOptions jit;
  // The name of the kernel function in the JIT (and in IR dumps).
  std::string kernel_name = "loop_kernel";
};

class CompiledKernel {
 public:
  using Function = void (*)(void** buffers, int64_t begin, int64_t end);

  // `jit` owns the code of `function` (shared by every kernel of a module).
  CompiledKernel(std::shared_ptr<const Jit> jit, Function function, int64_t outer_size,
                 int64_t num_parameters, int64_t num_outputs);
  ~CompiledKernel();

  // Runs the whole kernel: buffers = parameters..., outputs... (a chunked
  // fold's partial results on the stack).
  void Run(void** buffers) const {
    if (partials_bytes_ == 0) {
      function_(buffers, 0, outer_size_);
    } else {
      RunWithPartials(buffers);
    }
  }
  // Runs output rows [begin, end) of the outermost dimension; for a chunked
  // fold (partials_bytes() > 0), rows are chunks and the last row their
  // combine, and `buffers` ends with the partial results' buffer.
  void RunRange(void** buffers, int64_t begin, int64_t end) const {
    function_(buffers, begin, end);
  }
  // A fold to a scalar or a column reduction cut into chunks
  // (loop_kernel_plan.h: FoldChunks, ColumnChunks): the bytes of its
  // partial results' buffer, 64-byte aligned, at most kMaxPartialsBytes;
  // 0 for every other kernel. Rows [0, outer_size - 1) may run in any
  // order and on any threads, row outer_size - 1 after them all.
  static constexpr int64_t kMaxPartialsBytes = int64_t{256} << 10;
  // Partial results of at most kStackPartialsBytes live on the stack of
  // the run; larger ones in a buffer of the calling thread, kept from run
  // to run (PartialsBuffer).
  static constexpr int64_t kStackPartialsBytes = 1024;
  // A 64-byte aligned buffer of at least `bytes` (at most
  // kMaxPartialsBytes) owned by the calling thread, valid until its next
  // call on this thread.
  static void* PartialsBuffer(int64_t bytes);
  int64_t partials_bytes() const { return partials_bytes_; }
  void set_partials_bytes(int64_t bytes) { partials_bytes_ = bytes; }

  Function function() const { return function_; }
  // The exclusive upper bound of the range Run covers.
  int64_t outer_size() const { return outer_size_; }
  int64_t num_parameters() const { return num_parameters_; }
  int64_t num_outputs() const { return num_outputs_; }
  // The symbol of function() in its Jit (empty when made from a bare
  // function): what a serialized program names it by
  // (runtime/thunk_serialization.h).
  const std::string& symbol() const { return symbol_; }
  void set_symbol(std::string symbol) { symbol_ = std::move(symbol); }

 private:
  friend class LoopKernelModule;  // sets jit_ and function_ after compiling
  void RunWithPartials(void** buffers) const;
  std::shared_ptr<const Jit> jit_;
  Function function_;
  std::string symbol_;
  int64_t outer_size_;
  int64_t num_parameters_;
  int64_t num_outputs_;
  int64_t partials_bytes_ = 0;
};

absl::StatusOr<std::unique_ptr<CompiledKernel>> CompileLoopKernel(
    const HloComputation& computation, const CpuCompileOptions& options = {});

// Loop kernels compiled together:
//
//   LoopKernelModule module("my_program", options);
//   auto a = module.AddKernel(fusion_a, "kernel_0");  // emits IR only
//   auto b = module.AddKernel(fusion_b, "kernel_1");
//   module.Compile();   // optimizes + compiles once, sets a's and b's function
//
// A kernel has no function (null) until Compile succeeds, and must stay
// alive until Compile returns. Built with `precompiled` (the Jit of an
// earlier Compile of the same kernels under the same names, e.g. from an
// in-memory cache), AddKernel emits nothing and Compile only looks the
// functions up.
class LoopKernelModule {
 public:
  LoopKernelModule(std::string module_name, CpuCompileOptions options,
                   std::shared_ptr<const Jit> precompiled = nullptr);
  ~LoopKernelModule();
  LoopKernelModule(const LoopKernelModule&) = delete;
  LoopKernelModule& operator=(const LoopKernelModule&) = delete;

  absl::StatusOr<std::unique_ptr<CompiledKernel>> AddKernel(const HloComputation& computation,
                                                            absl::string_view kernel_name);
  // A computation of scalars as a function named `name`, set by Compile as a
  // kernel's is (structurally identical ones share one function).
  absl::StatusOr<std::unique_ptr<CompiledScalarFunction>> AddScalarFunction(
      const HloComputation& computation, absl::string_view name);
  // A kernel with the loop kernel's signature whose IR `emit` writes into
  // the LLVM module it is given, as the function `name` (a dot:
  // dot_loop_emitter.h). Kernels with equal `key`s (a text saying all that
  // the code depends on) share one function.
  using KernelIrEmitter = std::function<absl::Status(llvm::Module* module)>;
  absl::StatusOr<std::unique_ptr<CompiledKernel>> AddEmittedKernel(
      absl::string_view key, absl::string_view name, int64_t outer_size, int64_t num_parameters,
      int64_t num_outputs, const KernelIrEmitter& emit);
  absl::Status Compile();

  int64_t num_kernels() const;
  int64_t num_scalar_functions() const;
  // Functions emitted: num_kernels + num_scalar_functions less those that
  // reuse the function of an identical earlier one.
  int64_t num_functions() const;
  // LLVM modules the functions were emitted into (0 with a precompiled Jit).
  int64_t num_llvm_modules() const;
  // After Compile: the Jit holding the kernels (null when there were none).
  std::shared_ptr<const Jit> jit() const;
  // Milliseconds spent emitting IR in AddKernel and AddScalarFunction.
  double emit_ms() const;
  // Every added kernel's and scalar function's name and its computation's
  // structural fingerprint (an emitted kernel's key):
  // two modules with equal signatures have the same functions under the
  // same names (so a caller can check that a precompiled Jit really is the
  // one for these functions).
  const std::string& signature() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace axle::cpu

#endif  // AXLE_CPU_LOOP_KERNEL_EMITTER_H_
