//===- convolution_kernel.h - Any HLO convolution as one PTX kernel --------===//
//
// Axle's own GPU convolution, correct for every kConvolution XLA defines:
// any dimension numbers and spatial rank, window strides, padding (negative
// too), lhs (base) dilation, rhs (window) dilation, window reversal,
// feature_group_count, batch_group_count, operand and result layouts, and
// float (f16/bf16/f32/f64) or integer element types, operands of another
// type than the result (preferred_element_type) included.
//
// MakeConvPlan resolves the instruction into a ConvPlan: every size, every
// element stride of every operand in its layout, the window and the groups.
// The kernel (CompileConvolutionToPtx) has one thread per output element,
// walking the output in its layout (stores are contiguous); where the
// outputs are few and their windows long (ConvWindowBlockSize), a block per
// output element instead, its threads splitting the window. Each thread
// splits its linear index into (batch b, feature f, spatial o) and sums over
// the window positions k and the input features iz of f's group:
//
//   dilated_i = o_i * stride_i - padding_low_i + k_i * window_dilation_i
//   input position_i = dilated_i / base_dilation_i   (skipped unless exact
//                                                      and inside the input)
//   lhs[b + (f / out_per_batch_group) * batch_group_size,
//       (f / out_per_feature_group) * in_per_group + iz, position]
//   * rhs[f, iz, reversal_i ? size_i - 1 - k_i : k_i]
//
// as XLA's evaluator (axle/eval/convolution.cc) defines it: operands are
// converted to the result type first; 16-bit floats accumulate in f32, f32
// in f32, f64 in f64; integers accumulate in 64 bits and saturate to a
// narrower result type. RunConvPlanOnHost is the same plan evaluated on the
// host in doubles, which the tests check against the interpreter for many
// configurations (the kernel is emitted from the same plan, loop for loop).
//
// Kernel signature: (ptr lhs, ptr rhs, ptr out), buffers in their layouts.
//
// This header is LLVM- and CUDA-free.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_GPU_CONVOLUTION_KERNEL_H_
#define AXLE_GPU_CONVOLUTION_KERNEL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "axle/core/primitive_type.h"
#include "axle/gpu/ptx_compiler.h"
#include "axle/hlo/ir/hlo_instruction.h"

namespace axle::gpu {

struct ConvSpatialPlan {
  int64_t out_size = 0;
  int64_t out_stride = 0;  // element strides in each buffer's layout
  int64_t in_size = 0;
  int64_t in_stride = 0;
  int64_t window_size = 0;
  int64_t kernel_stride = 0;
  int64_t stride = 1;
  int64_t padding_low = 0;
  int64_t padding_high = 0;
  int64_t base_dilation = 1;
  int64_t window_dilation = 1;
  bool reversal = false;
};

struct ConvPlan {
  std::string instruction;  // the HLO instruction's name (errors)
  PrimitiveType lhs_type = PRIMITIVE_TYPE_INVALID;
  PrimitiveType rhs_type = PRIMITIVE_TYPE_INVALID;
  PrimitiveType result_type = PRIMITIVE_TYPE_INVALID;
  // What products are summed in: F32, F64, S64 or U64.
  PrimitiveType accumulator_type = PRIMITIVE_TYPE_INVALID;
  int64_t out_elements = 0;
  int64_t lhs_elements = 0;
  int64_t rhs_elements = 0;

  int64_t out_batch = 0, out_batch_stride = 0;
  int64_t out_features = 0, out_feature_stride = 0;
  int64_t in_batch_stride = 0, in_feature_stride = 0;
  int64_t kernel_in_feature_stride = 0, kernel_out_feature_stride = 0;
  // Input features summed per output element (the kernel's input feature size).
  int64_t input_features_per_group = 0;
  int64_t output_features_per_feature_group = 1;
  int64_t output_features_per_batch_group = 1;
  int64_t batch_group_size = 0;  // input batch / batch_group_count
  std::vector<ConvSpatialPlan> spatial;

  // The output's dimensions from its most minor one up, each as a role:
  // kBatch, kFeature, or a spatial dimension's number (threads delinearize
  // their index in this order).
  static constexpr int kBatch = -2;
  static constexpr int kFeature = -1;
  std::vector<int> out_minor_to_major;

  int64_t OutSize(int role) const {
    return role == kBatch ? out_batch : role == kFeature ? out_features : spatial[role].out_size;
  }
};

// InvalidArgument naming the instruction for inconsistent shapes or window;
// Unimplemented for element types the kernel does not take (pred, complex,
// f8, sub-byte integers).
absl::StatusOr<ConvPlan> MakeConvPlan(const HloInstruction& convolution);

// The products each output element sums: the group's input features times
// the window's positions.
int64_t ConvWindowLength(const ConvPlan& plan);

// The kernel's form: 0 for a thread per output element; else the threads
// of the block each output element gets (128 or 256), which split its
// window (strided, each summing its share in order) and add their sums in a
// fixed tree: few outputs with long windows (fewer than 32768 outputs of
// windows of 512 products or more).
int ConvWindowBlockSize(const ConvPlan& plan);

// The plan evaluated on the host in doubles: lhs and rhs in their layouts,
// the output in its layout (no rounding to the result type).
std::vector<double> RunConvPlanOnHost(const ConvPlan& plan, absl::Span<const double> lhs,
                                      absl::Span<const double> rhs);

// The plan's kernel, `kernel_name(ptr lhs, ptr rhs, ptr out)`, with its
// launch dimensions (grid 0 for an empty output).
absl::StatusOr<PtxKernel> CompileConvolutionToPtx(const ConvPlan& plan,
                                                  absl::string_view kernel_name,
                                                  const PtxOptions& options = PtxOptions());

// A kernel `kernel_name(ptr from, ptr to)` with a thread per element of
// `dims` (its index split row-major, the last dimension the fastest) that
// copies the element at sum(index * from_strides) of `from` to sum(index *
// to_strides) of `to`, bits alike (1-, 2-, 4- or 8-byte elements): cuDNN's
// filters copied to and from the HLO buffers' layouts. InvalidArgument for
// mismatched strides or another element size.
absl::StatusOr<PtxKernel> CompileStridedCopyPtx(absl::Span<const int64_t> dims,
                                                absl::Span<const int64_t> from_strides,
                                                absl::Span<const int64_t> to_strides,
                                                int64_t element_bytes,
                                                absl::string_view kernel_name,
                                                const PtxOptions& options = PtxOptions());

}  // namespace axle::gpu

#endif  // AXLE_GPU_CONVOLUTION_KERNEL_H_
