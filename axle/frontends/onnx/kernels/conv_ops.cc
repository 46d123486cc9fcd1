//===- conv_ops.cc - ONNX Conv ----------------------------------------------===//
//
// Conv on NC[spatial] inputs with OIHW-style weights [M, C/group, k...],
// computed channels-last between transposes, grouped convolution through
// feature_group_count, then the optional bias.
//
//===----------------------------------------------------------------------===//
#include "axle/frontends/graph/xla_op_registry.h"
#include "axle/frontends/onnx/kernels/kernel_util.h"
#include "axle/frontends/onnx/kernels/kernels.h"

namespace axle::onnx {
namespace {

// X (N x C x D1 x ...) and W (M x C/group x k1 x ...) of Conv and
// ConvTranspose.
absl::Status CheckRanks(const XlaOpKernelContext& ctx, const Shape& x, const Shape& w) {
  if (x.rank() < 3 || w.rank() != x.rank()) {
    return ctx.Error("X ", x.ToString(false), " and W ", w.ToString(false),
                     " must have the same rank >= 3");
  }
  return absl::OkStatus();
}

class ConvOp : public XlaOpKernel {
 public:
  absl::Status Compile(XlaOpKernelContext* ctx) override {
    const Shape& x = ctx->InputShape(0);
    const Shape& w = ctx->InputShape(1);
    if (absl::Status s = CheckRanks(*ctx, x, w); !s.ok()) return s;
    int64_t n = x.rank() - 2;
    std::vector<int64_t> spatial(x.dimensions().begin() + 2, x.dimensions().end());
    std::vector<int64_t> kernel(w.dimensions().begin() + 2, w.dimensions().end());
    absl::StatusOr<WindowAttrs> window = GetWindowAttrs(*ctx, spatial, &kernel);
    if (!window.ok()) return window.status();
    if (window->kernel != kernel) {
      return ctx->Error("kernel_shape does not match W ", w.ToString(false));
    }
    if (absl::Status fits = CheckWindowFitsInput(*ctx, spatial, *window); !fits.ok()) return fits;
    absl::StatusOr<int64_t> group = ctx->GetAttrInt("group", 1);
    if (!group.ok()) return group.status();
    if (*group < 1 || x.dimensions(1) != w.dimensions(1) * *group ||
        w.dimensions(0) % *group != 0) {
      return ctx->Error("X ", x.ToString(false), " and W ", w.ToString(false),
                        " do not agree with group=", *group);
    }
    // The convolution runs channels-last (N[spatial]C, the layout oneDNN
    // computes in) between transposes from and back to ONNX's NC[spatial]:
    // the cpu pipeline sinks the transposes past elementwise ops
    // (reshape-mover) so that those between two convolutions cancel,
    // instead of each convolution reordering its input and output.
    std::vector<int64_t> to_channels_last = {0};
    std::vector<int64_t> to_channels_first = {0, n + 1};
    for (int64_t i = 0; i < n; ++i) {
      to_channels_last.push_back(2 + i);
      to_channels_first.push_back(1 + i);
    }
    to_channels_last.push_back(1);
    ConvolutionDimensionNumbers dnums;
    dnums.set_input_batch_dimension(0);
    dnums.set_input_feature_dimension(n + 1);
    dnums.set_kernel_output_feature_dimension(0);
    dnums.set_kernel_input_feature_dimension(1);
    dnums.set_output_batch_dimension(0);
    dnums.set_output_feature_dimension(n + 1);
    for (int64_t i = 0; i < n; ++i) {
      dnums.add_input_spatial_dimensions(1 + i);
      dnums.add_kernel_spatial_dimensions(2 + i);
      dnums.add_output_spatial_dimensions(1 + i);
    }
    std::vector<int64_t> ones(n, 1);
    XlaOp y =
        ConvGeneralDilated(Transpose(ctx->Input(0), to_channels_last), ctx->Input(1),
                           window->strides, window->pads, ones, window->dilations, dnums, *group);
    if (ctx->HasInput(2)) {
      const Shape& bias = ctx->InputShape(2);
      if (bias.rank() != 1 || bias.dimensions(0) != w.dimensions(0)) {
        return ctx->Error("B ", bias.ToString(false), " must have ", w.dimensions(0), " elements");
      }
      absl::StatusOr<Shape> out = ctx->builder()->GetShape(y);
      if (!out.ok()) return out.status();
      y = Add(y, BroadcastInDim(ctx->Input(2), out->dimensions(), {n + 1}));
    }
    ctx->SetOutput(0, Transpose(y, to_channels_first));
    return absl::OkStatus();
  }
};
REGISTER_XLA_OP(Name("Conv"), ConvOp);

// ConvTranspose as the gradient of Conv: a convolution of the input dilated
// by the strides with the spatially reversed kernel, its features swapped per
// group, padded by dilation * (k - 1) less the op's own pads.
class ConvTransposeOp : public XlaOpKernel {
 public:
  absl::Status Compile(XlaOpKernelContext* ctx) override {
    const Shape& x = ctx->InputShape(0);
    const Shape& w = ctx->InputShape(1);
    if (absl::Status s = CheckRanks(*ctx, x, w); !s.ok()) return s;
    size_t n = x.rank() - 2;
    absl::StatusOr<int64_t> group = ctx->GetAttrInt("group", 1);
    if (!group.ok()) return group.status();
    int64_t g = *group, c = x.dimensions(1);
    if (g < 1 || w.dimensions(0) != c || c % g != 0) {
      return ctx->Error("X ", x.ToString(false), " and W ", w.ToString(false),
                        " do not agree with group=", g);
    }
    int64_t m = w.dimensions(1) * g;
    std::vector<int64_t> spatial(x.dimensions().begin() + 2, x.dimensions().end());
    std::vector<int64_t> kernel(w.dimensions().begin() + 2, w.dimensions().end());
    auto ints = [&](const char* name, int64_t def,
                    size_t count) -> absl::StatusOr<std::vector<int64_t>> {
      if (!ctx->HasAttr(name)) return std::vector<int64_t>(count, def);
      absl::StatusOr<std::vector<int64_t>> v = ctx->GetAttrInts(name);
      if (!v.ok()) return v.status();
      if (v->size() != count) return ctx->Error("attribute '", name, "' needs ", count, " values");
      return v;
    };
    absl::StatusOr<std::vector<int64_t>> strides = ints("strides", 1, n);
    absl::StatusOr<std::vector<int64_t>> dilations = ints("dilations", 1, n);
    absl::StatusOr<std::vector<int64_t>> pads = ints("pads", 0, 2 * n);
    absl::StatusOr<std::vector<int64_t>> out_pad = ints("output_padding", 0, n);
    for (const auto* v : {&strides, &dilations, &pads, &out_pad}) {
      if (!v->ok()) return v->status();
    }
    absl::StatusOr<std::string> auto_pad = ctx->GetAttrString("auto_pad", "NOTSET");
    if (!auto_pad.ok()) return auto_pad.status();
    std::vector<int64_t> output_shape;
    if (ctx->HasAttr("output_shape")) {
      absl::StatusOr<std::vector<int64_t>> os = ctx->GetAttrInts("output_shape");
      if (!os.ok()) return os.status();
      output_shape = *os;
      if (output_shape.size() == n + 2)
        output_shape.erase(output_shape.begin(), output_shape.begin() + 2);
      if (output_shape.size() != n) return ctx->Error("output_shape needs ", n, " values");
    } else if (*auto_pad == "SAME_UPPER" || *auto_pad == "SAME_LOWER") {
      for (size_t i = 0; i < n; ++i) output_shape.push_back(spatial[i] * (*strides)[i]);
    }
    std::vector<std::pair<int64_t, int64_t>> padding;
    for (size_t i = 0; i < n; ++i) {
      int64_t effective = (kernel[i] - 1) * (*dilations)[i] + 1;
      int64_t lo = (*pads)[i], hi = (*pads)[i + n];
      if (!output_shape.empty()) {
        int64_t total =
            (*strides)[i] * (spatial[i] - 1) + (*out_pad)[i] + effective - output_shape[i];
        if (total < 0) {  // a larger output_shape: zeros at the end
          lo = 0;
          hi = total;
        } else if (*auto_pad == "SAME_UPPER") {
          lo = total / 2;
          hi = total - total / 2;
        } else {
          lo = total - total / 2;
          hi = total / 2;
        }
      }
      padding.push_back({effective - 1 - lo, effective - 1 - hi + (*out_pad)[i]});
    }
    // W [C, M/g, k...] -> [M, C/g, k...], spatially reversed.
    std::vector<int64_t> grouped = {g, c / g, m / g};
    grouped.insert(grouped.end(), kernel.begin(), kernel.end());
    std::vector<int64_t> perm = {0, 2, 1}, flipped;
    for (size_t i = 0; i < n; ++i) {
      perm.push_back(3 + i);
      flipped.push_back(2 + i);
    }
    std::vector<int64_t> oihw = {m, c / g};
    oihw.insert(oihw.end(), kernel.begin(), kernel.end());
    XlaOp k = Rev(Reshape(Transpose(Reshape(ctx->Input(1), grouped), perm), oihw), flipped);
    ConvolutionDimensionNumbers dnums;
    dnums.set_input_batch_dimension(0);
    dnums.set_input_feature_dimension(1);
    dnums.set_kernel_output_feature_dimension(0);
    dnums.set_kernel_input_feature_dimension(1);
    dnums.set_output_batch_dimension(0);
    dnums.set_output_feature_dimension(1);
    for (size_t i = 0; i < n; ++i) {
      dnums.add_input_spatial_dimensions(2 + i);
      dnums.add_kernel_spatial_dimensions(2 + i);
      dnums.add_output_spatial_dimensions(2 + i);
    }
    XlaOp y = ConvGeneralDilated(ctx->Input(0), k, std::vector<int64_t>(n, 1), padding, *strides,
                                 *dilations, dnums, g);
    if (ctx->HasInput(2)) {
      absl::StatusOr<Shape> out = ctx->builder()->GetShape(y);
      if (!out.ok()) return out.status();
      y = Add(y, BroadcastInDim(ctx->Input(2), out->dimensions(), {1}));
    }
    ctx->SetOutput(0, y);
    return absl::OkStatus();
  }
};
REGISTER_XLA_OP(Name("ConvTranspose"), ConvTransposeOp);

}  // namespace

AXLE_ONNX_KERNEL_FILE(conv)

}  // namespace axle::onnx
