//===- vector_activations.h - Epilogue activations over f32 arrays ---------===//
//
// The dot thunks apply some f32 epilogue activations (epilogue_activation.h)
// with these loops rather than value by value or as oneDNN post-ops: the
// small-dot kernel (small_dot.h) on each tile it stores, the DnnlDotThunk
// its GELU after the matmul (oneDNN 2.6's gelu_tanh injector, run on each
// stored tile, costs more than the whole pass here over the still cached
// result: dot 512x256x1024 with a bias, 1 thread, +16% against +9%; and
// loses relative precision in GELU's negative tail).
//
// On AVX-512 (chosen at run time), 16 values at a time; elsewhere the
// formulas of epilogue_activation.h value by value. The vector forms:
//
//  - exp(x): x = n ln2 + r (|r| <= ln2 / 2, ln2 in two parts), exp(r) by
//    Cephes' expf polynomial, scaled by 2^n (vscalefps: overflow to inf,
//    gradual underflow to the subnormals and 0, rounded once). Within 2 ulp
//    of exp in double where the result is normal.
//  - logistic(x) = 1 / (1 + exp(-x)), a true division (0 where exp(-x) is
//    inf, as the formula in f32 gives): within 3 ulp.
//  - tanh(x): x + x^3 P(x^2) (Cephes' tanhf polynomial) for |x| < 0.625,
//    else sign(x) (1 - 2 / (exp(2|x|) + 1)) (1 once exp overflows): within 3
//    ulp.
//  - GELU's tanh approximation: x / (1 + exp(-2z)), z = sqrt(2/pi) (x +
//    0.044715 x^3) (0.5 (1 + tanh z) is the logistic of 2z), exp's argument
//    clamped to [-80, 80] (a subnormal operand costs an assist of ~100
//    cycles per instruction on x86: GELU of values above 10 or below -9 ran
//    3x slower with the clamp at 88), the quotient from a reciprocal
//    estimate and a Newton step: within 2e-6 of the formula, relative (more
//    in the negative tail, where an ulp of 2z moves exp(-2z) by |2z| ulps).
//    Below x = -9 (where GELU is under 1e-27 and f32's tanh(z) is -1) it is
//    x * 0, as the formula gives in f32 (-0; NaN for -inf), which the
//    quotient would miss for huge |x|.
//
// NaN stays NaN in each.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_CPU_RUNTIME_VECTOR_ACTIVATIONS_H_
#define AXLE_CPU_RUNTIME_VECTOR_ACTIVATIONS_H_

#include <cstdint>

#include "axle/cpu/runtime/epilogue_activation.h"

namespace axle::cpu {

// values[i] = x * 0.5 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3))) for the
// `count` values, in place.
void GeluTanhInPlace(float* values, int64_t count);

// Applies `activation` (kClamp: to [low, high]) to the `count` values in
// place, as ActivateInPlace does, the transcendental ones 16 at a time
// where the CPU has AVX-512.
void ActivateF32InPlace(Activation activation, float low, float high, float* values, int64_t count);

// The same on every CPU value by value (ActivateInPlace), for tests.
void ActivateF32InPlacePortable(Activation activation, float low, float high, float* values,
                                int64_t count);

}  // namespace axle::cpu

#endif  // AXLE_CPU_RUNTIME_VECTOR_ACTIVATIONS_H_
