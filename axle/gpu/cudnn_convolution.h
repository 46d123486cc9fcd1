//===- cudnn_convolution.h - Which convolutions cuDNN runs, and how --------===//
//
// cuDNN's legacy convolutions (cuDNN 9, libcudnn.so.9 opened with dlopen;
// $AXLE_CUDNN names another library, or "0" turns cuDNN off) for the HLO
// convolutions they compute. Every cuDNN call describes a forward
// convolution y = x * w (x: n, c, h, w; w: k, c / groups, r, s; y: n, k,
// p, q; padding, strides, dilations, groups, cross-correlation or true
// convolution) and computes one of its three products, as XLA:GPU's
// gpu_conv_rewriter recognises them:
//
//   kForward        the convolution itself: lhs x, rhs w, result y
//                   (cudnnConvolutionForward). No lhs (base) dilation.
//   kBackwardData   its input gradient, an lhs-dilated convolution (a
//                   transposed convolution): lhs dy, rhs w with its input
//                   and output features swapped (the HLO kernel's input
//                   feature is cuDNN's k), result dx
//                   (cudnnConvolutionBackwardData). The lhs dilation is the
//                   forward stride, the window dilation its dilation, the
//                   HLO padding (r - 1) * dilation - p on both ends, window
//                   stride 1; an HLO window reversal is cross-correlation,
//                   none a true convolution; feature_group_count 1.
//   kBackwardFilter its weight gradient: lhs x with its batch and feature
//                   dimensions swapped (n is the HLO feature), rhs dy (n is
//                   the kernel's input feature, k its output feature), the
//                   result dw (k the output feature, c the output batch, r
//                   and s the output's spatial dimensions)
//                   (cudnnConvolutionBackwardFilter). The window is dy's
//                   spatial size, the window dilation the forward stride,
//                   the window stride the forward dilation, symmetric
//                   padding p, no reversal or lhs dilation;
//                   batch_group_count is the forward groups.
//
// For each: 2 spatial dimensions; f32, f16 or bf16 operands and result of
// one type; symmetric, non-negative padding (conv_padding_legalization.h
// makes most HLO convolutions so); the forward convolution's output size
// consistent with cuDNN's formula; x and y both dense NCHW or both dense
// NHWC in memory. The filter is read (or, for kBackwardFilter, written) in
// place when it is laid out as cuDNN's filter of that format (KCRS for NCHW,
// KRSC for NHWC); any other layout (JAX's HWIO) goes through the scratch
// memory, before cuDNN's workspace: copied there first (forward, backward
// data) or written there by cuDNN and copied out after (backward filter).
//
// This header is LLVM- and CUDA-free.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_GPU_CUDNN_CONVOLUTION_H_
#define AXLE_GPU_CUDNN_CONVOLUTION_H_

#include <array>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "axle/core/primitive_type.h"
#include "axle/gpu/convolution_kernel.h"

namespace axle::gpu {

// Which cuDNN call computes an HLO convolution (see above).
enum class CudnnConvKind { kForward, kBackwardData, kBackwardFilter };

struct CudnnConvConfig {
  CudnnConvKind kind = CudnnConvKind::kForward;
  PrimitiveType type = F32;
  // Input x (n, c, h, w) and output y (n, k, p, q) with element strides.
  std::array<int, 4> x_dims{}, x_strides{}, y_dims{}, y_strides{};
  // Filter (k, c / groups, r, s); NHWC: stored KRSC, else KCRS. The
  // tensors' format too.
  std::array<int, 4> w_dims{};
  bool filter_nhwc = false;
  // The filter's element strides (k, c, r, s) in the HLO buffer that holds
  // it: the rhs (forward, backward data) or the result (backward filter).
  std::array<int64_t, 4> filter_strides{};
  // That buffer is not cuDNN's filter layout: the filter lives in the
  // scratch's first filter_bytes (rounded up to 256), copied there from the
  // rhs before the call, or copied from there to the result after it.
  bool relayout_filter = false;
  int64_t filter_bytes = 0;
  std::array<int, 2> padding{}, strides{}, dilations{};
  int groups = 1;
  bool cross_correlation = true;
  // f32 only: TF32 on tensor cores allowed (tf32.h: operand precisions
  // DEFAULT or HIGH, AXLE_GPU_TF32 not 0); else full f32 (FMA math).
  bool allow_tf32 = false;
  // The most workspace (scratch) an algorithm may use: twice the operands'
  // and result's bytes, at least 4 MiB, at most 64 MiB.
  int64_t workspace_limit = 0;

  // Where the workspace starts in the scratch, and the scratch's size.
  int64_t workspace_offset() const {
    return relayout_filter ? (filter_bytes + 255) / 256 * 256 : 0;
  }
  int64_t scratch_bytes() const { return workspace_offset() + workspace_limit; }
};

// cuDNN's math type for a config (cudnnMathType_t's values): tensor ops for
// f16 and bf16; for f32 cuDNN's default (tensor ops in TF32 allowed) where
// allow_tf32, else FMA (exact f32).
enum class CudnnMath { kDefault = 0, kTensorOp = 1, kTensorOpAllowConversion = 2, kFma = 3 };
CudnnMath CudnnMathFor(const CudnnConvConfig& config);

// The first of kForward, kBackwardData, kBackwardFilter that computes the
// plan's convolution; Unimplemented saying why none does.
absl::StatusOr<CudnnConvConfig> CudnnConvConfigFor(const ConvPlan& plan);

// The dense strides of cuDNN's filter (k, c, r, s) in the config's format:
// KCRS, or KRSC when filter_nhwc.
std::array<int64_t, 4> CudnnFilterStrides(const CudnnConvConfig& config);

// What cuDNN's choice of algorithm depends on, as text: the kind, type,
// dimensions, strides, format, padding, strides, dilations, groups and
// mode. Convolutions with one key share one autotuning result (the thunks
// keep it per process, as XLA's autotuner does per shape).
std::string CudnnConvKey(const CudnnConvConfig& config);

// The call's name, for messages ("cudnnConvolutionBackwardData").
const char* CudnnConvKindName(CudnnConvKind kind);

// Whether $AXLE_CUDNN allows cuDNN (unset, or anything but "0").
bool CudnnEnabledByEnvironment();

}  // namespace axle::gpu

#endif  // AXLE_GPU_CUDNN_CONVOLUTION_H_
