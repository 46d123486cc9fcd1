//===- evaluator_rng.cc - rng and rng-bit-generator ------------------------===//
//
// rng draws from the evaluator's engine (std::mt19937_64 seeded by
// set_seed at the start of each run): rng_sampling.h, shared with the cpu
// platform.
//
// rng-bit-generator(state) -> (new_state, bits) is XLA's bit stream
// (Threefry-2x32 or Philox-4x32 laid out as XLA's RngBitGeneratorExpander
// does; rng_default is Philox): rng_bit_generator.h, shared with the cpu
// platform.
//
//===----------------------------------------------------------------------===//
#include <vector>

#include "axle/base/status_macros.h"
#include "axle/eval/evaluator_internal.h"
#include "axle/eval/hlo_evaluator.h"
#include "axle/eval/rng_bit_generator.h"
#include "axle/eval/rng_sampling.h"

namespace axle::eval_internal {
absl::StatusOr<Literal> EvaluateRng(HloEvaluator& evaluator, const HloInstruction& instruction,
                                    absl::Span<const Literal* const> operands) {
  const Shape& shape = instruction.shape();
  const RandomDistribution distribution =
      cast<HloRngInstruction>(&instruction)->random_distribution();
  std::vector<const Shape*> bounds;
  for (const Literal* operand : operands) bounds.push_back(&operand->shape());
  auto named = [&](const absl::Status& status) {
    return absl::Status(status.code(), absl::StrCat("interpreter: ", Describe(instruction), ": ",
                                                    status.message()));
  };
  if (absl::Status valid = CheckRng(distribution, bounds, shape); !valid.ok()) return named(valid);
  Literal result(shape);
  absl::Status sampled =
      SampleRng(distribution, *operands[0], *operands[1], evaluator.engine(), &result);
  if (!sampled.ok()) return named(sampled);
  return result;
}

absl::StatusOr<Literal> EvaluateRngBitGenerator(const HloInstruction& instruction,
                                                const Literal& state) {
  const Shape& shape = instruction.shape();
  if (!shape.IsTuple() || shape.tuple_shapes_size() != 2 || !shape.tuple_shapes(1).IsArray() ||
      state.shape().element_type() != U64 || state.shape().rank() != 1 ||
      !ShapeUtil::Compatible(shape.tuple_shapes(0), state.shape())) {
    return InvalidInstruction(instruction, "takes a u64[n] state and returns (state, bits)");
  }
  const RandomAlgorithm algorithm = cast<HloRngBitGeneratorInstruction>(&instruction)->algorithm();
  const Shape& bits_shape = shape.tuple_shapes(1);
  absl::Status valid = CheckRandomBitsShape(algorithm, state.element_count(), bits_shape);
  if (!valid.ok()) return InvalidInstruction(instruction, valid.message());
  Literal bits(bits_shape);
  Literal new_state = state.Clone();
  GenerateRandomBits(algorithm, state.data<uint64_t>(), bits_shape, bits.untyped_data(),
                     new_state.data<uint64_t>());
  std::vector<Literal> parts;
  parts.push_back(std::move(new_state));
  parts.push_back(std::move(bits));
  return Literal::MakeTuple(std::move(parts));
}

}  // namespace axle::eval_internal
