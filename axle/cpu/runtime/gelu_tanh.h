//===- gelu_tanh.h - GELU's tanh approximation over an f32 array -----------===//
//
// The DnnlDotThunk applies an f32 dot's GELU epilogue (Activation::kGeluTanh)
// with this loop after its matmul instead of as oneDNN's eltwise post-op:
// oneDNN 2.6's gelu_tanh injector, run on each stored tile, costs more than
// the whole pass here over the (still cached) result (dot 512x256x1024 with
// a bias, 1 thread: +16% against +9%), and loses relative precision in the
// negative tail (up to 6% off the formula where GELU is below ~1e-6).
//
// On AVX-512, 16 values at a time as x / (1 + exp(-2z)), z = sqrt(2/pi) (x +
// 0.044715 x^3) (0.5 (1 + tanh z) is the logistic of 2z), exp from a degree-6
// polynomial after range reduction, the quotient from a reciprocal estimate
// and a Newton step: within 2e-6 of the formula, relative (more in the
// negative tail, where an ulp of 2z moves exp(-2z) by |2z| ulps). Below x = -9
// (where GELU is under 1e-27 and f32's tanh(z) is -1) it is x * 0, as the
// formula gives in f32 (-0; NaN for -inf), which the quotient would miss
// for huge |x|. Elsewhere GeluTanh (epilogue_activation.h) value by value.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_CPU_RUNTIME_GELU_TANH_H_
#define AXLE_CPU_RUNTIME_GELU_TANH_H_

#include <cstdint>

namespace axle::cpu {

// values[i] = x * 0.5 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3))) for the
// `count` values, in place.
void GeluTanhInPlace(float* values, int64_t count);

}  // namespace axle::cpu

#endif  // AXLE_CPU_RUNTIME_GELU_TANH_H_
