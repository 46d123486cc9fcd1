//===- ptx_kernel_emitter.h - A loop fusion as an NVPTX kernel function ----===//
//
// The LLVM half of CompileLoopFusionToPtx (ptx_compiler.h): emits the
// kernel function of a loop fusion into a module whose target is NVPTX,
// marked as a kernel (nvvm.annotations). Values come from the elemental
// emitter with the NVPTX hooks, one generator per instruction and a cache
// per index so shared subexpressions are computed once. Schedules:
//
//   a thread per output element: its linear index is ctaid.x * ntid.x +
//     tid.x; threads at or past the element count return, the others
//     delinearize it (row-major) and compute every output's element; or a
//     thread per 16 bytes of consecutive elements (vector loads of the
//     parameters of the outputs' shape, vector stores) where the outputs
//     are row-major, the last dimension a multiple and nothing folds;
//   a row fusion (row_fusion.h: row reductions and the elementwise
//     consumers of their results, softmax, layer norm, a single row
//     reduction): a warp per row (more for long rows), each reduction
//     folded from 16-byte loads, combined by shuffles (and shared memory
//     across warps) and broadcast to the row's threads, then the outputs
//     computed from those totals without folding again;
//   a block per tile of output columns for a root that reduces its
//     input's leading dimensions (a column reduction).
//
// Internal to axle/gpu: this header includes LLVM.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_GPU_PTX_KERNEL_EMITTER_H_
#define AXLE_GPU_PTX_KERNEL_EMITTER_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "axle/hlo/ir/hlo_computation.h"
#include "axle/hlo/ir/hlo_instruction.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/Module.h"

namespace axle::gpu {

// The fusion's outputs: the root's operands for a tuple root, else the root.
// InvalidArgument unless they are arrays of one shape.
absl::StatusOr<std::vector<const HloInstruction*>> LoopFusionOutputs(const HloComputation& fusion);

// Unimplemented, naming the instruction, for what the GPU codegen does not
// handle yet: f8/f4 element types, the complex ops that need helpers
// (divide, power, sqrt, trigonometric, ...), non-default layouts,
// tuple-shaped parameters.
absl::Status CheckPtxSupported(const HloComputation& fusion);

struct EmittedKernel {
  llvm::Function* function = nullptr;
  // Launch dimensions (x only).
  int64_t grid = 0;
  int block = 0;
};

// Emits `void name(ptr p0, ..., ptr out0, ...)` into `module`, for blocks of
// at most `block_size` threads (recorded as the kernel's maximum).
absl::StatusOr<EmittedKernel> EmitLoopFusionKernel(const HloComputation& fusion,
                                                   absl::string_view name, int block_size,
                                                   llvm::Module* module);

}  // namespace axle::gpu

#endif  // AXLE_GPU_PTX_KERNEL_EMITTER_H_
