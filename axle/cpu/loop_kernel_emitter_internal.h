//===- loop_kernel_emitter_internal.h - The loop-kernel emitter's entry points ===//
//
// What loop_kernel_module.cc needs from loop_kernel_emitter.cc, and the
// schedules that are free functions (scan_kernel_emitter.cc,
// side_by_side_reduction_emitter.cc). Internal to axle/cpu: this header
// includes LLVM.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_CPU_LOOP_KERNEL_EMITTER_INTERNAL_H_
#define AXLE_CPU_LOOP_KERNEL_EMITTER_INTERNAL_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "axle/cpu/jit.h"
#include "axle/cpu/loop_kernel_plan.h"
#include "axle/hlo/ir/hlo_computation.h"
#include "axle/hlo/ir/hlo_instruction.h"
#include "axle/llvm_ir/elemental_ir_emitter.h"
#include "llvm/IR/Module.h"

namespace axle::cpu {

// The outputs of a loop fusion: the root, or the elements of a root tuple
// (all arrays of one shape). InvalidArgument / Unimplemented otherwise.
absl::StatusOr<std::vector<const HloInstruction*>> LoopOutputs(const HloComputation& computation);

// Whether a kernel with `outputs` stores them with non-temporal stores on
// `jit`'s target.
bool UseNonTemporalStores(const std::vector<const HloInstruction*>& outputs, const Jit& jit);

// Emits `void kernel_name(void** buffers, int64_t begin, int64_t end)` for
// `computation`, whose outputs are `outputs` (LoopOutputs), into `module`.
absl::Status EmitLoopKernel(const HloComputation& computation, absl::string_view kernel_name,
                            const std::vector<const HloInstruction*>& outputs, bool nontemporal,
                            llvm::Module* module);

// The loop nest of a scan kernel (loop_kernel_plan.h: ScanOf): `scan`'s
// output, at `output`, over the range [begin, end) of RangeDimension.
// `input` generates the scanned operand's elements, `init` is the init
// value. Loops outside the scanned dimension, then that dimension in
// order (from its end for a suffix scan), then the dimensions inside it,
// innermost contiguous: each output row is folded from the row stored
// before it and the input's row, vectorized across the row.
absl::Status EmitScan(llvm_ir::ElementalIrEmitter& elemental, llvm::IRBuilderBase& b,
                      const HloInstruction& scan, const ScanPlan& plan,
                      const llvm_ir::ElementGenerator& input, llvm::Value* init,
                      llvm::Value* output, llvm::Value* begin, llvm::Value* end);

// The loop nest of a side-by-side reduction (loop_kernel_plan.h:
// SideBySideReduction): `reduce`'s results `outputs` (which result goes to
// which buffer) over the range [begin, end) of output dimension
// `range_dimension` (RangeDimension); `operands` generates the reduce's
// operands (inputs, then init values). Loops over the output's other
// dimensions, then blocks of kSideBySideBlock elements of its minor one:
// each block's accumulators are set to the init values, folded with every
// step of the reduced dimensions in row-major order (the loop over the
// block's elements innermost, vectorized with SideBySideVectorLanes lanes),
// and stored.
struct SideBySideOutput {
  int64_t result;       // the index of the reduce's result
  llvm::Value* buffer;  // the kernel's output buffer that holds it
};
absl::Status EmitSideBySideReduction(llvm_ir::ElementalIrEmitter& elemental, llvm::IRBuilderBase& b,
                                     const HloInstruction& reduce,
                                     absl::Span<const llvm_ir::ElementGenerator> operands,
                                     const std::vector<SideBySideOutput>& outputs,
                                     int64_t range_dimension, llvm::Value* begin, llvm::Value* end);

// Per type, an array of `length` elements in the entry block of the
// function `b` emits into, 64-byte aligned: a reduction kernel's per-column
// accumulators and partial results.
std::vector<llvm::Value*> EntryArrays(llvm_ir::ElementalIrEmitter& elemental,
                                      llvm::IRBuilderBase& b,
                                      const std::vector<PrimitiveType>& types, int64_t length);

// The loop nest of a split fold (loop_kernel_plan.h: SplitFoldReduction),
// with the arguments of EmitSideBySideReduction: loops over the output's
// dimensions, and for each element its fold split into
// SplitFoldVectorLanes runs folded side by side (vectorized across the
// runs), then the init value, the runs' results and the leftover inputs
// folded in order. With `chunks` > 0 (loop_kernel_plan.h: FoldChunks, a
// scalar result), [begin, end) ranges over the chunks and their combine
// instead, and `partials` is the chunks' partial results' buffer.
absl::Status EmitSplitFoldReduction(llvm_ir::ElementalIrEmitter& elemental, llvm::IRBuilderBase& b,
                                    const HloInstruction& reduce,
                                    absl::Span<const llvm_ir::ElementGenerator> operands,
                                    const std::vector<SideBySideOutput>& outputs,
                                    int64_t range_dimension, llvm::Value* begin, llvm::Value* end,
                                    int64_t chunks = 0, llvm::Value* partials = nullptr);

}  // namespace axle::cpu

#endif  // AXLE_CPU_LOOP_KERNEL_EMITTER_INTERNAL_H_
