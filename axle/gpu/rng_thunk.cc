//===- rng_thunk.cc - rng and rng-get-and-update-state on CUDA -------------===//
#include "axle/gpu/rng_thunk.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "axle/base/status_macros.h"
#include "axle/core/literal.h"
#include "axle/core/shape_util.h"
#include "axle/eval/rng_sampling.h"
#include "axle/hlo/ir/hlo_instructions.h"

namespace axle::gpu {
namespace {

// The error of a failed step, naming the instruction.
absl::Status Named(const absl::Status& status, const std::string& name) {
  if (status.ok()) return status;
  return absl::Status(status.code(), absl::StrCat("CUDA: %", name, ": ", status.message()));
}

// The run's state, its engine seeded on first use as the cpu platform does.
GpuRngRunState& RunState(const GpuThunkContext& context) {
  GpuRngRunState& state = *context.rng;
  if (!state.engine.has_value()) {
    const int seed = context.run_options != nullptr ? context.run_options->rng_seed() : 0;
    state.seed = static_cast<uint64_t>(seed);
    state.engine.emplace(state.seed);
  }
  return state;
}

absl::Status NoRunState(const std::string& name) {
  return absl::FailedPreconditionError(
      absl::StrCat("CUDA: %", name, ": the run has no rng state (GpuThunkContext::rng)"));
}

class RngThunk : public GpuThunk {
 public:
  RngThunk(const HloInstruction& instruction, GpuThunkValues values)
      : GpuThunk(instruction.name()),
        distribution_(cast<HloRngInstruction>(&instruction)->random_distribution()),
        shape_(instruction.shape()),
        values_(std::move(values)) {}

  absl::Status Execute(const GpuThunkContext& context) const override {
    if (context.rng == nullptr) return NoRunState(name());
    const Shape scalar = ShapeUtil::MakeScalarShape(shape_.element_type());
    Literal low(scalar), high(scalar), result(shape_);
    // Both bounds to the host; the stream's earlier work is done after it.
    AXLE_RETURN_IF_ERROR(
        Named(context.stream->ReadToHost(low.untyped_data(), context.buffer(values_.operands[0]),
                                         low.size_bytes()),
              name()));
    AXLE_RETURN_IF_ERROR(
        Named(context.stream->ReadToHost(high.untyped_data(), context.buffer(values_.operands[1]),
                                         high.size_bytes()),
              name()));
    AXLE_RETURN_IF_ERROR(
        Named(SampleRng(distribution_, low, high, *RunState(context).engine, &result), name()));
    se::DeviceMemoryBase output = context.buffer(values_.outputs[0]);
    AXLE_RETURN_IF_ERROR(Named(
        context.stream->MemcpyHostToDevice(&output, result.untyped_data(), result.size_bytes()),
        name()));
    // `result` is freed on return: the copy must be done.
    return Named(context.stream->Synchronize(), name());
  }

  GpuThunkValues buffer_uses() const override { return values_; }

 private:
  RandomDistribution distribution_;
  Shape shape_;
  GpuThunkValues values_;
};

class RngGetAndUpdateStateThunk : public GpuThunk {
 public:
  RngGetAndUpdateStateThunk(const HloInstruction& instruction, int64_t delta, GpuThunkValues values)
      : GpuThunk(instruction.name()),
        delta_(delta),
        elements_(ShapeUtil::ElementsIn(instruction.shape())),
        values_(std::move(values)) {}

  absl::Status Execute(const GpuThunkContext& context) const override {
    if (context.rng == nullptr) return NoRunState(name());
    GpuRngRunState& state = RunState(context);
    std::vector<uint64_t> words(static_cast<size_t>(elements_), 0);
    words[0] = state.seed + state.counter;
    state.counter += static_cast<uint64_t>(delta_);
    se::DeviceMemoryBase output = context.buffer(values_.outputs[0]);
    AXLE_RETURN_IF_ERROR(Named(
        context.stream->MemcpyHostToDevice(&output, words.data(), words.size() * sizeof(uint64_t)),
        name()));
    return Named(context.stream->Synchronize(), name());
  }

  GpuThunkValues buffer_uses() const override { return values_; }

 private:
  int64_t delta_;
  int64_t elements_;
  GpuThunkValues values_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<GpuThunk>> MakeRngThunk(const HloInstruction& instruction,
                                                       GpuThunkValues values) {
  AXLE_RETURN_IF_ERROR(CheckThunkValues(instruction, values, 2, 1));
  const Shape& shape = instruction.shape();
  const PrimitiveType type = shape.IsArray() ? shape.element_type() : PRIMITIVE_TYPE_INVALID;
  bool bounds_ok = instruction.operand_count() == 2;
  for (int64_t i = 0; bounds_ok && i < 2; ++i) {
    const Shape& operand = instruction.operand(i)->shape();
    bounds_ok = operand.IsArray() && operand.rank() == 0 && operand.element_type() == type;
  }
  if (!bounds_ok) {
    return absl::InvalidArgumentError(
        absl::StrCat("CUDA: rng %", instruction.name(),
                     ": takes two scalars of the result's element type and returns an array, not ",
                     shape.ToString()));
  }
  const RandomDistribution distribution =
      cast<HloRngInstruction>(&instruction)->random_distribution();
  const bool supported = (primitive_util::IsFloatingPointType(type) &&
                          (distribution == RNG_UNIFORM || distribution == RNG_NORMAL)) ||
                         (primitive_util::IsIntegralType(type) && distribution == RNG_UNIFORM);
  if (!supported) {
    return absl::UnimplementedError(
        absl::StrCat("CUDA backend: rng of this distribution is not supported for ",
                     primitive_util::LowercasePrimitiveTypeName(type), " (instruction %",
                     instruction.name(), ")"));
  }
  return std::unique_ptr<GpuThunk>(new RngThunk(instruction, std::move(values)));
}

absl::StatusOr<std::unique_ptr<GpuThunk>> MakeRngGetAndUpdateStateThunk(
    const HloInstruction& instruction, GpuThunkValues values) {
  AXLE_RETURN_IF_ERROR(CheckThunkValues(instruction, values, 0, 1));
  const Shape& shape = instruction.shape();
  if (!shape.IsArray() || shape.element_type() != U64 || ShapeUtil::ElementsIn(shape) < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("CUDA: rng-get-and-update-state %", instruction.name(),
                     ": must produce u64[2], not ", shape.ToString()));
  }
  int64_t delta = 1;
  if (const RawAttribute* attribute = instruction.FindRawAttribute("delta")) {
    if (!absl::SimpleAtoi(attribute->value, &delta)) {
      return absl::InvalidArgumentError(absl::StrCat("CUDA: rng-get-and-update-state %",
                                                     instruction.name(),
                                                     ": bad delta=", attribute->value));
    }
  }
  return std::unique_ptr<GpuThunk>(
      new RngGetAndUpdateStateThunk(instruction, delta, std::move(values)));
}

}  // namespace axle::gpu
