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
// low <= high (a clamp: ONNX Clip); above an f32 dot also the tanh
// approximation of GELU as jax.nn.gelu(approximate=True) lowers it
// (MatchGeluTanh: ten ops that read the value below at four places, one
// oneDNN eltwise_gelu_tanh post-op instead of a pass of its own over the
// dot's output). Above a convolution, a second add (an
// addend of the output's shape, no broadcast: a residual connection) may
// follow the bias add, and a transposed input with no other user is fused
// in (the thunk reads it through strides). Each step fuses only when the
// value so far has that one user; when the other users of the value below a
// relu test it > 0 (JAX's relu gradient), they read the relu instead. The scale and bias broadcasts
// and the activation's constants are fused too.
//
// Run it before `fusion`, which would otherwise take the add into a kLoop
// fusion. The cpu backend's alone (the CUDA backend has no such kernels);
// registered as "dot-epilogue-fusion" by register_cpu_passes.cc.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_CPU_RUNTIME_EPILOGUE_FUSION_H_
#define AXLE_CPU_RUNTIME_EPILOGUE_FUSION_H_

#include <vector>

#include "axle/hlo/ir/hlo_instruction.h"
#include "axle/hlo/pass/hlo_pass_interface.h"

namespace axle::cpu {

// When `top` is the last op of the tanh approximation of GELU of some x,
//   x * (0.5 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x*x*x)))),
// also with the 0.5 multiplying x instead, operands of each op in either
// order and the constants as scalar constants or broadcasts of one (within
// 1e-6 relative): returns x, and appends the GELU's ops to `nodes` top down
// (each op before the ops it reads: reversed, an order to compute them in).
// Otherwise null. Says nothing about other users of the ops.
const HloInstruction* MatchGeluTanh(const HloInstruction& top,
                                    std::vector<const HloInstruction*>* nodes);

class DotEpilogueFusion : public HloPassInterface {
 public:
  absl::string_view name() const override { return "dot-epilogue-fusion"; }
  absl::StatusOr<bool> Run(HloModule* module) override;
};

}  // namespace axle::cpu

#endif  // AXLE_CPU_RUNTIME_EPILOGUE_FUSION_H_
