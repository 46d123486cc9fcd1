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

#include <algorithm>
#include <cmath>
#include <cstdint>

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

// Applies `activation` (kClamp: to [low, high]) to `count` values in place,
// each computed in f32 and rounded back to T. kRelu and kClamp keep NaN.
template <typename T>
void ActivateInPlace(Activation activation, float low, float high, T* values, int64_t count) {
  auto apply = [&](auto f) {
    for (int64_t j = 0; j < count; ++j) values[j] = T(f(static_cast<float>(values[j])));
  };
  switch (activation) {
    case Activation::kNone:
      return;
    case Activation::kRelu:
      return apply([](float x) { return std::isnan(x) ? x : std::max(x, 0.f); });
    case Activation::kClamp:
      return apply([&](float x) { return std::isnan(x) ? x : std::min(std::max(x, low), high); });
    case Activation::kLogistic:
      return apply([](float x) { return 1.f / (1.f + std::exp(-x)); });
    case Activation::kTanh:
      return apply([](float x) { return std::tanh(x); });
    case Activation::kExp:
      return apply([](float x) { return std::exp(x); });
    case Activation::kGeluTanh:
      return apply([](float x) { return GeluTanh(x); });
  }
}

}  // namespace axle::cpu

#endif  // AXLE_CPU_RUNTIME_EPILOGUE_ACTIVATION_H_
