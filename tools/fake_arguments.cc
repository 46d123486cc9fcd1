#include "tools/fake_arguments.h"

#include <unistd.h>

#include "absl/strings/str_cat.h"

namespace axle {
namespace {

// SplitMix64: a small, portable, well-mixed generator.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, 1).
  double NextDouble() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }

 private:
  uint64_t state_;
};

void Fill(Literal* literal, const ShapeIndex& index, SplitMix64* rng) {
  const Shape& shape = ShapeUtil::GetSubshape(literal->shape(), index);
  if (shape.IsTuple()) {
    for (int64_t i = 0; i < shape.tuple_shapes_size(); ++i) {
      ShapeIndex child = index;
      child.push_back(i);
      Fill(literal, child, rng);
    }
    return;
  }
  if (!shape.IsArray()) return;
  Literal& piece = literal->GetMutableSubliteral(index);
  PrimitiveType type = shape.element_type();
  for (int64_t i = 0; i < piece.element_count(); ++i) {
    if (type == PRED) {
      piece.SetIntegral(i, rng->Next() & 1);
    } else if (primitive_util::IsIntegralType(type)) {
      int64_t range = primitive_util::BitWidth(type) <= 2 ? 2 : 10;
      piece.SetIntegral(i, static_cast<int64_t>(rng->Next() % range));
    } else if (primitive_util::IsComplexType(type)) {
      double re = rng->NextDouble() * 2 - 1;
      double im = rng->NextDouble() * 2 - 1;
      piece.SetFromComplex128(i, complex128(re, im));
    } else {
      piece.SetFromDouble(i, rng->NextDouble() * 2 - 1);
    }
  }
}

}  // namespace

Literal MakeFakeLiteral(const Shape& shape, uint64_t seed) {
  Literal literal(shape);
  SplitMix64 rng(seed);
  Fill(&literal, {}, &rng);
  return literal;
}

absl::StatusOr<std::vector<Literal>> MakeFakeArguments(const HloModule& module, uint64_t seed) {
  const HloComputation* entry = module.entry_computation();
  if (entry == nullptr) return absl::InvalidArgumentError("module has no entry computation");
  std::vector<Literal> arguments;
  for (int64_t i = 0; i < entry->num_parameters(); ++i) {
    const Shape& shape = entry->parameter_instruction(i)->shape();
    if (!shape.is_static()) {
      return absl::UnimplementedError(absl::StrCat("cannot make a random argument for parameter ",
                                                   i, " of dynamic shape ", shape.ToString()));
    }
    // More bytes than the machine has cannot be generated (the literal's
    // allocation would fail): say so instead of aborting.
    const int64_t bytes = ShapeUtil::ByteSizeOfElements(shape);
    const int64_t memory = static_cast<int64_t>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGESIZE);
    if (memory > 0 && bytes > memory) {
      return absl::ResourceExhaustedError(
          absl::StrCat("parameter ", i, " (", entry->parameter_instruction(i)->name(),
                       ") of shape ", shape.ToString(), " needs ", bytes,
                       " bytes for a random argument; this machine has ", memory));
    }
    arguments.push_back(MakeFakeLiteral(shape, seed * 1000003 + i));
  }
  return arguments;
}

}  // namespace axle
