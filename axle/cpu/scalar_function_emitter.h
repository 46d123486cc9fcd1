//===- scalar_function_emitter.h - A computation of scalars as a function --===//
//
// A computation whose parameters and instructions are all scalars (a sort
// comparator, a scatter combiner, the select and scatter of
// select-and-scatter) becomes a native function
//
//   void function(const void* const* parameters, void* const* results);
//
// parameters[i] points at parameter i's value, results[j] at where leaf j of
// the root goes (the root itself when it is not a tuple), each in its storage
// type (pred as one byte, narrow floats as their bits). The body is the
// elemental emitter's IR for each instruction (elemental_ir_emitter.h), so
// the function computes exactly what a loop kernel computes per element.
// Runtime thunks (sort, scatter, select-and-scatter) call it once per
// element or comparison.
//
// Scalar functions are compiled with the executable's loop kernels, in its
// one LoopKernelModule (loop_kernel_emitter.h, AddScalarFunction), which
// fills in their function pointers when it compiles.
//
// This header is LLVM-free (llvm::Module is only forward declared).
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_CPU_SCALAR_FUNCTION_EMITTER_H_
#define AXLE_CPU_SCALAR_FUNCTION_EMITTER_H_

#include <memory>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "axle/cpu/jit.h"
#include "axle/hlo/ir/hlo_computation.h"

namespace axle::cpu {

class CompiledScalarFunction {
 public:
  using Function = void (*)(const void* const* parameters, void* const* results);

  // `jit` owns the code of `function` (shared by every function and kernel
  // of a LoopKernelModule).
  CompiledScalarFunction(std::shared_ptr<const Jit> jit, Function function)
      : jit_(std::move(jit)), function_(function) {}

  void Run(const void* const* parameters, void* const* results) const {
    function_(parameters, results);
  }
  // Null until the LoopKernelModule it was added to has compiled.
  Function function() const { return function_; }
  // The symbol of function() in its Jit (empty when made from a bare
  // function): what a serialized program names it by, as a kernel's
  // (runtime/thunk_serialization.h).
  const std::string& symbol() const { return symbol_; }
  void set_symbol(std::string symbol) { symbol_ = std::move(symbol); }

 private:
  friend class LoopKernelModule;  // sets jit_, function_ and symbol_ after compiling
  std::shared_ptr<const Jit> jit_;
  Function function_;
  std::string symbol_;
};

// Unimplemented (naming the instruction) when a parameter of `computation`
// is not a scalar array; InvalidArgument when it has no root.
absl::Status CheckScalarFunction(const HloComputation& computation);

// Emits `computation` into `module` as the external function `name`;
// Unimplemented (naming the instruction) for a non-scalar instruction or an
// op the elemental emitter does not know.
absl::Status EmitScalarFunction(const HloComputation& computation, absl::string_view name,
                                llvm::Module* module);

}  // namespace axle::cpu

#endif  // AXLE_CPU_SCALAR_FUNCTION_EMITTER_H_
