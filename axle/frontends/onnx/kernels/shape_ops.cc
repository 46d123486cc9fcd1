//===- shape_ops.cc - ONNX ops that change or report shapes -----------------===//
//
// Reshape, Flatten, Transpose, Squeeze, Unsqueeze, Expand, Shape, Size,
// ConstantOfShape and Constant. Shapes and axes given as inputs are
// compile-time constants (ConstantInput); Shape and Size produce constants.
//
//===----------------------------------------------------------------------===//
#include <numeric>

#include "absl/strings/str_join.h"
#include "axle/frontends/graph/xla_op_registry.h"
#include "axle/frontends/onnx/kernels/kernel_util.h"
#include "axle/frontends/onnx/kernels/kernels.h"

namespace axle::onnx {
namespace {

Literal S64Vector(const std::vector<int64_t>& values) {
  return LiteralUtil::CreateR1<int64_t>(absl::Span<const int64_t>(values));
}

int64_t Product(const std::vector<int64_t>& dims, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end; ++i) p *= dims[i];
  return p;
}

class ReshapeOp : public XlaOpKernel {
 public:
  absl::Status Compile(XlaOpKernelContext* ctx) override {
    absl::StatusOr<std::vector<int64_t>> shape =
        ctx->opset() < 5 ? ctx->GetAttrInts("shape") : ctx->ConstantInputAsIntVector(1);
    if (!shape.ok()) return shape.status();
    absl::StatusOr<int64_t> allowzero = ctx->GetAttrInt("allowzero", 0);
    if (!allowzero.ok()) return allowzero.status();
    const std::vector<int64_t>& in = ctx->InputShape(0).dimensions();
    std::vector<int64_t> out = *shape;
    int64_t inferred = -1;
    for (size_t i = 0; i < out.size(); ++i) {
      if (out[i] == 0 && !*allowzero) {
        if (i >= in.size()) return ctx->Error("shape[", i, "] = 0 copies a missing dimension");
        out[i] = in[i];
      } else if (out[i] == -1) {
        if (inferred >= 0) return ctx->Error("shape has more than one -1");
        inferred = static_cast<int64_t>(i);
      } else if (out[i] < 0) {
        return ctx->Error("shape has a negative dimension ", out[i]);
      }
    }
    int64_t total = Product(in, 0, in.size());
    if (inferred >= 0) {
      out[inferred] = 1;
      int64_t known = Product(out, 0, out.size());
      if (known == 0 || total % known != 0) {
        return ctx->Error("cannot reshape ", ctx->InputShape(0).ToString(false), " to [",
                          absl::StrJoin(*shape, ","), "]");
      }
      out[inferred] = total / known;
    }
    if (Product(out, 0, out.size()) != total) {
      return ctx->Error("cannot reshape ", ctx->InputShape(0).ToString(false), " to [",
                        absl::StrJoin(*shape, ","), "]");
    }
    ctx->SetOutput(0, Reshape(ctx->Input(0), out));
    return absl::OkStatus();
  }
};
REGISTER_XLA_OP(Name("Reshape").CompileTimeConstantInput(1), ReshapeOp);

class FlattenOp : public XlaOpKernel {
 public:
  absl::Status Compile(XlaOpKernelContext* ctx) override {
    const std::vector<int64_t>& in = ctx->InputShape(0).dimensions();
    int64_t rank = static_cast<int64_t>(in.size());
    absl::StatusOr<int64_t> axis = ctx->GetAttrInt("axis", 1);
    if (!axis.ok()) return axis.status();
    if (*axis < -rank || *axis > rank) return ctx->Error("axis ", *axis, " is out of range");
    int64_t a = *axis < 0 ? *axis + rank : *axis;
    ctx->SetOutput(0, Reshape(ctx->Input(0), {Product(in, 0, a), Product(in, a, rank)}));
    return absl::OkStatus();
  }
};
REGISTER_XLA_OP(Name("Flatten"), FlattenOp);

class TransposeOp : public XlaOpKernel {
 public:
  absl::Status Compile(XlaOpKernelContext* ctx) override {
    int64_t rank = ctx->InputShape(0).rank();
    std::vector<int64_t> perm(rank);
    for (int64_t i = 0; i < rank; ++i) perm[i] = rank - 1 - i;
    if (ctx->HasAttr("perm")) {
      absl::StatusOr<std::vector<int64_t>> p = ctx->GetAttrInts("perm");
      if (!p.ok()) return p.status();
      std::vector<int64_t> sorted = *p;
      std::sort(sorted.begin(), sorted.end());
      std::vector<int64_t> iota(rank);
      std::iota(iota.begin(), iota.end(), 0);
      if (sorted != iota) {
        return ctx->Error("perm [", absl::StrJoin(*p, ","), "] is not a permutation of rank ",
                          rank);
      }
      perm = *p;
    }
    ctx->SetOutput(0, Transpose(ctx->Input(0), perm));
    return absl::OkStatus();
  }
};
REGISTER_XLA_OP(Name("Transpose"), TransposeOp);

// Axes from the attribute (before `input_since`) or input 1 (from it on);
// nullopt when neither is given.
absl::StatusOr<std::optional<std::vector<int64_t>>> Axes(const XlaOpKernelContext& ctx,
                                                         int64_t input_since) {
  if (ctx.opset() < input_since) {
    if (!ctx.HasAttr("axes")) return std::nullopt;
    absl::StatusOr<std::vector<int64_t>> axes = ctx.GetAttrInts("axes");
    if (!axes.ok()) return axes.status();
    return std::optional<std::vector<int64_t>>(*axes);
  }
  if (!ctx.HasInput(1)) return std::nullopt;
  absl::StatusOr<std::vector<int64_t>> axes = ctx.ConstantInputAsIntVector(1);
  if (!axes.ok()) return axes.status();
  return std::optional<std::vector<int64_t>>(*axes);
}

class SqueezeOp : public XlaOpKernel {
 public:
  absl::Status Compile(XlaOpKernelContext* ctx) override {
    const std::vector<int64_t>& in = ctx->InputShape(0).dimensions();
    int64_t rank = static_cast<int64_t>(in.size());
    auto axes = Axes(*ctx, 13);
    if (!axes.ok()) return axes.status();
    std::vector<bool> drop(rank, false);
    if (!axes->has_value()) {
      for (int64_t d = 0; d < rank; ++d) drop[d] = in[d] == 1;
    } else {
      for (int64_t axis : **axes) {
        absl::StatusOr<int64_t> a = NormalizeAxis(*ctx, axis, rank);
        if (!a.ok()) return a.status();
        if (in[*a] != 1) return ctx->Error("cannot squeeze dimension ", *a, " of size ", in[*a]);
        drop[*a] = true;
      }
    }
    std::vector<int64_t> out;
    for (int64_t d = 0; d < rank; ++d) {
      if (!drop[d]) out.push_back(in[d]);
    }
    ctx->SetOutput(0, Reshape(ctx->Input(0), out));
    return absl::OkStatus();
  }
};
REGISTER_XLA_OP(Name("Squeeze").CompileTimeConstantInput(1), SqueezeOp);

class UnsqueezeOp : public XlaOpKernel {
 public:
  absl::Status Compile(XlaOpKernelContext* ctx) override {
    const std::vector<int64_t>& in = ctx->InputShape(0).dimensions();
    auto axes = Axes(*ctx, 13);
    if (!axes.ok()) return axes.status();
    if (!axes->has_value()) return ctx->Error("axes are required");
    int64_t rank = static_cast<int64_t>(in.size() + (*axes)->size());
    std::vector<bool> inserted(rank, false);
    for (int64_t axis : **axes) {
      absl::StatusOr<int64_t> a = NormalizeAxis(*ctx, axis, rank);
      if (!a.ok()) return a.status();
      if (inserted[*a]) return ctx->Error("axis ", axis, " is repeated");
      inserted[*a] = true;
    }
    std::vector<int64_t> out;
    size_t k = 0;
    for (int64_t d = 0; d < rank; ++d) out.push_back(inserted[d] ? 1 : in[k++]);
    ctx->SetOutput(0, Reshape(ctx->Input(0), out));
    return absl::OkStatus();
  }
};
REGISTER_XLA_OP(Name("Unsqueeze").CompileTimeConstantInput(1), UnsqueezeOp);

class ExpandOp : public XlaOpKernel {
 public:
  absl::Status Compile(XlaOpKernelContext* ctx) override {
    absl::StatusOr<std::vector<int64_t>> shape = ctx->ConstantInputAsIntVector(1);
    if (!shape.ok()) return shape.status();
    const std::vector<int64_t>& in = ctx->InputShape(0).dimensions();
    size_t rank = std::max(in.size(), shape->size());
    std::vector<int64_t> out(rank);
    for (size_t i = 0; i < rank; ++i) {
      int64_t a = i + in.size() >= rank ? in[i + in.size() - rank] : 1;
      int64_t b = i + shape->size() >= rank ? (*shape)[i + shape->size() - rank] : 1;
      if (a != b && a != 1 && b != 1) {
        return ctx->Error("cannot expand ", ctx->InputShape(0).ToString(false), " to [",
                          absl::StrJoin(*shape, ","), "]");
      }
      out[i] = a == 1 ? b : a;
    }
    ctx->SetOutput(0, BroadcastTo(ctx->Input(0), in, out));
    return absl::OkStatus();
  }
};
REGISTER_XLA_OP(Name("Expand").CompileTimeConstantInput(1), ExpandOp);

class ShapeOp : public XlaOpKernel {
 public:
  absl::Status Compile(XlaOpKernelContext* ctx) override {
    const std::vector<int64_t>& dims = ctx->InputShape(0).dimensions();
    int64_t rank = static_cast<int64_t>(dims.size());
    absl::StatusOr<int64_t> start = ctx->GetAttrInt("start", 0);
    absl::StatusOr<int64_t> end = ctx->GetAttrInt("end", rank);
    if (!start.ok()) return start.status();
    if (!end.ok()) return end.status();
    auto clamp = [&](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + rank : v, 0, rank); };
    int64_t s = clamp(*start), e = clamp(*end);
    std::vector<int64_t> out;
    for (int64_t i = s; i < e; ++i) out.push_back(dims[i]);
    ctx->SetConstantOutput(0, S64Vector(out));
    return absl::OkStatus();
  }
};
REGISTER_XLA_OP(Name("Shape").MetadataOnly(), ShapeOp);

class SizeOp : public XlaOpKernel {
 public:
  absl::Status Compile(XlaOpKernelContext* ctx) override {
    ctx->SetConstantOutput(0, LiteralUtil::CreateR0<int64_t>(ctx->InputShape(0).num_elements()));
    return absl::OkStatus();
  }
};
REGISTER_XLA_OP(Name("Size").MetadataOnly(), SizeOp);

class ConstantOfShapeOp : public XlaOpKernel {
 public:
  absl::Status Compile(XlaOpKernelContext* ctx) override {
    absl::StatusOr<std::vector<int64_t>> shape = ctx->ConstantInputAsIntVector(0);
    if (!shape.ok()) return shape.status();
    for (int64_t d : *shape) {
      if (d < 0) return ctx->Error("shape [", absl::StrJoin(*shape, ","), "] is negative");
    }
    Literal value = LiteralUtil::CreateR0<float>(0.0f);
    if (ctx->HasAttr("value")) {
      absl::StatusOr<Literal> v = ctx->GetAttrTensor("value");
      if (!v.ok()) return v.status();
      if (v->element_count() != 1) return ctx->Error("value must hold one element");
      absl::StatusOr<Literal> scalar = v->Reshape({});
      if (!scalar.ok()) return scalar.status();
      value = std::move(*scalar);
    }
    ctx->SetOutput(0, Broadcast(ConstantLiteral(ctx->builder(), value), *shape));
    return absl::OkStatus();
  }
};
REGISTER_XLA_OP(Name("ConstantOfShape").CompileTimeConstantInput(0), ConstantOfShapeOp);

class ConstantOp : public XlaOpKernel {
 public:
  absl::Status Compile(XlaOpKernelContext* ctx) override {
    if (ctx->HasAttr("value")) {
      absl::StatusOr<Literal> v = ctx->GetAttrTensor("value");
      if (!v.ok()) return v.status();
      ctx->SetConstantOutput(0, std::move(*v));
    } else if (ctx->HasAttr("value_float")) {
      absl::StatusOr<float> v = ctx->GetAttrFloat("value_float", 0);
      if (!v.ok()) return v.status();
      ctx->SetConstantOutput(0, LiteralUtil::CreateR0<float>(*v));
    } else if (ctx->HasAttr("value_floats")) {
      absl::StatusOr<std::vector<float>> v = ctx->GetAttrFloats("value_floats");
      if (!v.ok()) return v.status();
      ctx->SetConstantOutput(0, LiteralUtil::CreateR1<float>(absl::Span<const float>(*v)));
    } else if (ctx->HasAttr("value_int")) {
      absl::StatusOr<int64_t> v = ctx->GetAttrInt("value_int");
      if (!v.ok()) return v.status();
      ctx->SetConstantOutput(0, LiteralUtil::CreateR0<int64_t>(*v));
    } else if (ctx->HasAttr("value_ints")) {
      absl::StatusOr<std::vector<int64_t>> v = ctx->GetAttrInts("value_ints");
      if (!v.ok()) return v.status();
      ctx->SetConstantOutput(0, S64Vector(*v));
    } else {
      return ctx->Unimplemented("only value, value_float(s) and value_int(s) are supported");
    }
    return absl::OkStatus();
  }
};
REGISTER_XLA_OP(Name("Constant"), ConstantOp);

}  // namespace

AXLE_ONNX_KERNEL_FILE(shape)

}  // namespace axle::onnx
