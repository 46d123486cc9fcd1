//===- index_ops.cc - ONNX ops built from iota and masks --------------------===//
//
// OneHot, Trilu, EyeLike, Range, Hardmax and CumSum.
//
//===----------------------------------------------------------------------===//
#include "axle/frontends/graph/xla_op_registry.h"
#include "axle/frontends/onnx/kernels/kernel_util.h"
#include "axle/frontends/onnx/kernels/kernels.h"
#include "axle/frontends/onnx/onnx_loader.h"

namespace axle::onnx {
namespace {

// Negative indices count from the end of a dimension of size `n`.
XlaOp WrapNegative(XlaOp idx, const Shape& shape, int64_t n) {
  XlaBuilder* b = idx.builder();
  PrimitiveType t = shape.element_type();
  if (!primitive_util::IsSignedIntegralType(t)) return idx;
  return Select(Lt(idx, ScalarLike(b, t, 0)),
                Add(idx, Broadcast(ScalarLike(b, t, n), shape.dimensions())), idx);
}

class OneHotOp : public XlaOpKernel {
 public:
  absl::Status Compile(XlaOpKernelContext* ctx) override {
    absl::StatusOr<Literal> depth = ctx->ConstantInput(1);
    if (!depth.ok()) return depth.status();
    if (depth->element_count() != 1) return ctx->Error("depth must hold one value");
    int64_t n = static_cast<int64_t>(depth->GetAsDouble(0));
    if (n < 1) return ctx->Error("depth must be positive, got ", n);
    const Shape& indices = ctx->InputShape(0);
    const Shape& values = ctx->InputShape(2);
    if (values.num_elements() != 2) return ctx->Error("values must hold [off, on]");
    absl::StatusOr<int64_t> a = AxisAttr(*ctx, -1, indices.rank() + 1);
    if (!a.ok()) return a.status();
    std::vector<int64_t> out = indices.dimensions(), mapping;
    out.insert(out.begin() + *a, n);
    for (int64_t d = 0; d < indices.rank() + 1; ++d) {
      if (d != *a) mapping.push_back(d);
    }
    XlaBuilder* b = ctx->builder();
    XlaOp idx = ConvertElementType(ctx->Input(0), S64);
    if (IsFloat(indices.element_type())) idx = ConvertElementType(Floor(ctx->Input(0)), S64);
    idx = WrapNegative(idx, ShapeUtil::MakeShape(S64, indices.dimensions()), n);
    XlaOp hot = Eq(Iota(b, ShapeUtil::MakeShape(S64, out), *a), BroadcastInDim(idx, out, mapping));
    XlaOp v = Reshape(ctx->Input(2), {2});
    XlaOp off = Broadcast(Reshape(SliceInDim(v, 0, 1, 1, 0), {}), out);
    XlaOp on = Broadcast(Reshape(SliceInDim(v, 1, 2, 1, 0), {}), out);
    ctx->SetOutput(0, Select(hot, on, off));
    return absl::OkStatus();
  }
};
REGISTER_XLA_OP(Name("OneHot").CompileTimeConstantInput(1), OneHotOp);

// Mask of the last two dimensions where column - row compares with k.
XlaOp Diagonals(XlaBuilder* b, const std::vector<int64_t>& dims, int64_t k,
                ComparisonDirection dir) {
  Shape s = ShapeUtil::MakeShape(S64, dims);
  int64_t r = static_cast<int64_t>(dims.size());
  XlaOp diff = Sub(Iota(b, s, r - 1), Iota(b, s, r - 2));
  return Compare(diff, Broadcast(ConstantR0<int64_t>(b, k), dims), dir);
}

class TriluOp : public XlaOpKernel {
 public:
  absl::Status Compile(XlaOpKernelContext* ctx) override {
    const Shape& x = ctx->InputShape(0);
    if (x.rank() < 2) return ctx->Error("input ", x.ToString(false), " needs rank >= 2");
    int64_t k = 0;
    if (ctx->HasInput(1)) {
      absl::StatusOr<std::vector<int64_t>> v = ctx->ConstantInputAsIntVector(1);
      if (!v.ok()) return v.status();
      if (v->size() != 1) return ctx->Error("k must hold one value");
      k = (*v)[0];
    }
    absl::StatusOr<int64_t> upper = ctx->GetAttrInt("upper", 1);
    if (!upper.ok()) return upper.status();
    XlaBuilder* b = ctx->builder();
    XlaOp keep = Diagonals(b, x.dimensions(), k,
                           *upper ? ComparisonDirection::kGe : ComparisonDirection::kLe);
    ctx->SetOutput(
        0, Select(keep, ctx->Input(0), Broadcast(Zero(b, x.element_type()), x.dimensions())));
    return absl::OkStatus();
  }
};
REGISTER_XLA_OP(Name("Trilu").CompileTimeConstantInput(1), TriluOp);

class EyeLikeOp : public XlaOpKernel {
 public:
  absl::Status Compile(XlaOpKernelContext* ctx) override {
    const Shape& x = ctx->InputShape(0);
    if (x.rank() != 2) return ctx->Error("input ", x.ToString(false), " must be 2-D");
    absl::StatusOr<int64_t> k = ctx->GetAttrInt("k", 0);
    if (!k.ok()) return k.status();
    PrimitiveType t = x.element_type();
    if (ctx->HasAttr("dtype")) {
      absl::StatusOr<int64_t> dtype = ctx->GetAttrInt("dtype");
      if (!dtype.ok()) return dtype.status();
      absl::StatusOr<PrimitiveType> type = ElementTypeFromOnnx(static_cast<int>(*dtype));
      if (!type.ok()) return ctx->Error(type.status().message());
      t = *type;
    }
    XlaBuilder* b = ctx->builder();
    XlaOp eye = Diagonals(b, x.dimensions(), *k, ComparisonDirection::kEq);
    ctx->SetOutput(0, ConvertElementType(eye, t));
    return absl::OkStatus();
  }
};
REGISTER_XLA_OP(Name("EyeLike"), EyeLikeOp);

// Range: all three inputs are compile-time constants, so is the result.
class RangeOp : public XlaOpKernel {
 public:
  absl::Status Compile(XlaOpKernelContext* ctx) override {
    absl::StatusOr<Literal> start = ctx->ConstantInput(0);
    absl::StatusOr<Literal> limit = ctx->ConstantInput(1);
    absl::StatusOr<Literal> delta = ctx->ConstantInput(2);
    for (const auto* v : {&start, &limit, &delta}) {
      if (!v->ok()) return v->status();
      if ((*v)->element_count() != 1) return ctx->Error("start, limit and delta are scalars");
    }
    double s = start->GetAsDouble(0), l = limit->GetAsDouble(0), d = delta->GetAsDouble(0);
    if (d == 0) return ctx->Error("delta must not be 0");
    // The count in double first: a cast of one past int64's range (a limit
    // of 1e30) is undefined, and NaN or infinite bounds compare false.
    const double count = std::max(0.0, std::ceil((l - s) / d));
    if (!(count <= static_cast<double>(int64_t{1} << 31))) {
      return ctx->Error("the range from ", s, " to ", l, " by ", d, " has ", count,
                        " elements; at most 2^31 are supported");
    }
    const auto n = static_cast<int64_t>(count);
    Literal out(ShapeUtil::MakeShape(start->shape().element_type(), {n}));
    bool integral = primitive_util::IsIntegralType(start->shape().element_type());
    for (int64_t i = 0; i < n; ++i) {
      if (integral) {
        out.SetIntegral(i, *start->GetIntegralAsS64(0) + i * *delta->GetIntegralAsS64(0));
      } else {
        out.SetFromDouble(i, s + i * d);
      }
    }
    ctx->SetConstantOutput(0, std::move(out));
    return absl::OkStatus();
  }
};
REGISTER_XLA_OP(
    Name("Range").CompileTimeConstantInput(0).CompileTimeConstantInput(1).CompileTimeConstantInput(
        2),
    RangeOp);

// 1 at the first maximum along the axis (before opset 13: of the input
// flattened to 2-D at the axis), 0 elsewhere.
class HardmaxOp : public XlaOpKernel {
 public:
  absl::Status Compile(XlaOpKernelContext* ctx) override {
    const Shape& shape = ctx->InputShape(0);
    bool legacy = ctx->opset() < 13;
    absl::StatusOr<int64_t> a = AxisAttr(*ctx, legacy ? 1 : -1, shape.rank());
    if (!a.ok()) return a.status();
    XlaOp x = ctx->Input(0);
    std::vector<int64_t> dims = shape.dimensions();
    int64_t along = *a;
    if (legacy) {
      int64_t outer = 1, inner = 1;
      for (int64_t d = 0; d < shape.rank(); ++d) (d < *a ? outer : inner) *= dims[d];
      dims = {outer, inner};
      x = Reshape(x, dims);
      along = 1;
    }
    XlaBuilder* b = ctx->builder();
    PrimitiveType t = shape.element_type();
    std::vector<int64_t> kept;
    for (int64_t d = 0; d < static_cast<int64_t>(dims.size()); ++d) {
      if (d != along) kept.push_back(d);
    }
    XlaOp max =
        Reduce(x, ReducerInit(b, Reducer::kMax, t), ReducerComputation(Reducer::kMax, t), {along});
    XlaOp hit = Eq(x, BroadcastInDim(max, dims, kept));
    Shape s64 = ShapeUtil::MakeShape(S64, dims);
    XlaOp iota = Iota(b, s64, along);
    XlaOp big = Broadcast(ConstantR0<int64_t>(b, dims[along]), dims);
    XlaOp first = Reduce(Select(hit, iota, big), ConstantR0<int64_t>(b, dims[along]),
                         ReducerComputation(Reducer::kMin, S64), {along});
    XlaOp y = ConvertElementType(Eq(iota, BroadcastInDim(first, dims, kept)), t);
    ctx->SetOutput(0, Reshape(y, shape.dimensions()));
    return absl::OkStatus();
  }
};
REGISTER_XLA_OP(Name("Hardmax"), HardmaxOp);

// Inclusive sums by a reduce-window as long as the axis, padded in front;
// exclusive ones subtract the element; reverse flips around it.
class CumSumOp : public XlaOpKernel {
 public:
  absl::Status Compile(XlaOpKernelContext* ctx) override {
    const Shape& shape = ctx->InputShape(0);
    absl::StatusOr<std::vector<int64_t>> axis = ctx->ConstantInputAsIntVector(1);
    if (!axis.ok()) return axis.status();
    if (axis->size() != 1) return ctx->Error("axis must hold one value");
    absl::StatusOr<int64_t> a = NormalizeAxis(*ctx, (*axis)[0], shape.rank());
    if (!a.ok()) return a.status();
    absl::StatusOr<int64_t> exclusive = ctx->GetAttrInt("exclusive", 0);
    absl::StatusOr<int64_t> reverse = ctx->GetAttrInt("reverse", 0);
    if (!exclusive.ok()) return exclusive.status();
    if (!reverse.ok()) return reverse.status();
    XlaBuilder* b = ctx->builder();
    PrimitiveType t = shape.element_type();
    XlaOp x = ctx->Input(0);
    if (*reverse) x = Rev(x, {*a});
    int64_t r = shape.rank(), n = shape.dimensions(*a);
    std::vector<int64_t> window(r, 1), strides(r, 1), ones(r, 1);
    std::vector<std::pair<int64_t, int64_t>> pads(r, {0, 0});
    window[*a] = std::max<int64_t>(n, 1);
    pads[*a] = {std::max<int64_t>(n - 1, 0), 0};
    XlaOp y = ReduceWindowWithGeneralPadding(x, Zero(b, t), ReducerComputation(Reducer::kAdd, t),
                                             window, strides, ones, ones, pads);
    if (*exclusive) y = Sub(y, x);
    if (*reverse) y = Rev(y, {*a});
    ctx->SetOutput(0, y);
    return absl::OkStatus();
  }
};
REGISTER_XLA_OP(Name("CumSum").CompileTimeConstantInput(1), CumSumOp);

// DepthToSpace (DCR or CRD) and SpaceToDepth on NCHW.
class DepthToSpaceOp : public XlaOpKernel {
 public:
  absl::Status Compile(XlaOpKernelContext* ctx) override {
    const Shape& x = ctx->InputShape(0);
    absl::StatusOr<int64_t> bs = ctx->GetAttrInt("blocksize");
    if (!bs.ok()) return bs.status();
    absl::StatusOr<std::string> mode = ctx->GetAttrString("mode", "DCR");
    if (!mode.ok()) return mode.status();
    int64_t k = *bs;
    if (x.rank() != 4 || k < 1 || x.dimensions(1) % (k * k) != 0) {
      return ctx->Error("input ", x.ToString(false), " and blocksize ", k, " do not fit");
    }
    int64_t n = x.dimensions(0), c = x.dimensions(1), h = x.dimensions(2), w = x.dimensions(3);
    XlaOp y;
    if (*mode == "DCR") {
      y = Transpose(Reshape(ctx->Input(0), {n, k, k, c / (k * k), h, w}), {0, 3, 4, 1, 5, 2});
    } else if (*mode == "CRD") {
      y = Transpose(Reshape(ctx->Input(0), {n, c / (k * k), k, k, h, w}), {0, 1, 4, 2, 5, 3});
    } else {
      return ctx->Error("mode '", *mode, "' is not DCR or CRD");
    }
    ctx->SetOutput(0, Reshape(y, {n, c / (k * k), h * k, w * k}));
    return absl::OkStatus();
  }
};
REGISTER_XLA_OP(Name("DepthToSpace"), DepthToSpaceOp);

class SpaceToDepthOp : public XlaOpKernel {
 public:
  absl::Status Compile(XlaOpKernelContext* ctx) override {
    const Shape& x = ctx->InputShape(0);
    absl::StatusOr<int64_t> bs = ctx->GetAttrInt("blocksize");
    if (!bs.ok()) return bs.status();
    int64_t k = *bs;
    if (x.rank() != 4 || k < 1 || x.dimensions(2) % k != 0 || x.dimensions(3) % k != 0) {
      return ctx->Error("input ", x.ToString(false), " and blocksize ", k, " do not fit");
    }
    int64_t n = x.dimensions(0), c = x.dimensions(1), h = x.dimensions(2), w = x.dimensions(3);
    XlaOp y = Transpose(Reshape(ctx->Input(0), {n, c, h / k, k, w / k, k}), {0, 3, 5, 1, 2, 4});
    ctx->SetOutput(0, Reshape(y, {n, c * k * k, h / k, w / k}));
    return absl::OkStatus();
  }
};
REGISTER_XLA_OP(Name("SpaceToDepth"), SpaceToDepthOp);

}  // namespace

AXLE_ONNX_KERNEL_FILE(index)

}  // namespace axle::onnx
