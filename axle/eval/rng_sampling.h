//===- rng_sampling.h - The interpreter's rng distributions ----------------===//
//
// `rng` draws from a std::mt19937_64 engine seeded with the run's seed
// (ExecutableRunOptions::rng_seed), one engine per run consumed in
// execution order, so a run is a deterministic function of the seed; the
// values are not meant to match any other backend. Shared by the
// interpreter (evaluator_rng.cc) and the cpu platform (rng_thunk.h).
//
// Uniform floats are drawn in double on [low, high) and re-drawn when
// rounding to the element type reaches `high`; normal ones (mean low,
// standard deviation high) are computed in double and rounded; uniform
// integers are on [low, high). An empty uniform interval (low >= high)
// gives `low` everywhere. Other combinations are Unimplemented.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_EVAL_RNG_SAMPLING_H_
#define AXLE_EVAL_RNG_SAMPLING_H_

#include <random>

#include "absl/status/status.h"
#include "axle/core/literal.h"
#include "axle/core/xla_data.h"

namespace axle {

// Fills the array `result` with draws; `low` and `high` are scalars of its
// element type.
absl::Status SampleRng(RandomDistribution distribution, const Literal& low, const Literal& high,
                       std::mt19937_64& engine, Literal* result);

}  // namespace axle

#endif  // AXLE_EVAL_RNG_SAMPLING_H_
