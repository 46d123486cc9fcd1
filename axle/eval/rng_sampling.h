//===- rng_sampling.h - The interpreter's rng distributions ----------------===//
//
// `rng` draws from a std::mt19937_64 engine seeded with the run's seed
// (ExecutableRunOptions::rng_seed), one engine per run consumed in
// execution order, so a run is a deterministic function of the seed; the
// values are not meant to match any other backend. Shared by the
// interpreter (evaluator_rng.cc), the cpu platform (rng_thunk.h) and the
// CUDA platform (gpu/rng_thunk.h), which also share CheckRng: what an rng
// instruction must be for SampleRng to draw it.
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

#include <cstdint>
#include <random>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "axle/core/literal.h"
#include "axle/core/shape.h"
#include "axle/core/xla_data.h"

namespace axle {

// Whether SampleRng draws a `result` of this shape from bounds of the shapes
// `bounds` with `distribution`: InvalidArgument unless there are two bounds,
// both scalars of the result's element type, and the result is an array;
// Unimplemented unless the distribution is one SampleRng has for that
// element type (uniform and normal for floating point, uniform for
// integers). The message starts "rng: " and says what was expected and what
// was given; a platform prefixes its name and the instruction's.
absl::Status CheckRng(RandomDistribution distribution, absl::Span<const Shape* const> bounds,
                      const Shape& result);

// The counter step of an rng-get-and-update-state producing `result`, from
// its `delta` attribute's text (null when absent: 1): InvalidArgument unless
// the result is a u64 array of at least one element (XLA's u64[2]) and delta
// an integer. The message starts "rng-get-and-update-state: ".
absl::StatusOr<int64_t> RngStateDelta(const Shape& result, const std::string* delta);

// Fills the array `result` with draws; `low` and `high` are scalars of its
// element type.
absl::Status SampleRng(RandomDistribution distribution, const Literal& low, const Literal& high,
                       std::mt19937_64& engine, Literal* result);

}  // namespace axle

#endif  // AXLE_EVAL_RNG_SAMPLING_H_
