//===- sort_ops.cc - ONNX ops built on HLO Sort -----------------------------===//
//
// TopK: a sort of (values, positions) along the axis with ties broken by the
// lower position, as ONNX asks, then the first k of each.
//
//===----------------------------------------------------------------------===//
#include "axle/frontends/graph/xla_op_registry.h"
#include "axle/frontends/onnx/kernels/kernel_util.h"
#include "axle/frontends/onnx/kernels/kernels.h"

namespace axle::onnx {
namespace {

// (a, b, ia, ib) -> a before b: greater (or less) values first, equal ones
// by position.
XlaComputation TopKComparator(PrimitiveType type, bool largest) {
  XlaBuilder b("topk_compare");
  Shape scalar = ShapeUtil::MakeScalarShape(type);
  Shape index = ShapeUtil::MakeScalarShape(S64);
  XlaOp x = Parameter(&b, 0, scalar, "x");
  XlaOp y = Parameter(&b, 1, scalar, "y");
  XlaOp ix = Parameter(&b, 2, index, "ix");
  XlaOp iy = Parameter(&b, 3, index, "iy");
  XlaOp before = largest ? GtTotalOrder(x, y) : LtTotalOrder(x, y);
  Or(before, And(EqTotalOrder(x, y), Lt(ix, iy)));
  return b.BuildAndNoteError();
}

class TopKOp : public XlaOpKernel {
 public:
  absl::Status Compile(XlaOpKernelContext* ctx) override {
    const Shape& x = ctx->InputShape(0);
    int64_t k = 0;
    if (ctx->opset() < 10) {
      absl::StatusOr<int64_t> attr = ctx->GetAttrInt("k");
      if (!attr.ok()) return attr.status();
      k = *attr;
    } else {
      absl::StatusOr<std::vector<int64_t>> v = ctx->ConstantInputAsIntVector(1);
      if (!v.ok()) return v.status();
      if (v->size() != 1) return ctx->Error("K must hold one value");
      k = (*v)[0];
    }
    absl::StatusOr<int64_t> a = AxisAttr(*ctx, -1, x.rank());
    if (!a.ok()) return a.status();
    if (x.rank() == 0 || k < 0 || k > x.dimensions(*a)) {
      return ctx->Error("k ", k, " is out of range for axis ", *a, " of ", x.ToString(false));
    }
    absl::StatusOr<int64_t> largest = ctx->GetAttrInt("largest", 1);
    if (!largest.ok()) return largest.status();
    absl::StatusOr<int64_t> sorted = ctx->GetAttrInt("sorted", 1);
    if (!sorted.ok()) return sorted.status();
    // Unsorted output may be in any order: the sorted one is such an order.
    XlaBuilder* b = ctx->builder();
    XlaOp positions = Iota(b, ShapeUtil::MakeShape(S64, x.dimensions()), *a);
    XlaOp sort = Sort({ctx->Input(0), positions}, TopKComparator(x.element_type(), *largest != 0),
                      *a, /*is_stable=*/true);
    ctx->SetOutput(0, SliceInDim(GetTupleElement(sort, 0), 0, k, 1, *a));
    ctx->SetOutput(1, SliceInDim(GetTupleElement(sort, 1), 0, k, 1, *a));
    return absl::OkStatus();
  }
};
REGISTER_XLA_OP(Name("TopK").UntilVersion(9), TopKOp);
REGISTER_XLA_OP(Name("TopK").SinceVersion(10).CompileTimeConstantInput(1), TopKOp);

}  // namespace

AXLE_ONNX_KERNEL_FILE(sort)

}  // namespace axle::onnx
