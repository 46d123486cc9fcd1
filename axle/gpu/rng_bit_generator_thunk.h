//===- rng_bit_generator_thunk.h - rng-bit-generator as a GPU kernel -------===//
//
// kRngBitGenerator on the GPU, bit for bit what the cpu platform and the
// interpreter generate (axle/eval/rng_bit_generator.h, XLA's definition):
// threefry (2x32, 20 rounds; 32-bit and narrower outputs split one
// dimension in halves, each block's two words to the two halves) and
// philox (4x32, 10 rounds; default), one thread per counter block, the
// state read on the device. A second one-thread launch writes the new
// state, so the result's state may share the operand's buffer.
//
// The PTX is generated when the thunk is made; Initialize loads it.
//
// Internal to axle/gpu: this header includes cuda.h.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_GPU_RNG_BIT_GENERATOR_THUNK_H_
#define AXLE_GPU_RNG_BIT_GENERATOR_THUNK_H_

#include <memory>

#include "absl/status/statusor.h"
#include "axle/gpu/gpu_thunk.h"
#include "axle/gpu/ptx_compiler.h"
#include "axle/hlo/ir/hlo_instruction.h"

namespace axle::gpu {

// `values`: the state, then the result's new state and bits.
// InvalidArgument for states and bit shapes XLA refuses (u64[2] for
// threefry, u64[2] or u64[3] for philox; 8/16/32/64-bit elements);
// Unimplemented for non-default layouts.
absl::StatusOr<std::unique_ptr<GpuThunk>> MakeRngBitGeneratorThunk(
    const HloInstruction& instruction, GpuThunkValues values,
    const PtxOptions& options = PtxOptions());

}  // namespace axle::gpu

#endif  // AXLE_GPU_RNG_BIT_GENERATOR_THUNK_H_
