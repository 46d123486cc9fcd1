//===- scatter_thunk.h - scatter and select-and-scatter as GPU kernels -----===//
//
// kScatter on the GPU: general dimension numbers (update_window_dims,
// inserted_window_dims, scatter_dims_to_operand_dims, index_vector_dim,
// input_batching_dims / scatter_indices_batching_dims), several operands
// and updates, indices of any integer type, any update computation. The
// operands are copied to the results (unless the executable let them share
// buffers), then one thread per update element finds its operand element
// and combines the update into it. An update whose window does not lie
// inside the operand (a start index below 0 or past dim - window size in
// any dimension) is skipped whole, as XLA and the cpu platform do.
//
// How updates combine (kernel_builder.h):
//   unique_indices: a plain load, compute, store;
//   one operand: a native atomic for a plain add (f32, f64, s32, u32, s64,
//     u64, c64/c128 as two float adds), max/min/and/or/xor (32/64-bit
//     integers); an assignment is a plain store (one of the updates to an
//     element wins, as on XLA:GPU); anything else a compare-and-swap loop
//     on the 32/64-bit word holding the element (16-byte elements: a lock);
//   several operands: a spin lock per operand element (scratch memory).
// Updates to one element thus combine in an unspecified order: float sums
// may differ from the cpu platform's in the last bits (and the f32 atomic
// add flushes subnormals to zero, as PTX defines atom.add.f32; XLA:GPU
// uses the same instruction).
//
// kSelectAndScatter: the result is filled with init_value, then one thread
// per source element walks its window (padding and dilations as
// reduce-window), selects the operand element with the select computation
// (the first one in window order that every later one does not replace)
// and combines the source element into it as above (atomically).
//
// The PTX is generated when the thunk is made; Initialize loads it.
//
// Internal to axle/gpu: this header includes cuda.h.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_GPU_SCATTER_THUNK_H_
#define AXLE_GPU_SCATTER_THUNK_H_

#include <memory>

#include "absl/status/statusor.h"
#include "axle/gpu/gpu_thunk.h"
#include "axle/gpu/ptx_compiler.h"
#include "axle/hlo/ir/hlo_instruction.h"

namespace axle::gpu {

// `values`: the operands' value ids, the indices', the updates' (in operand
// order), then the result's leaves (one per operand). InvalidArgument for
// malformed dimension numbers or shapes, Unimplemented (naming the
// instruction) for f8/f4 elements and non-default layouts.
absl::StatusOr<std::unique_ptr<GpuThunk>> MakeScatterThunk(
    const HloInstruction& instruction, GpuThunkValues values,
    const PtxOptions& options = PtxOptions());

// `values`: operand, source and init_value, then the result. The result
// must not share a buffer with the operand or the source.
absl::StatusOr<std::unique_ptr<GpuThunk>> MakeSelectAndScatterThunk(
    const HloInstruction& instruction, GpuThunkValues values,
    const PtxOptions& options = PtxOptions());

}  // namespace axle::gpu

#endif  // AXLE_GPU_SCATTER_THUNK_H_
