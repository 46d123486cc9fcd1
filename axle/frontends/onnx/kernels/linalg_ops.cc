//===- linalg_ops.cc - ONNX Det ---------------------------------------------===//
//
// Det of [..., M, M]: Gaussian elimination with partial pivoting unrolled
// over the M columns (M is static). Each step picks the row of largest
// magnitude, swaps it up through a one-hot permutation dot (exact), and
// eliminates below it; the determinant is the product of the pivots with
// the permutation's sign.
//
//===----------------------------------------------------------------------===//
#include "axle/frontends/graph/xla_op_registry.h"
#include "axle/frontends/onnx/kernels/kernel_util.h"
#include "axle/frontends/onnx/kernels/kernels.h"

namespace axle::onnx {
namespace {

class DetOp : public XlaOpKernel {
 public:
  absl::Status Compile(XlaOpKernelContext* ctx) override {
    const Shape& x = ctx->InputShape(0);
    int64_t r = x.rank();
    if (r < 2 || x.dimensions(r - 1) != x.dimensions(r - 2) || !IsFloat(x.element_type())) {
      return ctx->Error("X ", x.ToString(false), " must be floating-point [..., M, M]");
    }
    PrimitiveType t = x.element_type();
    XlaBuilder* b = ctx->builder();
    int64_t m = x.dimensions(r - 1), batch = 1;
    std::vector<int64_t> out(x.dimensions().begin(), x.dimensions().end() - 2);
    for (int64_t d : out) batch *= d;
    std::vector<int64_t> bm = {batch, m}, bmm = {batch, m, m};
    auto c = [&](double v, const std::vector<int64_t>& dims) {
      return Broadcast(ScalarLike(b, t, v), dims);
    };
    XlaOp a = Reshape(ctx->Input(0), bmm);
    XlaOp det = c(1, {batch});
    Shape rows = ShapeUtil::MakeShape(S64, bm);
    XlaOp row = Iota(b, rows, 1);
    DotDimensionNumbers dn;
    dn.add_lhs_batch_dimensions(0);
    dn.add_rhs_batch_dimensions(0);
    dn.add_lhs_contracting_dimensions(2);
    dn.add_rhs_contracting_dimensions(1);
    XlaComputation max = ReducerComputation(Reducer::kMax, t);
    XlaComputation min = ReducerComputation(Reducer::kMin, S64);
    for (int64_t k = 0; k < m; ++k) {
      // The pivot row p >= k of largest |a[., k]| (the first on ties).
      XlaOp col = Reshape(SliceInDim(a, k, k + 1, 1, 2), bm);
      XlaOp below = Ge(row, Broadcast(ConstantR0<int64_t>(b, k), bm));
      XlaOp mag = Select(below, Abs(col), c(-1, bm));
      XlaOp best = Reduce(mag, ScalarLike(b, t, -2), max, {1});
      XlaOp is_best = Eq(mag, BroadcastInDim(best, bm, {0}));
      XlaOp p = Reduce(Select(is_best, row, Broadcast(ConstantR0<int64_t>(b, m), bm)),
                       ConstantR0<int64_t>(b, m), min, {1});
      // Swap rows k and p: a = P a with P one-hot.
      XlaOp pb = BroadcastInDim(p, bm, {0});
      XlaOp kb = Broadcast(ConstantR0<int64_t>(b, k), bm);
      XlaOp source = Select(Eq(row, kb), pb, Select(Eq(row, pb), kb, row));
      XlaOp perm =
          Eq(BroadcastInDim(source, bmm, {0, 1}), Iota(b, ShapeUtil::MakeShape(S64, bmm), 2));
      a = DotGeneral(ConvertElementType(perm, t), a, dn);
      XlaOp swapped = Ne(p, Broadcast(ConstantR0<int64_t>(b, k), {batch}));
      XlaOp pivot = Reshape(Slice(a, {0, k, k}, {batch, k + 1, k + 1}, {1, 1, 1}), {batch});
      det = Mul(det, Select(swapped, Neg(pivot), pivot));
      // Eliminate below the pivot (a zero pivot leaves a zero determinant).
      XlaOp zero_pivot = Eq(pivot, c(0, {batch}));
      XlaOp safe = Select(zero_pivot, c(1, {batch}), pivot);
      col = Reshape(SliceInDim(a, k, k + 1, 1, 2), bm);
      XlaOp after = Gt(row, kb);
      XlaOp factor = Select(after, Div(col, BroadcastInDim(safe, bm, {0})), c(0, bm));
      XlaOp pivot_row = Reshape(SliceInDim(a, k, k + 1, 1, 1), bm);
      a = Sub(a, Mul(BroadcastInDim(factor, bmm, {0, 1}), BroadcastInDim(pivot_row, bmm, {0, 2})));
    }
    ctx->SetOutput(0, Reshape(det, out));
    return absl::OkStatus();
  }
};
REGISTER_XLA_OP(Name("Det").SinceVersion(11), DetOp);

}  // namespace

AXLE_ONNX_KERNEL_FILE(linalg)

}  // namespace axle::onnx
