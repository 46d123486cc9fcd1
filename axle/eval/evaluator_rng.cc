//===- evaluator_rng.cc - rng and rng-bit-generator ------------------------===//
//
// rng draws from the evaluator's engine (std::mt19937_64 seeded by
// set_seed), so a run is a deterministic function of the seed; values are
// not meant to match any other backend. Uniform draws are in [low, high)
// (re-drawn when rounding to the element type reaches `high`), normal ones
// are computed in double and rounded. An empty uniform interval
// (low >= high) gives `low` everywhere.
//
// rng-bit-generator(state) -> (new_state, bits) is XLA's bit stream
// (Threefry-2x32 or Philox-4x32 laid out as XLA's RngBitGeneratorExpander
// does; rng_default is Philox): rng_bit_generator.h, shared with the cpu
// platform.
//
//===----------------------------------------------------------------------===//
#include <cmath>
#include <cstring>
#include <random>

#include "axle/base/status_macros.h"
#include "axle/eval/evaluator_internal.h"
#include "axle/eval/hlo_evaluator.h"
#include "axle/eval/rng_bit_generator.h"

namespace axle::eval_internal {
absl::StatusOr<Literal> EvaluateRng(HloEvaluator& evaluator, const HloInstruction& instruction,
                                    absl::Span<const Literal* const> operands) {
  const Shape& shape = instruction.shape();
  if (!shape.IsArray() || operands.size() != 2) {
    return InvalidInstruction(instruction, "rng takes two scalar parameters and produces an array");
  }
  for (const Literal* operand : operands) {
    AXLE_RETURN_IF_ERROR(ExpectArray(instruction, *operand, "a parameter"));
    if (operand->element_count() != 1)
      return InvalidInstruction(instruction, "parameters must be scalars");
  }
  PrimitiveType type = shape.element_type();
  RandomDistribution distribution = cast<HloRngInstruction>(&instruction)->random_distribution();
  Literal result(shape);
  int64_t n = result.element_count();
  std::mt19937_64& engine = evaluator.engine();
  if (primitive_util::IsFloatingPointType(type)) {
    double a = operands[0]->GetAsDouble(0), b = operands[1]->GetAsDouble(0);
    if (distribution == RNG_UNIFORM) {
      if (!(a < b)) {
        // An empty interval: every element is `low`.
        for (int64_t i = 0; i < n; ++i) result.SetFromDouble(i, a);
        return result;
      }
      std::uniform_real_distribution<double> uniform(a, b);
      Literal high_t = ConvertScalar(*operands[1], type).value();
      double high = high_t.GetAsDouble(0);
      for (int64_t i = 0; i < n; ++i) {
        for (int attempt = 0;; ++attempt) {
          result.SetFromDouble(i, uniform(engine));
          if (result.GetAsDouble(i) < high || attempt > 1000) break;
        }
      }
      return result;
    }
    if (distribution == RNG_NORMAL) {
      std::normal_distribution<double> normal(a, b);
      for (int64_t i = 0; i < n; ++i) result.SetFromDouble(i, normal(engine));
      return result;
    }
  } else if (primitive_util::IsIntegralType(type) && distribution == RNG_UNIFORM) {
    int64_t a = *operands[0]->GetIntegralAsS64(0), b = *operands[1]->GetIntegralAsS64(0);
    if (!(a < b)) {
      for (int64_t i = 0; i < n; ++i) result.SetIntegral(i, a);
      return result;
    }
    std::uniform_int_distribution<int64_t> uniform(a, b - 1);
    for (int64_t i = 0; i < n; ++i) result.SetIntegral(i, uniform(engine));
    return result;
  }
  return absl::UnimplementedError(absl::StrCat("interpreter: ", Describe(instruction),
                                               ": no such distribution for ",
                                               primitive_util::LowercasePrimitiveTypeName(type)));
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
