//===- conv_padding_legalization.h - Convolutions cuDNN's padding takes ---===//
//
// cuDNN's forward convolution pads both ends of a spatial dimension alike,
// and never negatively (cudnn_convolution.h); XLA's convolutions often do
// not: a stride-2 convolution JAX pads SAME as 0_1, and its gradients come
// with 0_1 or negative padding. As XLA:GPU's convolution padding
// legalization does, this pass moves the part of the padding cuDNN cannot
// take into an explicit `pad` of the input (edge padding, negative where the
// window starts or ends inside the input, which slices), and leaves the
// convolution the symmetric, non-negative part:
//
//   convolution(x, w), pad=lo_hi   ->   convolution(pad(x, 0, lo-p_hi-p), w), pad=p_p
//   with p = max(0, min(lo, hi)) per spatial dimension.
//
// The result is the same array (the window reads the same input positions
// and the same zeros). Only convolutions cuDNN could then take are
// rewritten: 2 spatial dimensions, f32/f16/bf16, no lhs (base) dilation,
// batch_group_count 1, a non-empty result; the others keep running on
// Axle's kernel, which takes any padding. Fusion computations are skipped.
//
// An input gradient (lhs-dilated, cudnnConvolutionBackwardData) whose
// padding differs between the ends (the forward convolution's padding did:
// JAX's SAME 0_1 of a stride-2 convolution gives 2_1) gets the larger end's
// padding on both, and a slice of its result drops the outputs that adds,
// as XLA:GPU's legalization does for backward-input convolutions:
//
//   convolution(dy, w), pad=lo_hi, lhs_dilate=s
//     ->  slice(convolution(dy, w), pad=m_m, lhs_dilate=s), [m-lo : m-lo+size]
//   with m = max(lo, hi), where m is at most (window - 1) * rhs_dilation
//   (cuDNN's forward padding (window - 1) * rhs_dilation - m is not negative),
//   window strides 1, no groups.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_GPU_CONV_PADDING_LEGALIZATION_H_
#define AXLE_GPU_CONV_PADDING_LEGALIZATION_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "axle/hlo/pass/hlo_pass_interface.h"

namespace axle::gpu {

class GpuConvPaddingLegalization : public HloPassInterface {
 public:
  absl::string_view name() const override { return "gpu-conv-padding-legalization"; }
  absl::StatusOr<bool> Run(HloModule* module) override;
};

}  // namespace axle::gpu

#endif  // AXLE_GPU_CONV_PADDING_LEGALIZATION_H_
