//===- ptx_module.h - An NVPTX LLVM module to PTX --------------------------===//
//
// The back half of the GPU's code generator, for kernels written directly
// in LLVM IR (the convolution kernel, FFT scaling): PrepareNvptxModule sets
// a fresh module's target (triple, data layout, libdevice's FTZ flag) and
// CompileNvptxModuleToPtx links the libdevice functions it calls, verifies
// it, optimizes it at O3 and prints its PTX, as CompileLoopFusionToPtx does
// for fusions (ptx_compiler.h; same $AXLE_DUMP_TO dumps).
//
// Internal to axle/gpu: this header includes LLVM.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_GPU_PTX_MODULE_H_
#define AXLE_GPU_PTX_MODULE_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "axle/gpu/ptx_compiler.h"
#include "llvm/IR/Module.h"

namespace axle::gpu {

// Target triple, data layout and module flags of options.arch.
absl::Status PrepareNvptxModule(llvm::Module* module, const PtxOptions& options);

// The PTX of `module` (prepared as above); `unoptimized_ir`, when not null,
// receives its IR before linking and optimization.
absl::StatusOr<std::string> CompileNvptxModuleToPtx(llvm::Module* module,
                                                    absl::string_view kernel_name,
                                                    const PtxOptions& options,
                                                    std::string* unoptimized_ir);

}  // namespace axle::gpu

#endif  // AXLE_GPU_PTX_MODULE_H_
