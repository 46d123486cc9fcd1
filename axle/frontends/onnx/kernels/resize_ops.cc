//===- resize_ops.cc - ONNX Resize and Upsample -----------------------------===//
//
// Resizing is separable: per resized axis, the interpolation weights (from
// the mode, the coordinate transformation and nearest_mode / cubic_coeff_a /
// exclude_outside) form a constant [out, in] matrix computed at compile time,
// and a dot along that axis applies it; tf_crop_and_resize then writes
// extrapolation_value where the source falls outside the input. Neighbours beyond the edges take
// the edge value, as ONNX's reference does.
//
//===----------------------------------------------------------------------===//
#include <cmath>

#include "absl/strings/str_join.h"
#include "axle/frontends/graph/xla_op_registry.h"
#include "axle/frontends/onnx/kernels/kernel_util.h"
#include "axle/frontends/onnx/kernels/kernels.h"

namespace axle::onnx {
namespace {

// The largest weight table (out x in elements) one resized dimension may
// need: 1 GiB of f32.
constexpr double kMaxWeightElements = 1 << 28;

struct ResizeAttrs {
  std::string mode = "nearest";
  std::string transform = "half_pixel";
  std::string nearest = "round_prefer_floor";
  double cubic_a = -0.75;
  bool exclude_outside = false;
  // tf_crop_and_resize: this axis' roi, as fractions of the input.
  double roi_start = 0, roi_end = 1;
};

// The source coordinate of output index x. `out` is the resized length
// before rounding (in * scale when scales are given), as ONNX's reference.
double SourceCoordinate(const ResizeAttrs& r, double x, int64_t in, double out, double scale) {
  const std::string& t = r.transform;
  if (t == "half_pixel") return (x + 0.5) / scale - 0.5;
  if (t == "pytorch_half_pixel") return out > 1 ? (x + 0.5) / scale - 0.5 : 0;
  if (t == "align_corners") return out == 1 ? 0 : x * (in - 1) / (out - 1);
  if (t == "tf_half_pixel_for_nn") return (x + 0.5) / scale;
  if (t == "tf_crop_and_resize") {
    double span = (r.roi_end - r.roi_start) * static_cast<double>(in - 1);
    return out > 1 ? r.roi_start * static_cast<double>(in - 1) + x * span / (out - 1)
                   : 0.5 * (r.roi_start + r.roi_end) * static_cast<double>(in - 1);
  }
  return x / scale;  // asymmetric
}

int64_t Nearest(const std::string& mode, double x) {
  if (mode == "floor") return static_cast<int64_t>(std::floor(x));
  if (mode == "ceil") return static_cast<int64_t>(std::ceil(x));
  double f = std::floor(x);
  if (x - f == 0.5) return static_cast<int64_t>(mode == "round_prefer_ceil" ? f + 1 : f);
  return static_cast<int64_t>(std::round(x));
}

// The [out, in] weights of one axis. With tf_crop_and_resize, outputs
// whose source lies outside the input get a zero row and are marked in
// `outside`.
std::vector<double> AxisWeights(const ResizeAttrs& r, int64_t in, int64_t out, double length,
                                double scale, std::vector<bool>* outside) {
  std::vector<double> w(out * in, 0.0);
  outside->assign(out, false);
  auto clamp = [&](int64_t i) { return std::clamp<int64_t>(i, 0, in - 1); };
  for (int64_t o = 0; o < out; ++o) {
    double x = SourceCoordinate(r, o, in, length, scale);
    double* row = &w[o * in];
    if (r.transform == "tf_crop_and_resize" && (x < 0 || x > static_cast<double>(in - 1))) {
      (*outside)[o] = true;
      continue;
    }
    if (r.mode == "nearest") {
      row[clamp(Nearest(r.nearest, x))] = 1;
      continue;
    }
    double f = std::floor(x), t = x - f;
    int64_t base = static_cast<int64_t>(f);
    if (r.mode == "linear") {
      x = std::clamp(x, 0.0, static_cast<double>(in - 1));
      f = std::floor(x);
      t = x - f;
      base = static_cast<int64_t>(f);
      row[clamp(base)] += 1 - t;
      row[clamp(base + 1)] += t;
      continue;
    }
    double a = r.cubic_a;
    double c[4] = {((a * (t + 1) - 5 * a) * (t + 1) + 8 * a) * (t + 1) - 4 * a,
                   ((a + 2) * t - (a + 3)) * t * t + 1,
                   ((a + 2) * (1 - t) - (a + 3)) * (1 - t) * (1 - t) + 1,
                   ((a * (2 - t) - 5 * a) * (2 - t) + 8 * a) * (2 - t) - 4 * a};
    double total = 0;
    for (int k = 0; k < 4; ++k) {
      int64_t i = base - 1 + k;
      if (r.exclude_outside && (i < 0 || i >= in)) c[k] = 0;
      total += c[k];
    }
    for (int k = 0; k < 4; ++k) {
      row[clamp(base - 1 + k)] += r.exclude_outside && total != 0 ? c[k] / total : c[k];
    }
  }
  return w;
}

class ResizeOp : public XlaOpKernel {
 public:
  absl::Status Compile(XlaOpKernelContext* ctx) override {
    const Shape& x = ctx->InputShape(0);
    bool upsample = ctx->node().op_type == "Upsample";
    ResizeAttrs r;
    absl::StatusOr<std::string> mode = ctx->GetAttrString("mode", "nearest");
    if (!mode.ok()) return mode.status();
    r.mode = *mode == "bilinear" ? "linear" : *mode;
    if (r.mode != "nearest" && r.mode != "linear" && r.mode != "cubic") {
      return ctx->Error("mode '", *mode, "' is not nearest, linear or cubic");
    }
    if (upsample || ctx->opset() < 11) {
      r.transform = "asymmetric";
      r.nearest = upsample ? "floor" : "round_prefer_ceil";
    } else {
      absl::StatusOr<std::string> t =
          ctx->GetAttrString("coordinate_transformation_mode", "half_pixel");
      absl::StatusOr<std::string> n = ctx->GetAttrString("nearest_mode", "round_prefer_floor");
      absl::StatusOr<float> a = ctx->GetAttrFloat("cubic_coeff_a", -0.75f);
      absl::StatusOr<int64_t> e = ctx->GetAttrInt("exclude_outside", 0);
      for (const absl::Status& s : {t.status(), n.status(), a.status(), e.status()}) {
        if (!s.ok()) return s;
      }
      r.transform = *t;
      r.nearest = *n;
      r.cubic_a = *a;
      r.exclude_outside = *e;
    }
    if (!IsFloat(x.element_type())) return ctx->Unimplemented("resizing non-float tensors");
    // Scales and sizes: Upsample-7 attribute, Upsample-9 / Resize-10 input 1,
    // Resize-11+ inputs 2 (scales) and 3 (sizes).
    std::vector<double> scales;
    std::vector<int64_t> sizes;
    if (upsample && ctx->opset() < 9) {
      absl::StatusOr<std::vector<float>> s = ctx->GetAttrFloats("scales");
      if (!s.ok()) return s.status();
      scales.assign(s->begin(), s->end());
    } else {
      int scales_input = upsample || ctx->opset() < 11 ? 1 : 2;
      if (ctx->HasInput(scales_input)) {
        absl::StatusOr<Literal> s = ctx->ConstantInput(scales_input);
        if (!s.ok()) return s.status();
        for (int64_t i = 0; i < s->element_count(); ++i) scales.push_back(s->GetAsDouble(i));
      }
      if (scales.empty() && !upsample && ctx->opset() >= 11 && ctx->HasInput(3)) {
        absl::StatusOr<std::vector<int64_t>> s = ctx->ConstantInputAsIntVector(3);
        if (!s.ok()) return s.status();
        sizes = *s;
      }
    }
    int64_t rank = x.rank();
    std::vector<double> roi;
    float extrapolation = 0;
    if (r.transform == "tf_crop_and_resize") {
      if (!ctx->HasInput(1)) return ctx->Error("tf_crop_and_resize needs the roi input");
      absl::StatusOr<Literal> v = ctx->ConstantInput(1);
      if (!v.ok()) return v.status();
      if (v->element_count() != 2 * rank) {
        return ctx->Error("roi must hold ", 2 * rank, " values, got ", v->element_count());
      }
      for (int64_t i = 0; i < 2 * rank; ++i) roi.push_back(v->GetAsDouble(i));
      absl::StatusOr<float> e = ctx->GetAttrFloat("extrapolation_value", 0.0f);
      if (!e.ok()) return e.status();
      extrapolation = *e;
    }
    if ((!scales.empty() && static_cast<int64_t>(scales.size()) != rank) ||
        (!sizes.empty() && static_cast<int64_t>(sizes.size()) != rank) ||
        (scales.empty() && sizes.empty())) {
      return ctx->Error("needs one scale or size per dimension of ", x.ToString(false));
    }
    XlaOp y = ctx->Input(0);
    PrimitiveType t = x.element_type();
    std::vector<int64_t> out_dims = x.dimensions();
    std::vector<std::pair<int64_t, std::vector<bool>>> extrapolated;
    for (int64_t d = 0; d < rank; ++d) {
      if (!roi.empty()) {
        r.roi_start = roi[d];
        r.roi_end = roi[rank + d];
      }
      int64_t in = x.dimensions(d);
      // Each resized dimension is a dot with an out x in weight table made
      // here: its size is bounded before anything is allocated (a scale of
      // 1e12 asked for terabytes), in double so that no cast overflows.
      const double out_size = sizes.empty() ? std::floor(in * scales[d]) : sizes[d];
      if (!(out_size * std::max<int64_t>(in, 1) <= kMaxWeightElements)) {
        return ctx->Error("dimension ", d, " of ", x.ToString(false), " resized to ", out_size,
                          " needs a weight table of more than 2^28 elements");
      }
      int64_t out = static_cast<int64_t>(out_size);
      double scale = sizes.empty() ? scales[d] : static_cast<double>(out) / in;
      if (out < 0 || !(scale > 0)) return ctx->Error("bad scale or size for dimension ", d);
      out_dims[d] = out;
      if (out == in && scale == 1.0 && roi.empty()) continue;
      double length = sizes.empty() ? in * scales[d] : out;
      std::vector<bool> outside;
      std::vector<double> w = AxisWeights(r, in, out, length, scale, &outside);
      if (std::find(outside.begin(), outside.end(), true) != outside.end()) {
        extrapolated.emplace_back(d, outside);
      }
      Literal weights(ShapeUtil::MakeShape(t, {out, in}));
      for (int64_t i = 0; i < out * in; ++i) weights.SetFromDouble(i, w[i]);
      DotDimensionNumbers dnums;
      dnums.add_lhs_contracting_dimensions(d);
      dnums.add_rhs_contracting_dimensions(1);
      y = DotGeneral(y, ConstantLiteral(ctx->builder(), weights), dnums);
      std::vector<int64_t> perm;  // the new dimension is last: move it back to d
      for (int64_t i = 0; i < rank - 1; ++i) {
        if (i == d) perm.push_back(rank - 1);
        perm.push_back(i);
      }
      if (d == rank - 1) perm.push_back(rank - 1);
      y = Transpose(y, perm);
    }
    // Outputs whose source is outside the input along any axis take
    // extrapolation_value.
    if (!extrapolated.empty()) {
      XlaBuilder* b = ctx->builder();
      std::optional<XlaOp> outside;
      for (const auto& [d, mask] : extrapolated) {
        Literal m(ShapeUtil::MakeShape(PRED, {static_cast<int64_t>(mask.size())}));
        for (size_t i = 0; i < mask.size(); ++i) m.Set<bool>({static_cast<int64_t>(i)}, mask[i]);
        XlaOp axis = BroadcastInDim(ConstantLiteral(b, m), out_dims, {d});
        outside = outside ? Or(*outside, axis) : axis;
      }
      y = Select(*outside, Broadcast(ScalarLike(b, t, extrapolation), out_dims), y);
    }
    ctx->SetOutput(0, y);
    return absl::OkStatus();
  }
};
REGISTER_XLA_OP(
    Name("Resize").CompileTimeConstantInput(1).CompileTimeConstantInput(2).CompileTimeConstantInput(
        3),
    ResizeOp);
REGISTER_XLA_OP(Name("Upsample").CompileTimeConstantInput(1), ResizeOp);

}  // namespace

AXLE_ONNX_KERNEL_FILE(resize)

}  // namespace axle::onnx
