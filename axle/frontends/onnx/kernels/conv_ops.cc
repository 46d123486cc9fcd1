//===- conv_ops.cc - ONNX Conv ----------------------------------------------===//
//
// Conv in NC[spatial] layout with OIHW-style weights [M, C/group, k...],
// grouped convolution through feature_group_count, then the optional bias.
//
//===----------------------------------------------------------------------===//
#include "axle/frontends/graph/xla_op_registry.h"
#include "axle/frontends/onnx/kernels/kernel_util.h"
#include "axle/frontends/onnx/kernels/kernels.h"

namespace axle::onnx {
namespace {

class ConvOp : public XlaOpKernel {
 public:
  absl::Status Compile(XlaOpKernelContext* ctx) override {
    const Shape& x = ctx->InputShape(0);
    const Shape& w = ctx->InputShape(1);
    if (x.rank() < 3 || w.rank() != x.rank()) {
      return ctx->Error("X ", x.ToString(false), " and W ", w.ToString(false),
                        " must have the same rank >= 3");
    }
    int64_t n = x.rank() - 2;
    std::vector<int64_t> spatial(x.dimensions().begin() + 2, x.dimensions().end());
    std::vector<int64_t> kernel(w.dimensions().begin() + 2, w.dimensions().end());
    absl::StatusOr<WindowAttrs> window = GetWindowAttrs(*ctx, spatial, &kernel);
    if (!window.ok()) return window.status();
    if (window->kernel != kernel) {
      return ctx->Error("kernel_shape does not match W ", w.ToString(false));
    }
    absl::StatusOr<int64_t> group = ctx->GetAttrInt("group", 1);
    if (!group.ok()) return group.status();
    if (*group < 1 || x.dimensions(1) != w.dimensions(1) * *group ||
        w.dimensions(0) % *group != 0) {
      return ctx->Error("X ", x.ToString(false), " and W ", w.ToString(false),
                        " do not agree with group=", *group);
    }
    ConvolutionDimensionNumbers dnums;
    dnums.set_input_batch_dimension(0);
    dnums.set_input_feature_dimension(1);
    dnums.set_kernel_output_feature_dimension(0);
    dnums.set_kernel_input_feature_dimension(1);
    dnums.set_output_batch_dimension(0);
    dnums.set_output_feature_dimension(1);
    for (int64_t i = 0; i < n; ++i) {
      dnums.add_input_spatial_dimensions(2 + i);
      dnums.add_kernel_spatial_dimensions(2 + i);
      dnums.add_output_spatial_dimensions(2 + i);
    }
    std::vector<int64_t> ones(n, 1);
    XlaOp y = ConvGeneralDilated(ctx->Input(0), ctx->Input(1), window->strides, window->pads, ones,
                                 window->dilations, dnums, *group);
    if (ctx->HasInput(2)) {
      const Shape& bias = ctx->InputShape(2);
      if (bias.rank() != 1 || bias.dimensions(0) != w.dimensions(0)) {
        return ctx->Error("B ", bias.ToString(false), " must have ", w.dimensions(0), " elements");
      }
      absl::StatusOr<Shape> out = ctx->builder()->GetShape(y);
      if (!out.ok()) return out.status();
      y = Add(y, BroadcastInDim(ctx->Input(2), out->dimensions(), {1}));
    }
    ctx->SetOutput(0, y);
    return absl::OkStatus();
  }
};
REGISTER_XLA_OP(Name("Conv"), ConvOp);

}  // namespace

AXLE_ONNX_KERNEL_FILE(conv)

}  // namespace axle::onnx
