//===- aten_conv.cc - Convolution and pooling kernels of the xla device ----===//
//
// The XLA backend's convolution_overrideable hooks, forward and backward:
// N-d, strided, padded, dilated, grouped (feature_group_count; the kernel's
// gradient through batch_group_count) and transposed (lhs dilation).
// max_pool2d_with_indices (a variadic reduce-window keeping each window's
// first maximum and its index) and its backward (select-and-scatter);
// avg_pool2d and its backward (sum reduce-windows); a dilated max pool's
// backward scatters by the forward's indices. Adaptive average pooling to
// any size (PyTorch's bins) and its backward: two averaging matrices.
//
//===----------------------------------------------------------------------===//
#include <ATen/ATen.h>
#include <torch/library.h>

#include <algorithm>
#include <array>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "axle/core/primitive_type.h"
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

// The parameters of a convolution, one value per spatial dimension.
struct ConvParams {
  size_t n = 0;  // spatial dimensions
  Ints stride, padding, dilation, output_padding;
  int64_t groups = 1;
  bool transposed = false;
};

ConvParams MakeConvParams(const at::Tensor& input, const at::Tensor& weight, at::IntArrayRef stride,
                          at::IntArrayRef padding, at::IntArrayRef dilation, bool transposed,
                          at::IntArrayRef output_padding, int64_t groups) {
  TORCH_CHECK(input.dim() >= 3 && weight.dim() == input.dim(),
              "axle: convolution of an input of shape ", input.sizes(), " by a weight of shape ",
              weight.sizes());
  ConvParams c;
  c.n = static_cast<size_t>(input.dim() - 2);
  c.stride = Spatial(stride, c.n, "stride");
  c.padding = Spatial(padding, c.n, "padding");
  c.dilation = Spatial(dilation, c.n, "dilation");
  c.output_padding =
      output_padding.empty() ? Ints(c.n, 0) : Spatial(output_padding, c.n, "output_padding");
  c.groups = groups;
  c.transposed = transposed;
  TORCH_CHECK(groups >= 1, "axle: convolution groups=", groups);
  int64_t in_channels = input.size(1);
  int64_t k_in = transposed ? weight.size(0) : weight.size(1) * groups;
  TORCH_CHECK(in_channels == k_in && weight.size(0) % groups == 0,
              "axle: convolution of an input of shape ", input.sizes(), " by a weight of shape ",
              weight.sizes(), " with groups=", groups, (transposed ? " (transposed)" : ""));
  return c;
}

Value ConvValue(const Value& lhs, const Value& rhs, const Ints& out, const Ints& strides,
                const Ints& low, const Ints& high, const Ints& lhs_dilation,
                const Ints& rhs_dilation, const Ints& dims, int64_t feature_groups,
                int64_t batch_groups) {
  return MakeValue(
      "convolution", {lhs, rhs}, MakeShape(TypeOf(lhs), out),
      {strides, low, high, lhs_dilation, rhs_dilation, dims, feature_groups, batch_groups});
}

// A kernel [A, B, spatial...] as [A/G, G*B, spatial...] (group-major): the
// kernel of a grouped convolution whose in/out features swap (input
// gradients, transposed convolution). Its input feature dimension is 0.
Value RegroupKernel(const Value& w, int64_t groups) {
  Ints d = Dims(w);
  if (groups == 1) return w;
  Ints split = {groups, d[0] / groups};
  split.insert(split.end(), d.begin() + 1, d.end());
  Ints perm = {1, 0};
  for (size_t i = 2; i < split.size(); ++i) perm.push_back(static_cast<int64_t>(i));
  Ints merged = {d[0] / groups, groups * d[1]};
  merged.insert(merged.end(), d.begin() + 2, d.end());
  return Reshape(PermuteValue(Reshape(w, split), perm), merged);
}

// The kernel reversed along its spatial dimensions.
Value ReverseSpatial(const Value& w, size_t n) {
  Ints spatial;
  for (size_t i = 0; i < n; ++i) spatial.push_back(static_cast<int64_t>(2 + i));
  return MakeValue("rev", {w}, MakeShape(TypeOf(w), Dims(w)), {spatial});
}

// The plain (not transposed) convolution of `x` by `w` [Cout, Cin/G, k...].
Value ConvForward(const Value& x, const Value& w, const ConvParams& c) {
  Ints xd = Dims(x), wd = Dims(w);
  Ints out = {xd[0], wd[0]};
  for (size_t i = 0; i < c.n; ++i) {
    int64_t k_eff = (wd[2 + i] - 1) * c.dilation[i] + 1;
    out.push_back((xd[2 + i] + 2 * c.padding[i] - k_eff) / c.stride[i] + 1);
  }
  return ConvValue(x, w, out, c.stride, c.padding, c.padding, Ints(c.n, 1), c.dilation,
                   ConvDims(0, 1, 1, 0, 0, 1, c.n), c.groups, 1);
}

// The gradient of a plain convolution's input (of sizes `in`) given the
// gradient `g` of its output: `g` dilated by the strides, convolved with
// the reversed kernel whose in/out features swap. Also the transposed
// convolution's forward (`in` then includes the output_padding).
Value ConvInputGrad(const Value& g, const Value& w, const Ints& in, const ConvParams& c) {
  Ints gd = Dims(g), wd = Dims(w);
  Ints low, high;
  for (size_t i = 0; i < c.n; ++i) {
    int64_t k_eff = (wd[2 + i] - 1) * c.dilation[i] + 1;
    low.push_back(k_eff - 1 - c.padding[i]);
    // The padded, dilated `g` spans in + k_eff - 1 elements.
    high.push_back(in[2 + i] - 1 - (gd[2 + i] - 1) * c.stride[i] + c.padding[i]);
  }
  Value kernel = RegroupKernel(ReverseSpatial(w, c.n), c.groups);
  return ConvValue(g, kernel, in, Ints(c.n, 1), low, high, c.stride, c.dilation,
                   ConvDims(0, 1, 0, 1, 0, 1, c.n), c.groups, 1);
}

// The gradient of a plain convolution's kernel (of sizes `wd`) from its
// input `x` and the gradient `g` of its output: the input (batch and
// features swapped) convolved with `g` as the kernel, the strides as its
// dilation; groups split the input's features (batch_group_count).
Value ConvWeightGrad(Value x, const Value& g, const Ints& wd, const ConvParams& c) {
  Ints gd = Dims(g);
  Ints low, high;
  for (size_t i = 0; i < c.n; ++i) {
    Ints xd = Dims(x);
    low.push_back(c.padding[i]);
    int64_t h = (wd[2 + i] - 1) * c.dilation[i] + (gd[2 + i] - 1) * c.stride[i] + 1 - xd[2 + i] -
                c.padding[i];
    if (h < 0) {  // the input's last -h elements meet no output
      Ints dims = Dims(x);
      Ints starts(dims.size(), 0), limits = dims, strides(dims.size(), 1);
      limits[2 + i] += h;
      dims[2 + i] += h;
      x = MakeValue("slice", {x}, MakeShape(TypeOf(x), dims), {starts, limits, strides});
      h = 0;
    }
    high.push_back(h);
  }
  return ConvValue(x, g, wd, c.dilation, low, high, Ints(c.n, 1), c.stride,
                   ConvDims(1, 0, 0, 1, 1, 0, c.n), 1, c.groups);
}

at::Tensor convolution(const at::Tensor& input, const at::Tensor& weight,
                       const c10::optional<at::Tensor>& bias, at::IntArrayRef stride,
                       at::IntArrayRef padding, at::IntArrayRef dilation, bool transposed,
                       at::IntArrayRef output_padding, int64_t groups) {
  Count("convolution");
  ConvParams c =
      MakeConvParams(input, weight, stride, padding, dilation, transposed, output_padding, groups);
  PrimitiveType t = ToPrimitiveType(input.scalar_type());
  Value x = Operand(input, "input");
  Value w = Convert(Operand(weight, "weight"), t);
  Value conv;
  if (!transposed) {
    conv = ConvForward(x, w, c);
  } else {
    // The gradient of the input of the plain convolution by `weight`.
    Ints out = {input.size(0), weight.size(1) * groups};
    for (size_t i = 0; i < c.n; ++i) {
      out.push_back((input.size(2 + i) - 1) * c.stride[i] - 2 * c.padding[i] +
                    c.dilation[i] * (weight.size(2 + i) - 1) + c.output_padding[i] + 1);
    }
    conv = ConvInputGrad(x, w, out, c);
  }
  Ints out = Dims(conv);
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
  ConvParams c =
      MakeConvParams(input, weight, stride, padding, dilation, transposed, output_padding, groups);
  PrimitiveType t = ToPrimitiveType(input.scalar_type());
  Value g = Convert(Operand(grad_output, "grad_output"), t);
  Value x = Operand(input, "input");
  Value w = Convert(Operand(weight, "weight"), t);
  at::Tensor grad_input, grad_weight, grad_bias;
  if (output_mask[0]) {
    // A transposed convolution's input gradient is the plain convolution
    // of `g` by the same kernel.
    grad_input =
        Wrap(transposed ? ConvForward(g, w, c) : ConvInputGrad(g, w, ToInts(input.sizes()), c));
  }
  if (output_mask[1]) {
    // Transposed: the kernel maps g (as the plain convolution's input) to x.
    grad_weight = Wrap(transposed ? ConvWeightGrad(g, x, ToInts(weight.sizes()), c)
                                  : ConvWeightGrad(x, g, ToInts(weight.sizes()), c));
  }
  if (output_mask[2]) {
    Ints reduced = {0};
    for (size_t i = 0; i < c.n; ++i) reduced.push_back(static_cast<int64_t>(2 + i));
    grad_bias = Wrap(SumValue(g, reduced, false));
  }
  return {grad_input, grad_weight, grad_bias};
}

// --- Max pooling ---------------------------------------------------------------

// A 2-D pooling window over the last two dimensions of a 3-D or 4-D input:
// per-dimension attributes of the window ops (1s on the leading ones).
struct PoolWindow {
  Ints window, strides, dilations, low, high;
  Ints out;  // the result's dims
};

int64_t PoolParam(at::IntArrayRef v, size_t i, const char* op, const char* what) {
  TORCH_CHECK(v.size() == 1 || v.size() == 2, "axle: ", op, "'s ", what,
              " must have 1 or 2 values, got ", v);
  return v.size() == 1 ? v[0] : v[i];
}

PoolWindow MakePoolWindow(const char* op, const at::Tensor& self, at::IntArrayRef kernel_size,
                          at::IntArrayRef stride, at::IntArrayRef padding, at::IntArrayRef dilation,
                          bool ceil_mode) {
  TORCH_CHECK(self.dim() == 3 || self.dim() == 4, "axle: ", op, " expects a 3-D or 4-D input, got ",
              self.sizes());
  size_t lead = static_cast<size_t>(self.dim() - 2);
  PoolWindow w;
  w.window = w.strides = w.dilations = Ints(lead, 1);
  w.low = w.high = Ints(lead, 0);
  w.out = ToInts(self.sizes());
  for (size_t i = 0; i < 2; ++i) {
    int64_t k = PoolParam(kernel_size, i, op, "kernel_size");
    int64_t s = stride.empty() ? k : PoolParam(stride, i, op, "stride");
    int64_t p = PoolParam(padding, i, op, "padding");
    int64_t d = PoolParam(dilation, i, op, "dilation");
    int64_t in = self.size(static_cast<int64_t>(lead + i));
    TORCH_CHECK(k > 0 && s > 0 && d > 0 && p >= 0 && 2 * p <= k, "axle: ", op, " with kernel_size ",
                k, ", stride ", s, ", padding ", p, " and dilation ", d,
                " (pad should be at most half the kernel)");
    int64_t span = d * (k - 1) + 1;
    int64_t numerator = in + 2 * p - span + (ceil_mode ? s - 1 : 0);
    int64_t out = (numerator >= 0 ? numerator / s : -((-numerator + s - 1) / s)) + 1;
    if (ceil_mode && (out - 1) * s >= in + p) --out;
    TORCH_CHECK(out > 0, "axle: ", op, " of ", self.sizes(), " by a window of ", k,
                " gives an empty output");
    w.window.push_back(k);
    w.strides.push_back(s);
    w.dilations.push_back(d);
    w.low.push_back(p);
    // The windows' span past the input; the reduce-window's count then is `out`.
    w.high.push_back(std::max<int64_t>((out - 1) * s + span - in - p, 0));
    w.out[lead + i] = out;
  }
  return w;
}

std::tuple<at::Tensor, at::Tensor> max_pool2d_with_indices(
    const at::Tensor& self, at::IntArrayRef kernel_size, at::IntArrayRef stride,
    at::IntArrayRef padding, at::IntArrayRef dilation, bool ceil_mode) {
  Count("max_pool2d_with_indices");
  PoolWindow w =
      MakePoolWindow("max_pool2d", self, kernel_size, stride, padding, dilation, ceil_mode);
  Value x = Operand(self, "self");
  Ints d = Dims(x);
  int64_t rank = static_cast<int64_t>(d.size());
  // PyTorch's indices: the flat position h * W + w within each plane.
  Value rows = MakeValue("iota", {}, MakeShape(S64, d), {rank - 2});
  Value cols = MakeValue("iota", {}, MakeShape(S64, d), {rank - 1});
  Value flat = Elementwise(
      "add", Elementwise("mul", rows, Constant(static_cast<double>(d[rank - 1]), S64, d)), cols);
  Shape shape = ShapeUtil::MakeTupleShape({MakeShape(TypeOf(x), w.out), MakeShape(S64, w.out)});
  auto node = Node::Make("reduce_window_argmax", std::vector<Value>{x, flat}, shape,
                         std::vector<lazy::Attr>{w.window, w.strides, w.dilations, w.low, w.high});
  return {Wrap(Value{node, 0}), Wrap(Value{node, 1})};
}

at::Tensor max_pool2d_with_indices_backward(const at::Tensor& grad_output, const at::Tensor& self,
                                            at::IntArrayRef kernel_size, at::IntArrayRef stride,
                                            at::IntArrayRef padding, at::IntArrayRef dilation,
                                            bool ceil_mode, const at::Tensor& indices) {
  Count("max_pool2d_with_indices_backward");
  PoolWindow w =
      MakePoolWindow("max_pool2d", self, kernel_size, stride, padding, dilation, ceil_mode);
  Value x = Operand(self, "self");
  Value g = Convert(Operand(grad_output, "grad_output"), TypeOf(x));
  TORCH_CHECK(Dims(g) == w.out, "axle: max_pool2d's backward: grad_output of shape ",
              grad_output.sizes(), " for an output of shape ", at::IntArrayRef(w.out));
  bool dilated =
      std::any_of(w.dilations.begin(), w.dilations.end(), [](int64_t d) { return d != 1; });
  if (!dilated) {
    return Wrap(MakeValue("select_and_scatter", {x, g}, MakeShape(TypeOf(x), Dims(x)),
                          {w.window, w.strides, w.low, w.high}));
  }
  // A dilated window (select-and-scatter has no window dilation): each
  // gradient is added at the input position the forward's indices name
  // (PyTorch's own backward), a scatter-add per plane.
  TORCH_CHECK(indices.sizes() == grad_output.sizes(),
              "axle: max_pool2d's backward: indices of shape ", indices.sizes(),
              " for a gradient of shape ", grad_output.sizes());
  Ints xd = Dims(x);
  size_t rank = xd.size();
  int64_t planes = 1;
  for (size_t i = 0; i + 2 < rank; ++i) planes *= xd[i];
  int64_t plane = xd[rank - 2] * xd[rank - 1];
  int64_t m = w.out[rank - 2] * w.out[rank - 1];
  Value flat_g = Reshape(g, {planes, m});
  Value index = Reshape(Convert(Operand(indices, "indices"), S64), {planes, m, 1});
  Value which = MakeValue("iota", {}, MakeShape(S64, {planes, m, 1}), {int64_t{0}});
  Value coords =
      MakeValue("concatenate", {which, index}, MakeShape(S64, {planes, m, 2}), {int64_t{2}});
  PrimitiveType t = TypeOf(x);
  Value grad =
      MakeValue("scatter_add", {Constant(0, t, {planes, plane}), coords, flat_g},
                MakeShape(t, {planes, plane}), {Ints{}, Ints{0, 1}, Ints{0, 1}, int64_t{2}});
  return Wrap(Reshape(grad, xd));
}

// --- Average pooling -----------------------------------------------------------

Value SumWindows(const Value& v, const Ints& window, const Ints& strides, const Ints& base_dilation,
                 const Ints& low, const Ints& high, const Ints& out) {
  Ints ones(window.size(), 1);
  return MakeValue("reduce_window", {v}, MakeShape(TypeOf(v), out),
                   {window, strides, base_dilation, ones, low, high, std::string("sum")});
}

// The last two dimensions of a pooling window's attributes.
Ints Plane(const Ints& v) { return Ints(v.end() - 2, v.end()); }

// Each window's divisor, [outH, outW]: PyTorch's (the padding inside
// [-p, in + p) counts with count_include_pad, the ceil_mode overhang never).
Value AvgPoolDivisors(const at::Tensor& self, const PoolWindow& w, bool count_include_pad,
                      c10::optional<int64_t> divisor_override, PrimitiveType t) {
  Ints out = Plane(w.out);
  if (divisor_override.has_value()) {
    TORCH_CHECK(*divisor_override != 0, "axle: avg_pool2d's divisor_override is 0");
    return Constant(static_cast<double>(*divisor_override), t, out);
  }
  Ints in = {self.size(-2), self.size(-1)};
  Ints window = Plane(w.window), strides = Plane(w.strides), low = Plane(w.low),
       high = Plane(w.high);
  if (count_include_pad) {
    for (size_t i = 0; i < 2; ++i) {
      in[i] += 2 * low[i];
      high[i] = std::max<int64_t>(high[i] - low[i], 0);
      low[i] = 0;
    }
  }
  return SumWindows(Constant(1, t, in), window, strides, {1, 1}, low, high, out);
}

PoolWindow MakeAvgPoolWindow(const at::Tensor& self, at::IntArrayRef kernel_size,
                             at::IntArrayRef stride, at::IntArrayRef padding, bool ceil_mode) {
  std::array<int64_t, 1> one = {1};
  return MakePoolWindow("avg_pool2d", self, kernel_size, stride, padding, one, ceil_mode);
}

at::Tensor avg_pool2d(const at::Tensor& self, at::IntArrayRef kernel_size, at::IntArrayRef stride,
                      at::IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                      c10::optional<int64_t> divisor_override) {
  Count("avg_pool2d");
  PoolWindow w = MakeAvgPoolWindow(self, kernel_size, stride, padding, ceil_mode);
  Value x = Operand(self, "self");
  TORCH_CHECK(primitive_util::IsFloatingPointType(TypeOf(x)), "axle: avg_pool2d of dtype ",
              self.scalar_type(), " (lowered for floating dtypes)");
  Value sums = SumWindows(x, w.window, w.strides, Ints(w.window.size(), 1), w.low, w.high, w.out);
  Value divisors = AvgPoolDivisors(self, w, count_include_pad, divisor_override, TypeOf(x));
  return Wrap(Elementwise("div", sums, BroadcastTo(divisors, w.out)));
}

// Each input element's gradient: the sum of its windows' gradients, each
// divided by its window's divisor (a reduce-window over the gradient
// dilated by the strides).
at::Tensor avg_pool2d_backward(const at::Tensor& grad_output, const at::Tensor& self,
                               at::IntArrayRef kernel_size, at::IntArrayRef stride,
                               at::IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                               c10::optional<int64_t> divisor_override) {
  Count("avg_pool2d_backward");
  PoolWindow w = MakeAvgPoolWindow(self, kernel_size, stride, padding, ceil_mode);
  PrimitiveType t = ToPrimitiveType(self.scalar_type());
  Value g = Convert(Operand(grad_output, "grad_output"), t);
  TORCH_CHECK(Dims(g) == w.out, "axle: avg_pool2d's backward: grad_output of shape ",
              grad_output.sizes(), " for an output of shape ", at::IntArrayRef(w.out));
  Value scaled = Elementwise(
      "div", g,
      BroadcastTo(AvgPoolDivisors(self, w, count_include_pad, divisor_override, t), w.out));
  Ints in = ToInts(self.sizes());
  size_t n = in.size();
  Ints low(n, 0), high(n, 0);
  for (size_t i = n - 2; i < n; ++i) {
    low[i] = w.window[i] - 1 - w.low[i];
    high[i] = in[i] - 1 - (w.out[i] - 1) * w.strides[i] + w.low[i];
  }
  return Wrap(SumWindows(scaled, w.window, Ints(n, 1), w.strides, low, high, in));
}

// --- Adaptive average pooling ------------------------------------------------------

// The [out, in] averaging matrix of one dimension: row i averages PyTorch's
// bin [floor(i * in / out), ceil((i + 1) * in / out)).
Value AdaptiveWeights(int64_t in, int64_t out, PrimitiveType t) {
  Ints d = {out, in};
  Value i = MakeValue("iota", {}, MakeShape(S64, d), {int64_t{0}});
  Value j = MakeValue("iota", {}, MakeShape(S64, d), {int64_t{1}});
  auto c = [&](int64_t v) { return Constant(static_cast<double>(v), S64, d); };
  Value start = Elementwise("div", Elementwise("mul", i, c(in)), c(out));
  Value end = Elementwise(
      "div", Elementwise("add", Elementwise("mul", Elementwise("add", i, c(1)), c(in)), c(out - 1)),
      c(out));
  Value inside = MakeValue("and",
                           {MakeValue("ge", {j, start}, MakeShape(PRED, d)),
                            MakeValue("lt", {j, end}, MakeShape(PRED, d))},
                           MakeShape(PRED, d));
  Value share = Elementwise("div", Constant(1, t, d), Convert(Elementwise("sub", end, start), t));
  return MakeValue("select", {inside, share, Constant(0, t, d)}, MakeShape(t, d));
}

// `v` [..., A, B] times `rows` [R, A] and `cols` [C, B] (contracting each
// matrix's dimension `k`: 1 maps inputs to outputs, 0 back): [..., R, C].
Value PoolPlanes(const Value& v, const Value& rows, const Value& cols, int64_t k) {
  Ints d = Dims(v);
  int64_t r = static_cast<int64_t>(d.size());
  Ints by_cols(d.begin(), d.end() - 1);
  by_cols.push_back(Dims(cols)[1 - k]);  // [..., A, C]
  Value a = DotValue(v, cols, {r - 1}, {k}, {}, {}, by_cols);
  Ints by_rows(d.begin(), d.end() - 2);
  by_rows.push_back(Dims(cols)[1 - k]);
  by_rows.push_back(Dims(rows)[1 - k]);  // [..., C, R]
  Value b = DotValue(a, rows, {r - 2}, {k}, {}, {}, by_rows);
  Ints perm;
  for (int64_t i = 0; i < r - 2; ++i) perm.push_back(i);
  perm.push_back(r - 1);
  perm.push_back(r - 2);
  return PermuteValue(b, perm);
}

void CheckAdaptiveInput(const char* op, const at::Tensor& self) {
  TORCH_CHECK(self.dim() == 3 || self.dim() == 4, "axle: ", op, " expects a 3-D or 4-D input, got ",
              self.sizes());
  TORCH_CHECK(self.size(-1) > 0 && self.size(-2) > 0, "axle: ", op, " of an empty plane ",
              self.sizes());
  TORCH_CHECK(primitive_util::IsFloatingPointType(ToPrimitiveType(self.scalar_type())),
              "axle: ", op, " of dtype ", self.scalar_type(), " (lowered for floating dtypes)");
}

// NOLINTNEXTLINE(performance-unnecessary-value-param): the schema's C++ type.
at::Tensor adaptive_avg_pool2d(const at::Tensor& self, c10::SymIntArrayRef output_size) {
  Count("_adaptive_avg_pool2d");
  CheckAdaptiveInput("adaptive_avg_pool2d", self);
  Ints out = ToInts(output_size);
  TORCH_CHECK(out.size() == 2 && out[0] > 0 && out[1] > 0,
              "axle: adaptive_avg_pool2d's output_size must be 2 positive sizes, got ",
              at::IntArrayRef(out));
  Value x = Operand(self, "self");
  PrimitiveType t = TypeOf(x);
  return Wrap(PoolPlanes(x, AdaptiveWeights(self.size(-2), out[0], t),
                         AdaptiveWeights(self.size(-1), out[1], t), 1));
}

at::Tensor adaptive_avg_pool2d_backward(const at::Tensor& grad_output, const at::Tensor& self) {
  Count("_adaptive_avg_pool2d_backward");
  CheckAdaptiveInput("adaptive_avg_pool2d_backward", self);
  TORCH_CHECK(grad_output.dim() == self.dim(),
              "axle: adaptive_avg_pool2d's backward: grad_output of shape ", grad_output.sizes(),
              " for an input of shape ", self.sizes());
  PrimitiveType t = ToPrimitiveType(self.scalar_type());
  Value g = Convert(Operand(grad_output, "grad_output"), t);
  return Wrap(PoolPlanes(g, AdaptiveWeights(self.size(-2), grad_output.size(-2), t),
                         AdaptiveWeights(self.size(-1), grad_output.size(-1), t), 0));
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, XLA, m) {
  m.impl("convolution_overrideable", TORCH_FN(convolution));
  m.impl("convolution_backward_overrideable", TORCH_FN(convolution_backward));
  m.impl("max_pool2d_with_indices", TORCH_FN(max_pool2d_with_indices));
  m.impl("max_pool2d_with_indices_backward", TORCH_FN(max_pool2d_with_indices_backward));
  m.impl("avg_pool2d", TORCH_FN(avg_pool2d));
  m.impl("avg_pool2d_backward", TORCH_FN(avg_pool2d_backward));
  m.impl("_adaptive_avg_pool2d", TORCH_FN(adaptive_avg_pool2d));
  m.impl("_adaptive_avg_pool2d_backward", TORCH_FN(adaptive_avg_pool2d_backward));
}

}  // namespace axle::torch_device
