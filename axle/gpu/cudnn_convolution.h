//===- cudnn_convolution.h - Which convolutions cuDNN runs, and how --------===//
//
// cuDNN's legacy forward convolution (cudnnConvolutionForward, cuDNN 9,
// libcudnn.so.9 opened with dlopen; $AXLE_CUDNN names another library, or
// "0" turns cuDNN off) for the convolutions it takes:
//
//   2 spatial dimensions; f32, f16 or bf16 operands and result of one type;
//   no lhs (base) dilation; symmetric, non-negative padding; window
//   reversal in both dimensions (a true convolution) or neither (XLA's
//   cross-correlation); batch_group_count 1 (any feature_group_count);
//   input and output in any layout (4-D strides). A kernel laid out KCRS
//   or KRSC (cuDNN's NCHW or NHWC filters) is read in place; any other
//   (JAX's HWIO) is first copied to KRSC in the scratch memory, before
//   cuDNN's workspace.
//
// CudnnConvConfigFor is that choice, explicit and testable without a GPU:
// the descriptors' numbers, or Unimplemented saying why cuDNN does not take
// the plan (the Axle kernel runs it then). f32 runs with CUDNN_FMA_MATH
// (true f32, no TF32); f16/bf16 with tensor ops, accumulating in f32.
//
// This header is LLVM- and CUDA-free.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_GPU_CUDNN_CONVOLUTION_H_
#define AXLE_GPU_CUDNN_CONVOLUTION_H_

#include <array>
#include <cstdint>

#include "absl/status/statusor.h"
#include "axle/core/primitive_type.h"
#include "axle/gpu/convolution_kernel.h"

namespace axle::gpu {

struct CudnnConvConfig {
  PrimitiveType type = F32;
  // Input x (n, c, h, w) and output y (n, k, p, q) with element strides.
  std::array<int, 4> x_dims{}, x_strides{}, y_dims{}, y_strides{};
  // Filter (k, c / groups, r, s); NHWC: stored KRSC, else KCRS.
  std::array<int, 4> w_dims{};
  bool filter_nhwc = false;
  // The kernel is copied to KRSC first, into the scratch's first
  // filter_bytes (rounded up to 256).
  bool relayout_filter = false;
  int64_t filter_bytes = 0;
  std::array<int, 2> padding{}, strides{}, dilations{};
  int groups = 1;
  bool cross_correlation = true;
  // The most workspace (scratch) an algorithm may use: twice the operands'
  // and result's bytes, at least 4 MiB, at most 64 MiB.
  int64_t workspace_limit = 0;

  // Where the workspace starts in the scratch, and the scratch's size.
  int64_t workspace_offset() const {
    return relayout_filter ? (filter_bytes + 255) / 256 * 256 : 0;
  }
  int64_t scratch_bytes() const { return workspace_offset() + workspace_limit; }
};

absl::StatusOr<CudnnConvConfig> CudnnConvConfigFor(const ConvPlan& plan);

// Whether $AXLE_CUDNN allows cuDNN (unset, or anything but "0").
bool CudnnEnabledByEnvironment();

}  // namespace axle::gpu

#endif  // AXLE_GPU_CUDNN_CONVOLUTION_H_
