//===- nvptx_target_hooks.h - NVPTX's answers to the elemental emitter -----===//
//
// The TargetHooks (axle/llvm_ir/target_hooks.h) of code that runs on an
// NVIDIA GPU: libdevice (the toolkit's nvvm/libdevice/libdevice.10.bc,
// linked into each kernel module by ptx_compiler.cc) for the functions the
// emitter does not expand inline (`__nv_sin`, `__nv_sinf`, `__nv_pow`,
// ...), no prefetches (the GPU hides latency with other warps), and 32-bit
// vectors (one register: a thread computes one element, the warp is the
// vector).
//
// The f8/f4 rounding and complex-math hooks have no GPU helpers yet: the
// kernel emitter refuses f8/f4 types and the complex ops that need helpers
// up front with an Unimplemented error (CheckPtxSupported), so these hooks
// are never reached from it; if another caller reaches them they emit a
// trap, which the driver reports as a launch failure.
//
// Internal to axle/gpu: this header includes LLVM.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_GPU_NVPTX_TARGET_HOOKS_H_
#define AXLE_GPU_NVPTX_TARGET_HOOKS_H_

#include "axle/llvm_ir/target_hooks.h"
#include "llvm/IR/IRBuilder.h"  // the hooks' interface; keeps this header uninstalled

namespace axle::gpu {

// The one instance; stateless, so any thread may use it.
const llvm_ir::TargetHooks& NvptxTargetHooks();

}  // namespace axle::gpu

#endif  // AXLE_GPU_NVPTX_TARGET_HOOKS_H_
