//===- ptx_module.h - Hand-written NVPTX kernels to PTX --------------------===//
//
// The module half of ptx_compiler.h for kernels that are not loop fusions
// (Axle's own kernels for sort, scatter, select-and-scatter: kernel_builder.h
// writes them): a module set up for NVPTX, kernels marked as such, and the
// same pipeline CompileLoopFusionToPtx runs (libdevice linked where called,
// verified, O3, PTX for the architecture; dumps under $AXLE_DUMP_TO).
//
// Internal to axle/gpu: this header includes LLVM.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_GPU_PTX_MODULE_H_
#define AXLE_GPU_PTX_MODULE_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "axle/gpu/ptx_compiler.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"

namespace axle::gpu {

// An empty module with NVPTX's triple and the data layout of
// `options.arch`, denormals kept by libdevice (nvvm-reflect-ftz 0).
// InvalidArgument for an architecture that is not sm_NN.
absl::StatusOr<std::unique_ptr<llvm::Module>> NewNvptxModule(absl::string_view name,
                                                             llvm::LLVMContext& context,
                                                             const PtxOptions& options);

// Marks `function` as a kernel (nvvm.annotations) launched with at most
// `max_threads` threads a block.
void MarkKernel(llvm::Function* function, int max_threads);

// `module`'s PTX: libdevice linked where called, verified (Internal with
// the verifier's message naming `name` otherwise), optimized at O3.
absl::StatusOr<std::string> CompileNvptxModule(llvm::Module* module, absl::string_view name,
                                               const PtxOptions& options);

}  // namespace axle::gpu

#endif  // AXLE_GPU_PTX_MODULE_H_
