//===- scatter_ops.cc - ONNX scatter and gather ops through HLO Scatter -----===//
//
// ScatterElements (and its deprecated name Scatter), ScatterND with their
// reductions, GatherElements, and GatherND with batch_dims, each one HLO
// Scatter or Gather over indices with negative values wrapped to the end of
// their dimension.
//
//===----------------------------------------------------------------------===//
#include "absl/strings/str_join.h"
#include "axle/frontends/graph/xla_op_registry.h"
#include "axle/frontends/onnx/kernels/kernel_util.h"
#include "axle/frontends/onnx/kernels/kernels.h"

namespace axle::onnx {
namespace {

// `idx` (S64, last dimension the index vector over operand dimensions
// `sizes`) with negative components counted from the end of their dimension.
XlaOp WrapIndexVectors(XlaOp idx, const std::vector<int64_t>& idx_dims,
                       const std::vector<int64_t>& sizes) {
  XlaBuilder* b = idx.builder();
  XlaOp n = BroadcastInDim(ConstantR1<int64_t>(b, sizes), idx_dims,
                           {static_cast<int64_t>(idx_dims.size()) - 1});
  XlaOp zero = Broadcast(ConstantR0<int64_t>(b, 0), idx_dims);
  return Select(Lt(idx, zero), Add(idx, n), idx);
}

// The update computation for a reduction attribute ("none", "add", "mul",
// "max", "min") of `type`.
absl::StatusOr<XlaComputation> UpdateComputation(const XlaOpKernelContext& ctx,
                                                 PrimitiveType type) {
  absl::StatusOr<std::string> reduction = ctx.GetAttrString("reduction", "none");
  if (!reduction.ok()) return reduction.status();
  if (*reduction == "add") return ReducerComputation(Reducer::kAdd, type);
  if (*reduction == "mul") return ReducerComputation(Reducer::kMul, type);
  if (*reduction == "max") return ReducerComputation(Reducer::kMax, type);
  if (*reduction == "min") return ReducerComputation(Reducer::kMin, type);
  if (*reduction != "none") {
    return ctx.Unimplemented("attribute 'reduction' = '", *reduction, "' is not supported");
  }
  XlaBuilder b("assign");
  Shape scalar = ShapeUtil::MakeScalarShape(type);
  Parameter(&b, 0, scalar, "old");
  Parameter(&b, 1, scalar, "new");
  return b.Build();
}

// Output 0: ctx's input 0 (data) with input 2 (the updates) combined in
// by `update` at `idx` (S64, dimensions `idx_dims`): along its last
// dimension, index vectors of k components naming elements of data's first
// k dimensions, negative components counted from the end. An update is a
// whole element of data's other dimensions, in the updates' trailing ones.
void ScatterAtIndexVectors(XlaOpKernelContext* ctx, XlaOp idx, const std::vector<int64_t>& idx_dims,
                           const XlaComputation& update) {
  const std::vector<int64_t>& data = ctx->InputShape(0).dimensions();
  const int64_t q = static_cast<int64_t>(idx_dims.size());
  const int64_t k = idx_dims.back();
  const std::vector<int64_t> sizes(data.begin(), data.begin() + k);
  ScatterDimensionNumbers dnums;
  for (int64_t d = 0; d < k; ++d) {
    dnums.add_inserted_window_dims(d);
    dnums.add_scatter_dims_to_operand_dims(d);
  }
  for (int64_t d = k; d < static_cast<int64_t>(data.size()); ++d) {
    dnums.add_update_window_dims(q - 1 + d - k);
  }
  dnums.set_index_vector_dim(q - 1);
  ctx->SetOutput(0, Scatter(ctx->Input(0), WrapIndexVectors(idx, idx_dims, sizes), ctx->Input(2),
                            update, dnums));
}

// The index vectors (S64, along a new last dimension, `idx_dims` set to
// their dimensions) of the elements of input `input` (indices, of `data`'s
// rank) into data: element i's vector is i with its `axis` component
// replaced by indices[i], negative components not yet wrapped.
XlaOp ElementIndexVectors(XlaOpKernelContext* ctx, int input, int64_t axis,
                          std::vector<int64_t>& idx_dims) {
  XlaBuilder* b = ctx->builder();
  const std::vector<int64_t>& dims = ctx->InputShape(input).dimensions();
  const int64_t r = static_cast<int64_t>(dims.size());
  std::vector<int64_t> one_dims = dims;
  one_dims.push_back(1);
  Shape s64 = ShapeUtil::MakeShape(S64, dims);
  std::vector<XlaOp> parts;
  for (int64_t d = 0; d < r; ++d) {
    XlaOp part = d == axis ? ConvertElementType(ctx->Input(input), S64) : Iota(b, s64, d);
    parts.push_back(Reshape(part, one_dims));
  }
  idx_dims = dims;
  idx_dims.push_back(r);
  return ConcatInDim(b, parts, r);
}

absl::Status CheckIntegerIndices(const XlaOpKernelContext& ctx, int input) {
  if (!primitive_util::IsIntegralType(ctx.InputType(input))) {
    return ctx.Error("indices ", ctx.InputShape(input).ToString(false), " must be integers");
  }
  return absl::OkStatus();
}

// ScatterElements and ScatterND: integer indices, the shapes checked and
// the index vectors built by the op (IndexVectors), then one scatter by the
// reduction attribute's update computation.
class ScatterOp : public XlaOpKernel {
 public:
  absl::Status Compile(XlaOpKernelContext* ctx) final {
    if (absl::Status s = CheckIntegerIndices(*ctx, 1); !s.ok()) return s;
    std::vector<int64_t> idx_dims;
    absl::StatusOr<XlaOp> idx =
        IndexVectors(ctx, ctx->InputShape(0), ctx->InputShape(1), ctx->InputShape(2), idx_dims);
    if (!idx.ok()) return idx.status();
    absl::StatusOr<XlaComputation> update = UpdateComputation(*ctx, ctx->InputType(0));
    if (!update.ok()) return update.status();
    ScatterAtIndexVectors(ctx, *idx, idx_dims, *update);
    return absl::OkStatus();
  }

 protected:
  // Checks the shapes of data, indices and updates (inputs 0 to 2) and
  // returns the index vectors into data as ScatterAtIndexVectors takes
  // them, their dimensions in `idx_dims`.
  virtual absl::StatusOr<XlaOp> IndexVectors(XlaOpKernelContext* ctx, const Shape& data,
                                             const Shape& indices, const Shape& updates,
                                             std::vector<int64_t>& idx_dims) const = 0;
};

// The index vector of update element i is i itself with its `axis`
// component replaced by indices[i].
class ScatterElementsOp : public ScatterOp {
 protected:
  absl::StatusOr<XlaOp> IndexVectors(XlaOpKernelContext* ctx, const Shape& data,
                                     const Shape& indices, const Shape& updates,
                                     std::vector<int64_t>& idx_dims) const override {
    if (indices.rank() != data.rank() || updates.dimensions() != indices.dimensions()) {
      return ctx->Error("indices ", indices.ToString(false), " and updates ",
                        updates.ToString(false), " must have one shape of the rank of data ",
                        data.ToString(false));
    }
    absl::StatusOr<int64_t> a = AxisAttr(*ctx, 0, data.rank());
    if (!a.ok()) return a.status();
    return ElementIndexVectors(ctx, 1, *a, idx_dims);
  }
};
REGISTER_XLA_OP(Name("ScatterElements"), ScatterElementsOp);
REGISTER_XLA_OP(Name("Scatter").UntilVersion(10), ScatterElementsOp);

// The indices are the index vectors, each naming the first k dimensions of
// data.
class ScatterNDOp : public ScatterOp {
 protected:
  absl::StatusOr<XlaOp> IndexVectors(XlaOpKernelContext* ctx, const Shape& data,
                                     const Shape& indices, const Shape& updates,
                                     std::vector<int64_t>& idx_dims) const override {
    int64_t q = indices.rank();
    int64_t k = q > 0 ? indices.dimensions(q - 1) : -1;
    if (q < 1 || k > data.rank()) {
      return ctx->Error("indices ", indices.ToString(false),
                        " must end in a dimension of at most the rank of data ",
                        data.ToString(false));
    }
    std::vector<int64_t> expected(indices.dimensions().begin(), indices.dimensions().end() - 1);
    expected.insert(expected.end(), data.dimensions().begin() + k, data.dimensions().end());
    if (updates.dimensions() != expected) {
      return ctx->Error("updates ", updates.ToString(false), " must have dimensions [",
                        absl::StrJoin(expected, ","), "]");
    }
    idx_dims = indices.dimensions();
    return ConvertElementType(ctx->Input(1), S64);
  }
};
REGISTER_XLA_OP(Name("ScatterND"), ScatterNDOp);

class GatherElementsOp : public XlaOpKernel {
 public:
  absl::Status Compile(XlaOpKernelContext* ctx) override {
    if (absl::Status s = CheckIntegerIndices(*ctx, 1); !s.ok()) return s;
    const Shape& data = ctx->InputShape(0);
    if (ctx->InputShape(1).rank() != data.rank()) {
      return ctx->Error("indices ", ctx->InputShape(1).ToString(false),
                        " must have the rank of data ", data.ToString(false));
    }
    absl::StatusOr<int64_t> a = AxisAttr(*ctx, 0, data.rank());
    if (!a.ok()) return a.status();
    std::vector<int64_t> idx_dims;
    XlaOp idx = ElementIndexVectors(ctx, 1, *a, idx_dims);
    int64_t r = data.rank();
    GatherDimensionNumbers dnums;
    for (int64_t d = 0; d < r; ++d) {
      dnums.add_collapsed_slice_dims(d);
      dnums.add_start_index_map(d);
    }
    dnums.set_index_vector_dim(r);
    ctx->SetOutput(0, Gather(ctx->Input(0), WrapIndexVectors(idx, idx_dims, data.dimensions()),
                             dnums, std::vector<int64_t>(r, 1)));
    return absl::OkStatus();
  }
};
REGISTER_XLA_OP(Name("GatherElements"), GatherElementsOp);

class GatherNDOp : public XlaOpKernel {
 public:
  absl::Status Compile(XlaOpKernelContext* ctx) override {
    const Shape& data = ctx->InputShape(0);
    const Shape& indices = ctx->InputShape(1);
    if (absl::Status s = CheckIntegerIndices(*ctx, 1); !s.ok()) return s;
    absl::StatusOr<int64_t> batch_dims = ctx->GetAttrInt("batch_dims", 0);
    if (!batch_dims.ok()) return batch_dims.status();
    int64_t nb = *batch_dims;
    int64_t q = indices.rank();
    int64_t k = q > 0 ? indices.dimensions(q - 1) : -1;
    if (nb < 0 || q < 1 || nb >= q || nb + k > data.rank()) {
      return ctx->Error("indices ", indices.ToString(false), " with batch_dims ", nb,
                        " do not index data ", data.ToString(false));
    }
    for (int64_t d = 0; d < nb; ++d) {
      if (indices.dimensions(d) != data.dimensions(d)) {
        return ctx->Error("batch dimension ", d, " differs between data ", data.ToString(false),
                          " and indices ", indices.ToString(false));
      }
    }
    XlaBuilder* b = ctx->builder();
    std::vector<int64_t> sizes(data.dimensions().begin() + nb, data.dimensions().begin() + nb + k);
    XlaOp idx =
        WrapIndexVectors(ConvertElementType(ctx->Input(1), S64), indices.dimensions(), sizes);
    // Batch dimensions become leading components of every index vector.
    if (nb > 0) {
      std::vector<int64_t> one_dims(indices.dimensions().begin(), indices.dimensions().end() - 1);
      Shape s64 = ShapeUtil::MakeShape(S64, one_dims);
      one_dims.push_back(1);
      std::vector<XlaOp> parts;
      for (int64_t d = 0; d < nb; ++d) parts.push_back(Reshape(Iota(b, s64, d), one_dims));
      parts.push_back(idx);
      idx = ConcatInDim(b, parts, q - 1);
    }
    GatherDimensionNumbers dnums;
    std::vector<int64_t> slice_sizes;
    for (int64_t d = 0; d < nb + k; ++d) {
      dnums.add_collapsed_slice_dims(d);
      dnums.add_start_index_map(d);
      slice_sizes.push_back(1);
    }
    for (int64_t d = nb + k; d < data.rank(); ++d) {
      dnums.add_offset_dims(q - 1 + d - nb - k);
      slice_sizes.push_back(data.dimensions(d));
    }
    dnums.set_index_vector_dim(q - 1);
    ctx->SetOutput(0, Gather(ctx->Input(0), idx, dnums, slice_sizes));
    return absl::OkStatus();
  }
};
REGISTER_XLA_OP(Name("GatherND"), GatherNDOp);

}  // namespace

AXLE_ONNX_KERNEL_FILE(scatter)

}  // namespace axle::onnx
