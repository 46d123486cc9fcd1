//===- cpu_target_hooks.h - The host's answers to the elemental emitter ----===//
//
// The TargetHooks (axle/llvm_ir/target_hooks.h) of code that runs on the
// host through the Jit: LLVM's intrinsics for exp, log, sin, cos and pow
// (lowered to libm calls or inline code by LLVM), libm for the other
// functions (f-suffixed names for float), runtime_symbols.h's helpers for
// the f8/f4 rounding and complex math, the compiler runtime's
// __divsc3/__divdc3 for complex division, prefetches into L2 one cache line
// at a time, and 512-bit vectors (the Jit's prefer-vector-width). Internal to
// axle/cpu: this header includes LLVM.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_CPU_CPU_TARGET_HOOKS_H_
#define AXLE_CPU_CPU_TARGET_HOOKS_H_

#include "axle/llvm_ir/target_hooks.h"
#include "llvm/IR/IRBuilder.h"  // the hooks' interface; keeps this header uninstalled

namespace axle::cpu {

// The one instance; stateless, so any thread may use it.
const llvm_ir::TargetHooks& CpuTargetHooks();

}  // namespace axle::cpu

#endif  // AXLE_CPU_CPU_TARGET_HOOKS_H_
