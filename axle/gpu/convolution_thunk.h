//===- convolution_thunk.h - kConvolution on the GPU -----------------------===//
//
// The GPU executable's thunk for a kConvolution. Two backends:
//
//   cuDNN's cudnnConvolutionForward, BackwardData (lhs-dilated:
//     transposed convolutions, input gradients) or BackwardFilter (weight
//     gradients), for the convolutions they compute (cudnn_convolution.h:
//     2-D, f32/f16/bf16, groups, strides, symmetric padding, dilation,
//     NCHW/NHWC), the filter copied to or from cuDNN's layout in the
//     scratch where its buffer has another (CompileCudnnFilterRelayoutPtx);
//   Axle's convolution kernel (convolution_kernel.h) for every other one:
//     compiled to PTX when the thunk is made, loaded in Initialize, one
//     thread per output element.
//
// Everything cuDNN needs is settled in Initialize, so that a run only
// sets the stream and enqueues: the descriptors; the thunk's cuDNN handle
// (cudnnSetStream on each call, under the thunk's mutex); the algorithm:
// the heuristics' best deterministic one whose workspace fits the scratch,
// then, as XLA's autotuner does, the fastest deterministic one of the
// thunk's math that cudnnFind*AlgorithmEx times on zeroed buffers
// allocated for the search (f32: TF32 tensor ops where XLA:GPU allows them,
// operand precisions DEFAULT or HIGH, else FMA: tf32.h; 16-bit types:
// tensor ops). The
// search runs once per CudnnConvKey and device in the process (later
// thunks of that shape take its result), and its failure keeps the
// heuristics' choice. Being fixed, a run's work depends on the buffers'
// addresses alone: the thunk is captured in CUDA graphs (gpu_graph.h).
//
// The choice of backend: kAuto takes cuDNN where CudnnConvConfigFor
// accepts the convolution and $AXLE_CUDNN is not "0", and falls back to the
// kernel in Initialize when cuDNN cannot be opened or refuses the
// descriptors (the reason is kept: cudnn_fallback_reason()); kFastest (the
// executable's) does the same, then times cuDNN's algorithm (with the
// filter relayout) against the kernel once per shape and runs the faster;
// kCudnn fails instead of falling back; kKernel never uses cuDNN. The
// kernel is compiled in every mode.
//
// Internal to axle/gpu: this header includes cuda.h.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_GPU_CONVOLUTION_THUNK_H_
#define AXLE_GPU_CONVOLUTION_THUNK_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "axle/gpu/cudnn_convolution.h"
#include "axle/gpu/gpu_thunk.h"
#include "axle/gpu/ptx_compiler.h"
#include "axle/hlo/ir/hlo_instruction.h"

namespace axle::gpu {

enum class ConvolutionBackend { kAuto, kFastest, kCudnn, kKernel };

class ConvolutionThunk : public GpuThunk {
 public:
  using GpuThunk::GpuThunk;
  // After Initialize: whether runs go through cuDNN.
  virtual bool uses_cudnn() const = 0;
  // Why a kAuto or kFastest thunk that could have used cuDNN does not
  // (empty otherwise).
  virtual const std::string& cudnn_fallback_reason() const = 0;
  // After Initialize with cuDNN: how its algorithm was chosen (and, for
  // kFastest, the times against the kernel); empty otherwise.
  virtual const std::string& tuning_note() const = 0;
  // Whether cuDNN, where the thunk runs it, may compute f32 in TF32 (an f32
  // convolution XLA:GPU would compute so, tf32.h; decided when it is made).
  virtual bool cudnn_allows_tf32() const = 0;
};

// values: the ids of lhs, rhs, then the result. InvalidArgument for other
// counts or an inconsistent convolution, Unimplemented (naming it) for
// element types the kernel does not take. kFastest; the executable's
// factory.
absl::StatusOr<std::unique_ptr<GpuThunk>> MakeConvolutionThunk(const HloInstruction& convolution,
                                                               GpuThunkValues values);

// The same with the backend and PTX options chosen; with kCudnn,
// Unimplemented (naming it) for what cuDNN does not take.
absl::StatusOr<std::unique_ptr<ConvolutionThunk>> MakeConvolutionThunkWithBackend(
    const HloInstruction& convolution, GpuThunkValues values, ConvolutionBackend backend,
    const PtxOptions& options = PtxOptions());

// The kernel `kernel_name(ptr from, ptr to)` that copies the config's
// filter from its HLO buffer (the rhs) into cuDNN's layout, or for a
// backward filter from cuDNN's layout to its HLO buffer (the result).
absl::StatusOr<PtxKernel> CompileCudnnFilterRelayoutPtx(const CudnnConvConfig& config,
                                                        absl::string_view kernel_name,
                                                        const PtxOptions& options = PtxOptions());

}  // namespace axle::gpu

#endif  // AXLE_GPU_CONVOLUTION_THUNK_H_
