//===- math_ir.h - Transcendental functions as inline LLVM IR --------------===//
//
// f32 exp, log, tanh and erf built from range reduction and polynomials
// (expm1, log1p, cbrt and the logistic function from those), atan2, and
// sin, cos and tan, in
// straight-line IR (selects, no branches, no calls) so that the loop
// vectorizer turns them into vector code. Internal to axle/cpu.
//
// Accuracy (max ulp error against the correctly rounded result, measured by
// math_ir_test over sweeps; see README.md): exp and log within 2 ulp, tanh
// and erf within a few ulp (XLA's CPU backend uses approximations of the
// same kind).
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_LLVM_IR_MATH_IR_H_
#define AXLE_LLVM_IR_MATH_IR_H_

#include "llvm/IR/IRBuilder.h"

namespace axle::llvm_ir {

// Each takes and returns an f32 value (scalar).
llvm::Value* EmitExpF32(llvm::IRBuilderBase& b, llvm::Value* x);
llvm::Value* EmitLogF32(llvm::IRBuilderBase& b, llvm::Value* x);
llvm::Value* EmitLog1pF32(llvm::IRBuilderBase& b, llvm::Value* x);
llvm::Value* EmitTanhF32(llvm::IRBuilderBase& b, llvm::Value* x);
llvm::Value* EmitErfF32(llvm::IRBuilderBase& b, llvm::Value* x);
// 1 / (1 + exp(-x)).
llvm::Value* EmitLogisticF32(llvm::IRBuilderBase& b, llvm::Value* x);
// exp(x) - 1 without the cancellation near 0.
llvm::Value* EmitExpm1F32(llvm::IRBuilderBase& b, llvm::Value* x);
// The real cube root (negative for negative x).
llvm::Value* EmitCbrtF32(llvm::IRBuilderBase& b, llvm::Value* x);
// atan2(y, x), every IEEE special case (signed zeros, infinities, NaN) as
// libm's; within 2 ulp of the correctly rounded result elsewhere
// (axle/cpu/elemental_ir_emitter_test.cc: Atan2AndHypotSweep).
llvm::Value* EmitAtan2F32(llvm::IRBuilderBase& b, llvm::Value* y, llvm::Value* x);
// sin(x), cos(x) and tan(x): the argument reduced by pi/2 exactly enough
// over the whole f32 range (a table of 2/pi scaled per exponent), the
// rest in f64; within 1 ulp of the correctly rounded result, NaN for +-inf
// and NaN, -0 kept by sin and tan (math_ir_test: MaxUlpErrorOverSweeps,
// SinCosTanOverTheWholeRange).
llvm::Value* EmitSinF32(llvm::IRBuilderBase& b, llvm::Value* x);
llvm::Value* EmitCosF32(llvm::IRBuilderBase& b, llvm::Value* x);
llvm::Value* EmitTanF32(llvm::IRBuilderBase& b, llvm::Value* x);
// pow(x, y) as C's powf: its special cases (zeros, infinities, NaN, 1^NaN
// = 1, negative x with integer y), within 1 ulp elsewhere (math_ir_test:
// PowAgainstLibm).
llvm::Value* EmitPowF32(llvm::IRBuilderBase& b, llvm::Value* x, llvm::Value* y);
// hypot(x, y) computed as glibc's hypotf (in f64): the same bits (the same
// sweep).
llvm::Value* EmitHypotF32(llvm::IRBuilderBase& b, llvm::Value* x, llvm::Value* y);

}  // namespace axle::llvm_ir

#endif  // AXLE_LLVM_IR_MATH_IR_H_
