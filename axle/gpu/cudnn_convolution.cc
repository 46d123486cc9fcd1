//===- cudnn_convolution.cc - Which convolutions cuDNN runs, and how -------===//
#include "axle/gpu/cudnn_convolution.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string>

#include "absl/strings/str_cat.h"

namespace axle::gpu {
namespace {

absl::Status NotTaken(const ConvPlan& plan, absl::string_view why) {
  return absl::UnimplementedError(
      absl::StrCat("cuDNN does not take convolution ", plan.instruction, ": ", why));
}

bool FitsInt(int64_t value) { return value >= 0 && value <= std::numeric_limits<int>::max(); }

}  // namespace

bool CudnnEnabledByEnvironment() {
  const char* value = std::getenv("AXLE_CUDNN");
  return value == nullptr || std::string(value) != "0";
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
  if (plan.batch_group_size == 0 || plan.out_elements == 0) {
    return NotTaken(plan, "empty operand or result");
  }
  const int64_t in_batch =
      plan.batch_group_size * (plan.out_features / plan.output_features_per_batch_group);
  if (in_batch != plan.out_batch) return NotTaken(plan, "batch_group_count > 1");
  const int64_t groups = plan.out_features / plan.output_features_per_feature_group;
  CudnnConvConfig config;
  config.type = type;
  config.groups = static_cast<int>(groups);
  config.cross_correlation = !plan.spatial[0].reversal;
  for (int i = 0; i < 2; ++i) {
    const ConvSpatialPlan& s = plan.spatial[i];
    if (s.base_dilation != 1) return NotTaken(plan, "lhs (base) dilation");
    if (s.padding_low != s.padding_high || s.padding_low < 0) {
      return NotTaken(plan, "asymmetric or negative padding");
    }
    if (s.reversal != plan.spatial[0].reversal) {
      return NotTaken(plan, "window reversal in one spatial dimension only");
    }
    config.padding[i] = static_cast<int>(s.padding_low);
    config.strides[i] = static_cast<int>(s.stride);
    config.dilations[i] = static_cast<int>(s.window_dilation);
  }
  const int64_t c_per_group = plan.input_features_per_group;
  const int64_t r = plan.spatial[0].window_size;
  const int64_t q = plan.spatial[1].window_size;
  const int64_t k = plan.out_features;
  const bool kcrs = plan.kernel_out_feature_stride == c_per_group * r * q &&
                    plan.kernel_in_feature_stride == r * q && plan.spatial[0].kernel_stride == q &&
                    plan.spatial[1].kernel_stride == 1;
  const bool krsc = plan.kernel_out_feature_stride == r * q * c_per_group &&
                    plan.kernel_in_feature_stride == 1 &&
                    plan.spatial[0].kernel_stride == q * c_per_group &&
                    plan.spatial[1].kernel_stride == c_per_group;
  config.filter_nhwc = !kcrs;
  config.relayout_filter = !kcrs && !krsc;
  config.filter_bytes = plan.rhs_elements * primitive_util::ByteWidth(type);
  const int64_t values[] = {plan.out_batch,
                            groups * c_per_group,
                            plan.spatial[0].in_size,
                            plan.spatial[1].in_size,
                            plan.in_batch_stride,
                            plan.in_feature_stride,
                            plan.spatial[0].in_stride,
                            plan.spatial[1].in_stride,
                            plan.out_batch,
                            k,
                            plan.spatial[0].out_size,
                            plan.spatial[1].out_size,
                            plan.out_batch_stride,
                            plan.out_feature_stride,
                            plan.spatial[0].out_stride,
                            plan.spatial[1].out_stride,
                            c_per_group,
                            r,
                            q,
                            plan.lhs_elements,
                            plan.out_elements,
                            plan.rhs_elements};
  for (int64_t value : values) {
    if (!FitsInt(value)) return NotTaken(plan, "a size or stride past 32 bits");
  }
  config.x_dims = {static_cast<int>(values[0]), static_cast<int>(values[1]),
                   static_cast<int>(values[2]), static_cast<int>(values[3])};
  config.x_strides = {static_cast<int>(values[4]), static_cast<int>(values[5]),
                      static_cast<int>(values[6]), static_cast<int>(values[7])};
  config.y_dims = {static_cast<int>(values[8]), static_cast<int>(values[9]),
                   static_cast<int>(values[10]), static_cast<int>(values[11])};
  config.y_strides = {static_cast<int>(values[12]), static_cast<int>(values[13]),
                      static_cast<int>(values[14]), static_cast<int>(values[15])};
  config.w_dims = {static_cast<int>(k), static_cast<int>(c_per_group), static_cast<int>(r),
                   static_cast<int>(q)};
  const int64_t bytes =
      (plan.lhs_elements + plan.rhs_elements + plan.out_elements) * primitive_util::ByteWidth(type);
  config.workspace_limit = std::clamp<int64_t>(2 * bytes, int64_t{4} << 20, int64_t{64} << 20);
  return config;
}

}  // namespace axle::gpu
