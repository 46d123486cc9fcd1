//===- grid_sample_ops.cc - ONNX GridSample (opset 16) ----------------------===//
//
// GridSample of a 4-D input: grid coordinates in [-1, 1] are unnormalized
// (align_corners), then bilinear, nearest (round half even) or bicubic
// (A = -0.75) interpolation reads input pixels through HLO Gathers. Padding
// follows PyTorch's grid_sample, from which ONNX took the op: border and
// reflection move the sampling coordinate (bicubic: each tap) into the
// image; pixels still outside read as zero.
//
//===----------------------------------------------------------------------===//
#include <array>

#include "axle/frontends/graph/xla_op_registry.h"
#include "axle/frontends/onnx/kernels/kernel_util.h"
#include "axle/frontends/onnx/kernels/kernels.h"

namespace axle::onnx {
namespace {

enum class GridPadding { kZeros, kBorder, kReflection };

struct Sampler {
  XlaBuilder* b;
  PrimitiveType t;
  XlaOp input;                  // [N, H, W, C]
  int64_t n, h, w, c;           // input sizes
  std::vector<int64_t> points;  // [N, Ho, Wo]
  GridPadding padding;
  bool align;

  XlaOp K(double v) const { return Broadcast(ScalarLike(b, t, v), points); }

  // Reflects x into [lo2 / 2, hi2 / 2] (PyTorch's reflect_coordinates).
  XlaOp Reflect(XlaOp x, double lo2, double hi2) const {
    if (lo2 == hi2) return K(0);
    double lo = lo2 / 2, span = (hi2 - lo2) / 2;
    x = Abs(Sub(x, K(lo)));
    XlaOp extra = Rem(x, K(span));
    XlaOp flips = Floor(Div(x, K(span)));
    XlaOp even = Eq(Rem(flips, K(2)), K(0));
    return Select(even, Add(extra, K(lo)), Add(Sub(K(span), extra), K(lo)));
  }

  // The padding mode applied to coordinate x along a dimension of `size`.
  XlaOp Pad(XlaOp x, int64_t size) const {
    double hi = static_cast<double>(size - 1);
    if (padding == GridPadding::kZeros) return x;
    if (padding == GridPadding::kReflection) {
      x = align ? Reflect(x, 0, 2 * hi) : Reflect(x, -1, 2 * hi + 1);
    }
    return Clamp(K(0), x, K(hi));
  }

  XlaOp Unnormalize(XlaOp g, int64_t size) const {
    double s = static_cast<double>(size);
    if (align) return Mul(Div(Add(g, K(1)), K(2)), K(s - 1));
    return Div(Sub(Mul(Add(g, K(1)), K(s)), K(1)), K(2));
  }

  // Pixels at integral coordinates (x, y) [N, Ho, Wo] -> [N, Ho, Wo, C],
  // zero outside the input.
  XlaOp Read(XlaOp x, XlaOp y) const {
    XlaOp valid = And(And(Ge(x, K(0)), Le(x, K(static_cast<double>(w - 1)))),
                      And(Ge(y, K(0)), Le(y, K(static_cast<double>(h - 1)))));
    auto index = [&](XlaOp v, int64_t size) {
      XlaOp i = ConvertElementType(Clamp(K(0), v, K(static_cast<double>(size - 1))), S64);
      std::vector<int64_t> one = points;
      one.push_back(1);
      return Reshape(i, one);
    };
    XlaOp batch = Reshape(Iota(b, ShapeUtil::MakeShape(S64, points), 0),
                          {points[0], points[1], points[2], 1});
    XlaOp idx = ConcatInDim(b, {batch, index(y, h), index(x, w)}, 3);
    GatherDimensionNumbers dnums;
    for (int64_t d = 0; d < 3; ++d) {
      dnums.add_collapsed_slice_dims(d);
      dnums.add_start_index_map(d);
    }
    dnums.add_offset_dims(3);
    dnums.set_index_vector_dim(3);
    XlaOp v = Gather(input, idx, dnums, {1, 1, 1, c});
    std::vector<int64_t> out = points;
    out.push_back(c);
    return Select(BroadcastInDim(valid, out, {0, 1, 2}), v, Broadcast(Zero(b, t), out));
  }

  XlaOp Weighted(XlaOp v, XlaOp weight) const {
    std::vector<int64_t> out = points;
    out.push_back(c);
    return Mul(v, BroadcastInDim(weight, out, {0, 1, 2}));
  }
};

// Cubic convolution weights (A = -0.75) of the taps at -1, 0, 1, 2 from
// the fractional offset t.
std::array<XlaOp, 4> CubicWeights(const Sampler& s, XlaOp t) {
  auto k = [&](double v) { return s.K(v); };
  double a = -0.75;
  auto far = [&](XlaOp x) {  // 1 < |x| < 2
    return Sub(Mul(Add(Mul(Sub(Mul(k(a), x), k(5 * a)), x), k(8 * a)), x), k(4 * a));
  };
  auto near = [&](XlaOp x) {  // |x| <= 1
    return Add(Mul(Mul(Sub(Mul(k(a + 2), x), k(a + 3)), x), x), k(1));
  };
  XlaOp one_minus = Sub(k(1), t);
  return {far(Add(t, k(1))), near(t), near(one_minus), far(Add(one_minus, k(1)))};
}

class GridSampleOp : public XlaOpKernel {
 public:
  absl::Status Compile(XlaOpKernelContext* ctx) override {
    const Shape& x = ctx->InputShape(0);
    const Shape& grid = ctx->InputShape(1);
    if (x.rank() != 4 || !IsFloat(x.element_type())) {
      return ctx->Unimplemented("X ", x.ToString(false), " is not supported (4-D float is)");
    }
    if (grid.rank() != 4 || grid.dimensions(0) != x.dimensions(0) || grid.dimensions(3) != 2 ||
        grid.element_type() != x.element_type()) {
      return ctx->Error("grid ", grid.ToString(false), " must be [N, H_out, W_out, 2] for X ",
                        x.ToString(false));
    }
    absl::StatusOr<std::string> mode = ctx->GetAttrString("mode", "bilinear");
    absl::StatusOr<std::string> padding = ctx->GetAttrString("padding_mode", "zeros");
    absl::StatusOr<int64_t> align = ctx->GetAttrInt("align_corners", 0);
    for (const absl::Status& st : {mode.status(), padding.status(), align.status()}) {
      if (!st.ok()) return st;
    }
    if (*mode != "bilinear" && *mode != "nearest" && *mode != "bicubic") {
      return ctx->Unimplemented("attribute 'mode' = '", *mode, "' is not supported");
    }
    GridPadding pad = GridPadding::kZeros;
    if (*padding == "border") {
      pad = GridPadding::kBorder;
    } else if (*padding == "reflection") {
      pad = GridPadding::kReflection;
    } else if (*padding != "zeros") {
      return ctx->Unimplemented("attribute 'padding_mode' = '", *padding, "' is not supported");
    }
    XlaBuilder* b = ctx->builder();
    PrimitiveType t = x.element_type();
    std::vector<int64_t> points = {grid.dimensions(0), grid.dimensions(1), grid.dimensions(2)};
    Sampler s{b,
              t,
              Transpose(ctx->Input(0), {0, 2, 3, 1}),
              x.dimensions(0),
              x.dimensions(2),
              x.dimensions(3),
              x.dimensions(1),
              points,
              pad,
              *align != 0};
    XlaOp gx = Reshape(SliceInDim(ctx->Input(1), 0, 1, 1, 3), points);
    XlaOp gy = Reshape(SliceInDim(ctx->Input(1), 1, 2, 1, 3), points);
    XlaOp ix = s.Unnormalize(gx, s.w), iy = s.Unnormalize(gy, s.h);
    XlaOp out;
    if (*mode == "bicubic") {
      XlaOp x0 = Floor(ix), y0 = Floor(iy);
      std::array<XlaOp, 4> wx = CubicWeights(s, Sub(ix, x0)), wy = CubicWeights(s, Sub(iy, y0));
      bool first = true;
      for (int j = 0; j < 4; ++j) {
        XlaOp yj = s.Pad(Add(y0, s.K(j - 1)), s.h);
        for (int i = 0; i < 4; ++i) {
          XlaOp xi = s.Pad(Add(x0, s.K(i - 1)), s.w);
          XlaOp term = s.Weighted(s.Read(xi, yj), Mul(wx[i], wy[j]));
          out = first ? term : Add(out, term);
          first = false;
        }
      }
    } else {
      ix = s.Pad(ix, s.w);
      iy = s.Pad(iy, s.h);
      if (*mode == "nearest") {
        out = s.Read(RoundNearestEven(ix), RoundNearestEven(iy));
      } else {
        XlaOp x0 = Floor(ix), y0 = Floor(iy);
        XlaOp x1 = Add(x0, s.K(1)), y1 = Add(y0, s.K(1));
        XlaOp fx = Sub(ix, x0), fy = Sub(iy, y0);
        XlaOp gx0 = Sub(s.K(1), fx), gy0 = Sub(s.K(1), fy);
        out = Add(
            Add(s.Weighted(s.Read(x0, y0), Mul(gx0, gy0)),
                s.Weighted(s.Read(x1, y0), Mul(fx, gy0))),
            Add(s.Weighted(s.Read(x0, y1), Mul(gx0, fy)), s.Weighted(s.Read(x1, y1), Mul(fx, fy))));
      }
    }
    ctx->SetOutput(0, Transpose(out, {0, 3, 1, 2}));
    return absl::OkStatus();
  }
};
REGISTER_XLA_OP(Name("GridSample").SinceVersion(16), GridSampleOp);

}  // namespace

AXLE_ONNX_KERNEL_FILE(grid_sample)

}  // namespace axle::onnx
