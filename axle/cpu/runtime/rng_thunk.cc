//===- rng_thunk.cc - rng-bit-generator on the cpu platform ----------------===//
#include "axle/cpu/runtime/rng_thunk.h"

#include "absl/strings/str_cat.h"
#include "axle/base/status_macros.h"
#include "axle/cpu/runtime/thunk_emitters.h"
#include "axle/eval/rng_bit_generator.h"
#include "axle/hlo/ir/hlo_instructions.h"

namespace axle::cpu {

absl::Status RngBitGeneratorThunk::Execute(const ThunkContext& context) const {
  // A thunk's operands and results never share memory (arena_layout.h).
  const auto* state = static_cast<const uint64_t*>(context.address(state_value_));
  auto* new_state = static_cast<uint64_t*>(context.address(new_state_value_));
  GenerateRandomBits(algorithm_, absl::MakeConstSpan(state, state_size_), bits_shape_,
                     context.address(bits_value_), absl::MakeSpan(new_state, state_size_));
  return absl::OkStatus();
}

absl::Status EmitRngBitGeneratorThunk(const HloInstruction& instruction, ProgramBuilder& builder) {
  const Shape& shape = instruction.shape();
  const Shape& state = instruction.operand(0)->shape();
  if (!shape.IsTuple() || shape.tuple_shapes_size() != 2 || !state.IsArray() ||
      state.element_type() != U64 || state.rank() != 1 ||
      !ShapeUtil::Compatible(shape.tuple_shapes(0), state)) {
    return absl::InvalidArgumentError(
        absl::StrCat("cpu platform: rng-bit-generator ", instruction.name(),
                     ": takes a u64[n] state and returns (state, bits), not ", shape.ToString(),
                     " from ", state.ToString()));
  }
  const RandomAlgorithm algorithm = cast<HloRngBitGeneratorInstruction>(&instruction)->algorithm();
  const Shape& bits_shape = shape.tuple_shapes(1);
  absl::Status valid = CheckRandomBitsShape(algorithm, state.dimensions(0), bits_shape);
  if (!valid.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("cpu platform: ", valid.message(),
                                                   " (instruction %", instruction.name(), ")"));
  }
  AXLE_ASSIGN_OR_RETURN(int64_t state_value, builder.ValueOf(instruction.operand(0)));
  const int64_t new_state_value = builder.DefineTemporary(&instruction, {0}, shape.tuple_shapes(0));
  const int64_t bits_value = builder.DefineTemporary(&instruction, {1}, bits_shape);
  builder.AddThunk(
      std::make_unique<RngBitGeneratorThunk>(instruction.name(), algorithm, state.dimensions(0),
                                             bits_shape, state_value, new_state_value, bits_value));
  return absl::OkStatus();
}

}  // namespace axle::cpu
