//===- rng_thunk.h - rng-bit-generator on the cpu platform -----------------===//
//
// rng-bit-generator(state) -> (new_state, bits) with XLA's algorithms and
// layout (axle/eval/rng_bit_generator.h, the code the interpreter runs
// too, so both platforms give XLA's bits).
//
// rng and rng-get-and-update-state do what the interpreter does
// (axle/eval/rng_sampling.h): one std::mt19937_64 engine per run, seeded
// with ExecutableRunOptions::rng_seed and consumed by the rng thunks in
// the order they run; a counter that starts at the seed and advances by
// `delta` per rng-get-and-update-state. The values agree with the
// interpreter's when the rng ops run in its order: always for one rng op,
// and for several as long as fusion keeps their post order (an rng whose
// result nothing uses still draws on cpu, where the interpreter skips it).
//
// All three serialize (thunk_serialization.h); a loaded program runs with
// seed 0 (SerializedProgramRunner has no run options), as a run with
// default ExecutableRunOptions does.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_CPU_RUNTIME_RNG_THUNK_H_
#define AXLE_CPU_RUNTIME_RNG_THUNK_H_

#include <random>
#include <string>

#include "axle/core/shape.h"
#include "axle/core/xla_data.h"
#include "axle/cpu/runtime/thunk.h"

namespace axle::cpu {

struct RngRunState {
  explicit RngRunState(uint64_t seed) : engine(seed), seed(seed) {}
  std::mt19937_64 engine;
  uint64_t seed;
  uint64_t counter = 0;
};

// The run's RngRunState, made on first use.
RngRunState& RngStateOf(const ThunkContext& context);

class RngBitGeneratorThunk : public Thunk {
 public:
  RngBitGeneratorThunk(std::string name, RandomAlgorithm algorithm, int64_t state_size,
                       Shape bits_shape, int64_t state_value, int64_t new_state_value,
                       int64_t bits_value)
      : Thunk(std::move(name)),
        algorithm_(algorithm),
        state_size_(state_size),
        bits_shape_(std::move(bits_shape)),
        state_value_(state_value),
        new_state_value_(new_state_value),
        bits_value_(bits_value) {}

  absl::Status Execute(const ThunkContext& context) const override;
  std::optional<BufferUses> buffer_uses() const override {
    return BufferUses{{state_value_}, {new_state_value_, bits_value_}};
  }
  absl::Status Serialize(ThunkWriter& writer) const override;

 private:
  RandomAlgorithm algorithm_;
  int64_t state_size_;
  Shape bits_shape_;
  int64_t state_value_;
  int64_t new_state_value_;
  int64_t bits_value_;
};

// rng(low, high) -> an array of draws.
class RngThunk : public Thunk {
 public:
  RngThunk(std::string name, RandomDistribution distribution, Shape shape, int64_t low_value,
           int64_t high_value, int64_t output_value)
      : Thunk(std::move(name)),
        distribution_(distribution),
        shape_(std::move(shape)),
        low_value_(low_value),
        high_value_(high_value),
        output_value_(output_value) {}

  absl::Status Execute(const ThunkContext& context) const override;
  std::optional<BufferUses> buffer_uses() const override {
    return BufferUses{{low_value_, high_value_}, {output_value_}};
  }
  absl::Status Serialize(ThunkWriter& writer) const override;

 private:
  RandomDistribution distribution_;
  Shape shape_;
  int64_t low_value_;
  int64_t high_value_;
  int64_t output_value_;
};

// rng-get-and-update-state -> u64[n]: element 0 is seed + counter, the rest
// zero; then the counter advances by `delta`.
class RngGetAndUpdateStateThunk : public Thunk {
 public:
  RngGetAndUpdateStateThunk(std::string name, int64_t delta, int64_t elements, int64_t output_value)
      : Thunk(std::move(name)), delta_(delta), elements_(elements), output_value_(output_value) {}

  absl::Status Execute(const ThunkContext& context) const override;
  std::optional<BufferUses> buffer_uses() const override { return BufferUses{{}, {output_value_}}; }
  absl::Status Serialize(ThunkWriter& writer) const override;

 private:
  int64_t delta_;
  int64_t elements_;
  int64_t output_value_;
};

}  // namespace axle::cpu

#endif  // AXLE_CPU_RUNTIME_RNG_THUNK_H_
