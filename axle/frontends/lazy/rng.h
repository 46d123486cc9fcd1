//===- rng.h - The lazy device's random-number state -----------------------===//
//
// torch-xla generates random values on the device, inside the step's graph,
// from a seed the graph takes as a parameter. Here the state is a Philox
// key and counter (u64[3], rng-bit-generator's state) held by one live lazy
// tensor: each random op reads the state's IR value and replaces it with
// the state its rng-bit-generator returns, so several random ops of one
// step draw different bits, and the step marker computes the advanced state
// with everything else. The next step starts from the state as device data:
// a parameter, so its graph hashes the same and compiles once, yet draws
// new values.
//
// SetRngSeed(seed) restarts the stream (key `seed`, counter 0), as
// torch.manual_seed does for the CPU's. The initial seed is 0.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_FRONTENDS_LAZY_RNG_H_
#define AXLE_FRONTENDS_LAZY_RNG_H_

#include <cstdint>

#include "axle/core/shape.h"
#include "axle/frontends/lazy/ir.h"

namespace axle::lazy {

// Restarts the device's random stream at `seed`.
void SetRngSeed(uint64_t seed);
// The seed of the last SetRngSeed (0 before any).
uint64_t RngSeed();

// Values uniform in [0, 1) of `shape` (an F32, F64, F16 or BF16 array: as
// many random bits as the type's mantissa holds, so a value never rounds
// up to 1), advancing the state. An "rng_uniform" node: outputs (new state,
// values).
absl::StatusOr<Value> RngUniform(const Shape& shape);

}  // namespace axle::lazy

#endif  // AXLE_FRONTENDS_LAZY_RNG_H_
