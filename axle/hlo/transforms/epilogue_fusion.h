//===- epilogue_fusion.h - Bias and activation into dot / convolution ------===//
//
// A dot or convolution whose only user is an epilogue becomes a kOutput
// fusion that the CPU backend compiles to one oneDNN call with post-ops:
//
//   d = dot(a, b)            fusion(a, b, bias), kind=kOutput, calls=
//   y = add(d, broadcast(bias))   { dot, add(dot, broadcast(bias)),
//   r = maximum(y, broadcast(0))    maximum(add, broadcast(0)) }
//
// The epilogue is, in this order, optionally (convolutions only) a scale
// multiply, optionally a bias add (the other operand of each a broadcast,
// or an array of the output's shape) and optionally an activation: relu
// (maximum with a zero constant or a broadcast of one), logistic, tanh,
// exponential, clamp with constant bounds, or max then min with constants
// low <= high (a clamp: ONNX Clip). Above a convolution, a second add (an
// addend of the output's shape, no broadcast: a residual connection) may
// follow the bias add, and a transposed input with no other user is fused
// in (the thunk reads it through strides). Each step fuses only when the
// value so far has that one user. The scale and bias broadcasts and the
// activation's constants are fused too.
//
// Run it before `fusion`, which would otherwise take the add into a kLoop
// fusion.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_HLO_TRANSFORMS_EPILOGUE_FUSION_H_
#define AXLE_HLO_TRANSFORMS_EPILOGUE_FUSION_H_

#include "axle/hlo/pass/hlo_pass_interface.h"

namespace axle {

class DotEpilogueFusion : public HloPassInterface {
 public:
  absl::string_view name() const override { return "dot-epilogue-fusion"; }
  absl::StatusOr<bool> Run(HloModule* module) override;
};

}  // namespace axle

#endif  // AXLE_HLO_TRANSFORMS_EPILOGUE_FUSION_H_
