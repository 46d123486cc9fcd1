//===- kernel_util.cc - Helpers shared by the ONNX op kernels ---------------===//
#include "axle/frontends/onnx/kernels/kernel_util.h"

#include "absl/strings/str_join.h"

namespace axle::onnx {

absl::StatusOr<std::vector<int64_t>> BroadcastShape(const XlaOpKernelContext& ctx,
                                                    const std::vector<int>& indices) {
  std::vector<int64_t> out;
  for (int i : indices) {
    const std::vector<int64_t>& dims = ctx.InputShape(i).dimensions();
    if (dims.size() > out.size()) out.insert(out.begin(), dims.size() - out.size(), 1);
    size_t offset = out.size() - dims.size();
    for (size_t d = 0; d < dims.size(); ++d) {
      int64_t& o = out[offset + d];
      if (o == dims[d] || dims[d] == 1) continue;
      if (o == 1) {
        o = dims[d];
        continue;
      }
      std::vector<std::string> shapes;
      shapes.reserve(indices.size());
      for (int k : indices) shapes.push_back(ctx.InputShape(k).ToString(false));
      return ctx.Error("inputs of shapes ", absl::StrJoin(shapes, ", "), " do not broadcast");
    }
  }
  return out;
}

XlaOp BroadcastTo(XlaOp op, const std::vector<int64_t>& dims, const std::vector<int64_t>& out) {
  if (dims == out) return op;
  std::vector<int64_t> mapping(dims.size());
  for (size_t d = 0; d < dims.size(); ++d) mapping[d] = out.size() - dims.size() + d;
  return BroadcastInDim(op, out, mapping);
}

absl::StatusOr<std::vector<XlaOp>> BroadcastInputs(XlaOpKernelContext* ctx,
                                                   const std::vector<int>& indices) {
  absl::StatusOr<std::vector<int64_t>> out = BroadcastShape(*ctx, indices);
  if (!out.ok()) return out.status();
  std::vector<XlaOp> ops;
  ops.reserve(indices.size());
  for (int i : indices)
    ops.push_back(BroadcastTo(ctx->Input(i), ctx->InputShape(i).dimensions(), *out));
  return ops;
}

absl::StatusOr<int64_t> NormalizeAxis(const XlaOpKernelContext& ctx, int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= std::max<int64_t>(rank, 1)) {
    return ctx.Error("axis ", axis, " is out of range for rank ", rank);
  }
  return axis < 0 ? axis + rank : axis;
}

absl::StatusOr<int64_t> AxisAttr(const XlaOpKernelContext& ctx, int64_t def, int64_t rank) {
  absl::StatusOr<int64_t> axis = ctx.GetAttrInt("axis", def);
  if (!axis.ok()) return axis.status();
  return NormalizeAxis(ctx, *axis, rank);
}

XlaComputation ReducerComputation(Reducer reducer, PrimitiveType type) {
  XlaBuilder b("reducer");
  Shape scalar = ShapeUtil::MakeScalarShape(type);
  XlaOp x = Parameter(&b, 0, scalar, "x");
  XlaOp y = Parameter(&b, 1, scalar, "y");
  switch (reducer) {
    case Reducer::kAdd:
      type == PRED ? Or(x, y) : Add(x, y);
      break;
    case Reducer::kMul:
      type == PRED ? And(x, y) : Mul(x, y);
      break;
    case Reducer::kMax:
      Max(x, y);
      break;
    case Reducer::kMin:
      Min(x, y);
      break;
  }
  return b.BuildAndNoteError();
}

XlaOp ReducerInit(XlaBuilder* b, Reducer reducer, PrimitiveType type) {
  switch (reducer) {
    case Reducer::kAdd:
      return Zero(b, type);
    case Reducer::kMul:
      return One(b, type);
    case Reducer::kMax:
      return MinValue(b, type);
    case Reducer::kMin:
      return MaxValue(b, type);
  }
  return Zero(b, type);
}

XlaOp ScalarLike(XlaBuilder* b, PrimitiveType type, double value) {
  Literal literal(ShapeUtil::MakeScalarShape(type));
  literal.SetFromDouble(0, value);
  return ConstantLiteral(b, literal);
}

absl::StatusOr<WindowAttrs> GetWindowAttrs(const XlaOpKernelContext& ctx,
                                           const std::vector<int64_t>& input,
                                           const std::vector<int64_t>* kernel) {
  size_t n = input.size();
  WindowAttrs w;
  if (ctx.HasAttr("kernel_shape")) {
    absl::StatusOr<std::vector<int64_t>> k = ctx.GetAttrInts("kernel_shape");
    if (!k.ok()) return k.status();
    w.kernel = *k;
  } else if (kernel) {
    w.kernel = *kernel;
  } else {
    return ctx.Error("attribute 'kernel_shape' is required");
  }
  auto ints = [&](const char* name, int64_t def, size_t count,
                  std::vector<int64_t>* out) -> absl::Status {
    if (!ctx.HasAttr(name)) {
      out->assign(count, def);
      return absl::OkStatus();
    }
    absl::StatusOr<std::vector<int64_t>> v = ctx.GetAttrInts(name);
    if (!v.ok()) return v.status();
    if (v->size() != count) {
      return ctx.Error("attribute '", name, "' has ", v->size(), " values, expected ", count);
    }
    *out = *v;
    return absl::OkStatus();
  };
  if (w.kernel.size() != n) {
    return ctx.Error("kernel_shape has ", w.kernel.size(), " dimensions but the input has ", n,
                     " spatial dimensions");
  }
  std::vector<int64_t> pads;
  if (absl::Status s = ints("strides", 1, n, &w.strides); !s.ok()) return s;
  if (absl::Status s = ints("dilations", 1, n, &w.dilations); !s.ok()) return s;
  if (absl::Status s = ints("pads", 0, 2 * n, &pads); !s.ok()) return s;
  absl::StatusOr<std::string> auto_pad = ctx.GetAttrString("auto_pad", "NOTSET");
  if (!auto_pad.ok()) return auto_pad.status();
  for (size_t i = 0; i < n; ++i) {
    if (w.strides[i] < 1 || w.dilations[i] < 1 || w.kernel[i] < 1) {
      return ctx.Error("kernel sizes, strides and dilations must be positive");
    }
    int64_t effective = (w.kernel[i] - 1) * w.dilations[i] + 1;
    if (*auto_pad == "SAME_UPPER" || *auto_pad == "SAME_LOWER") {
      int64_t out = (input[i] + w.strides[i] - 1) / w.strides[i];
      int64_t total = std::max<int64_t>(0, (out - 1) * w.strides[i] + effective - input[i]);
      int64_t small = total / 2, large = total - small;
      w.pads.push_back(*auto_pad == "SAME_UPPER" ? std::make_pair(small, large)
                                                 : std::make_pair(large, small));
    } else if (*auto_pad == "VALID") {
      w.pads.push_back({0, 0});
    } else if (*auto_pad == "NOTSET" || auto_pad->empty()) {
      w.pads.push_back({pads[i], pads[i + n]});
    } else {
      return ctx.Error("auto_pad '", *auto_pad, "' is not one of NOTSET, SAME_UPPER, ",
                       "SAME_LOWER, VALID");
    }
  }
  return w;
}

absl::Status CheckWindowFitsInput(const XlaOpKernelContext& ctx, const std::vector<int64_t>& input,
                                  const WindowAttrs& w) {
  for (size_t i = 0; i < input.size(); ++i) {
    const auto [low, high] = w.pads[i];
    if (low < 0 || high < 0) return ctx.Error("pads must not be negative, got ", low, ", ", high);
    // In double: kernel and dilation come from the model and may be huge.
    const double window =
        static_cast<double>(w.kernel[i] - 1) * static_cast<double>(w.dilations[i]) + 1;
    const double padded =
        static_cast<double>(input[i]) + static_cast<double>(low) + static_cast<double>(high);
    if (window > padded) {
      return ctx.Error("the window of spatial dimension ", i, " (kernel ", w.kernel[i],
                       ", dilation ", w.dilations[i], ") does not fit its size ", input[i],
                       " padded by ", low, " and ", high);
    }
  }
  return absl::OkStatus();
}

bool IsFloat(PrimitiveType type) { return primitive_util::IsFloatingPointType(type); }

}  // namespace axle::onnx
