//===- matmul_ops.cc - ONNX MatMul and Gemm ---------------------------------===//
#include "axle/frontends/graph/xla_op_registry.h"
#include "axle/frontends/onnx/kernels/kernel_util.h"
#include "axle/frontends/onnx/kernels/kernels.h"

namespace axle::onnx {
namespace {

// numpy.matmul: 1-D operands get a unit dimension (removed again), batch
// dimensions broadcast, then one batched dot. A matrix b (a linear layer's
// weight) is not broadcast over a's batch dimensions: a's leading
// dimensions stay non-contracting dims of one unbatched dot, as JAX's
// einsum emits it, not a batched dot over copies of the weight.
class MatMulOp : public XlaOpKernel {
 public:
  absl::Status Compile(XlaOpKernelContext* ctx) override {
    std::vector<int64_t> a = ctx->InputShape(0).dimensions();
    std::vector<int64_t> b = ctx->InputShape(1).dimensions();
    if (a.empty() || b.empty()) return ctx->Error("MatMul operands must have rank >= 1");
    if (ctx->InputType(0) != ctx->InputType(1)) {
      return ctx->Error("inputs have different element types: ", ctx->InputShape(0).ToString(false),
                        " and ", ctx->InputShape(1).ToString(false));
    }
    XlaOp x = ctx->Input(0), y = ctx->Input(1);
    if (a.size() > 2 && b.size() == 2) {
      if (a.back() != b[0]) {
        return ctx->Error("contracting dimensions differ: ", ctx->InputShape(0).ToString(false),
                          " x ", ctx->InputShape(1).ToString(false));
      }
      DotDimensionNumbers dnums;
      dnums.add_lhs_contracting_dimensions(static_cast<int64_t>(a.size()) - 1);
      dnums.add_rhs_contracting_dimensions(0);
      ctx->SetOutput(0, DotGeneral(x, y, dnums));
      return absl::OkStatus();
    }
    bool a_vector = a.size() == 1, b_vector = b.size() == 1;
    if (a_vector) a.insert(a.begin(), 1);
    if (b_vector) b.push_back(1);
    if (a[a.size() - 1] != b[b.size() - 2]) {
      return ctx->Error("contracting dimensions differ: ", ctx->InputShape(0).ToString(false),
                        " x ", ctx->InputShape(1).ToString(false));
    }
    std::vector<int64_t> a_batch(a.begin(), a.end() - 2), b_batch(b.begin(), b.end() - 2);
    std::vector<int64_t> batch;
    size_t n = std::max(a_batch.size(), b_batch.size());
    for (size_t i = 0; i < n; ++i) {
      int64_t da = i + a_batch.size() >= n ? a_batch[i + a_batch.size() - n] : 1;
      int64_t db = i + b_batch.size() >= n ? b_batch[i + b_batch.size() - n] : 1;
      if (da != db && da != 1 && db != 1) {
        return ctx->Error("batch dimensions do not broadcast: ", ctx->InputShape(0).ToString(false),
                          " x ", ctx->InputShape(1).ToString(false));
      }
      batch.push_back(std::max(da, db));
    }
    auto expand = [&](XlaOp op, const std::vector<int64_t>& original, std::vector<int64_t> dims) {
      op = Reshape(op, dims);
      std::vector<int64_t> out = batch;
      out.push_back(dims[dims.size() - 2]);
      out.push_back(dims[dims.size() - 1]);
      return BroadcastTo(op, dims, out);
    };
    x = expand(x, ctx->InputShape(0).dimensions(), a);
    y = expand(y, ctx->InputShape(1).dimensions(), b);
    DotDimensionNumbers dnums;
    int64_t r = static_cast<int64_t>(batch.size());
    for (int64_t i = 0; i < r; ++i) {
      dnums.add_lhs_batch_dimensions(i);
      dnums.add_rhs_batch_dimensions(i);
    }
    dnums.add_lhs_contracting_dimensions(r + 1);
    dnums.add_rhs_contracting_dimensions(r);
    XlaOp out = DotGeneral(x, y, dnums);
    std::vector<int64_t> dims = batch;
    if (!a_vector) dims.push_back(a[a.size() - 2]);
    if (!b_vector) dims.push_back(b[b.size() - 1]);
    ctx->SetOutput(0, Reshape(out, dims));
    return absl::OkStatus();
  }
};
REGISTER_XLA_OP(Name("MatMul"), MatMulOp);

// Y = alpha * op(A) * op(B) + beta * C, C broadcast to Y.
class GemmOp : public XlaOpKernel {
 public:
  absl::Status Compile(XlaOpKernelContext* ctx) override {
    absl::StatusOr<int64_t> trans_a = ctx->GetAttrInt("transA", 0);
    absl::StatusOr<int64_t> trans_b = ctx->GetAttrInt("transB", 0);
    absl::StatusOr<float> alpha = ctx->GetAttrFloat("alpha", 1.0f);
    absl::StatusOr<float> beta = ctx->GetAttrFloat("beta", 1.0f);
    for (const absl::Status& s :
         {trans_a.status(), trans_b.status(), alpha.status(), beta.status()}) {
      if (!s.ok()) return s;
    }
    if (ctx->InputShape(0).rank() != 2 || ctx->InputShape(1).rank() != 2) {
      return ctx->Error("A and B must be matrices, got ", ctx->InputShape(0).ToString(false),
                        " and ", ctx->InputShape(1).ToString(false));
    }
    DotDimensionNumbers dnums;
    dnums.add_lhs_contracting_dimensions(*trans_a ? 0 : 1);
    dnums.add_rhs_contracting_dimensions(*trans_b ? 1 : 0);
    int64_t k_a = ctx->InputShape(0).dimensions(*trans_a ? 0 : 1);
    int64_t k_b = ctx->InputShape(1).dimensions(*trans_b ? 1 : 0);
    if (k_a != k_b) {
      return ctx->Error("contracting dimensions differ: A ", ctx->InputShape(0).ToString(false),
                        " transA=", *trans_a, ", B ", ctx->InputShape(1).ToString(false),
                        " transB=", *trans_b);
    }
    PrimitiveType t = ctx->InputType(0);
    XlaBuilder* b = ctx->builder();
    XlaOp y = DotGeneral(ctx->Input(0), ctx->Input(1), dnums);
    if (*alpha != 1.0f) y = Mul(y, ScalarLike(b, t, *alpha));
    if (ctx->HasInput(2)) {
      std::vector<int64_t> out = {ctx->InputShape(0).dimensions(*trans_a ? 1 : 0),
                                  ctx->InputShape(1).dimensions(*trans_b ? 0 : 1)};
      const std::vector<int64_t>& c_dims = ctx->InputShape(2).dimensions();
      for (size_t i = 0; i < c_dims.size(); ++i) {
        size_t o = out.size() - c_dims.size() + i;
        if (c_dims.size() > 2 || (c_dims[i] != 1 && c_dims[i] != out[o])) {
          return ctx->Error("C of shape ", ctx->InputShape(2).ToString(false),
                            " does not broadcast to the result's [", out[0], ",", out[1], "]");
        }
      }
      XlaOp c = BroadcastTo(ctx->Input(2), c_dims, out);
      if (*beta != 1.0f) c = Mul(c, ScalarLike(b, t, *beta));
      y = Add(y, c);
    }
    ctx->SetOutput(0, y);
    return absl::OkStatus();
  }
};
REGISTER_XLA_OP(Name("Gemm"), GemmOp);

}  // namespace

AXLE_ONNX_KERNEL_FILE(matmul)

}  // namespace axle::onnx
