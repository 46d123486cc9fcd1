//===- evaluator_rng.cc - rng and rng-bit-generator ------------------------===//
//
// rng draws from the evaluator's engine (std::mt19937_64 seeded by
// set_seed), so a run is a deterministic function of the seed; values are
// not meant to match any other backend. Uniform draws are in [low, high)
// (re-drawn when rounding to the element type reaches `high`), normal ones
// are computed in double and rounded. An empty uniform interval
// (low >= high) gives `low` everywhere.
//
// rng-bit-generator(state) -> (new_state, bits) is a pure function of the
// state: Philox-4x32-10 with key state[0] and 128-bit counter
// (state[1], state[2] or 0); the bits are the blocks for counters
// c, c+1, ... in order, and the new state has the counter advanced past
// them. (XLA expands this op into a different arrangement of Philox/ThreeFry
// rounds: the bits are deterministic here but not XLA's.)
//
//===----------------------------------------------------------------------===//
#include <cmath>
#include <cstring>
#include <random>

#include "axle/base/status_macros.h"
#include "axle/eval/evaluator_internal.h"
#include "axle/eval/hlo_evaluator.h"

namespace axle::eval_internal {
namespace {

// One Philox-4x32 block (10 rounds).
void Philox4x32(uint32_t key[2], const uint32_t counter[4], uint32_t out[4]) {
  uint32_t c[4] = {counter[0], counter[1], counter[2], counter[3]};
  uint32_t k[2] = {key[0], key[1]};
  for (int round = 0; round < 10; ++round) {
    uint64_t p0 = uint64_t{0xD2511F53} * c[0];
    uint64_t p1 = uint64_t{0xCD9E8D57} * c[2];
    uint32_t hi0 = static_cast<uint32_t>(p0 >> 32), lo0 = static_cast<uint32_t>(p0);
    uint32_t hi1 = static_cast<uint32_t>(p1 >> 32), lo1 = static_cast<uint32_t>(p1);
    c[0] = hi1 ^ c[1] ^ k[0];
    c[1] = lo1;
    c[2] = hi0 ^ c[3] ^ k[1];
    c[3] = lo0;
    k[0] += 0x9E3779B9;
    k[1] += 0xBB67AE85;
  }
  std::memcpy(out, c, sizeof(c));
}

}  // namespace

absl::StatusOr<Literal> EvaluateRng(HloEvaluator& evaluator, const HloInstruction& instruction,
                                    absl::Span<const Literal* const> operands) {
  const Shape& shape = instruction.shape();
  if (!shape.IsArray() || operands.size() != 2) {
    return InvalidInstruction(instruction, "rng takes two scalar parameters and produces an array");
  }
  for (const Literal* operand : operands) {
    AXLE_RETURN_IF_ERROR(ExpectArray(instruction, *operand, "a parameter"));
    if (operand->element_count() != 1) return InvalidInstruction(instruction, "parameters must be scalars");
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
  return absl::UnimplementedError(
      absl::StrCat("interpreter: ", Describe(instruction), ": no such distribution for ",
                   primitive_util::LowercasePrimitiveTypeName(type)));
}

absl::StatusOr<Literal> EvaluateRngBitGenerator(const HloInstruction& instruction, const Literal& state) {
  const Shape& shape = instruction.shape();
  if (!shape.IsTuple() || shape.tuple_shapes_size() != 2 || !shape.tuple_shapes(1).IsArray() ||
      state.shape().element_type() != U64 || state.shape().rank() != 1 || state.element_count() < 1 ||
      !ShapeUtil::Compatible(shape.tuple_shapes(0), state.shape())) {
    return InvalidInstruction(instruction, "takes a u64[n] state and returns (state, bits)");
  }
  const Shape& bits_shape = shape.tuple_shapes(1);
  if (primitive_util::IsSubByteType(bits_shape.element_type())) {
    return InvalidInstruction(instruction, "cannot generate sub-byte elements");
  }
  auto words = state.data<uint64_t>();
  uint64_t key64 = words[0];
  uint64_t counter_lo = words.size() > 1 ? words[1] : 0;
  uint64_t counter_hi = words.size() > 2 ? words[2] : 0;
  Literal bits(bits_shape);
  auto* out = static_cast<uint8_t*>(bits.untyped_data());
  int64_t bytes = bits.size_bytes();
  for (int64_t offset = 0; offset < bytes; offset += 16) {
    uint32_t key[2] = {static_cast<uint32_t>(key64), static_cast<uint32_t>(key64 >> 32)};
    uint32_t counter[4] = {static_cast<uint32_t>(counter_lo), static_cast<uint32_t>(counter_lo >> 32),
                           static_cast<uint32_t>(counter_hi), static_cast<uint32_t>(counter_hi >> 32)};
    uint32_t block[4];
    Philox4x32(key, counter, block);
    std::memcpy(out + offset, block, std::min<int64_t>(16, bytes - offset));
    if (++counter_lo == 0) ++counter_hi;
  }
  Literal new_state = state.Clone();
  auto new_words = new_state.data<uint64_t>();
  if (new_words.size() > 1) new_words[1] = counter_lo;
  if (new_words.size() > 2) new_words[2] = counter_hi;
  if (new_words.size() == 1) new_words[0] = key64 + static_cast<uint64_t>((bytes + 15) / 16);
  std::vector<Literal> parts;
  parts.push_back(std::move(new_state));
  parts.push_back(std::move(bits));
  return Literal::MakeTuple(std::move(parts));
}

}  // namespace axle::eval_internal
