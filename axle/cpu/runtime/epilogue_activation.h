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

namespace axle::cpu {

enum class Activation { kNone, kRelu, kLogistic, kTanh, kExp, kClamp };

}  // namespace axle::cpu

#endif  // AXLE_CPU_RUNTIME_EPILOGUE_ACTIVATION_H_
