//===- gpu_thunk_factories.h - Thunks of the library ops -------------------===//
//
// The ops the GPU executable runs through a library or a kernel of their own
// rather than a loop fusion: dot (cuBLAS), convolution (cuDNN), fft
// (cuFFT), sort, scatter, select-and-scatter, rng, rng-bit-generator,
// rng-get-and-update-state, cholesky, triangular-solve. The GPU compiler
// never wraps them into loop fusions (IsGpuLibraryOp); the program builder
// defines their results' values and asks MakeLibraryThunk for the thunk.
// Each op's thunk lives in a file of its own; until it exists, the op is
// Unimplemented, naming the op, the instruction and CUDA.
//
// Internal to axle/gpu: this header includes cuda.h (gpu_thunk.h).
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_GPU_GPU_THUNK_FACTORIES_H_
#define AXLE_GPU_GPU_THUNK_FACTORIES_H_

#include <memory>

#include "absl/status/statusor.h"
#include "axle/gpu/gpu_thunk.h"
#include "axle/hlo/ir/hlo_instruction.h"

namespace axle::gpu {

// Whether `instruction` gets its thunk from MakeLibraryThunk.
bool IsGpuLibraryOp(const HloInstruction& instruction);

// The thunk of library op `instruction`, whose operands' and result's array
// leaves are `values` (gpu_thunk.h).
absl::StatusOr<std::unique_ptr<GpuThunk>> MakeLibraryThunk(const HloInstruction& instruction,
                                                           GpuThunkValues values);

}  // namespace axle::gpu

#endif  // AXLE_GPU_GPU_THUNK_FACTORIES_H_
