//===- rng_thunk.h - rng and rng-get-and-update-state on CUDA --------------===//
//
// kRng draws on the host from the run's engine (axle/eval/rng_sampling.h:
// a std::mt19937_64 seeded with ExecutableRunOptions::rng_seed, consumed in
// execution order), exactly as the cpu platform and the interpreter do, so
// a cuda run's draws equal theirs for the same seed. The thunk reads the
// two bounds to the host (the stream's work so far done), samples, and
// copies the array back, waiting for the copy. XLA:GPU expands rng into
// device arithmetic instead; `rng` is deprecated in XLA and JAX never emits
// it, so a host round trip per call is the trade for agreeing with cpu.
//
// kRngGetAndUpdateState writes u64 {seed + counter, 0, ...} and advances
// the run's counter by its delta, as the cpu platform does.
//
// Neither is captured into CUDA graphs (host work).
//
// Internal to axle/gpu: this header includes cuda.h.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_GPU_RNG_THUNK_H_
#define AXLE_GPU_RNG_THUNK_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <random>

#include "absl/status/statusor.h"
#include "axle/gpu/gpu_thunk.h"
#include "axle/hlo/ir/hlo_instruction.h"

namespace axle::gpu {

// One run's rng state (GpuThunkContext::rng): the executable makes one per
// run; the engine is seeded by the first rng thunk that runs.
struct GpuRngRunState {
  std::optional<std::mt19937_64> engine;
  uint64_t seed = 0;
  uint64_t counter = 0;
};

// `values`: the two bound scalars, then the result array. InvalidArgument
// unless the bounds are scalars of the result's element type; Unimplemented
// naming the instruction for a distribution and type the sampler lacks
// (normal of integers, f8/f4 types).
absl::StatusOr<std::unique_ptr<GpuThunk>> MakeRngThunk(const HloInstruction& instruction,
                                                       GpuThunkValues values);

// `values`: no operands, the u64 result. InvalidArgument unless the result
// is a u64 array and `delta` (when given) an integer.
absl::StatusOr<std::unique_ptr<GpuThunk>> MakeRngGetAndUpdateStateThunk(
    const HloInstruction& instruction, GpuThunkValues values);

}  // namespace axle::gpu

#endif  // AXLE_GPU_RNG_THUNK_H_
