//===- dynamic_update_slice_thunk.h - dynamic-update-slice in place --------===//
//
// kDynamicUpdateSlice on the GPU as XLA runs it in place: when the
// executable lets the result share the operand's buffer, only the update
// region is written (a thread per update element); otherwise the operand
// is copied to the result first. Start indices (scalars, or one vector)
// are read on the device and clamped as HLO defines: to [0, dim - update
// dim], unsigned types compared unsigned.
//
// The PTX is generated when the thunk is made; Initialize loads it.
//
// Internal to axle/gpu: this header includes cuda.h.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_GPU_DYNAMIC_UPDATE_SLICE_THUNK_H_
#define AXLE_GPU_DYNAMIC_UPDATE_SLICE_THUNK_H_

#include <memory>

#include "absl/status/statusor.h"
#include "axle/gpu/gpu_thunk.h"
#include "axle/gpu/ptx_compiler.h"
#include "axle/hlo/ir/hlo_instruction.h"

namespace axle::gpu {

// `values`: operand, update, the start indices (one per operand dimension,
// or one vector), then the result. InvalidArgument for mismatched shapes or
// non-integer starts; Unimplemented for f8/f4 elements and non-default
// layouts.
absl::StatusOr<std::unique_ptr<GpuThunk>> MakeDynamicUpdateSliceThunk(
    const HloInstruction& instruction, GpuThunkValues values,
    const PtxOptions& options = PtxOptions());

}  // namespace axle::gpu

#endif  // AXLE_GPU_DYNAMIC_UPDATE_SLICE_THUNK_H_
