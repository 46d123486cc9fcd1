//===- scalar_function_emitter.h - A computation of scalars as a function --===//
//
// Compiles an HloComputation whose parameters and instructions are all
// scalars (a sort comparator, a scatter combiner, the select and scatter of
// select-and-scatter) into a native function
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
// This header is LLVM-free.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_CPU_SCALAR_FUNCTION_EMITTER_H_
#define AXLE_CPU_SCALAR_FUNCTION_EMITTER_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "axle/cpu/jit.h"
#include "axle/hlo/ir/hlo_computation.h"

namespace axle::cpu {

class CompiledScalarFunction {
 public:
  using Function = void (*)(const void* const* parameters, void* const* results);

  CompiledScalarFunction(std::unique_ptr<Jit> jit, Function function)
      : jit_(std::move(jit)), function_(function) {}

  void Run(const void* const* parameters, void* const* results) const {
    function_(parameters, results);
  }
  Function function() const { return function_; }

 private:
  std::unique_ptr<Jit> jit_;
  Function function_;
};

// Unimplemented (naming the instruction) when `computation` has a
// non-scalar parameter or instruction, or an op the elemental emitter does
// not know.
absl::StatusOr<std::unique_ptr<CompiledScalarFunction>> CompileScalarFunction(
    const HloComputation& computation, const std::string& name, const JitOptions& options = {});

}  // namespace axle::cpu

#endif  // AXLE_CPU_SCALAR_FUNCTION_EMITTER_H_
