//===- sort_thunk.h - sort as Axle's own GPU kernels ------------------------===//
//
// kSort on the GPU: any number of operands (keys and values of one shape),
// any comparator computation (inlined by the elemental emitter), any sort
// dimension (the others are independent rows). The result is always the
// stable order (ties keep their original order, whatever is_stable says),
// which is what the cpu platform computes, so the two agree.
//
// A bitonic sorting network in its "flip" form (every compare-exchange puts
// the smaller element first, so positions past the row's end act as
// greatest elements that never move and rows need no padding), comparing
// (comparator, then original position):
//
//   rows whose records (an element of each operand and an i32 position)
//     fit a tile of shared memory (48 KiB, at most 4096 elements): one
//     block per row sorts it there, in one launch;
//   longer rows: one launch sorts every tile of each row in shared memory;
//     then, for each merge size past the tile, a launch per step whose
//     partners are a tile or more apart works in global memory, and one
//     launch per merge finishes the steps inside each tile in shared
//     memory. Positions travel in scratch memory between launches.
//
// The PTX is generated when the thunk is made; Initialize loads it.
//
// Internal to axle/gpu: this header includes cuda.h.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_GPU_SORT_THUNK_H_
#define AXLE_GPU_SORT_THUNK_H_

#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "axle/gpu/gpu_thunk.h"
#include "axle/gpu/ptx_compiler.h"
#include "axle/hlo/ir/hlo_instruction.h"

namespace axle::gpu {

// `values`: the operands' value ids, then the result's leaves (one per
// operand). InvalidArgument for a malformed sort, Unimplemented (naming
// the instruction) for what the kernels do not handle: f8/f4 elements,
// non-default layouts, rows of 2^31 elements or more. `max_tile`, a power
// of two >= 2 (0: as shared memory allows), caps the tile (tests use it to
// take the multi-launch path on short rows).
absl::StatusOr<std::unique_ptr<GpuThunk>> MakeSortThunk(const HloInstruction& instruction,
                                                        GpuThunkValues values,
                                                        const PtxOptions& options = PtxOptions(),
                                                        int64_t max_tile = 0);

}  // namespace axle::gpu

#endif  // AXLE_GPU_SORT_THUNK_H_
