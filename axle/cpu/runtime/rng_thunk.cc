//===- rng_thunk.cc - rng-bit-generator on the cpu platform ----------------===//
#include "axle/cpu/runtime/rng_thunk.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "axle/base/status_macros.h"
#include "axle/core/shape_util.h"
#include "axle/cpu/runtime/thunk_serialization.h"
#include "axle/eval/rng_bit_generator.h"
#include "axle/eval/rng_sampling.h"

namespace axle::cpu {

RngRunState& RngStateOf(const ThunkContext& context) {
  if (context.rng == nullptr) {
    const int seed = context.run_options != nullptr ? context.run_options->rng_seed() : 0;
    // As the interpreter platform converts it.
    context.rng = std::make_shared<RngRunState>(static_cast<uint64_t>(seed));
  }
  return *context.rng;
}

absl::Status RngThunk::Execute(const ThunkContext& context) const {
  const Shape scalar = ShapeUtil::MakeScalarShape(shape_.element_type());
  Literal low(scalar), high(scalar), result(shape_);
  std::memcpy(low.untyped_data(), context.address(low_value_), low.size_bytes());
  std::memcpy(high.untyped_data(), context.address(high_value_), high.size_bytes());
  AXLE_RETURN_IF_ERROR(SampleRng(distribution_, low, high, RngStateOf(context).engine, &result));
  std::memcpy(context.address(output_value_), result.untyped_data(), result.size_bytes());
  return absl::OkStatus();
}

absl::Status RngGetAndUpdateStateThunk::Execute(const ThunkContext& context) const {
  RngRunState& state = RngStateOf(context);
  auto* output = static_cast<uint64_t*>(context.address(output_value_));
  for (int64_t i = 0; i < elements_; ++i) output[i] = 0;
  output[0] = state.seed + state.counter;
  state.counter += static_cast<uint64_t>(delta_);
  return absl::OkStatus();
}

absl::Status RngBitGeneratorThunk::Execute(const ThunkContext& context) const {
  // A thunk's operands and results never share memory (buffer_assignment.h).
  const auto* state = static_cast<const uint64_t*>(context.address(state_value_));
  auto* new_state = static_cast<uint64_t*>(context.address(new_state_value_));
  GenerateRandomBits(algorithm_, absl::MakeConstSpan(state, state_size_), bits_shape_,
                     context.address(bits_value_), absl::MakeSpan(new_state, state_size_));
  return absl::OkStatus();
}

absl::Status RngBitGeneratorThunk::Serialize(ThunkWriter& writer) const {
  writer.Begin(ThunkTag::kRngBitGenerator, *this);
  writer.Int(static_cast<int64_t>(algorithm_));
  writer.Int(state_size_);
  writer.Shape(bits_shape_);
  writer.Ints({state_value_, new_state_value_, bits_value_});
  return absl::OkStatus();
}

std::unique_ptr<Thunk> LoadRngBitGeneratorThunk(std::string name, ThunkReader& reader) {
  const int64_t algorithm = reader.Int();
  const int64_t state_size = reader.Int();
  const Shape bits_shape = reader.Shape();
  const std::vector<int64_t> values = reader.Values();
  if (!reader.ok()) return nullptr;
  auto fail = [&](absl::string_view why) {
    reader.Fail(absl::StrCat("rng-bit-generator %", name, ": ", why));
    return nullptr;
  };
  if (algorithm < RNG_DEFAULT || algorithm > RNG_PHILOX) {
    return fail(absl::StrCat("algorithm ", algorithm));
  }
  if (state_size < 1 || state_size > 16) return fail(absl::StrCat("a state of ", state_size));
  const auto random_algorithm = static_cast<RandomAlgorithm>(algorithm);
  if (absl::Status valid = CheckRandomBitsShape(random_algorithm, state_size, bits_shape);
      !valid.ok()) {
    return fail(valid.message());
  }
  if (values.size() != 3 || !reader.ValueHas(values[0], state_size * 8) ||
      !reader.ValueHas(values[1], state_size * 8) ||
      !reader.ValueHas(values[2], ShapeUtil::ByteSizeOfElements(bits_shape))) {
    return fail("values whose sizes do not match its state and bits");
  }
  return std::make_unique<RngBitGeneratorThunk>(std::move(name), random_algorithm, state_size,
                                                bits_shape, values[0], values[1], values[2]);
}

absl::Status RngThunk::Serialize(ThunkWriter& writer) const {
  writer.Begin(ThunkTag::kRng, *this);
  writer.Int(static_cast<int64_t>(distribution_));
  writer.Shape(shape_);
  writer.Ints({low_value_, high_value_, output_value_});
  return absl::OkStatus();
}

std::unique_ptr<Thunk> LoadRngThunk(std::string name, ThunkReader& reader) {
  const int64_t distribution = reader.Int();
  const Shape shape = reader.Shape();
  const std::vector<int64_t> values = reader.Values();
  if (!reader.ok()) return nullptr;
  auto fail = [&](absl::string_view why) {
    reader.Fail(absl::StrCat("rng %", name, ": ", why));
    return nullptr;
  };
  const PrimitiveType type = shape.element_type();
  const bool supported = (primitive_util::IsFloatingPointType(type) &&
                          (distribution == RNG_UNIFORM || distribution == RNG_NORMAL)) ||
                         (primitive_util::IsIntegralType(type) && distribution == RNG_UNIFORM);
  if (!supported) {
    return fail(absl::StrCat("distribution ", distribution, " of ",
                             primitive_util::LowercasePrimitiveTypeName(type)));
  }
  constexpr int64_t kMaxElements = int64_t{1} << 40;
  int64_t elements = 1;
  for (int64_t d : shape.dimensions()) {
    if (d > 0 && elements > kMaxElements / d) return fail("a shape too large");
    elements *= d;
  }
  const int64_t bytes = primitive_util::ByteWidth(type);
  if (values.size() != 3 || !reader.ValueHas(values[0], bytes) ||
      !reader.ValueHas(values[1], bytes) ||
      !reader.ValueHas(values[2], ShapeUtil::ByteSizeOfElements(shape))) {
    return fail("values whose sizes do not match its bounds and result");
  }
  return std::make_unique<RngThunk>(std::move(name), static_cast<RandomDistribution>(distribution),
                                    shape, values[0], values[1], values[2]);
}

absl::Status RngGetAndUpdateStateThunk::Serialize(ThunkWriter& writer) const {
  writer.Begin(ThunkTag::kRngGetAndUpdateState, *this);
  writer.Int(delta_);
  writer.Int(elements_);
  writer.Int(output_value_);
  return absl::OkStatus();
}

std::unique_ptr<Thunk> LoadRngGetAndUpdateStateThunk(std::string name, ThunkReader& reader) {
  const int64_t delta = reader.Int();
  const int64_t elements = reader.Int();
  const int64_t output = reader.Value();
  if (!reader.ok()) return nullptr;
  if (elements < 1 || elements > (int64_t{1} << 40) || !reader.ValueHas(output, elements * 8)) {
    reader.Fail(absl::StrCat("rng-get-and-update-state %", name, ": ", elements,
                             " elements in a value of another size"));
    return nullptr;
  }
  return std::make_unique<RngGetAndUpdateStateThunk>(std::move(name), delta, elements, output);
}

}  // namespace axle::cpu
