//===- cast_ops.cc - ONNX Cast and CastLike ---------------------------------===//
#include "axle/frontends/graph/xla_op_registry.h"
#include "axle/frontends/onnx/kernels/kernel_util.h"
#include "axle/frontends/onnx/kernels/kernels.h"
#include "axle/frontends/onnx/onnx_loader.h"

namespace axle::onnx {
namespace {

// A float converted to an integer or bool goes through XLA's convert
// (truncation toward zero; pred is x != 0), as ONNX specifies.
class CastOp : public XlaOpKernel {
 public:
  absl::Status Compile(XlaOpKernelContext* ctx) override {
    PrimitiveType to;
    if (ctx->node().op_type == "CastLike") {
      to = ctx->InputType(1);
    } else {
      absl::StatusOr<int64_t> number = ctx->GetAttrInt("to");
      if (!number.ok()) return number.status();
      absl::StatusOr<PrimitiveType> type = ElementTypeFromOnnx(static_cast<int>(*number));
      if (!type.ok()) return ctx->Unimplemented("cast to ", type.status().message());
      to = *type;
    }
    XlaOp x = ctx->Input(0);
    if (to == PRED && ctx->InputType(0) != PRED) {
      x = Ne(x, ScalarLike(ctx->builder(), ctx->InputType(0), 0));
    }
    ctx->SetOutput(0, ConvertElementType(x, to));
    return absl::OkStatus();
  }
};
REGISTER_XLA_OP(Name("Cast"), CastOp);
REGISTER_XLA_OP(Name("CastLike"), CastOp);

}  // namespace

AXLE_ONNX_KERNEL_FILE(cast)

}  // namespace axle::onnx
