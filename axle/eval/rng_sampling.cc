//===- rng_sampling.cc - The interpreter's rng distributions ---------------===//
#include "axle/eval/rng_sampling.h"

#include "absl/strings/str_cat.h"

namespace axle {

absl::Status SampleRng(RandomDistribution distribution, const Literal& low, const Literal& high,
                       std::mt19937_64& engine, Literal* result) {
  const PrimitiveType type = result->shape().element_type();
  const int64_t n = result->element_count();
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
    if (distribution == RNG_NORMAL) {
      std::normal_distribution<double> normal(a, b);
      for (int64_t i = 0; i < n; ++i) result->SetFromDouble(i, normal(engine));
      return absl::OkStatus();
    }
  } else if (primitive_util::IsIntegralType(type) && distribution == RNG_UNIFORM) {
    const int64_t a = *low.GetIntegralAsS64(0), b = *high.GetIntegralAsS64(0);
    if (!(a < b)) {
      for (int64_t i = 0; i < n; ++i) result->SetIntegral(i, a);
      return absl::OkStatus();
    }
    std::uniform_int_distribution<int64_t> uniform(a, b - 1);
    for (int64_t i = 0; i < n; ++i) result->SetIntegral(i, uniform(engine));
    return absl::OkStatus();
  }
  return absl::UnimplementedError(
      absl::StrCat("no such distribution for ", primitive_util::LowercasePrimitiveTypeName(type)));
}

}  // namespace axle
