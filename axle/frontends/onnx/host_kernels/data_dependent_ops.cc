//===- data_dependent_ops.cc - NonZero, Compress, Unique on the host --------===//
//
// Ops whose output shape depends on the input values. Elements are moved as
// bytes (any element type); Unique compares them by value (integers exactly,
// floating point as doubles, NaNs last and equal to each other).
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <optional>

#include "axle/frontends/graph/host_kernel.h"
#include "axle/frontends/onnx/kernels/kernels.h"

namespace axle::onnx {
namespace {

using graph::HostKernelContext;

absl::StatusOr<int64_t> NormalizedAxis(const HostKernelContext& ctx, int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank) {
    return ctx.Error("axis ", axis, " is out of range for rank ", rank);
  }
  return axis < 0 ? axis + rank : axis;
}

// Whether an element is a whole number of bytes (Literal's layout).
absl::Status CheckByteSized(const HostKernelContext& ctx, const Literal& value) {
  PrimitiveType type = value.shape().element_type();
  if (primitive_util::BitWidth(type) % 8 != 0 || primitive_util::IsComplexType(type)) {
    return ctx.Error("element type ", primitive_util::LowercasePrimitiveTypeName(type),
                     " is not supported");
  }
  return absl::OkStatus();
}

// The input viewed as [outer, n, inner] around `axis`.
// Compress's and Unique's convention: along attribute 'axis' when given,
// else along the only axis of the input flattened (`flat`).
struct AxisOrFlat {
  std::optional<Literal> flat;
  int64_t axis = 0;
};
absl::Status AlongAxisOrFlat(const HostKernelContext& ctx, const Literal& x,
                             std::optional<int64_t> axis_attr, AxisOrFlat* out) {
  if (axis_attr) {
    absl::StatusOr<int64_t> a = NormalizedAxis(ctx, *axis_attr, x.shape().rank());
    if (!a.ok()) return a.status();
    out->axis = *a;
    return absl::OkStatus();
  }
  absl::StatusOr<Literal> reshaped = x.Reshape({x.element_count()});
  if (!reshaped.ok()) return reshaped.status();
  out->flat = std::move(*reshaped);
  return absl::OkStatus();
}

struct AxisView {
  int64_t outer = 1, n = 1, inner = 1;
  int64_t element_bytes = 0;
};
AxisView ViewAround(const Literal& value, int64_t axis) {
  AxisView v;
  const Shape& s = value.shape();
  for (int64_t d = 0; d < s.rank(); ++d) {
    if (d < axis) v.outer *= s.dimensions(d);
    if (d == axis) v.n = s.dimensions(d);
    if (d > axis) v.inner *= s.dimensions(d);
  }
  v.element_bytes = primitive_util::ByteWidth(s.element_type());
  return v;
}

// Gathers slices `keep` of `value` along `axis` (bytewise).
Literal TakeAlongAxis(const Literal& value, int64_t axis, const std::vector<int64_t>& keep) {
  AxisView v = ViewAround(value, axis);
  std::vector<int64_t> dims(value.shape().dimensions().begin(), value.shape().dimensions().end());
  dims[axis] = static_cast<int64_t>(keep.size());
  Literal out(ShapeUtil::MakeShape(value.shape().element_type(), dims));
  const auto* src = static_cast<const uint8_t*>(value.untyped_data());
  auto* dst = static_cast<uint8_t*>(out.untyped_data());
  int64_t row = v.inner * v.element_bytes;
  if (row == 0) return out;
  for (int64_t o = 0; o < v.outer; ++o) {
    for (size_t k = 0; k < keep.size(); ++k) {
      std::memcpy(dst + (o * keep.size() + k) * row, src + (o * v.n + keep[k]) * row, row);
    }
  }
  return out;
}

absl::Status NonZero(HostKernelContext* ctx) {
  const Literal& x = ctx->Input(0);
  if (absl::Status s = CheckByteSized(*ctx, x); !s.ok()) return s;
  const Shape& shape = x.shape();
  std::vector<int64_t> hits;
  for (int64_t i = 0; i < x.element_count(); ++i) {
    bool nonzero =
        primitive_util::IsIntegralType(shape.element_type()) || shape.element_type() == PRED
            ? x.GetIntegralAsU64(i) != 0u
            : x.GetAsDouble(i) != 0;  // NaN counts, as in numpy
    if (nonzero) hits.push_back(i);
  }
  int64_t rank = shape.rank(), count = static_cast<int64_t>(hits.size());
  Literal out(ShapeUtil::MakeShape(S64, {rank, count}));
  absl::Span<int64_t> data = out.data<int64_t>();
  for (int64_t k = 0; k < count; ++k) {
    int64_t linear = hits[k];
    for (int64_t d = rank - 1; d >= 0; --d) {
      data[d * count + k] = linear % shape.dimensions(d);
      linear /= shape.dimensions(d);
    }
  }
  ctx->SetOutput(0, std::move(out));
  return absl::OkStatus();
}

absl::Status Compress(HostKernelContext* ctx) {
  const Literal& x = ctx->Input(0);
  if (absl::Status s = CheckByteSized(*ctx, x); !s.ok()) return s;
  if (!ctx->HasInput(1) || ctx->Input(1).shape().rank() != 1) {
    return ctx->Error("condition must be a 1-D tensor");
  }
  const Literal& condition = ctx->Input(1);
  absl::StatusOr<std::optional<int64_t>> axis_attr = ctx->GetOptionalAttrInt("axis");
  if (!axis_attr.ok()) return axis_attr.status();
  AxisOrFlat along;
  if (absl::Status s = AlongAxisOrFlat(*ctx, x, *axis_attr, &along); !s.ok()) return s;
  const Literal* data = along.flat ? &*along.flat : &x;
  int64_t axis = along.axis;
  int64_t n = data->shape().dimensions(axis);
  if (condition.element_count() > n) {
    return ctx->Error("condition has ", condition.element_count(),
                      " elements but the axis has only ", n);
  }
  std::vector<int64_t> keep;
  for (int64_t i = 0; i < condition.element_count(); ++i) {
    if (condition.GetAsDouble(i) != 0) keep.push_back(i);
  }
  ctx->SetOutput(0, TakeAlongAxis(*data, axis, keep));
  return absl::OkStatus();
}

// Three-way comparison of slices a and b of `view` (elements by value).
int CompareSlices(const Literal& value, const AxisView& view, int64_t a, int64_t b) {
  PrimitiveType type = value.shape().element_type();
  for (int64_t o = 0; o < view.outer; ++o) {
    for (int64_t i = 0; i < view.inner; ++i) {
      int64_t ia = (o * view.n + a) * view.inner + i, ib = (o * view.n + b) * view.inner + i;
      if (primitive_util::IsUnsignedIntegralType(type)) {
        uint64_t x = *value.GetIntegralAsU64(ia), y = *value.GetIntegralAsU64(ib);
        if (x != y) return x < y ? -1 : 1;
      } else if (primitive_util::IsIntegralType(type) || type == PRED) {
        int64_t x = *value.GetIntegralAsS64(ia), y = *value.GetIntegralAsS64(ib);
        if (x != y) return x < y ? -1 : 1;
      } else {  // NaNs sort last and equal each other, as numpy's unique
        double x = value.GetAsDouble(ia), y = value.GetAsDouble(ib);
        if (std::isnan(x) || std::isnan(y)) {
          if (std::isnan(x) != std::isnan(y)) return std::isnan(x) ? 1 : -1;
        } else if (x != y) {
          return x < y ? -1 : 1;
        }
      }
    }
  }
  return 0;
}

absl::Status Unique(HostKernelContext* ctx) {
  const Literal& x = ctx->Input(0);
  if (absl::Status s = CheckByteSized(*ctx, x); !s.ok()) return s;
  absl::StatusOr<std::optional<int64_t>> axis_attr = ctx->GetOptionalAttrInt("axis");
  if (!axis_attr.ok()) return axis_attr.status();
  absl::StatusOr<int64_t> sorted = ctx->GetAttrInt("sorted", 1);
  if (!sorted.ok()) return sorted.status();
  AxisOrFlat along;
  if (absl::Status s = AlongAxisOrFlat(*ctx, x, *axis_attr, &along); !s.ok()) return s;
  const Literal* data = along.flat ? &*along.flat : &x;
  int64_t axis = along.axis;
  AxisView view = ViewAround(*data, axis);
  // Slices in order (stable, so equal slices keep their first occurrence
  // first), then runs of equal slices.
  std::vector<int64_t> order(view.n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return CompareSlices(*data, view, a, b) < 0; });
  std::vector<int64_t> first, counts, inverse(view.n);
  for (size_t k = 0; k < order.size(); ++k) {
    if (k == 0 || CompareSlices(*data, view, order[k - 1], order[k]) != 0) {
      first.push_back(order[k]);
      counts.push_back(0);
    }
    ++counts.back();
    inverse[order[k]] = static_cast<int64_t>(first.size()) - 1;
  }
  int64_t unique = static_cast<int64_t>(first.size());
  std::vector<int64_t> rank(unique);  // output position of each sorted run
  std::iota(rank.begin(), rank.end(), 0);
  if (*sorted == 0) {  // by first occurrence
    std::vector<int64_t> by_first(unique);
    std::iota(by_first.begin(), by_first.end(), 0);
    std::sort(by_first.begin(), by_first.end(),
              [&](int64_t a, int64_t b) { return first[a] < first[b]; });
    for (int64_t k = 0; k < unique; ++k) rank[by_first[k]] = k;
  }
  std::vector<int64_t> keep(unique), out_first(unique), out_counts(unique);
  for (int64_t r = 0; r < unique; ++r) {
    keep[rank[r]] = first[r];
    out_first[rank[r]] = first[r];
    out_counts[rank[r]] = counts[r];
  }
  for (int64_t& i : inverse) i = rank[i];
  ctx->SetOutput(0, TakeAlongAxis(*data, axis, keep));
  if (ctx->HasOutput(1)) ctx->SetOutput(1, LiteralUtil::CreateR1<int64_t>(out_first));
  if (ctx->HasOutput(2)) ctx->SetOutput(2, LiteralUtil::CreateR1<int64_t>(inverse));
  if (ctx->HasOutput(3)) ctx->SetOutput(3, LiteralUtil::CreateR1<int64_t>(out_counts));
  return absl::OkStatus();
}

REGISTER_HOST_KERNEL(Name("NonZero").SinceVersion(9), kDataDependentShape, NonZero);
REGISTER_HOST_KERNEL(Name("Compress").SinceVersion(9), kDataDependentShape, Compress);
REGISTER_HOST_KERNEL(Name("Unique").SinceVersion(11), kDataDependentShape, Unique);

}  // namespace

AXLE_ONNX_KERNEL_FILE(data_dependent)

}  // namespace axle::onnx
