//===- half_precision_dot_conv_upcast.h - f16/bf16 dots and convs in f32 --===//
//
// A cpu-prepare pass (cpu-half-precision-dot-conv-upcast): dots and
// convolutions of 16-bit floats as f32 ones between converts. On a CPU
// without native bf16 dot products (x86 without AVX512_BF16, e.g. Skylake
// and Cascade Lake servers), oneDNN has no fast bf16 matmul: a 1024^3 bf16
// matmul took 140 ms there against 19 ms in f32. Like XLA:CPU's float
// normalization, this pass then rewrites every dot of bf16 operands
//
//   r = T[..] dot(bf16 a, bf16 b)   ->   r = T[..] convert(f32[..] dot(
//                                          f32 convert(a), f32 convert(b)))
//
// (the outer convert only when T is not f32), clearing a
// `dot_bf16_bf16_f32` algorithm, which named the inputs' type. The values
// are the same up to the order of the f32 sums: bf16 products are exact
// in f32 and the bf16 dot accumulates in f32 too, rounding once at the
// end. The converts fuse into the operands' and users' loop kernels. On a
// CPU with native bf16 the pass leaves bf16 dots alone.
//
// It rewrites every f16 dot (f16 or f32 results, clearing a
// `dot_f16_f16_f32` algorithm) the same way on every CPU, as XLA:CPU
// does: oneDNN 2.6 has f16 matmuls only on AVX512_FP16, and the loop
// kernel ran an f16 attention's batched dots (f16[2,96,4,32]) at
// 10 GFLOP/s, 8x slower than the f32 dots after converts. f16 products
// are exact in f32 as well. f16 convolutions likewise (oneDNN has none
// here, and the loop kernel ran a 3x3 one on f16[8,32,32,16] in 4.5 ms
// against 0.7 ms in f32).
//
// And every dot of two 8-bit floats (e4m3fn, e5m2, ..., mixed; not
// e8m0fnu) with any result but f64 (session 28): the loop kernel decoded
// both operands through a table in its inner loop, 12 GMAC/s
// (f8_scaled_matmul's [64,256] x [256,128]: 0.17 ms); the converts are
// vectorized loop kernels and the f32 dot oneDNN's or small_dot's. Their
// products are exact in f32 and the interpreter sums them in f32 and
// rounds once; XLA:CPU computes them in a wider type too (its float
// normalization).
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_CPU_RUNTIME_HALF_PRECISION_DOT_CONV_UPCAST_H_
#define AXLE_CPU_RUNTIME_HALF_PRECISION_DOT_CONV_UPCAST_H_

#include "axle/hlo/pass/hlo_pass_interface.h"

namespace axle::cpu {

// Whether this process's CPU has native bf16 dot products.
bool HostHasNativeBf16Dot();

class HalfPrecisionDotConvUpcast : public HloPassInterface {
 public:
  // `native_bf16`: whether the target has native bf16 dot products (the
  // pass then rewrites only f16 dots).
  explicit HalfPrecisionDotConvUpcast(bool native_bf16 = HostHasNativeBf16Dot())
      : native_bf16_(native_bf16) {}
  absl::string_view name() const override { return "cpu-half-precision-dot-conv-upcast"; }
  absl::StatusOr<bool> Run(HloModule* module) override;

 private:
  bool native_bf16_;
};

}  // namespace axle::cpu

#endif  // AXLE_CPU_RUNTIME_HALF_PRECISION_DOT_CONV_UPCAST_H_
