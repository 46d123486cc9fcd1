//===- roi_align_ops.cc - ONNX RoiAlign (average mode) ----------------------===//
//
// RoiAlign with a fixed sampling_ratio in average mode. Bilinear sampling
// is separable, so each ROI's average over its sampling grid is
// Wy * X[batch] * Wx^T, where Wy [R, out_h, H] and Wx [R, out_w, W] hold
// each output row's (column's) bilinear weights summed over its samples
// (zero for samples more than one pixel outside the image, as ONNX's
// reference skips them). Two batched dots compute it.
//
//===----------------------------------------------------------------------===//
#include "axle/frontends/graph/xla_op_registry.h"
#include "axle/frontends/onnx/kernels/kernel_util.h"
#include "axle/frontends/onnx/kernels/kernels.h"

namespace axle::onnx {
namespace {

// The interpolation matrix [R, pooled, size] along one axis: ROI r spans
// [start[r], start[r] + length[r]) in `pooled` bins of `grid` samples each.
XlaOp AxisWeights(XlaOp start, XlaOp length, int64_t rois, int64_t pooled, int64_t grid,
                  int64_t size, PrimitiveType t) {
  XlaBuilder* b = start.builder();
  std::vector<int64_t> s = {rois, pooled, grid};
  auto k = [&](double v) { return Broadcast(ScalarLike(b, t, v), s); };
  Shape shape = ShapeUtil::MakeShape(t, s);
  XlaOp bin = Div(BroadcastInDim(length, s, {0}), k(static_cast<double>(pooled)));
  XlaOp pos = Add(Mul(Iota(b, shape, 1), bin),
                  Mul(Add(Iota(b, shape, 2), k(0.5)), Div(bin, k(static_cast<double>(grid)))));
  XlaOp y = Add(BroadcastInDim(start, s, {0}), pos);
  double hi = static_cast<double>(size);
  XlaOp valid = And(Ge(y, k(-1)), Le(y, k(hi)));
  y = Max(y, k(0));
  XlaOp low = Floor(y);
  XlaOp at_end = Ge(low, k(hi - 1));
  low = Select(at_end, k(hi - 1), low);
  y = Select(at_end, low, y);
  XlaOp high = Select(at_end, low, Add(low, k(1)));
  XlaOp frac = Sub(y, low);
  XlaOp scale = Select(valid, k(1.0 / static_cast<double>(grid)), k(0));
  // Sum over the grid of the weights at `low` (1 - frac) and `high` (frac).
  std::vector<int64_t> full = {rois, pooled, grid, size};
  Shape idx = ShapeUtil::MakeShape(t, full);
  XlaOp h = Iota(b, idx, 3);
  auto spread = [&](XlaOp v) { return BroadcastInDim(v, full, {0, 1, 2}); };
  XlaOp zero = Broadcast(Zero(b, t), full);
  XlaOp w = Add(Select(Eq(h, spread(low)), spread(Mul(Sub(k(1), frac), scale)), zero),
                Select(Eq(h, spread(high)), spread(Mul(frac, scale)), zero));
  return Reduce(w, Zero(b, t), ReducerComputation(Reducer::kAdd, t), {2});
}

class RoiAlignOp : public XlaOpKernel {
 public:
  absl::Status Compile(XlaOpKernelContext* ctx) override {
    const Shape& x = ctx->InputShape(0);
    const Shape& rois = ctx->InputShape(1);
    const Shape& batch = ctx->InputShape(2);
    if (x.rank() != 4 || !IsFloat(x.element_type())) {
      return ctx->Error("X ", x.ToString(false), " must be floating-point [N, C, H, W]");
    }
    if (rois.rank() != 2 || rois.dimensions(1) != 4 || batch.rank() != 1 ||
        batch.dimensions(0) != rois.dimensions(0) ||
        !primitive_util::IsIntegralType(batch.element_type())) {
      return ctx->Error("rois ", rois.ToString(false), " must be [R, 4] and batch_indices ",
                        batch.ToString(false), " [R] integers");
    }
    absl::StatusOr<std::string> mode = ctx->GetAttrString("mode", "avg");
    absl::StatusOr<std::string> transform =
        ctx->GetAttrString("coordinate_transformation_mode", "half_pixel");
    absl::StatusOr<int64_t> out_h = ctx->GetAttrInt("output_height", 1);
    absl::StatusOr<int64_t> out_w = ctx->GetAttrInt("output_width", 1);
    absl::StatusOr<int64_t> ratio = ctx->GetAttrInt("sampling_ratio", 0);
    absl::StatusOr<float> scale = ctx->GetAttrFloat("spatial_scale", 1.0f);
    for (const absl::Status& s : {mode.status(), transform.status(), out_h.status(), out_w.status(),
                                  ratio.status(), scale.status()}) {
      if (!s.ok()) return s;
    }
    if (*mode != "avg")
      return ctx->Unimplemented("attribute 'mode' = '", *mode, "' is not supported");
    if (*ratio <= 0) {
      return ctx->Unimplemented("attribute 'sampling_ratio' = ", *ratio,
                                " (adaptive, data-dependent) is not supported");
    }
    if (*transform != "half_pixel" && *transform != "output_half_pixel") {
      return ctx->Unimplemented("attribute 'coordinate_transformation_mode' = '", *transform,
                                "' is not supported");
    }
    if (*out_h < 1 || *out_w < 1) return ctx->Error("output sizes must be positive");
    bool half = *transform == "half_pixel" && ctx->opset() >= 16;
    PrimitiveType t = x.element_type();
    XlaBuilder* b = ctx->builder();
    int64_t r = rois.dimensions(0), c = x.dimensions(1), h = x.dimensions(2), w = x.dimensions(3);
    XlaOp box = ConvertElementType(ctx->Input(1), t);
    auto coord = [&](int64_t i) {
      XlaOp v = Mul(Reshape(SliceInDim(box, i, i + 1, 1, 1), {r}),
                    Broadcast(ScalarLike(b, t, *scale), {r}));
      return half ? Sub(v, Broadcast(ScalarLike(b, t, 0.5), {r})) : v;
    };
    XlaOp x1 = coord(0), y1 = coord(1), x2 = coord(2), y2 = coord(3);
    XlaOp width = Sub(x2, x1), height = Sub(y2, y1);
    if (!half) {
      width = Max(width, Broadcast(ScalarLike(b, t, 1), {r}));
      height = Max(height, Broadcast(ScalarLike(b, t, 1), {r}));
    }
    XlaOp wy = AxisWeights(y1, height, r, *out_h, *ratio, h, t);  // [R, out_h, H]
    XlaOp wx = AxisWeights(x1, width, r, *out_w, *ratio, w, t);   // [R, out_w, W]
    // X[batch_indices] as [R, C, H, W].
    GatherDimensionNumbers g;
    g.add_collapsed_slice_dims(0);
    g.add_start_index_map(0);
    g.add_offset_dims(1);
    g.add_offset_dims(2);
    g.add_offset_dims(3);
    g.set_index_vector_dim(1);
    XlaOp idx = Reshape(ConvertElementType(ctx->Input(2), S64), {r, 1});
    XlaOp xr = Gather(ctx->Input(0), idx, g, {1, c, h, w});
    DotDimensionNumbers dw;  // [R, C, H, W] x [R, out_w, W] -> [R, C, H, out_w]
    dw.add_lhs_batch_dimensions(0);
    dw.add_rhs_batch_dimensions(0);
    dw.add_lhs_contracting_dimensions(3);
    dw.add_rhs_contracting_dimensions(2);
    XlaOp cols = DotGeneral(xr, wx, dw);
    DotDimensionNumbers dh;  // [R, C, H, out_w] x [R, out_h, H] -> [R, C, out_w, out_h]
    dh.add_lhs_batch_dimensions(0);
    dh.add_rhs_batch_dimensions(0);
    dh.add_lhs_contracting_dimensions(2);
    dh.add_rhs_contracting_dimensions(2);
    ctx->SetOutput(0, Transpose(DotGeneral(cols, wy, dh), {0, 1, 3, 2}));
    return absl::OkStatus();
  }
};
REGISTER_XLA_OP(Name("RoiAlign").SinceVersion(10), RoiAlignOp);

}  // namespace

AXLE_ONNX_KERNEL_FILE(roi_align)

}  // namespace axle::onnx
