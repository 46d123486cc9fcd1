//===- literal_comparison.h - Exact and approximate literal equality ------===//
//
// What XLA's LiteralTestUtil::Equal / ::Near check, as Status-returning
// functions usable from tests and from tools (axle-run's comparison against
// a reference platform):
//
//  * LiteralsEqual: same shape (element types and dimensions; layouts are
//    ignored) and identical elements. Floats compare bitwise, as XLA does:
//    -0 differs from 0, and two NaNs are equal only with the same bits.
//  * LiteralsNear: same shape; integers and pred exactly; a real float element
//    is fine when |expected - actual| <= abs or |expected - actual| / |expected|
//    <= rel; NaN matches NaN; an infinity matches only the same infinity
//    (unless fewer_infs_ok, which compares an expected inf as the type's
//    largest finite value); complex numbers compare each part so.
//
// Both recurse into tuples. A mismatch is an InvalidArgument status whose
// message names the shape index, how many elements differ, the first few
// differing multi-indices with the expected and actual values, and the
// largest absolute and relative errors.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_CORE_LITERAL_COMPARISON_H_
#define AXLE_CORE_LITERAL_COMPARISON_H_

#include "absl/status/status.h"
#include "axle/core/literal.h"

namespace axle {

// XLA's ErrorSpec (the fields this comparison uses).
struct ErrorSpec {
  ErrorSpec() = default;
  explicit ErrorSpec(double abs_bound, double rel_bound = 0, bool relaxed = false)
      : abs(abs_bound), rel(rel_bound), relaxed_nans(relaxed) {}

  double abs = 0;  // absolute error bound
  double rel = 0;  // relative error bound
  // When true, an expected NaN accepts any actual value.
  bool relaxed_nans = false;
  // When true, an expected infinity may be matched by a large finite actual
  // value: it is compared as the type's largest (or lowest) finite value.
  bool fewer_infs_ok = false;
  // When > 0, the relative bound of each floating-point leaf is at least
  // this many units of its type's precision (2^-(significand bits - 1)):
  // one bound that suits f32 leaves and bf16 / f16 / f8 leaves alike (two
  // backends that round one bf16 result differently differ by a unit).
  double min_ulps = 0;
};

absl::Status LiteralsEqual(const Literal& expected, const Literal& actual);
absl::Status LiteralsNear(const Literal& expected, const Literal& actual, const ErrorSpec& error);

}  // namespace axle

#endif  // AXLE_CORE_LITERAL_COMPARISON_H_
