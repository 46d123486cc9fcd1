//===- aten_conv.cc - Convolution and pooling kernels of the xla device ----===//
//
// The XLA backend's convolution_overrideable hooks (forward and backward).
//
//===----------------------------------------------------------------------===//
#include <ATen/ATen.h>
#include <torch/library.h>

#include <array>
#include <tuple>

#include "axle/core/shape_util.h"
#include "axle/frontends/torch/aten_ir.h"

namespace axle::torch_device {
namespace {

// --- Convolution (the XLA backend's convolution_overrideable hooks) -------------

Ints Spatial(at::IntArrayRef v, size_t n, const char* what) {
  TORCH_CHECK(v.size() == n || v.size() == 1, "axle: convolution ", what, " has ", v.size(),
              " values for ", n, " spatial dimensions");
  return v.size() == n ? ToInts(v) : Ints(n, v[0]);
}

// Flattened dimension numbers (lowering.cc's convolution).
Ints ConvDims(int64_t in_batch, int64_t in_feature, int64_t k_in, int64_t k_out, int64_t out_batch,
              int64_t out_feature, size_t n) {
  Ints d = {in_batch, in_feature};
  for (size_t i = 0; i < n; ++i) d.push_back(static_cast<int64_t>(2 + i));
  d.push_back(k_in);
  d.push_back(k_out);
  for (size_t i = 0; i < n; ++i) d.push_back(static_cast<int64_t>(2 + i));
  d.push_back(out_batch);
  d.push_back(out_feature);
  for (size_t i = 0; i < n; ++i) d.push_back(static_cast<int64_t>(2 + i));
  return d;
}

void CheckConvSupported(bool transposed, int64_t groups) {
  TORCH_CHECK(!transposed, "axle: transposed convolution is not lowered yet");
  TORCH_CHECK(groups == 1, "axle: grouped convolution (groups=", groups, ") is not lowered yet");
}

at::Tensor convolution(const at::Tensor& input, const at::Tensor& weight,
                       const c10::optional<at::Tensor>& bias, at::IntArrayRef stride,
                       at::IntArrayRef padding, at::IntArrayRef dilation, bool transposed,
                       at::IntArrayRef output_padding, int64_t groups) {
  Count("convolution");
  CheckConvSupported(transposed, groups);
  size_t n = static_cast<size_t>(input.dim() - 2);
  Ints s = Spatial(stride, n, "stride"), p = Spatial(padding, n, "padding"),
       dl = Spatial(dilation, n, "dilation");
  PrimitiveType t = ToPrimitiveType(input.scalar_type());
  Ints out = {input.size(0), weight.size(0)};
  for (size_t i = 0; i < n; ++i) {
    int64_t k_eff = (weight.size(2 + i) - 1) * dl[i] + 1;
    out.push_back((input.size(2 + i) + 2 * p[i] - k_eff) / s[i] + 1);
  }
  Value conv = MakeValue(
      "convolution", {Operand(input, "input"), Convert(Operand(weight, "weight"), t)},
      MakeShape(t, out), {s, p, p, Ints(n, 1), dl, ConvDims(0, 1, 1, 0, 0, 1, n), int64_t{1}});
  if (Defined(bias)) {
    conv = Elementwise("add", conv,
                       MakeValue("broadcast_in_dim", {Convert(Operand(*bias, "bias"), t)},
                                 MakeShape(t, out), {Ints{1}}));
  }
  return Wrap(conv);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> convolution_backward(
    const at::Tensor& grad_output, const at::Tensor& input, const at::Tensor& weight,
    at::IntArrayRef stride, at::IntArrayRef padding, at::IntArrayRef dilation, bool transposed,
    at::IntArrayRef output_padding, int64_t groups, std::array<bool, 3> output_mask) {
  Count("convolution_backward");
  CheckConvSupported(transposed, groups);
  size_t n = static_cast<size_t>(input.dim() - 2);
  Ints s = Spatial(stride, n, "stride"), p = Spatial(padding, n, "padding"),
       dl = Spatial(dilation, n, "dilation");
  PrimitiveType t = ToPrimitiveType(input.scalar_type());
  Value g = Convert(Operand(grad_output, "grad_output"), t);
  at::Tensor grad_input, grad_weight, grad_bias;
  if (output_mask[0]) {
    // The input's gradient: grad_output dilated by the strides, convolved
    // with the spatially reversed kernel whose in/out features swap.
    Ints spatial;
    Ints low, high;
    for (size_t i = 0; i < n; ++i) {
      spatial.push_back(static_cast<int64_t>(2 + i));
      int64_t k_eff = (weight.size(2 + i) - 1) * dl[i] + 1;
      low.push_back(k_eff - 1 - p[i]);
      high.push_back(input.size(2 + i) - 1 - (grad_output.size(2 + i) - 1) * s[i] + p[i]);
    }
    Value w = Convert(Operand(weight, "weight"), t);
    Value reversed = MakeValue("rev", {w}, MakeShape(t, ToInts(weight.sizes())), {spatial});
    grad_input =
        Wrap(MakeValue("convolution", {g, reversed}, MakeShape(t, ToInts(input.sizes())),
                       {Ints(n, 1), low, high, s, dl, ConvDims(0, 1, 0, 1, 0, 1, n), int64_t{1}}));
  }
  if (output_mask[1]) {
    // The kernel's gradient: the input (batch and features swapped)
    // convolved with grad_output as the kernel, its strides as dilation.
    Ints low, high;
    for (size_t i = 0; i < n; ++i) {
      low.push_back(p[i]);
      high.push_back((weight.size(2 + i) - 1) * dl[i] + (grad_output.size(2 + i) - 1) * s[i] + 1 -
                     input.size(2 + i) - p[i]);
    }
    grad_weight = Wrap(
        MakeValue("convolution", {Operand(input, "input"), g}, MakeShape(t, ToInts(weight.sizes())),
                  {dl, low, high, Ints(n, 1), s, ConvDims(1, 0, 0, 1, 1, 0, n), int64_t{1}}));
  }
  if (output_mask[2]) {
    Ints reduced = {0};
    for (size_t i = 0; i < n; ++i) reduced.push_back(static_cast<int64_t>(2 + i));
    grad_bias = Wrap(SumValue(g, reduced, false));
  }
  return {grad_input, grad_weight, grad_bias};
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, XLA, m) {
  m.impl("convolution_overrideable", TORCH_FN(convolution));
  m.impl("convolution_backward_overrideable", TORCH_FN(convolution_backward));
}

}  // namespace axle::torch_device
