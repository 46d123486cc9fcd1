//===- rng_sampling.cc - The interpreter's rng distributions ---------------===//
#include "axle/eval/rng_sampling.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "axle/base/status_macros.h"
#include "axle/core/shape_util.h"

namespace axle {
namespace {

// Unimplemented unless SampleRng has `distribution` for `type`.
absl::Status CheckDistribution(RandomDistribution distribution, PrimitiveType type) {
  if ((primitive_util::IsFloatingPointType(type) &&
       (distribution == RNG_UNIFORM || distribution == RNG_NORMAL)) ||
      (primitive_util::IsIntegralType(type) && distribution == RNG_UNIFORM)) {
    return absl::OkStatus();
  }
  return absl::UnimplementedError(
      absl::StrCat("rng: this distribution is not supported for ",
                   primitive_util::LowercasePrimitiveTypeName(type),
                   " (floating-point results take rng_uniform and rng_normal, integer ones "
                   "rng_uniform)"));
}

}  // namespace

absl::Status CheckRng(RandomDistribution distribution, absl::Span<const Shape* const> bounds,
                      const Shape& result) {
  const PrimitiveType type = result.IsArray() ? result.element_type() : PRIMITIVE_TYPE_INVALID;
  bool ok = result.IsArray() && bounds.size() == 2;
  for (const Shape* bound : bounds) {
    ok = ok && bound->IsArray() && bound->rank() == 0 && bound->element_type() == type;
  }
  if (!ok) {
    return absl::InvalidArgumentError(absl::StrCat(
        "rng: takes two scalar bounds of the result's element type and returns an array, not (",
        absl::StrJoin(
            bounds, ", ",
            [](std::string* out, const Shape* bound) { absl::StrAppend(out, bound->ToString()); }),
        ") -> ", result.ToString()));
  }
  return CheckDistribution(distribution, type);
}

absl::StatusOr<int64_t> RngStateDelta(const Shape& result, const std::string* delta) {
  if (!result.IsArray() || result.element_type() != U64 || ShapeUtil::ElementsIn(result) < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("rng-get-and-update-state: must produce u64[2], not ", result.ToString()));
  }
  int64_t step = 1;
  if (delta != nullptr && !absl::SimpleAtoi(*delta, &step)) {
    return absl::InvalidArgumentError(
        absl::StrCat("rng-get-and-update-state: bad delta=", *delta, " (an integer)"));
  }
  return step;
}

absl::Status SampleRng(RandomDistribution distribution, const Literal& low, const Literal& high,
                       std::mt19937_64& engine, Literal* result) {
  const PrimitiveType type = result->shape().element_type();
  const int64_t n = result->element_count();
  AXLE_RETURN_IF_ERROR(CheckDistribution(distribution, type));
  if (primitive_util::IsFloatingPointType(type)) {
    const double a = low.GetAsDouble(0), b = high.GetAsDouble(0);
    if (distribution == RNG_UNIFORM) {
      if (!(a < b)) {
        // An empty interval: every element is `low`.
        for (int64_t i = 0; i < n; ++i) result->SetFromDouble(i, a);
        return absl::OkStatus();
      }
      std::uniform_real_distribution<double> uniform(a, b);
      Literal high_t = high.Convert(type).value();
      const double bound = high_t.GetAsDouble(0);
      for (int64_t i = 0; i < n; ++i) {
        for (int attempt = 0;; ++attempt) {
          result->SetFromDouble(i, uniform(engine));
          if (result->GetAsDouble(i) < bound || attempt > 1000) break;
        }
      }
      return absl::OkStatus();
    }
    std::normal_distribution<double> normal(a, b);  // RNG_NORMAL
    for (int64_t i = 0; i < n; ++i) result->SetFromDouble(i, normal(engine));
    return absl::OkStatus();
  }
  // Integers, RNG_UNIFORM.
  const int64_t a = *low.GetIntegralAsS64(0), b = *high.GetIntegralAsS64(0);
  if (!(a < b)) {
    for (int64_t i = 0; i < n; ++i) result->SetIntegral(i, a);
    return absl::OkStatus();
  }
  std::uniform_int_distribution<int64_t> uniform(a, b - 1);
  for (int64_t i = 0; i < n; ++i) result->SetIntegral(i, uniform(engine));
  return absl::OkStatus();
}

}  // namespace axle
