//===- cudnn_conv_calls.h - XLA:GPU's __cudnn$conv* calls as convolutions ---===//
//
// Modules dumped from XLA:GPU after its convolution rewriters call cuDNN
// through custom calls (xla/service/gpu/cublas_cudnn.cc names them) whose
// window, dim_labels and feature_group_count describe one forward
// convolution y = x * w, and whose result is a tuple (the computed array,
// u8[n] scratch):
//
//   __cudnn$convForward(x, w)               -> (y, scratch)
//   __cudnn$convBackwardInput(dy, w)        -> (dx, scratch)
//   __cudnn$convBackwardFilter(x, dy)       -> (dw, scratch)
//   __cudnn$convBiasActivationForward(x, w, bias[, side_input])
//       -> (act(conv_result_scale * (x * w) + side_input_scale * side_input
//               + bias), scratch), bias along y's output feature
//
// The backend_config is a GpuBackendConfig (gpu/backend_configs.proto) in
// protobuf's JSON: {"cudnn_conv_backend_config":{"activation_mode":"kNone",
// "conv_result_scale":1,"side_input_scale":0,"leakyrelu_alpha":0,
// "algorithm":{...}}, "operation_queue_id":...}; missing fields take
// protobuf's defaults (scales 0 means absent: conv_result_scale's absence
// is taken as 1, as XLA's writers always set it).
//
// GpuCudnnConvCallsToHlo rewrites each call into the HLO it computes: a
// `convolution` (the input gradient an lhs-dilated one with the kernel's
// features swapped and its window reversed, the filter gradient one whose
// batch and feature roles are exchanged, batch_group_count the forward's
// groups: the forms cudnn_convolution.h recognises as
// cudnnConvolutionBackwardData / BackwardFilter), the scales, bias and
// activation (kNone, kRelu, kRelu6, kElu, kLeakyRelu, kSigmoid, kTanh) as
// elementwise ops, and the scratch as zeros of its shape; the cuda
// backend then runs the convolution through its convolution thunk (cuDNN
// where it takes it). Precision config carries over (TF32 as for any
// convolution: tf32.h). What it cannot express is Unimplemented naming the
// instruction: grouped or batch-grouped input gradients, lhs-dilated
// forward descriptions of a gradient, window reversal in a filter
// gradient, other activations, other integer or mixed types. cuDNN's int8
// forward convolutions (s8 operands; an s8, s32 or f32 result) become a
// convolution of s8 into s32 (the sums as the interpreter's integer
// convolution), then saturation to s8 or a conversion to f32 and its
// scale; operands one rank above the dim_labels (XLA's vectorized INT8x4 /
// INT8x32 forms: the trailing dimension the vector of the feature
// dimension before it) are reshaped around it. The cpu and the
// interpreter do not run these calls (CheckCustomCall: Unimplemented
// naming the target).
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_GPU_CUDNN_CONV_CALLS_H_
#define AXLE_GPU_CUDNN_CONV_CALLS_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/pass/hlo_pass_interface.h"

namespace axle::gpu {

// The cuDNN call a custom call target names.
enum class CudnnConvCallKind { kForward, kBackwardInput, kBackwardFilter, kBiasActivationForward };

// XLA's CudnnConvBackendConfig fields the rewrite uses.
struct CudnnConvCallConfig {
  double conv_result_scale = 1;
  double side_input_scale = 0;
  double leakyrelu_alpha = 0;
  std::string activation_mode = "kNone";
};

// Whether `call` is one of the four targets above (what the CUDA compiler
// tells CheckModuleForPlatform it computes without a registered target).
bool IsCudnnConvCall(const HloCustomCallInstruction& call);

// The config of a backend_config string (empty: the defaults);
// InvalidArgument for a value that does not parse.
absl::StatusOr<CudnnConvCallConfig> ParseCudnnConvBackendConfig(absl::string_view text);

class GpuCudnnConvCallsToHlo : public HloPassInterface {
 public:
  absl::string_view name() const override { return "gpu-cudnn-conv-calls-to-hlo"; }
  absl::StatusOr<bool> Run(HloModule* module) override;
};

}  // namespace axle::gpu

#endif  // AXLE_GPU_CUDNN_CONV_CALLS_H_
