//===- cudnn_convolution.cc - Which convolutions cuDNN runs, and how -------===//
#include "axle/gpu/cudnn_convolution.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "axle/base/environment_options.h"
#include "axle/base/status_macros.h"

namespace axle::gpu {
namespace {

absl::Status NotTaken(const ConvPlan& plan, absl::string_view why) {
  return absl::UnimplementedError(
      absl::StrCat("cuDNN does not take convolution ", plan.instruction, ": ", why));
}

bool FitsInt(int64_t value) { return value >= 0 && value <= std::numeric_limits<int>::max(); }

}  // namespace

bool CudnnEnabledByEnvironment() { return EnvironmentOptions::Read().cudnn != "0"; }

CudnnMath CudnnMathFor(const CudnnConvConfig& config) {
  if (config.type != F32) return CudnnMath::kTensorOp;
  return config.allow_tf32 ? CudnnMath::kDefault : CudnnMath::kFma;
}

namespace {

// The forward convolution a cuDNN call describes, in 64-bit numbers, before
// the checks every kind shares.
struct ForwardView {
  CudnnConvKind kind = CudnnConvKind::kForward;
  // x (n, c, h, w), y (n, k, p, q), the filter (k, c / groups, r, s), each
  // with its element strides in its HLO buffer.
  std::array<int64_t, 4> x_dims{}, x_strides{}, y_dims{}, y_strides{};
  std::array<int64_t, 4> w_dims{}, w_strides{};
  std::array<int64_t, 2> padding{}, strides{}, dilations{};
  int64_t groups = 1;
  bool cross_correlation = true;
};

// One of the convolution's HLO arrays as a 4-d cuDNN array: the (size,
// element stride) pairs `first` and `second`, then its two spatial dims.
enum class HloArray { kLhs, kRhs, kOutput };
struct SizeAndStride {
  int64_t size, stride;
};
void SetView(const ConvPlan& plan, HloArray array, SizeAndStride first, SizeAndStride second,
             std::array<int64_t, 4>& dims, std::array<int64_t, 4>& strides) {
  dims = {first.size, second.size, 0, 0};
  strides = {first.stride, second.stride, 0, 0};
  for (int i = 0; i < 2; ++i) {
    const ConvSpatialPlan& s = plan.spatial[i];
    const bool lhs = array == HloArray::kLhs, rhs = array == HloArray::kRhs;
    dims[2 + i] = lhs ? s.in_size : rhs ? s.window_size : s.out_size;
    strides[2 + i] = lhs ? s.in_stride : rhs ? s.kernel_stride : s.out_stride;
  }
}

// Whether every spatial dimension reverses its window alike; `reversed` is
// whether they do.
bool ReversalAlike(const ConvPlan& plan, bool& reversed) {
  reversed = plan.spatial[0].reversal;
  return plan.spatial[1].reversal == reversed;
}

absl::StatusOr<ForwardView> ForwardViewOf(const ConvPlan& plan) {
  const int64_t in_batch =
      plan.batch_group_size * (plan.out_features / plan.output_features_per_batch_group);
  if (in_batch != plan.out_batch) return NotTaken(plan, "batch_group_count > 1");
  ForwardView view;
  view.kind = CudnnConvKind::kForward;
  view.groups = plan.out_features / plan.output_features_per_feature_group;
  bool reversed = false;
  if (!ReversalAlike(plan, reversed)) {
    return NotTaken(plan, "window reversal in one spatial dimension only");
  }
  view.cross_correlation = !reversed;
  for (int i = 0; i < 2; ++i) {
    const ConvSpatialPlan& s = plan.spatial[i];
    if (s.base_dilation != 1) return NotTaken(plan, "lhs (base) dilation");
    if (s.padding_low != s.padding_high) return NotTaken(plan, "asymmetric padding");
    view.padding[i] = s.padding_low;
    view.strides[i] = s.stride;
    view.dilations[i] = s.window_dilation;
  }
  SetView(plan, HloArray::kLhs, {plan.out_batch, plan.in_batch_stride},
          {view.groups * plan.input_features_per_group, plan.in_feature_stride}, view.x_dims,
          view.x_strides);
  SetView(plan, HloArray::kOutput, {plan.out_batch, plan.out_batch_stride},
          {plan.out_features, plan.out_feature_stride}, view.y_dims, view.y_strides);
  SetView(plan, HloArray::kRhs, {plan.out_features, plan.kernel_out_feature_stride},
          {plan.input_features_per_group, plan.kernel_in_feature_stride}, view.w_dims,
          view.w_strides);
  return view;
}

// dx = backward data (dy = lhs, w = rhs with its features swapped).
absl::StatusOr<ForwardView> BackwardDataViewOf(const ConvPlan& plan) {
  if (plan.out_features != plan.output_features_per_batch_group) {
    return NotTaken(plan, "batch_group_count > 1");
  }
  if (plan.out_features != plan.output_features_per_feature_group) {
    return NotTaken(plan, "feature_group_count > 1");
  }
  ForwardView view;
  view.kind = CudnnConvKind::kBackwardData;
  bool reversed = false;
  if (!ReversalAlike(plan, reversed)) {
    return NotTaken(plan, "window reversal in one spatial dimension only");
  }
  // The HLO window reversed is the forward filter read as cross-correlation.
  view.cross_correlation = reversed;
  for (int i = 0; i < 2; ++i) {
    const ConvSpatialPlan& s = plan.spatial[i];
    if (s.stride != 1) return NotTaken(plan, "window strides");
    if (s.padding_low != s.padding_high) return NotTaken(plan, "asymmetric padding");
    view.padding[i] = (s.window_size - 1) * s.window_dilation - s.padding_low;
    view.strides[i] = s.base_dilation;
    view.dilations[i] = s.window_dilation;
  }
  SetView(plan, HloArray::kOutput, {plan.out_batch, plan.out_batch_stride},
          {plan.out_features, plan.out_feature_stride}, view.x_dims, view.x_strides);
  SetView(plan, HloArray::kLhs, {plan.out_batch, plan.in_batch_stride},
          {plan.input_features_per_group, plan.in_feature_stride}, view.y_dims, view.y_strides);
  SetView(plan, HloArray::kRhs, {plan.input_features_per_group, plan.kernel_in_feature_stride},
          {plan.out_features, plan.kernel_out_feature_stride}, view.w_dims, view.w_strides);
  return view;
}

// dw = backward filter (x = lhs with batch and feature swapped, dy = rhs).
absl::StatusOr<ForwardView> BackwardFilterViewOf(const ConvPlan& plan) {
  if (plan.out_features != plan.output_features_per_feature_group) {
    return NotTaken(plan, "feature_group_count > 1");
  }
  ForwardView view;
  view.kind = CudnnConvKind::kBackwardFilter;
  view.groups = plan.out_features / plan.output_features_per_batch_group;
  for (int i = 0; i < 2; ++i) {
    const ConvSpatialPlan& s = plan.spatial[i];
    if (s.base_dilation != 1) return NotTaken(plan, "lhs (base) dilation");
    if (s.reversal) return NotTaken(plan, "window reversal");
    if (s.padding_low != s.padding_high) return NotTaken(plan, "asymmetric padding");
    view.padding[i] = s.padding_low;
    view.strides[i] = s.window_dilation;
    view.dilations[i] = s.stride;
  }
  SetView(plan, HloArray::kLhs, {plan.input_features_per_group, plan.in_feature_stride},
          {plan.batch_group_size * view.groups, plan.in_batch_stride}, view.x_dims, view.x_strides);
  SetView(plan, HloArray::kRhs, {plan.input_features_per_group, plan.kernel_in_feature_stride},
          {plan.out_features, plan.kernel_out_feature_stride}, view.y_dims, view.y_strides);
  SetView(plan, HloArray::kOutput, {plan.out_features, plan.out_feature_stride},
          {plan.out_batch, plan.out_batch_stride}, view.w_dims, view.w_strides);
  return view;
}

// Dense strides of (n, c, h, w) dimensions: NCHW, or NHWC when `nhwc`.
std::array<int64_t, 4> DenseStrides(const std::array<int64_t, 4>& dims, bool nhwc) {
  const int64_t c = dims[1], h = dims[2], w = dims[3];
  if (nhwc) return {h * w * c, 1, w * c, c};
  return {c * h * w, h * w, w, 1};
}

// Whether `strides` address `dims` as `dense` does (dimensions of size 1
// never move, so their strides do not matter).
bool SameStrides(const std::array<int64_t, 4>& dims, const std::array<int64_t, 4>& strides,
                 const std::array<int64_t, 4>& dense) {
  for (int i = 0; i < 4; ++i) {
    if (dims[i] > 1 && strides[i] != dense[i]) return false;
  }
  return true;
}

// The checks every kind shares, and the config.
absl::StatusOr<CudnnConvConfig> ConfigOfView(const ConvPlan& plan, const ForwardView& view) {
  for (int i = 0; i < 2; ++i) {
    if (view.padding[i] < 0) return NotTaken(plan, "negative padding");
    if (view.strides[i] < 1 || view.dilations[i] < 1) return NotTaken(plan, "a zero stride");
    // cuDNN derives y's size from x's, the filter's and the window.
    const int64_t span = (view.w_dims[2 + i] - 1) * view.dilations[i] + 1;
    const int64_t padded = view.x_dims[2 + i] + 2 * view.padding[i];
    if (padded < span || (padded - span) / view.strides[i] + 1 != view.y_dims[2 + i]) {
      return NotTaken(plan, "the forward convolution's output size is not cuDNN's");
    }
  }
  if (view.groups < 1 || view.x_dims[1] % view.groups != 0 ||
      view.x_dims[1] / view.groups != view.w_dims[1] || view.w_dims[0] != view.y_dims[1] ||
      view.x_dims[0] != view.y_dims[0]) {
    return NotTaken(plan, "inconsistent features or groups");
  }
  // The tensors: dense NCHW or dense NHWC, both alike.
  int format = -1;
  for (const bool nhwc : {false, true}) {
    if (SameStrides(view.x_dims, view.x_strides, DenseStrides(view.x_dims, nhwc)) &&
        SameStrides(view.y_dims, view.y_strides, DenseStrides(view.y_dims, nhwc))) {
      format = nhwc ? 1 : 0;
      break;
    }
  }
  if (format < 0) {
    return NotTaken(plan, "input and output are not both dense NCHW or both dense NHWC");
  }
  CudnnConvConfig config;
  config.kind = view.kind;
  config.type = plan.result_type;
  config.filter_nhwc = format == 1;
  config.filter_strides = view.w_strides;
  config.relayout_filter =
      !SameStrides(view.w_dims, view.w_strides, DenseStrides(view.w_dims, config.filter_nhwc));
  config.groups = static_cast<int>(view.groups);
  config.cross_correlation = view.cross_correlation;
  const std::array<int64_t, 4> x_strides = DenseStrides(view.x_dims, config.filter_nhwc);
  const std::array<int64_t, 4> y_strides = DenseStrides(view.y_dims, config.filter_nhwc);
  auto to_int = [&](const std::array<int64_t, 4>& values, std::array<int, 4>& to) {
    for (int i = 0; i < 4; ++i) {
      if (!FitsInt(values[i])) return false;
      to[i] = static_cast<int>(values[i]);
    }
    return true;
  };
  if (!to_int(view.x_dims, config.x_dims) || !to_int(x_strides, config.x_strides) ||
      !to_int(view.y_dims, config.y_dims) || !to_int(y_strides, config.y_strides) ||
      !to_int(view.w_dims, config.w_dims) || !FitsInt(plan.lhs_elements) ||
      !FitsInt(plan.out_elements) || !FitsInt(plan.rhs_elements) ||
      !FitsInt(view.x_dims[0] * x_strides[0]) || !FitsInt(view.y_dims[0] * y_strides[0])) {
    return NotTaken(plan, "a size or stride past 32 bits");
  }
  for (int i = 0; i < 2; ++i) {
    if (!FitsInt(view.padding[i]) || !FitsInt(view.strides[i]) || !FitsInt(view.dilations[i])) {
      return NotTaken(plan, "a size or stride past 32 bits");
    }
    config.padding[i] = static_cast<int>(view.padding[i]);
    config.strides[i] = static_cast<int>(view.strides[i]);
    config.dilations[i] = static_cast<int>(view.dilations[i]);
  }
  const int64_t filter_elements = view.w_dims[0] * view.w_dims[1] * view.w_dims[2] * view.w_dims[3];
  config.filter_bytes = filter_elements * primitive_util::ByteWidth(config.type);
  const int64_t bytes = (plan.lhs_elements + plan.rhs_elements + plan.out_elements) *
                        primitive_util::ByteWidth(config.type);
  config.workspace_limit = std::clamp<int64_t>(2 * bytes, int64_t{4} << 20, int64_t{64} << 20);
  return config;
}

}  // namespace

std::array<int64_t, 4> CudnnFilterStrides(const CudnnConvConfig& config) {
  const std::array<int64_t, 4> dims = {config.w_dims[0], config.w_dims[1], config.w_dims[2],
                                       config.w_dims[3]};
  return DenseStrides(dims, config.filter_nhwc);
}

std::string CudnnConvKey(const CudnnConvConfig& config) {
  std::string key = absl::StrCat(CudnnConvKindName(config.kind), " ",
                                 primitive_util::LowercasePrimitiveTypeName(config.type));
  auto append = [&key](absl::string_view label, auto values) {
    absl::StrAppend(&key, " ", label, "=", absl::StrJoin(values, ","));
  };
  append("x", config.x_dims);
  append("x_strides", config.x_strides);
  append("y", config.y_dims);
  append("y_strides", config.y_strides);
  append("w", config.w_dims);
  append("padding", config.padding);
  append("strides", config.strides);
  append("dilations", config.dilations);
  absl::StrAppend(&key, " format=", config.filter_nhwc ? "nhwc" : "nchw", " groups=", config.groups,
                  config.cross_correlation ? " cross_correlation" : " convolution",
                  config.allow_tf32 ? " tf32" : "", " workspace<=", config.workspace_limit);
  return key;
}

const char* CudnnConvKindName(CudnnConvKind kind) {
  switch (kind) {
    case CudnnConvKind::kForward:
      return "cudnnConvolutionForward";
    case CudnnConvKind::kBackwardData:
      return "cudnnConvolutionBackwardData";
    case CudnnConvKind::kBackwardFilter:
      return "cudnnConvolutionBackwardFilter";
  }
  return "cudnnConvolution";
}

absl::StatusOr<CudnnConvConfig> CudnnConvConfigFor(const ConvPlan& plan) {
  if (plan.spatial.size() != 2) {
    return NotTaken(plan, absl::StrCat(plan.spatial.size(), " spatial dimensions (2 only)"));
  }
  const PrimitiveType type = plan.result_type;
  if ((type != F32 && type != F16 && type != BF16) || plan.lhs_type != type ||
      plan.rhs_type != type) {
    return NotTaken(plan, "operands and result must be all f32, all f16 or all bf16");
  }
  if (plan.batch_group_size == 0 || plan.out_elements == 0 || plan.lhs_elements == 0 ||
      plan.rhs_elements == 0) {
    return NotTaken(plan, "empty operand or result");
  }
  // Each kind in turn; the forward's reason when none takes it (a
  // convolution without lhs dilation), else the backward data's.
  absl::Status forward_reason;
  absl::StatusOr<ForwardView> forward = ForwardViewOf(plan);
  if (forward.ok()) {
    absl::StatusOr<CudnnConvConfig> config = ConfigOfView(plan, *forward);
    if (config.ok()) return config;
    forward_reason = config.status();
  } else {
    forward_reason = forward.status();
  }
  const bool lhs_dilated = plan.spatial[0].base_dilation != 1 || plan.spatial[1].base_dilation != 1;
  if (lhs_dilated) {
    AXLE_ASSIGN_OR_RETURN(ForwardView backward_data, BackwardDataViewOf(plan));
    return ConfigOfView(plan, backward_data);
  }
  absl::StatusOr<ForwardView> backward_filter = BackwardFilterViewOf(plan);
  if (backward_filter.ok()) {
    absl::StatusOr<CudnnConvConfig> config = ConfigOfView(plan, *backward_filter);
    if (config.ok()) return config;
  }
  return forward_reason;
}

}  // namespace axle::gpu
