//===- epilogue_activation.h - The activations of dot/conv epilogues -------===//
//
// The activation a kOutput fusion (dot-epilogue-fusion) applies after a dot
// or convolution, shared by the dot and convolution thunks (as a oneDNN
// eltwise post-op: AppendActivationPostOp, dnnl_post_ops.h). The emitted
// loops apply the fusion's own ops instead (dot_loop_emitter.h).
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_CPU_RUNTIME_EPILOGUE_ACTIVATION_H_
#define AXLE_CPU_RUNTIME_EPILOGUE_ACTIVATION_H_

#include <cmath>

namespace axle::cpu {

// kGeluTanh: x * 0.5 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3))) (f32
// dots only: epilogue_fusion.h's MatchGeluTanh).
enum class Activation { kNone, kRelu, kLogistic, kTanh, kExp, kClamp, kGeluTanh };

// The tanh approximation of GELU on one value, where an epilogue applies
// activations element by element.
inline float GeluTanh(float x) {
  constexpr float kSqrtTwoOverPi = 0.7978845608028654f;
  return x * (0.5f * (1.f + std::tanh(kSqrtTwoOverPi * (x + 0.044715f * x * x * x))));
}

}  // namespace axle::cpu

#endif  // AXLE_CPU_RUNTIME_EPILOGUE_ACTIVATION_H_
