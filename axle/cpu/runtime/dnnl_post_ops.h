//===- dnnl_post_ops.h - Epilogue activations as oneDNN post-ops -----------===//
//
// Internal to the oneDNN thunks (dot_thunk.cc, convolution_thunk.cc): this
// header includes oneDNN.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_CPU_RUNTIME_DNNL_POST_OPS_H_
#define AXLE_CPU_RUNTIME_DNNL_POST_OPS_H_

#include "axle/cpu/runtime/epilogue_activation.h"
#include "oneapi/dnnl/dnnl.hpp"

namespace axle::cpu {

// Appends `activation` (clamp to [low, high]) to `post_ops` as an eltwise
// post-op; nothing for kNone.
inline void AppendActivationPostOp(dnnl::post_ops& post_ops, Activation activation, double low,
                                   double high) {
  dnnl::algorithm algorithm = dnnl::algorithm::undef;
  float alpha = 0.f, beta = 0.f;
  switch (activation) {
    case Activation::kNone:
      return;
    case Activation::kRelu:
      algorithm = dnnl::algorithm::eltwise_relu;
      break;
    case Activation::kLogistic:
      algorithm = dnnl::algorithm::eltwise_logistic;
      break;
    case Activation::kTanh:
      algorithm = dnnl::algorithm::eltwise_tanh;
      break;
    case Activation::kExp:
      algorithm = dnnl::algorithm::eltwise_exp;
      break;
    case Activation::kGeluTanh:
      algorithm = dnnl::algorithm::eltwise_gelu_tanh;
      break;
    case Activation::kClamp:
      algorithm = dnnl::algorithm::eltwise_clip_v2;
      alpha = static_cast<float>(low);
      beta = static_cast<float>(high);
      break;
  }
  post_ops.append_eltwise(1.f, algorithm, alpha, beta);
}

}  // namespace axle::cpu

#endif  // AXLE_CPU_RUNTIME_DNNL_POST_OPS_H_
