//===- rng.cc - The lazy device's random-number state ----------------------===//
#include "axle/frontends/lazy/rng.h"

#include <memory>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "axle/core/literal.h"
#include "axle/core/shape_util.h"
#include "axle/frontends/lazy/lazy_tensor.h"

namespace axle::lazy {
namespace {

struct RngState {
  std::mutex mutex;
  uint64_t seed = 0;
  std::shared_ptr<LazyTensor> state;  // u64[3]: key, counter (two words)
};

RngState& State() {
  static auto* state = new RngState();
  return *state;
}

std::shared_ptr<DeviceData> SeedData(uint64_t seed) {
  Literal literal(ShapeUtil::MakeShape(U64, {3}));
  auto words = literal.data<uint64_t>();
  words[0] = seed;
  words[1] = 0;
  words[2] = 0;
  return std::make_shared<DeviceData>(std::move(literal));
}

}  // namespace

void SetRngSeed(uint64_t seed) {
  RngState& s = State();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.seed = seed;
  if (s.state == nullptr) {
    s.state = LazyTensor::FromData(SeedData(seed));
  } else {
    s.state->SetData(SeedData(seed));
  }
}

uint64_t RngSeed() {
  RngState& s = State();
  std::lock_guard<std::mutex> lock(s.mutex);
  return s.seed;
}

absl::StatusOr<Value> RngUniform(const Shape& shape) {
  PrimitiveType type = shape.element_type();
  if (!shape.IsArray() || (type != F32 && type != F64 && type != F16 && type != BF16)) {
    return absl::InvalidArgumentError(absl::StrCat("random values of shape ", shape.ToString(),
                                                   " (f32, f64, f16 or bf16 arrays only)"));
  }
  RngState& s = State();
  std::lock_guard<std::mutex> lock(s.mutex);
  // The state tensor is made on first use and lives for the process (a
  // live tensor: every step marker computes it).
  if (s.state == nullptr) s.state = LazyTensor::FromData(SeedData(s.seed));
  Value state = s.state->GetIrValue();
  Shape tuple = ShapeUtil::MakeTupleShape({state.shape(), shape});
  auto node = Node::Make("rng_uniform", std::vector<Value>{state}, tuple);
  s.state->SetIrValue(Value{node, 0});
  return Value{node, 1};
}

}  // namespace axle::lazy
