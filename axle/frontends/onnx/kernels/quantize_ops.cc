//===- quantize_ops.cc - ONNX linear quantization ops -----------------------===//
//
// QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear and the integer
// matmul and convolution ops (MatMulInteger, ConvInteger, QLinearMatMul,
// QLinearConv). Integer products accumulate exactly in S32 through an S32
// dot or convolution of the zero-point-shifted operands; the QLinear ops
// then rescale in F32 and requantize (round half to even, saturate), as
// ONNX's reference does.
//
//===----------------------------------------------------------------------===//
#include "absl/strings/str_join.h"
#include "axle/frontends/graph/xla_op_registry.h"
#include "axle/frontends/onnx/kernels/kernel_util.h"
#include "axle/frontends/onnx/kernels/kernels.h"

namespace axle::onnx {
namespace {

bool IsQuantizedType(PrimitiveType t) { return t == U8 || t == S8; }

// Input `i` (a scalar, or 1-D along dimension `axis` of `dims`) broadcast to
// `dims` and converted to `type`; `def` when the input is absent.
absl::StatusOr<XlaOp> PerAxis(XlaOpKernelContext* ctx, int i, const std::vector<int64_t>& dims,
                              int64_t axis, PrimitiveType type, double def) {
  XlaBuilder* b = ctx->builder();
  if (!ctx->HasInput(i)) return Broadcast(ScalarLike(b, type, def), dims);
  const Shape& s = ctx->InputShape(i);
  XlaOp v = ConvertElementType(ctx->Input(i), type);
  if (s.num_elements() == 1 && s.rank() <= 1) return Broadcast(Reshape(v, {}), dims);
  if (s.rank() == 1 && axis >= 0 && axis < static_cast<int64_t>(dims.size()) &&
      s.dimensions(0) == dims[axis]) {
    return BroadcastInDim(v, dims, {axis});
  }
  return ctx->Error("input ", i, " ", s.ToString(false), " must be a scalar or 1-D along axis ",
                    axis, " of [", absl::StrJoin(dims, ","), "]");
}

// round-half-even(x) + zero_point saturated to `type` (x and zero point F32).
XlaOp Requantize(XlaOp x, XlaOp zero_point, PrimitiveType type, const std::vector<int64_t>& dims) {
  XlaBuilder* b = x.builder();
  double lo = type == U8 ? 0 : -128, hi = type == U8 ? 255 : 127;
  XlaOp y = Add(RoundNearestEven(x), zero_point);
  y = Clamp(Broadcast(ScalarLike(b, F32, lo), dims), y, Broadcast(ScalarLike(b, F32, hi), dims));
  return ConvertElementType(y, type);
}

// The output type of QuantizeLinear: the zero point's, else uint8.
absl::StatusOr<PrimitiveType> QuantizedType(const XlaOpKernelContext& ctx, int zero_point) {
  if (!ctx.HasInput(zero_point)) return U8;
  PrimitiveType t = ctx.InputType(zero_point);
  if (!IsQuantizedType(t)) {
    return ctx.Unimplemented("zero point of type ", primitive_util::LowercasePrimitiveTypeName(t),
                             " is not supported (uint8 and int8 are)");
  }
  return t;
}

// The axis of per-axis scales and zero points (-1 when out of range, which
// only a 1-D scale or zero point reports).
absl::StatusOr<int64_t> QuantAxis(const XlaOpKernelContext& ctx, int64_t rank) {
  absl::StatusOr<int64_t> axis = ctx.GetAttrInt("axis", 1);
  if (!axis.ok()) return axis.status();
  if (*axis < -rank || *axis >= rank) return -1;
  return *axis < 0 ? *axis + rank : *axis;
}

// The scale (input 1, as `scale_type`) and zero point (input 2, as
// `zero_type`, 0 where absent) of QuantizeLinear and DequantizeLinear,
// broadcast to the dimensions of x (input 0): per tensor, or along the
// `axis` attribute.
struct ScaleAndZeroPoint {
  XlaOp scale;
  XlaOp zero_point;
};
absl::StatusOr<ScaleAndZeroPoint> ReadScaleAndZeroPoint(XlaOpKernelContext* ctx,
                                                        PrimitiveType scale_type,
                                                        PrimitiveType zero_type) {
  const std::vector<int64_t>& dims = ctx->InputShape(0).dimensions();
  absl::StatusOr<int64_t> axis = QuantAxis(*ctx, static_cast<int64_t>(dims.size()));
  if (!axis.ok()) return axis.status();
  absl::StatusOr<XlaOp> scale = PerAxis(ctx, 1, dims, *axis, scale_type, 1);
  absl::StatusOr<XlaOp> zero = PerAxis(ctx, 2, dims, *axis, zero_type, 0);
  if (!scale.ok()) return scale.status();
  if (!zero.ok()) return zero.status();
  return ScaleAndZeroPoint{*scale, *zero};
}

class QuantizeLinearOp : public XlaOpKernel {
 public:
  absl::Status Compile(XlaOpKernelContext* ctx) override {
    const Shape& x = ctx->InputShape(0);
    if (!IsFloat(x.element_type())) return ctx->Error("x must be floating-point");
    absl::StatusOr<PrimitiveType> type = QuantizedType(*ctx, 2);
    if (!type.ok()) return type.status();
    absl::StatusOr<ScaleAndZeroPoint> affine = ReadScaleAndZeroPoint(ctx, F32, F32);
    if (!affine.ok()) return affine.status();
    XlaOp y = Div(ConvertElementType(ctx->Input(0), F32), affine->scale);
    ctx->SetOutput(0, Requantize(y, affine->zero_point, *type, x.dimensions()));
    return absl::OkStatus();
  }
};
REGISTER_XLA_OP(Name("QuantizeLinear").SinceVersion(10), QuantizeLinearOp);

class DequantizeLinearOp : public XlaOpKernel {
 public:
  absl::Status Compile(XlaOpKernelContext* ctx) override {
    const Shape& x = ctx->InputShape(0);
    PrimitiveType t = x.element_type();
    if (!IsQuantizedType(t) && t != S32) {
      return ctx->Unimplemented("x of type ", primitive_util::LowercasePrimitiveTypeName(t),
                                " is not supported (uint8, int8 and int32 are)");
    }
    PrimitiveType out = ctx->InputType(1);
    absl::StatusOr<ScaleAndZeroPoint> affine = ReadScaleAndZeroPoint(ctx, out, S32);
    if (!affine.ok()) return affine.status();
    XlaOp shifted = Sub(ConvertElementType(ctx->Input(0), S32), affine->zero_point);
    ctx->SetOutput(0, Mul(ConvertElementType(shifted, out), affine->scale));
    return absl::OkStatus();
  }
};
REGISTER_XLA_OP(Name("DequantizeLinear").SinceVersion(10), DequantizeLinearOp);

// uint8 quantization of x over [min(0, min x), max(0, max x)].
class DynamicQuantizeLinearOp : public XlaOpKernel {
 public:
  absl::Status Compile(XlaOpKernelContext* ctx) override {
    const Shape& x = ctx->InputShape(0);
    if (x.element_type() != F32) return ctx->Error("x must be float, got ", x.ToString(false));
    XlaBuilder* b = ctx->builder();
    XlaOp in = ctx->Input(0);
    XlaOp zero = ScalarLike(b, F32, 0);
    XlaOp lo = Min(zero, ReduceAll(in, ReducerInit(b, Reducer::kMin, F32),
                                   ReducerComputation(Reducer::kMin, F32)));
    XlaOp hi = Max(zero, ReduceAll(in, ReducerInit(b, Reducer::kMax, F32),
                                   ReducerComputation(Reducer::kMax, F32)));
    XlaOp scale = Div(Sub(hi, lo), ScalarLike(b, F32, 255));
    XlaOp zp = Clamp(zero, RoundNearestEven(Sub(zero, Div(lo, scale))), ScalarLike(b, F32, 255));
    const std::vector<int64_t>& dims = x.dimensions();
    XlaOp y = Div(in, Broadcast(scale, dims));
    ctx->SetOutput(0, Requantize(y, Broadcast(zp, dims), U8, dims));
    ctx->SetOutput(1, scale);
    ctx->SetOutput(2, ConvertElementType(zp, U8));
    return absl::OkStatus();
  }
};
REGISTER_XLA_OP(Name("DynamicQuantizeLinear").SinceVersion(11), DynamicQuantizeLinearOp);

// S32 operand `i` less its zero point `zp_input` (a scalar, or 1-D along
// `axis`).
absl::StatusOr<XlaOp> Shifted(XlaOpKernelContext* ctx, int i, int zp_input, int64_t axis) {
  const Shape& s = ctx->InputShape(i);
  if (!IsQuantizedType(s.element_type())) {
    return ctx->Unimplemented("input ", i, " of type ", s.ToString(false),
                              " is not supported (uint8 and int8 are)");
  }
  absl::StatusOr<XlaOp> zp = PerAxis(ctx, zp_input, s.dimensions(), axis, S32, 0);
  if (!zp.ok()) return zp.status();
  return Sub(ConvertElementType(ctx->Input(i), S32), *zp);
}

// numpy.matmul of the S32 operands `a` and `b` (rank >= 2, batch dimensions
// broadcast).
absl::StatusOr<XlaOp> IntegerMatMul(const XlaOpKernelContext& ctx, XlaOp a, XlaOp b,
                                    std::vector<int64_t> ad, std::vector<int64_t> bd) {
  if (ad.size() < 2 || bd.size() < 2 || ad.back() != bd[bd.size() - 2]) {
    return ctx.Error("operands [", absl::StrJoin(ad, ","), "] and [", absl::StrJoin(bd, ","),
                     "] do not multiply (rank >= 2 is supported)");
  }
  size_t n = std::max(ad.size(), bd.size()) - 2;
  std::vector<int64_t> batch(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t da = i + ad.size() - 2 >= n ? ad[i + ad.size() - 2 - n] : 1;
    int64_t db = i + bd.size() - 2 >= n ? bd[i + bd.size() - 2 - n] : 1;
    if (da != db && da != 1 && db != 1) return ctx.Error("batch dimensions do not broadcast");
    batch[i] = std::max(da, db);
  }
  auto expand = [&](XlaOp op, const std::vector<int64_t>& dims) {
    std::vector<int64_t> out = batch;
    out.push_back(dims[dims.size() - 2]);
    out.push_back(dims.back());
    return BroadcastTo(op, dims, out);
  };
  DotDimensionNumbers dnums;
  for (size_t i = 0; i < n; ++i) {
    dnums.add_lhs_batch_dimensions(static_cast<int64_t>(i));
    dnums.add_rhs_batch_dimensions(static_cast<int64_t>(i));
  }
  dnums.add_lhs_contracting_dimensions(static_cast<int64_t>(n) + 1);
  dnums.add_rhs_contracting_dimensions(static_cast<int64_t>(n));
  return DotGeneral(expand(a, ad), expand(b, bd), dnums);
}

// MatMulInteger: inputs A, B, a_zero_point (per row of A), b_zero_point
// (per column of B). QLinearMatMul: a, a_scale, a_zp, b, b_scale, b_zp,
// y_scale, y_zp.
template <bool kQLinear>
class MatMulIntegerOp : public XlaOpKernel {
 public:
  absl::Status Compile(XlaOpKernelContext* ctx) override {
    int a_in = 0, b_in = kQLinear ? 3 : 1;
    int a_zp = 2, b_zp = kQLinear ? 5 : 3;
    const std::vector<int64_t>& ad = ctx->InputShape(a_in).dimensions();
    const std::vector<int64_t>& bd = ctx->InputShape(b_in).dimensions();
    int64_t a_rank = static_cast<int64_t>(ad.size()), b_rank = static_cast<int64_t>(bd.size());
    absl::StatusOr<XlaOp> a = Shifted(ctx, a_in, a_zp, a_rank - 2);
    if (!a.ok()) return a.status();
    absl::StatusOr<XlaOp> b = Shifted(ctx, b_in, b_zp, b_rank - 1);
    if (!b.ok()) return b.status();
    absl::StatusOr<XlaOp> acc = IntegerMatMul(*ctx, *a, *b, ad, bd);
    if (!acc.ok()) return acc.status();
    if (!kQLinear) {
      ctx->SetOutput(0, *acc);
      return absl::OkStatus();
    }
    absl::StatusOr<Shape> out = ctx->builder()->GetShape(*acc);
    if (!out.ok()) return out.status();
    const std::vector<int64_t>& dims = out->dimensions();
    int64_t r = out->rank();
    absl::StatusOr<XlaOp> a_scale = PerAxis(ctx, 1, dims, r - 2, F32, 1);
    absl::StatusOr<XlaOp> b_scale = PerAxis(ctx, 4, dims, r - 1, F32, 1);
    absl::StatusOr<XlaOp> y_scale = PerAxis(ctx, 6, dims, r - 1, F32, 1);
    absl::StatusOr<XlaOp> y_zp = PerAxis(ctx, 7, dims, r - 1, F32, 0);
    for (const auto* v : {&a_scale, &b_scale, &y_scale, &y_zp}) {
      if (!v->ok()) return v->status();
    }
    absl::StatusOr<PrimitiveType> type = QuantizedType(*ctx, 7);
    if (!type.ok()) return type.status();
    XlaOp y = Div(Mul(ConvertElementType(*acc, F32), Mul(*a_scale, *b_scale)), *y_scale);
    ctx->SetOutput(0, Requantize(y, *y_zp, *type, dims));
    return absl::OkStatus();
  }
};
REGISTER_XLA_OP(Name("MatMulInteger").SinceVersion(10), MatMulIntegerOp<false>);
REGISTER_XLA_OP(Name("QLinearMatMul").SinceVersion(10), MatMulIntegerOp<true>);

// ConvInteger: x, w, x_zero_point, w_zero_point (per output channel).
// QLinearConv: x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, B (S32).
template <bool kQLinear>
class ConvIntegerOp : public XlaOpKernel {
 public:
  absl::Status Compile(XlaOpKernelContext* ctx) override {
    int x_in = 0, w_in = kQLinear ? 3 : 1;
    int x_zp = 2, w_zp = kQLinear ? 5 : 3;
    const Shape& xs = ctx->InputShape(x_in);
    const Shape& ws = ctx->InputShape(w_in);
    if (xs.rank() < 3 || ws.rank() != xs.rank()) {
      return ctx->Error("x ", xs.ToString(false), " and w ", ws.ToString(false),
                        " must have the same rank >= 3");
    }
    int64_t n = xs.rank() - 2;
    std::vector<int64_t> spatial(xs.dimensions().begin() + 2, xs.dimensions().end());
    std::vector<int64_t> kernel(ws.dimensions().begin() + 2, ws.dimensions().end());
    absl::StatusOr<WindowAttrs> window = GetWindowAttrs(*ctx, spatial, &kernel);
    if (!window.ok()) return window.status();
    if (window->kernel != kernel) return ctx->Error("kernel_shape does not match w");
    if (absl::Status fits = CheckWindowFitsInput(*ctx, spatial, *window); !fits.ok()) return fits;
    absl::StatusOr<int64_t> group = ctx->GetAttrInt("group", 1);
    if (!group.ok()) return group.status();
    if (*group < 1 || xs.dimensions(1) != ws.dimensions(1) * *group ||
        ws.dimensions(0) % *group != 0) {
      return ctx->Error("x ", xs.ToString(false), " and w ", ws.ToString(false),
                        " do not agree with group=", *group);
    }
    absl::StatusOr<XlaOp> x = Shifted(ctx, x_in, x_zp, 1);
    if (!x.ok()) return x.status();
    absl::StatusOr<XlaOp> w = Shifted(ctx, w_in, w_zp, 0);
    if (!w.ok()) return w.status();
    ConvolutionDimensionNumbers dnums = XlaBuilder::CreateDefaultConvDimensionNumbers(n);
    std::vector<int64_t> ones(n, 1);
    XlaOp acc = ConvGeneralDilated(*x, *w, window->strides, window->pads, ones, window->dilations,
                                   dnums, *group);
    absl::StatusOr<Shape> out = ctx->builder()->GetShape(acc);
    if (!out.ok()) return out.status();
    const std::vector<int64_t>& dims = out->dimensions();
    if (!kQLinear) {
      ctx->SetOutput(0, acc);
      return absl::OkStatus();
    }
    if (ctx->HasInput(8)) {
      absl::StatusOr<XlaOp> bias = PerAxis(ctx, 8, dims, 1, S32, 0);
      if (!bias.ok()) return bias.status();
      acc = Add(acc, *bias);
    }
    absl::StatusOr<XlaOp> x_scale = PerAxis(ctx, 1, dims, 1, F32, 1);
    absl::StatusOr<XlaOp> w_scale = PerAxis(ctx, 4, dims, 1, F32, 1);
    absl::StatusOr<XlaOp> y_scale = PerAxis(ctx, 6, dims, 1, F32, 1);
    absl::StatusOr<XlaOp> y_zp = PerAxis(ctx, 7, dims, 1, F32, 0);
    for (const auto* v : {&x_scale, &w_scale, &y_scale, &y_zp}) {
      if (!v->ok()) return v->status();
    }
    absl::StatusOr<PrimitiveType> type = QuantizedType(*ctx, 7);
    if (!type.ok()) return type.status();
    XlaOp y = Div(Mul(ConvertElementType(acc, F32), Mul(*x_scale, *w_scale)), *y_scale);
    ctx->SetOutput(0, Requantize(y, *y_zp, *type, dims));
    return absl::OkStatus();
  }
};
REGISTER_XLA_OP(Name("ConvInteger").SinceVersion(10), ConvIntegerOp<false>);
REGISTER_XLA_OP(Name("QLinearConv").SinceVersion(10), ConvIntegerOp<true>);

}  // namespace

AXLE_ONNX_KERNEL_FILE(quantize)

}  // namespace axle::onnx
