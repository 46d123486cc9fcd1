//===- non_max_suppression_op.cc - NonMaxSuppression on the host ------------===//
//
// ONNX's NonMaxSuppression (opset 10, 11): per batch and class, boxes whose
// score passes score_threshold (strictly greater) are taken greedily by
// descending score (ties: the lower box index first; NaN scores are never
// selected); a box is dropped when
// its IoU with a taken box exceeds iou_threshold. At most
// max_output_boxes_per_class per class (0, the default, selects nothing).
// Output: int64 [selected, 3] rows (batch, class, box), batch-major, then
// class, then selection order. Boxes are corners [y1, x1, y2, x2] in any
// order (center_point_box = 0) or [x_center, y_center, width, height] (1).
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <array>
#include <cmath>

#include "axle/frontends/graph/host_kernel.h"
#include "axle/frontends/onnx/kernels/kernels.h"

namespace axle::onnx {
namespace {

using graph::HostKernelContext;

// {ymin, xmin, ymax, xmax}.
using Corners = std::array<double, 4>;

Corners ToCorners(const Literal& boxes, int64_t base, bool center_point) {
  double a = boxes.GetAsDouble(base), b = boxes.GetAsDouble(base + 1);
  double c = boxes.GetAsDouble(base + 2), d = boxes.GetAsDouble(base + 3);
  if (center_point) {  // a, b = x, y center; c, d = width, height
    return {b - d / 2, a - c / 2, b + d / 2, a + c / 2};
  }
  return {std::min(a, c), std::min(b, d), std::max(a, c), std::max(b, d)};
}

double IntersectionOverUnion(const Corners& p, const Corners& q) {
  double area_p = (p[2] - p[0]) * (p[3] - p[1]);
  double area_q = (q[2] - q[0]) * (q[3] - q[1]);
  if (area_p <= 0 || area_q <= 0) return 0;
  double h = std::max(0.0, std::min(p[2], q[2]) - std::max(p[0], q[0]));
  double w = std::max(0.0, std::min(p[3], q[3]) - std::max(p[1], q[1]));
  double intersection = h * w;
  return intersection / (area_p + area_q - intersection);
}

absl::Status NonMaxSuppression(HostKernelContext* ctx) {
  if (!ctx->HasInput(0) || !ctx->HasInput(1)) return ctx->Error("boxes and scores are required");
  const Literal& boxes = ctx->Input(0);
  const Literal& scores = ctx->Input(1);
  const Shape& bs = boxes.shape();
  const Shape& ss = scores.shape();
  if (bs.rank() != 3 || bs.dimensions(2) != 4 || ss.rank() != 3 ||
      ss.dimensions(0) != bs.dimensions(0) || ss.dimensions(2) != bs.dimensions(1) ||
      !primitive_util::IsFloatingPointType(bs.element_type()) ||
      !primitive_util::IsFloatingPointType(ss.element_type())) {
    return ctx->Error("boxes must be float [batch, boxes, 4] and scores float [batch, classes, ",
                      "boxes], got ", bs.ToString(false), " and ", ss.ToString(false));
  }
  absl::StatusOr<double> max_output = ctx->ScalarInput(2, 0);
  absl::StatusOr<double> iou_threshold = ctx->ScalarInput(3, 0);
  if (!max_output.ok()) return max_output.status();
  if (!iou_threshold.ok()) return iou_threshold.status();
  bool has_score_threshold = ctx->HasInput(4);
  absl::StatusOr<double> score_threshold = ctx->ScalarInput(4, 0);
  if (!score_threshold.ok()) return score_threshold.status();
  absl::StatusOr<int64_t> center = ctx->GetAttrInt("center_point_box", 0);
  if (!center.ok()) return center.status();
  if (*center != 0 && *center != 1) return ctx->Error("center_point_box must be 0 or 1");

  int64_t batches = bs.dimensions(0), num_boxes = bs.dimensions(1), classes = ss.dimensions(1);
  int64_t limit = 0;  // NaN and negative counts select nothing
  if (*max_output >= static_cast<double>(num_boxes)) {
    limit = num_boxes;
  } else if (*max_output > 0) {
    limit = static_cast<int64_t>(*max_output);
  }
  std::vector<std::array<int64_t, 3>> selected;
  for (int64_t b = 0; b < batches; ++b) {
    std::vector<Corners> corners(num_boxes);
    for (int64_t i = 0; i < num_boxes; ++i) {
      corners[i] = ToCorners(boxes, (b * num_boxes + i) * 4, *center == 1);
    }
    for (int64_t c = 0; c < classes; ++c) {
      int64_t base = (b * classes + c) * num_boxes;
      std::vector<int64_t> candidates;
      for (int64_t i = 0; i < num_boxes; ++i) {
        double score = scores.GetAsDouble(base + i);
        if (std::isnan(score)) continue;  // never above any threshold
        if (!has_score_threshold || score > *score_threshold) candidates.push_back(i);
      }
      std::stable_sort(candidates.begin(), candidates.end(), [&](int64_t x, int64_t y) {
        return scores.GetAsDouble(base + x) > scores.GetAsDouble(base + y);
      });
      std::vector<int64_t> taken;
      for (int64_t i : candidates) {
        if (static_cast<int64_t>(taken.size()) >= limit) break;
        bool suppressed = false;
        for (int64_t t : taken) {
          suppressed |= IntersectionOverUnion(corners[i], corners[t]) > *iou_threshold;
        }
        if (suppressed) continue;
        taken.push_back(i);
        selected.push_back({b, c, i});
      }
    }
  }
  Literal out(ShapeUtil::MakeShape(S64, {static_cast<int64_t>(selected.size()), 3}));
  absl::Span<int64_t> data = out.data<int64_t>();
  for (size_t k = 0; k < selected.size(); ++k) {
    std::copy(selected[k].begin(), selected[k].end(), data.begin() + 3 * k);
  }
  ctx->SetOutput(0, std::move(out));
  return absl::OkStatus();
}

REGISTER_HOST_KERNEL(Name("NonMaxSuppression").SinceVersion(10), kDataDependentShape,
                     NonMaxSuppression);

}  // namespace

AXLE_ONNX_KERNEL_FILE(non_max_suppression)

}  // namespace axle::onnx
