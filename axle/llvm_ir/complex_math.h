//===- complex_math.h - The complex ops a target has no helpers for, in IR -===//
//
// The complex ops ElementalIrEmitter leaves to TargetHooks::EmitComplexCall
// (complex_call_ops.h), emitted inline from real arithmetic and the hooks'
// real math functions (EmitMathCall), for targets without a complex math
// library (NVPTX: libdevice has none). A complex value is the emitter's
// {T, T} struct (T float or double).
//
//   divide     Smith's algorithm (the larger of |c|, |d| divides), and a
//              nonzero numerator over zero is an infinity, as C99 Annex G;
//   sqrt       the principal root by Kahan's formula (no cancellation);
//   rsqrt      1 / sqrt;  logistic  1 / (1 + exp(-z));
//   power      exp(y log x); 0^0 = 1, and 0^y = 0 where Re y > 0;
//   atan2      atan2(y, x) = -i log((x + i y) / sqrt(x^2 + y^2)), XLA's
//              definition;
//   sin, cos, sinh, cosh   by the real parts' sin/cos/sinh/cosh;
//   tan, tanh  sin 2a + i sinh 2b over cos 2a + cosh 2b (and tanh's
//              mirror), the limit ±i (±1) where cosh overflows;
//   asinh      log(z + sqrt(z^2 + 1)) on the right half-plane, odd;
//   acosh      log(z + sqrt(z + 1) sqrt(z - 1));
//   atanh      (log(1 + z) - log(1 - z)) / 2;
//   asin, atan -i asinh(iz), -i atanh(iz);  acos  pi/2 - asin z;
//   expm1      expm1(a) cos b - 2 sin^2(b/2) + i e^a sin b;
//   log1p      log1p(2a + a^2 + b^2) / 2 + i atan2(b, 1 + a).
//
// Finite arguments agree with the C++ library's std::complex functions to
// a few ulp (complex_math_test.cc measures them); infinities and NaNs in
// the arguments follow the formulas, not every case of Annex G.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_LLVM_IR_COMPLEX_MATH_H_
#define AXLE_LLVM_IR_COMPLEX_MATH_H_

#include "absl/types/span.h"
#include "axle/hlo/ir/hlo_opcode.h"
#include "axle/llvm_ir/target_hooks.h"

namespace llvm {
class IRBuilderBase;
class Value;
}  // namespace llvm

namespace axle::llvm_ir {

// `opcode` (IsComplexCallOpcode) on `args` (one, or two for divide, power
// and atan2); real functions through `hooks`' EmitMathCall.
llvm::Value* EmitComplexMath(const TargetHooks& hooks, llvm::IRBuilderBase& b, HloOpcode opcode,
                             absl::Span<llvm::Value* const> args);

}  // namespace axle::llvm_ir

#endif  // AXLE_LLVM_IR_COMPLEX_MATH_H_
