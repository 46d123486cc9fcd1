//===- convolution_thunk.h - kConvolution on the GPU -----------------------===//
//
// The GPU executable's thunk for a kConvolution: Axle's convolution kernel
// (convolution_kernel.h), compiled to PTX when the thunk is made, loaded
// in Initialize and launched with one thread per output element on the
// run's stream. It takes every convolution the kernel does (any dimension
// numbers, windows, groups, layouts; float and integer types).
//
// Internal to axle/gpu: this header includes cuda.h.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_GPU_CONVOLUTION_THUNK_H_
#define AXLE_GPU_CONVOLUTION_THUNK_H_

#include <memory>

#include "absl/status/statusor.h"
#include "axle/gpu/gpu_thunk.h"
#include "axle/gpu/ptx_compiler.h"
#include "axle/hlo/ir/hlo_instruction.h"

namespace axle::gpu {

// values: the ids of lhs, rhs, then the result. InvalidArgument for other
// counts or an inconsistent convolution, Unimplemented (naming it) for
// element types the kernel does not take.
absl::StatusOr<std::unique_ptr<GpuThunk>> MakeConvolutionThunk(
    const HloInstruction& convolution, GpuThunkValues values,
    const PtxOptions& options = PtxOptions());

}  // namespace axle::gpu

#endif  // AXLE_GPU_CONVOLUTION_THUNK_H_
