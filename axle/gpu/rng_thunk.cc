//===- rng_thunk.cc - rng and rng-get-and-update-state on CUDA -------------===//
#include "axle/gpu/rng_thunk.h"

#include <string>
#include <utility>
#include <vector>

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
  std::vector<const Shape*> bounds;
  for (const HloInstruction* operand : instruction.operands()) bounds.push_back(&operand->shape());
  if (absl::Status valid = CheckRng(cast<HloRngInstruction>(&instruction)->random_distribution(),
                                    bounds, instruction.shape());
      !valid.ok()) {
    return absl::Status(valid.code(), absl::StrCat("CUDA: ", valid.message(), " (instruction %",
                                                   instruction.name(), ")"));
  }
  return std::unique_ptr<GpuThunk>(new RngThunk(instruction, std::move(values)));
}

absl::StatusOr<std::unique_ptr<GpuThunk>> MakeRngGetAndUpdateStateThunk(
    const HloInstruction& instruction, GpuThunkValues values) {
  AXLE_RETURN_IF_ERROR(CheckThunkValues(instruction, values, 0, 1));
  const RawAttribute* attribute = instruction.FindRawAttribute("delta");
  absl::StatusOr<int64_t> delta =
      RngStateDelta(instruction.shape(), attribute != nullptr ? &attribute->value : nullptr);
  if (!delta.ok()) {
    return absl::Status(delta.status().code(),
                        absl::StrCat("CUDA: ", delta.status().message(), " (instruction %",
                                     instruction.name(), ")"));
  }
  return std::unique_ptr<GpuThunk>(
      new RngGetAndUpdateStateThunk(instruction, *delta, std::move(values)));
}

}  // namespace axle::gpu
