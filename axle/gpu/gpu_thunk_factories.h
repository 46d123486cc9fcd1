//===- gpu_thunk_factories.h - Thunks of the library ops -------------------===//
//
// The ops the GPU executable runs through a library or a kernel of their own
// rather than a loop fusion: dot (cuBLAS), convolution (cuDNN), fft
// (cuFFT), sort, scatter, select-and-scatter, rng, rng-bit-generator,
// rng-get-and-update-state, cholesky, triangular-solve. The GPU compiler
// never wraps them into loop fusions (IsGpuLibraryOp); the program builder
// defines their results' values and asks MakeLibraryThunk for the thunk.
// AXLE_GPU_LIBRARY_OPCODES lists them once: the program builder's switch over
// every opcode names them through it, and a static_assert in
// gpu_thunk_factories.cc checks that each has a factory there.
// Each op's thunk lives in a file of its own; until it exists, the op is
// Unimplemented, naming the op, the instruction and CUDA.
//
// A thunk may keep pointers into the instruction's module: the executable
// owns the module and outlives its thunks. Its workspace is scratch_bytes()
// (the arena holds it, GpuThunkContext::scratch); handles and plans are
// made in Initialize (the device's context current) and must be usable from
// several runs at once (one stream each).
//
// Internal to axle/gpu: this header includes cuda.h (gpu_thunk.h).
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_GPU_GPU_THUNK_FACTORIES_H_
#define AXLE_GPU_GPU_THUNK_FACTORIES_H_

#include <memory>

#include "absl/status/statusor.h"
#include "axle/gpu/gpu_thunk.h"
#include "axle/gpu/ptx_compiler.h"
#include "axle/hlo/ir/hlo_instruction.h"

namespace axle::gpu {

// clang-format off
#define AXLE_GPU_LIBRARY_OPCODES(V)                                                        \
  V(kCholesky) V(kConvolution) V(kDot) V(kFft) V(kRaggedDot) V(kRng) V(kRngBitGenerator)   \
  V(kRngGetAndUpdateState) V(kScaledDot) V(kScatter) V(kSelectAndScatter) V(kSort)         \
  V(kTopK) V(kTriangularSolve)
// clang-format on

// Whether `instruction` gets its thunk from MakeLibraryThunk.
bool IsGpuLibraryOp(const HloInstruction& instruction);

// Whether the program builder (gpu_program.cc) gives `instruction` a thunk
// of its own, never a loop kernel: a library op, control flow (while,
// conditional, call), a custom call, a device id (replica-id,
// partition-id) or a collective (NCCL).
bool HasOwnGpuThunk(const HloInstruction& instruction);

// The thunk of library op `instruction`, whose operands' and result's array
// leaves are `values` (gpu_thunk.h); Axle's own kernels are compiled for
// `options` (the device's architecture).
absl::StatusOr<std::unique_ptr<GpuThunk>> MakeLibraryThunk(const HloInstruction& instruction,
                                                           GpuThunkValues values,
                                                           const PtxOptions& options);

}  // namespace axle::gpu

#endif  // AXLE_GPU_GPU_THUNK_FACTORIES_H_
