//===- rng_thunk.h - rng-bit-generator on the cpu platform -----------------===//
//
// rng-bit-generator(state) -> (new_state, bits) with XLA's algorithms and
// layout (axle/eval/rng_bit_generator.h, the code the interpreter runs
// too, so both platforms give XLA's bits). `rng` and
// `rng-get-and-update-state` stay Unimplemented on cpu: the interpreter
// draws them from one std::mt19937_64 stream per run, consumed in
// evaluation order, which a thunk program does not reproduce.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_CPU_RUNTIME_RNG_THUNK_H_
#define AXLE_CPU_RUNTIME_RNG_THUNK_H_

#include <string>

#include "axle/core/shape.h"
#include "axle/core/xla_data.h"
#include "axle/cpu/runtime/thunk.h"

namespace axle::cpu {

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

 private:
  RandomAlgorithm algorithm_;
  int64_t state_size_;
  Shape bits_shape_;
  int64_t state_value_;
  int64_t new_state_value_;
  int64_t bits_value_;
};

}  // namespace axle::cpu

#endif  // AXLE_CPU_RUNTIME_RNG_THUNK_H_
