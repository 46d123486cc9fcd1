//===- epilogue_activation.h - The activations of dot/conv epilogues -------===//
//
// The activation a kOutput fusion (dot-epilogue-fusion) applies after a dot
// or convolution, shared by the dot and convolution thunks: as a oneDNN
// eltwise post-op (AppendActivationPostOp, dnnl_post_ops.h) and, for the
// plain loops, on f64 values (ApplyActivation).
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_CPU_RUNTIME_EPILOGUE_ACTIVATION_H_
#define AXLE_CPU_RUNTIME_EPILOGUE_ACTIVATION_H_

#include <algorithm>
#include <cmath>

namespace axle::cpu {

enum class Activation { kNone, kRelu, kLogistic, kTanh, kExp, kClamp };

// `activation` of `x`; clamp to [low, high]. NaN stays NaN through relu
// and clamp (as XLA's max/min propagate it).
inline double ApplyActivation(Activation activation, double x, double low, double high) {
  switch (activation) {
    case Activation::kRelu:
      return std::isnan(x) ? x : std::max(x, 0.0);
    case Activation::kClamp:
      return std::isnan(x) ? x : std::min(std::max(x, low), high);
    case Activation::kLogistic:
      return 1.0 / (1.0 + std::exp(-x));
    case Activation::kTanh:
      return std::tanh(x);
    case Activation::kExp:
      return std::exp(x);
    case Activation::kNone:
      return x;
  }
  return x;
}

}  // namespace axle::cpu

#endif  // AXLE_CPU_RUNTIME_EPILOGUE_ACTIVATION_H_
