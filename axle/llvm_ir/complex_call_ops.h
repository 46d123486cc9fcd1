//===- complex_call_ops.h - The complex ops a target computes --------------===//
//
// Which complex ops ElementalIrEmitter leaves to TargetHooks::EmitComplexCall
// (target_hooks.h): one list for the emitter and for a backend that must
// refuse them while its hooks have no helpers (the CUDA kernel emitter).
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_LLVM_IR_COMPLEX_CALL_OPS_H_
#define AXLE_LLVM_IR_COMPLEX_CALL_OPS_H_

#include "axle/hlo/ir/hlo_opcode.h"

namespace axle::llvm_ir {

// Divide, power, atan2, sqrt, rsqrt, the trigonometric and hyperbolic functions
// and their inverses, expm1, log1p and logistic; the emitter computes the
// other complex ops itself.
bool IsComplexCallOpcode(HloOpcode opcode);

}  // namespace axle::llvm_ir

#endif  // AXLE_LLVM_IR_COMPLEX_CALL_OPS_H_
