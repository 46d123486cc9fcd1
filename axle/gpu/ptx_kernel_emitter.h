//===- ptx_kernel_emitter.h - A loop fusion as an NVPTX kernel function ----===//
//
// The LLVM half of CompileLoopFusionToPtx (ptx_compiler.h): emits the
// kernel function of a loop fusion into a module whose target is NVPTX,
// marked as a kernel (nvvm.annotations). Values come from the elemental
// emitter with the NVPTX hooks, one generator per instruction and a cache
// per index so shared subexpressions are computed once. Two schedules:
//
//   a thread per output element: its linear index is ctaid.x * ntid.x +
//     tid.x; threads at or past the element count return, the others
//     delinearize it (row-major) and compute every output's element;
//   a block per output element, for a root that reduces its input's
//     trailing dimensions (a row reduction, rows of at least a warp): the
//     block's threads fold strided columns, then combine across each warp
//     with shuffles and across the warps through shared memory.
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
