//===- ptx_module.h - Hand-written NVPTX kernels to PTX --------------------===//
//
// The back half of the GPU's code generator for kernels written directly in
// LLVM IR, not loop fusions (the convolution kernel, FFT scaling, Axle's own
// kernels for sort, scatter, select-and-scatter: kernel_builder.h writes
// those): a module set up for NVPTX (triple, data layout, libdevice's FTZ
// flag), kernels marked as such, and the pipeline CompileLoopFusionToPtx
// runs (libdevice linked where called, verified, O3, PTX for the
// architecture; the same $AXLE_DUMP_TO dumps).
//
// Two engineers wrote the two halves of this at once; both spellings are
// kept (PrepareNvptxModule + CompileNvptxModuleToPtx, and NewNvptxModule +
// CompileNvptxModule, which call them).
//
// Internal to axle/gpu: this header includes LLVM.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_GPU_PTX_MODULE_H_
#define AXLE_GPU_PTX_MODULE_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "axle/gpu/ptx_compiler.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"

namespace axle::gpu {

// InvalidArgument unless options.block_size is a multiple of 32 up to 1024.
absl::Status CheckBlockSize(const PtxOptions& options);

// Target triple, data layout and module flags of options.arch.
// InvalidArgument for an architecture that is not sm_NN.
absl::Status PrepareNvptxModule(llvm::Module* module, const PtxOptions& options);

// An empty module prepared as above.
absl::StatusOr<std::unique_ptr<llvm::Module>> NewNvptxModule(absl::string_view name,
                                                             llvm::LLVMContext& context,
                                                             const PtxOptions& options);

// Marks `function` as a kernel (nvvm.annotations) launched with at most
// `max_threads` threads a block.
void MarkKernel(llvm::Function* function, int max_threads);

// The start of a kernel of one thread per element: `function`'s entry block
// computes the element's index blockIdx.x * blockDim.x + threadIdx.x (an
// i64; nuw nsw with `no_wrap`) and branches on index < `count` to block
// "element", where `b` is left, or to block "exit", which returns. The
// element's code ends with a branch to `exit`.
struct ElementKernelStart {
  llvm::Value* index;
  llvm::BasicBlock* exit;
};
ElementKernelStart StartElementKernel(llvm::IRBuilder<>& b, llvm::Function* function, int64_t count,
                                      bool no_wrap = false);

// The PTX of `module` (prepared as above): libdevice linked where called,
// verified (Internal with the verifier's message naming the kernel
// otherwise), optimized at O3. `unoptimized_ir`, when not null, receives
// its IR before linking and optimization. CompileNvptxModule (and
// CompileElementKernel) go through the hand-written kernels' PTX cache
// (GetHandWrittenPtxCacheStats, ptx_compiler.h).
absl::StatusOr<std::string> CompileNvptxModuleToPtx(llvm::Module* module,
                                                    absl::string_view kernel_name,
                                                    const PtxOptions& options,
                                                    std::string* unoptimized_ir);
absl::StatusOr<std::string> CompileNvptxModule(llvm::Module* module, absl::string_view name,
                                               const PtxOptions& options);

// A kernel of one thread per element (StartElementKernel) of its output's
// `elements`, in blocks of options.block_size: `module`'s function
// `kernel_name` compiled as above, with its launch dimensions.
absl::StatusOr<PtxKernel> CompileElementKernel(llvm::Module* module, absl::string_view kernel_name,
                                               int64_t elements, int64_t num_parameters,
                                               int64_t num_outputs, const PtxOptions& options);

}  // namespace axle::gpu

#endif  // AXLE_GPU_PTX_MODULE_H_
