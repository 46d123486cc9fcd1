//===- bf16_reductions_in_f32.h - bf16 reductions accumulated in f32 -------===//
//
// XLA:CPU and XLA:GPU run FloatNormalization for bf16 (cpu_compiler.cc with
// the base FloatSupport(BF16), which supports no bf16 reduce or
// reduce-window; gpu_compiler.cc with GpuFloatSupport, likewise for
// reductions): a bf16 reduce or reduce-window computes in f32, its reducer
// cloned into f32, and rounds once at the end. Axle's kernels, and the
// interpreter, fold a reduction in its reducer's type, which for a long bf16
// sum loses the small terms (1000 ones folded in order stall at 256). This
// pass makes the f32 accumulation explicit, for both backends and the
// interpreter platform:
//
//   reduce(x: bf16[...], init: bf16), to_apply=r
//     -> convert<bf16>(reduce(convert<f32>(x), convert<f32>(init)),
//                      to_apply=r with every bf16 value f32)
//
// Variadic reductions (an argmax's (bf16 value, s32 index)) widen their
// bf16 parts only; compare and select are exact in either type, so which
// element wins does not change, and the winner rounds back exactly. Max
// and min widen too (exact, as in XLA). f16 is left alone: XLA:CPU
// normalizes bf16 (and the f8 types to f16), never f16, and neither does
// XLA:GPU. As under XLA's default xla_allow_excess_precision, an operand
// that is a convert from f32 is read unrounded, and a user that converts
// the result back to f32 reads the f32 result.
//
// Left alone: reducers with anything but parameters, constants, tuples,
// get-tuple-element and elementwise ops (stochastic-convert excepted);
// fusion computations (the pass runs before fusion); all-reduce and
// reduce-scatter (FloatNormalization never touches collective reductions;
// XLA:CPU's separate AllReducePromotion widens bf16 ones:
// all_reduce_promotion.h).
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_HLO_TRANSFORMS_BF16_REDUCTIONS_IN_F32_H_
#define AXLE_HLO_TRANSFORMS_BF16_REDUCTIONS_IN_F32_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "axle/hlo/ir/hlo_module.h"
#include "axle/hlo/pass/hlo_pass_interface.h"

namespace axle {

class Bf16ReductionsInF32 : public HloPassInterface {
 public:
  absl::string_view name() const override { return "bf16-reductions-in-f32"; }
  absl::StatusOr<bool> Run(HloModule* module) override;
};

}  // namespace axle

#endif  // AXLE_HLO_TRANSFORMS_BF16_REDUCTIONS_IN_F32_H_
