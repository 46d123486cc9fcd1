//===- literal_comparison.cc - Exact and approximate literal equality -----===//
//
// Walks both literals leaf by leaf; each array leaf is compared element by
// element in its native type (converted to double for the error arithmetic,
// which is exact for every real float type).
//
//===----------------------------------------------------------------------===//
#include "axle/core/literal_comparison.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "axle/core/literal_text.h"

namespace axle {
namespace {

constexpr int kMaxReportedMismatches = 5;
constexpr double kInf = std::numeric_limits<double>::infinity();

std::string MultiIndexString(const Shape& shape, int64_t linear) {
  std::vector<int64_t> index(shape.rank());
  for (int64_t d = shape.rank() - 1; d >= 0; --d) {
    int64_t size = shape.dimensions(d);
    if (size <= 0) break;
    index[d] = linear % size;
    linear /= size;
  }
  return absl::StrCat("{", absl::StrJoin(index, ","), "}");
}

// The errors of one real element, and whether it is out of bounds.
struct ElementError {
  double abs = 0;
  double rel = 0;
  bool mismatch = false;
};

// Compares one real value; `max_finite` is the type's largest finite value
// (for fewer_infs_ok).
ElementError CompareReal(double e, double a, double max_finite, const ErrorSpec& spec) {
  ElementError err;
  if (e == a) return err;  // also equal infinities, and -0 == 0
  if (std::isnan(e) || std::isnan(a)) {
    if (std::isnan(e) && (std::isnan(a) || spec.relaxed_nans)) return err;
    err.abs = err.rel = kInf;
    err.mismatch = true;
    return err;
  }
  if (std::isinf(e) && !std::isinf(a) && spec.fewer_infs_ok) {
    double clamped = e > 0 ? max_finite : -max_finite;
    err.abs = std::fabs(a - clamped);
    err.rel = err.abs / std::fabs(clamped);
  } else if (std::isinf(e) || std::isinf(a)) {
    err.abs = err.rel = kInf;
    err.mismatch = true;
    return err;
  } else {
    err.abs = std::fabs(a - e);
    err.rel = e != 0 ? err.abs / std::fabs(e) : kInf;
  }
  err.mismatch = err.abs > spec.abs && err.rel > spec.rel;
  return err;
}

// Collects the mismatches of one array leaf and renders the report.
class LeafReport {
 public:
  LeafReport(const Literal& expected, const Literal& actual, const ShapeIndex& index)
      : expected_(expected), actual_(actual), index_(index) {}

  void Add(int64_t i, const ElementError& err) {
    if (std::isfinite(err.abs) && err.abs > max_abs_) {
      max_abs_ = err.abs;
      max_abs_at_ = i;
    }
    if (std::isfinite(err.rel) && err.rel > max_rel_) {
      max_rel_ = err.rel;
      max_rel_at_ = i;
    }
    if (!err.mismatch) return;
    if (mismatches_++ < kMaxReportedMismatches) {
      const Shape& shape = expected_.shape();
      absl::StrAppend(&details_, "\n  at ", MultiIndexString(shape, i), ": expected ",
                      LiteralElementToString(expected_, i), ", actual ",
                      LiteralElementToString(actual_, i));
      if (err.abs != 0 || err.rel != 0) {
        absl::StrAppend(&details_, " (abs error ", err.abs, ", rel error ", err.rel, ")");
      }
    }
  }

  absl::Status Finish(const std::optional<ErrorSpec>& spec) const {
    if (mismatches_ == 0) return absl::OkStatus();
    const Shape& shape = expected_.shape();
    int64_t n = expected_.element_count();
    std::string message = absl::StrCat(
        "literals differ", index_.empty() ? "" : " at shape index " + ShapeIndexToString(index_),
        ": ", mismatches_, " of ", n, " elements of ", shape.ToString(false), " mismatch (",
        absl::SixDigits(100.0 * mismatches_ / n), "%)");
    if (spec) {
      absl::StrAppend(&message, ", abs bound ", spec->abs, ", rel bound ", spec->rel);
    }
    if (max_abs_at_ >= 0) {
      absl::StrAppend(&message, "; max abs error ", max_abs_, " at ",
                      MultiIndexString(shape, max_abs_at_));
    }
    if (max_rel_at_ >= 0) {
      absl::StrAppend(&message, "; max rel error ", max_rel_, " at ",
                      MultiIndexString(shape, max_rel_at_));
    }
    absl::StrAppend(&message, details_);
    if (mismatches_ > kMaxReportedMismatches) {
      absl::StrAppend(&message, "\n  ... and ", mismatches_ - kMaxReportedMismatches, " more");
    }
    return absl::InvalidArgumentError(message);
  }

 private:
  const Literal& expected_;
  const Literal& actual_;
  const ShapeIndex& index_;
  int64_t mismatches_ = 0;
  double max_abs_ = 0;
  double max_rel_ = 0;
  int64_t max_abs_at_ = -1;
  int64_t max_rel_at_ = -1;
  std::string details_;
};

// The element types compared here have no padding; XLA compares floats by
// their bits.
template <typename T>
bool BitwiseEqual(const T& a, const T& b) {
  // NOLINTNEXTLINE(bugprone-suspicious-memory-comparison)
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

absl::Status CompareArrays(const Literal& expected, const Literal& actual, const ShapeIndex& index,
                           const std::optional<ErrorSpec>& spec) {
  LeafReport report(expected, actual, index);
  const int64_t n = expected.element_count();
  std::optional<ErrorSpec> leaf_spec = spec;
  const PrimitiveType type = primitive_util::ComplexComponentType(expected.shape().element_type());
  if (leaf_spec && leaf_spec->min_ulps > 0 && primitive_util::IsFloatingPointType(type)) {
    const double unit = std::ldexp(1.0, 1 - primitive_util::SignificandWidth(type));
    leaf_spec->rel = std::max(leaf_spec->rel, leaf_spec->min_ulps * unit);
  }
  PrimitiveTypeSwitch(
      [&]<typename T>() {
        const T* e = static_cast<const T*>(expected.untyped_data());
        const T* a = static_cast<const T*>(actual.untyped_data());
        for (int64_t i = 0; i < n; ++i) {
          ElementError err;
          if constexpr (is_float_v<T> || is_complex_v<T>) {
            if (!leaf_spec) {
              err.mismatch = !BitwiseEqual(e[i], a[i]);
            } else if constexpr (is_complex_v<T>) {
              using Part = typename T::value_type;
              const double max_finite = std::numeric_limits<Part>::max();
              ElementError re = CompareReal(e[i].real(), a[i].real(), max_finite, *leaf_spec);
              ElementError im = CompareReal(e[i].imag(), a[i].imag(), max_finite, *leaf_spec);
              err.abs = std::max(re.abs, im.abs);
              err.rel = std::max(re.rel, im.rel);
              err.mismatch = re.mismatch || im.mismatch;
            } else {
              err = CompareReal(static_cast<double>(e[i]), static_cast<double>(a[i]),
                                static_cast<double>(HighestFinite<T>()), *leaf_spec);
            }
          } else {
            err.mismatch = !(e[i] == a[i]);
          }
          report.Add(i, err);
        }
      },
      expected.shape().element_type());
  return report.Finish(leaf_spec);
}

absl::Status Compare(const Literal& expected, const Literal& actual, ShapeIndex* index,
                     const std::optional<ErrorSpec>& spec) {
  const Shape& es = expected.shape();
  const Shape& as = actual.shape();
  auto shape_mismatch = [&] {
    return absl::InvalidArgumentError(absl::StrCat(
        "shape mismatch", index->empty() ? "" : " at shape index " + ShapeIndexToString(*index),
        ": expected ", es.ToString(false), ", actual ", as.ToString(false)));
  };
  if (es.IsTuple() || as.IsTuple()) {
    if (!es.IsTuple() || !as.IsTuple() || expected.tuple_size() != actual.tuple_size()) {
      return shape_mismatch();
    }
    std::vector<std::string> messages;
    for (int64_t i = 0; i < expected.tuple_size(); ++i) {
      index->push_back(i);
      absl::Status s = Compare(expected.tuple_element(i), actual.tuple_element(i), index, spec);
      index->pop_back();
      if (!s.ok()) messages.emplace_back(s.message());
    }
    if (messages.empty()) return absl::OkStatus();
    return absl::InvalidArgumentError(absl::StrJoin(messages, "\n"));
  }
  if (es.element_type() != as.element_type() || es.dimensions() != as.dimensions() ||
      es.dynamic_dimensions() != as.dynamic_dimensions()) {
    return shape_mismatch();
  }
  if (!es.IsArray()) return absl::OkStatus();  // tokens
  return CompareArrays(expected, actual, *index, spec);
}

}  // namespace

absl::Status LiteralsEqual(const Literal& expected, const Literal& actual) {
  ShapeIndex index;
  return Compare(expected, actual, &index, std::nullopt);
}

absl::Status LiteralsNear(const Literal& expected, const Literal& actual, const ErrorSpec& error) {
  ShapeIndex index;
  return Compare(expected, actual, &index, error);
}

}  // namespace axle
