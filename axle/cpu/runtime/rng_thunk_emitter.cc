//===- rng_thunk_emitter.cc - rng thunks from HLO --------------------------===//
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "axle/base/status_macros.h"
#include "axle/core/shape_util.h"
#include "axle/cpu/runtime/rng_thunk.h"
#include "axle/cpu/runtime/thunk_emitters.h"
#include "axle/eval/rng_bit_generator.h"
#include "axle/eval/rng_sampling.h"
#include "axle/hlo/ir/hlo_instructions.h"

namespace axle::cpu {

absl::Status EmitRngThunk(const HloInstruction& instruction, ProgramBuilder& builder) {
  const Shape& shape = instruction.shape();
  const RandomDistribution distribution =
      cast<HloRngInstruction>(&instruction)->random_distribution();
  std::vector<const Shape*> bounds;
  for (const HloInstruction* operand : instruction.operands()) bounds.push_back(&operand->shape());
  if (absl::Status valid = CheckRng(distribution, bounds, shape); !valid.ok()) {
    return absl::Status(valid.code(), absl::StrCat("cpu platform: ", valid.message(),
                                                   " (instruction %", instruction.name(), ")"));
  }
  AXLE_ASSIGN_OR_RETURN(int64_t low, builder.ValueOf(instruction.operand(0)));
  AXLE_ASSIGN_OR_RETURN(int64_t high, builder.ValueOf(instruction.operand(1)));
  const int64_t output = builder.DefineTemporary(&instruction, {}, shape);
  builder.AddThunk(
      std::make_unique<RngThunk>(instruction.name(), distribution, shape, low, high, output));
  return absl::OkStatus();
}

absl::Status EmitRngGetAndUpdateStateThunk(const HloInstruction& instruction,
                                           ProgramBuilder& builder) {
  const Shape& shape = instruction.shape();
  const RawAttribute* attribute = instruction.FindRawAttribute("delta");
  absl::StatusOr<int64_t> delta =
      RngStateDelta(shape, attribute != nullptr ? &attribute->value : nullptr);
  if (!delta.ok()) {
    return absl::Status(delta.status().code(),
                        absl::StrCat("cpu platform: ", delta.status().message(), " (instruction %",
                                     instruction.name(), ")"));
  }
  const int64_t output = builder.DefineTemporary(&instruction, {}, shape);
  builder.AddThunk(std::make_unique<RngGetAndUpdateStateThunk>(
      instruction.name(), *delta, ShapeUtil::ElementsIn(shape), output));
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
