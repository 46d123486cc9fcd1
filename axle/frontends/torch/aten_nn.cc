//===- aten_nn.cc - Neural-network ATen kernels of the xla device -----------===//
//
// Losses (mse, nll), softmax and log-softmax, layer and batch norm (and
// their backwards), index_select and the embedding's backward.
//
//===----------------------------------------------------------------------===//
#include <ATen/ATen.h>
#include <ATen/WrapDimUtils.h>
#include <torch/library.h>

#include <algorithm>
#include <array>
#include <tuple>

#include "axle/core/primitive_type.h"
#include "axle/core/shape_util.h"
#include "axle/frontends/torch/aten_ir.h"

namespace axle::torch_device {
namespace {

// --- Losses ---------------------------------------------------------------------

Value Reduce(const Value& v, int64_t reduction) {
  if (reduction == at::Reduction::None) return v;
  Ints all;
  for (size_t i = 0; i < Dims(v).size(); ++i) all.push_back(static_cast<int64_t>(i));
  int64_t count = 1;
  for (int64_t d : Dims(v)) count *= d;
  Value s = SumValue(v, all, false);
  if (reduction == at::Reduction::Sum) return s;
  return Elementwise("div", s, Constant(static_cast<double>(count), TypeOf(s), {}));
}

at::Tensor mse_loss(const at::Tensor& self, const at::Tensor& target, int64_t reduction) {
  Count("mse_loss");
  Value diff = Binary("sub", self, target, ResultType(self, target));
  return Wrap(Reduce(Elementwise("mul", diff, diff), reduction));
}

at::Tensor mse_loss_backward(const at::Tensor& grad_output, const at::Tensor& self,
                             const at::Tensor& target, int64_t reduction) {
  Count("mse_loss_backward");
  PrimitiveType t = ToPrimitiveType(self.scalar_type());
  Value diff = Binary("sub", self, target, self.scalar_type());
  Ints d = Dims(diff);
  double scale = 2.0;
  if (reduction == at::Reduction::Mean)
    scale /= static_cast<double>(std::max<int64_t>(self.numel(), 1));
  Value g = BroadcastTo(Convert(Operand(grad_output, "grad_output"), t), d);
  return Wrap(Elementwise("mul", Elementwise("mul", diff, Constant(scale, t, d)), g));
}

// --- Softmax and the negative log-likelihood ---------------------------------------

// A (log-)softmax's input over `dim`: its value (f32 when half_to_float),
// dimensions and axis (0-d inputs have none: the caller's constant).
struct SoftmaxInput {
  Value x;
  Ints dims;
  int64_t axis = 0;
};

SoftmaxInput SoftmaxOperand(const at::Tensor& self, int64_t dim, bool half_to_float) {
  SoftmaxInput in;
  in.x = Operand(self, "self");
  if (half_to_float) in.x = Convert(in.x, F32);
  in.dims = Dims(in.x);
  if (!in.dims.empty()) in.axis = at::maybe_wrap_dim(dim, static_cast<int64_t>(in.dims.size()));
  return in;
}

// A (log-)softmax backward's operands: the incoming gradient, the forward's
// output in its type, dimensions and axis.
struct SoftmaxGrad {
  Value g;
  Value out;
  Ints dims;
  int64_t axis = 0;
};

SoftmaxGrad SoftmaxGradOperands(const at::Tensor& grad_output, const at::Tensor& output,
                                int64_t dim) {
  SoftmaxGrad in;
  in.g = Operand(grad_output, "grad_output");
  in.out = Convert(Operand(output, "output"), TypeOf(in.g));
  in.dims = Dims(in.g);
  if (!in.dims.empty()) in.axis = at::maybe_wrap_dim(dim, static_cast<int64_t>(in.dims.size()));
  return in;
}

at::Tensor log_softmax(const at::Tensor& self, int64_t dim, bool half_to_float) {
  Count("_log_softmax");
  auto [x, d, axis] = SoftmaxOperand(self, dim, half_to_float);
  if (d.empty()) return Wrap(Constant(0, TypeOf(x), d));
  Value shifted = Elementwise("sub", x, BroadcastTo(ReduceKind(x, axis, "max", true), d));
  Value lse = Unary("log", ReduceKind(Unary("exp", shifted), axis, "sum", true));
  return Wrap(Elementwise("sub", shifted, BroadcastTo(lse, d)));
}

at::Tensor log_softmax_backward(const at::Tensor& grad_output, const at::Tensor& output,
                                int64_t dim, at::ScalarType input_dtype) {
  Count("_log_softmax_backward_data");
  auto [g, out, d, axis] = SoftmaxGradOperands(grad_output, output, dim);
  PrimitiveType type = ToPrimitiveType(input_dtype);
  if (d.empty()) return Wrap(Convert(Constant(0, TypeOf(g), d), type));
  Value sum = BroadcastTo(ReduceKind(g, axis, "sum", true), d);
  return Wrap(Convert(Elementwise("sub", g, Elementwise("mul", Unary("exp", out), sum)), type));
}

// The pieces of nll_loss on [N, C] log-probabilities: the target's one-hot
// mask (false on ignored rows) and each row's weight (0 when ignored).
struct NllParts {
  Value mask;        // PRED [N, C]
  Value row_weight;  // [N]
  Ints dims;         // {N, C}
  PrimitiveType type;
};

NllParts MakeNllParts(const at::Tensor& self, const at::Tensor& target,
                      const c10::optional<at::Tensor>& weight, int64_t ignore_index) {
  TORCH_CHECK(self.dim() == 2 && target.dim() == 1 && target.size(0) == self.size(0),
              "axle: nll_loss expects [N, C] input and [N] target, got ", self.sizes(), " and ",
              target.sizes());
  NllParts parts;
  parts.dims = {self.size(0), self.size(1)};
  parts.type = ToPrimitiveType(self.scalar_type());
  Value t = Convert(Operand(target, "target"), S64);
  Value t2 = BroadcastTo(Reshape(t, {parts.dims[0], 1}), parts.dims);
  Value classes = MakeValue("iota", {}, MakeShape(S64, parts.dims), {int64_t{1}});
  Value valid =
      MakeValue("ne", {t, Constant(static_cast<double>(ignore_index), S64, {parts.dims[0]})},
                MakeShape(PRED, {parts.dims[0]}));
  Value onehot = MakeValue("eq", {t2, classes}, MakeShape(PRED, parts.dims));
  parts.mask =
      MakeValue("and", {onehot, BroadcastTo(Reshape(valid, {parts.dims[0], 1}), parts.dims)},
                MakeShape(PRED, parts.dims));
  Value zero = Constant(0, parts.type, parts.dims);
  Value w = weight.has_value() && weight->defined()
                ? BroadcastTo(Convert(Operand(*weight, "weight"), parts.type), parts.dims)
                : Constant(1, parts.type, parts.dims);
  parts.row_weight = SumValue(
      MakeValue("select", {parts.mask, w, zero}, MakeShape(parts.type, parts.dims)), {1}, false);
  return parts;
}

std::tuple<at::Tensor, at::Tensor> nll_loss_forward(const at::Tensor& self,
                                                    const at::Tensor& target,
                                                    const c10::optional<at::Tensor>& weight,
                                                    int64_t reduction, int64_t ignore_index) {
  Count("nll_loss_forward");
  NllParts p = MakeNllParts(self, target, weight, ignore_index);
  Value x = Convert(Operand(self, "self"), p.type);
  Value picked = SumValue(
      MakeValue("select", {p.mask, x, Constant(0, p.type, p.dims)}, MakeShape(p.type, p.dims)), {1},
      false);  // [N]
  Value losses = Unary("neg", Elementwise("mul", picked, p.row_weight));
  Value total_weight = SumValue(p.row_weight, {0}, false);
  if (reduction == at::Reduction::None) {
    return {Wrap(losses), Wrap(total_weight)};
  }
  Value sum = SumValue(losses, {0}, false);
  if (reduction == at::Reduction::Sum) return {Wrap(sum), Wrap(total_weight)};
  return {Wrap(Elementwise("div", sum, total_weight)), Wrap(total_weight)};
}

at::Tensor nll_loss_backward(const at::Tensor& grad_output, const at::Tensor& self,
                             const at::Tensor& target, const c10::optional<at::Tensor>& weight,
                             int64_t reduction, int64_t ignore_index,
                             const at::Tensor& total_weight) {
  Count("nll_loss_backward");
  NllParts p = MakeNllParts(self, target, weight, ignore_index);
  Value g = Convert(Operand(grad_output, "grad_output"), p.type);
  if (reduction == at::Reduction::Mean) {
    g = Elementwise("div", g, Convert(Operand(total_weight, "total_weight"), p.type));
  }
  Value per_row = reduction == at::Reduction::None
                      ? Elementwise("mul", g, p.row_weight)
                      : Elementwise("mul", BroadcastTo(g, {p.dims[0]}), p.row_weight);
  Value spread = BroadcastTo(Reshape(Unary("neg", per_row), {p.dims[0], 1}), p.dims);
  return Wrap(MakeValue("select", {p.mask, spread, Constant(0, p.type, p.dims)},
                        MakeShape(p.type, p.dims)));
}

// --- Softmax, layer norm, embedding --------------------------------------------------

at::Tensor softmax(const at::Tensor& self, int64_t dim, bool half_to_float) {
  Count("_softmax");
  auto [x, d, axis] = SoftmaxOperand(self, dim, half_to_float);
  if (d.empty()) return Wrap(Constant(1, TypeOf(x), d));
  Value e = Unary("exp", Elementwise("sub", x, BroadcastTo(ReduceKind(x, axis, "max", true), d)));
  return Wrap(Elementwise("div", e, BroadcastTo(ReduceKind(e, axis, "sum", true), d)));
}

at::Tensor softmax_backward(const at::Tensor& grad_output, const at::Tensor& output, int64_t dim,
                            at::ScalarType input_dtype) {
  Count("_softmax_backward_data");
  auto [g, y, d, axis] = SoftmaxGradOperands(grad_output, output, dim);
  PrimitiveType type = ToPrimitiveType(input_dtype);
  if (d.empty()) return Wrap(Convert(Constant(0, TypeOf(g), d), type));
  Value dot = BroadcastTo(ReduceKind(Elementwise("mul", g, y), axis, "sum", true), d);
  return Wrap(Convert(Elementwise("mul", y, Elementwise("sub", g, dot)), type));
}

// Layer norm over the trailing `normalized` dimensions: the leading ones
// ("rows") and the statistics' shape (rows, then 1s).
struct LayerNormDims {
  Ints all;    // input dims
  Ints inner;  // the normalized dimension numbers
  Ints stats;  // mean/rstd dims
  int64_t count = 1;
};

LayerNormDims MakeLayerNormDims(const at::Tensor& input, c10::SymIntArrayRef normalized_shape) {
  Ints normalized = ToInts(normalized_shape);
  LayerNormDims d;
  d.all = ToInts(input.sizes());
  int64_t axis = static_cast<int64_t>(d.all.size()) - static_cast<int64_t>(normalized.size());
  TORCH_CHECK(axis >= 0 && std::equal(normalized.begin(), normalized.end(), d.all.begin() + axis),
              "axle: layer_norm's normalized_shape ", at::IntArrayRef(normalized),
              " is not the end of the input's shape ", input.sizes());
  for (int64_t i = 0; i < static_cast<int64_t>(d.all.size()); ++i) {
    if (i >= axis) {
      d.inner.push_back(i);
      d.count *= d.all[i];
      d.stats.push_back(1);
    } else {
      d.stats.push_back(d.all[i]);
    }
  }
  return d;
}

Value MeanOver(const Value& v, const LayerNormDims& d) {
  Value s = Reshape(SumValue(v, d.inner, false), d.stats);
  return Elementwise("div", s, Constant(static_cast<double>(d.count), TypeOf(v), d.stats));
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> native_layer_norm(
    const at::Tensor& input, c10::SymIntArrayRef normalized_shape,
    const c10::optional<at::Tensor>& weight, const c10::optional<at::Tensor>& bias, double eps) {
  Count("native_layer_norm");
  LayerNormDims d = MakeLayerNormDims(input, normalized_shape);
  Value x = Operand(input, "input");
  PrimitiveType t = TypeOf(x);
  Value mean = MeanOver(x, d);
  Value centered = Elementwise("sub", x, BroadcastTo(mean, d.all));
  Value var = MeanOver(Elementwise("mul", centered, centered), d);
  Value rstd = Unary("rsqrt", Elementwise("add", var, Constant(eps, t, d.stats)));
  Value out = Elementwise("mul", centered, BroadcastTo(rstd, d.all));
  if (weight.has_value() && weight->defined()) {
    out = Elementwise("mul", out, BroadcastTo(Convert(Operand(*weight, "weight"), t), d.all));
  }
  if (bias.has_value() && bias->defined()) {
    out = Elementwise("add", out, BroadcastTo(Convert(Operand(*bias, "bias"), t), d.all));
  }
  return {Wrap(out), Wrap(mean), Wrap(rstd)};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> native_layer_norm_backward(
    const at::Tensor& grad_out, const at::Tensor& input, c10::SymIntArrayRef normalized_shape,
    const at::Tensor& mean, const at::Tensor& rstd, const c10::optional<at::Tensor>& weight,
    const c10::optional<at::Tensor>& bias, std::array<bool, 3> output_mask) {
  Count("native_layer_norm_backward");
  LayerNormDims d = MakeLayerNormDims(input, normalized_shape);
  Value g = Operand(grad_out, "grad_out");
  Value x = Operand(input, "input");
  PrimitiveType t = TypeOf(x);
  Value r = BroadcastTo(Convert(Operand(rstd, "rstd"), t), d.all);
  Value xhat = Elementwise(
      "mul", Elementwise("sub", x, BroadcastTo(Convert(Operand(mean, "mean"), t), d.all)), r);
  bool has_weight = weight.has_value() && weight->defined();
  Value dxhat =
      has_weight ? Elementwise("mul", g, BroadcastTo(Convert(Operand(*weight, "weight"), t), d.all))
                 : g;
  at::Tensor grad_input, grad_weight, grad_bias;
  if (output_mask[0]) {
    Value m1 = BroadcastTo(MeanOver(dxhat, d), d.all);
    Value m2 = BroadcastTo(MeanOver(Elementwise("mul", dxhat, xhat), d), d.all);
    grad_input = Wrap(Elementwise(
        "mul", r, Elementwise("sub", Elementwise("sub", dxhat, m1), Elementwise("mul", xhat, m2))));
  }
  Ints outer;
  for (int64_t i = 0; i < static_cast<int64_t>(d.all.size()) - static_cast<int64_t>(d.inner.size());
       ++i) {
    outer.push_back(i);
  }
  if (output_mask[1] && has_weight)
    grad_weight = Wrap(SumValue(Elementwise("mul", g, xhat), outer, false));
  if (output_mask[2] && bias.has_value() && bias->defined())
    grad_bias = Wrap(SumValue(g, outer, false));
  return {grad_input, grad_weight, grad_bias};
}

// Batch norm over every dimension but 1 (the channels): the channel
// statistics broadcast back along dimension 1.
struct BatchNormDims {
  Ints all;
  Ints reduced;  // every dimension but 1
  int64_t count = 1;
  int64_t channels = 0;
};

BatchNormDims MakeBatchNormDims(const at::Tensor& input) {
  TORCH_CHECK(input.dim() >= 2, "axle: batch_norm expects at least 2 dimensions, got ",
              input.sizes());
  BatchNormDims d;
  d.all = ToInts(input.sizes());
  d.channels = d.all[1];
  for (int64_t i = 0; i < static_cast<int64_t>(d.all.size()); ++i) {
    if (i == 1) continue;
    d.reduced.push_back(i);
    d.count *= d.all[i];
  }
  return d;
}

Value PerChannel(const Value& v, const BatchNormDims& d) {  // [C] -> input's shape
  return MakeValue("broadcast_in_dim", {v}, MakeShape(TypeOf(v), d.all), {Ints{1}});
}

Value ChannelMean(const Value& v, const BatchNormDims& d) {
  Value s = SumValue(v, d.reduced, false);
  return Elementwise("div", s, Constant(static_cast<double>(d.count), TypeOf(v), {d.channels}));
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> native_batch_norm(
    const at::Tensor& input, const c10::optional<at::Tensor>& weight,
    const c10::optional<at::Tensor>& bias, const c10::optional<at::Tensor>& running_mean,
    const c10::optional<at::Tensor>& running_var, bool training, double momentum, double eps) {
  Count("native_batch_norm");
  BatchNormDims d = MakeBatchNormDims(input);
  Value x = Operand(input, "input");
  PrimitiveType t = TypeOf(x);
  Ints c = {d.channels};
  Value mean;
  Value var;
  if (training) {
    mean = ChannelMean(x, d);
    Value centered = Elementwise("sub", x, PerChannel(mean, d));
    var = ChannelMean(Elementwise("mul", centered, centered), d);
    // The running statistics move toward the batch's (the variance unbiased).
    if (Defined(running_mean)) {
      at::Tensor rm = *running_mean;
      Value old = Convert(Operand(rm, "running_mean"), t);
      Assign(rm, Elementwise("add", Elementwise("mul", old, Constant(1 - momentum, t, c)),
                             Elementwise("mul", mean, Constant(momentum, t, c))));
    }
    if (Defined(running_var)) {
      at::Tensor rv = *running_var;
      Value old = Convert(Operand(rv, "running_var"), t);
      double unbias = d.count > 1 ? static_cast<double>(d.count) / (d.count - 1) : 1.0;
      Assign(rv, Elementwise("add", Elementwise("mul", old, Constant(1 - momentum, t, c)),
                             Elementwise("mul", var, Constant(momentum * unbias, t, c))));
    }
  } else {
    TORCH_CHECK(Defined(running_mean) && Defined(running_var),
                "axle: batch_norm in eval mode needs running_mean and running_var");
    mean = Convert(Operand(*running_mean, "running_mean"), t);
    var = Convert(Operand(*running_var, "running_var"), t);
  }
  Value invstd = Unary("rsqrt", Elementwise("add", var, Constant(eps, t, c)));
  Value out = Elementwise("mul", Elementwise("sub", x, PerChannel(mean, d)), PerChannel(invstd, d));
  if (Defined(weight))
    out = Elementwise("mul", out, PerChannel(Convert(Operand(*weight, "weight"), t), d));
  if (Defined(bias))
    out = Elementwise("add", out, PerChannel(Convert(Operand(*bias, "bias"), t), d));
  if (!training) {  // PyTorch returns empty saved statistics in eval mode
    return {Wrap(out), Wrap(Constant(0, t, {0})), Wrap(Constant(0, t, {0}))};
  }
  return {Wrap(out), Wrap(mean), Wrap(invstd)};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> native_batch_norm_backward(
    const at::Tensor& grad_out, const at::Tensor& input, const c10::optional<at::Tensor>& weight,
    const c10::optional<at::Tensor>& running_mean, const c10::optional<at::Tensor>& running_var,
    const c10::optional<at::Tensor>& save_mean, const c10::optional<at::Tensor>& save_invstd,
    bool train, double eps, std::array<bool, 3> output_mask) {
  Count("native_batch_norm_backward");
  BatchNormDims d = MakeBatchNormDims(input);
  Value g = Operand(grad_out, "grad_out");
  Value x = Operand(input, "input");
  PrimitiveType t = TypeOf(x);
  Ints c = {d.channels};
  Value mean;
  Value invstd;
  if (train) {
    TORCH_CHECK(Defined(save_mean) && Defined(save_invstd),
                "axle: batch_norm_backward in training needs the saved statistics");
    mean = Convert(Operand(*save_mean, "save_mean"), t);
    invstd = Convert(Operand(*save_invstd, "save_invstd"), t);
  } else {
    mean = Convert(Operand(*running_mean, "running_mean"), t);
    invstd = Unary("rsqrt", Elementwise("add", Convert(Operand(*running_var, "running_var"), t),
                                        Constant(eps, t, c)));
  }
  Value xhat =
      Elementwise("mul", Elementwise("sub", x, PerChannel(mean, d)), PerChannel(invstd, d));
  Value w = Defined(weight) ? Convert(Operand(*weight, "weight"), t) : Constant(1, t, c);
  at::Tensor grad_input, grad_weight, grad_bias;
  if (output_mask[0]) {
    Value scale = PerChannel(Elementwise("mul", w, invstd), d);
    if (train) {
      Value mg = PerChannel(ChannelMean(g, d), d);
      Value mgx = PerChannel(ChannelMean(Elementwise("mul", g, xhat), d), d);
      grad_input = Wrap(Elementwise(
          "mul", scale,
          Elementwise("sub", Elementwise("sub", g, mg), Elementwise("mul", xhat, mgx))));
    } else {
      grad_input = Wrap(Elementwise("mul", g, scale));
    }
  }
  if (output_mask[1]) grad_weight = Wrap(SumValue(Elementwise("mul", g, xhat), d.reduced, false));
  if (output_mask[2]) grad_bias = Wrap(SumValue(g, d.reduced, false));
  return {grad_input, grad_weight, grad_bias};
}

// Rows of `self` along `dim` picked by an integer index (any dtype): a
// gather. An index out of range is clamped, as XLA's gather does (PyTorch's
// CPU raises; the device cannot check without reading the index back).
at::Tensor index_select(const at::Tensor& self, int64_t dim, const at::Tensor& index) {
  Count("index_select");
  TORCH_CHECK(index.dim() <= 1, "axle: index_select's index must be 0- or 1-D, got ",
              index.sizes());
  TORCH_CHECK(at::isIntegralType(index.scalar_type(), /*includeBool=*/false),
              "axle: index_select's index must be an integer tensor, got ", index.scalar_type());
  Value x = Operand(self, "self");
  Ints d = Dims(x);
  int64_t m = index.numel();
  if (d.empty()) {  // a 0-D tensor: its one element, by an index of one element
    TORCH_CHECK(m == 1, "axle: index_select of a 0-D tensor by ", m, " indices");
    return Wrap(x);
  }
  int64_t axis = at::maybe_wrap_dim(dim, static_cast<int64_t>(d.size()));
  Value idx = Operand(index, "index");
  PrimitiveType it = TypeOf(idx);
  if (it != S32 && it != S64) idx = Convert(idx, S64);
  idx = Reshape(idx, {m, 1});
  Ints out = d, slice = d, offset;
  out[axis] = m;
  slice[axis] = 1;
  for (int64_t i = 0; i < static_cast<int64_t>(d.size()); ++i) {
    if (i != axis) offset.push_back(i);
  }
  return Wrap(MakeValue("gather", {x, idx}, MakeShape(TypeOf(x), out),
                        {offset, Ints{axis}, Ints{axis}, int64_t{1}, slice}));
}

// The dispatcher checks kernels against the schema's C++ types: SymInts by value.
// NOLINTBEGIN(performance-unnecessary-value-param)
at::Tensor embedding_dense_backward(const at::Tensor& grad_output, const at::Tensor& indices,
                                    c10::SymInt num_weights, int64_t padding_idx,
                                    bool scale_grad_by_freq) {
  Count("embedding_dense_backward");
  TORCH_CHECK(!scale_grad_by_freq, "axle: embedding's scale_grad_by_freq is not lowered");
  int64_t rows = num_weights.expect_int();
  Value g = Operand(grad_output, "grad_output");
  PrimitiveType t = TypeOf(g);
  // Each gradient row added to the weight row its index names: a
  // scatter-add (an index out of range adds nothing, as PyTorch's would
  // have raised). As a one-hot [M, V] matrix times the [M, width] gradient
  // it was M * V * width multiply-adds: block128's [512, 256] x [512, 128]
  // took 0.31 ms on one thread, the scatter 7 us.
  Value ids = Operand(indices, "indices");
  int64_t m = 1;
  for (int64_t s : Dims(ids)) m *= s;
  int64_t width = grad_output.size(-1);
  Value g2 = Reshape(g, {m, width});
  Value index = Reshape(Convert(ids, S64), {m, 1});
  Value grad = MakeValue("scatter_add", {Constant(0, t, {rows, width}), index, g2},
                         MakeShape(t, {rows, width}), {Ints{1}, Ints{0}, Ints{0}, int64_t{1}});
  if (padding_idx >= 0 && padding_idx < rows) {
    Value row = MakeValue("iota", {}, MakeShape(S64, {rows, width}), {int64_t{0}});
    Value keep =
        MakeValue("ne", {row, Constant(static_cast<double>(padding_idx), S64, {rows, width})},
                  MakeShape(PRED, {rows, width}));
    grad = MakeValue("select", {keep, grad, Constant(0, t, {rows, width})},
                     MakeShape(t, {rows, width}));
  }
  return Wrap(grad);
}
// NOLINTEND(performance-unnecessary-value-param)

}  // namespace

TORCH_LIBRARY_IMPL(aten, XLA, m) {
  m.impl("mse_loss", TORCH_FN(mse_loss));
  m.impl("_log_softmax", TORCH_FN(log_softmax));
  m.impl("_log_softmax_backward_data", TORCH_FN(log_softmax_backward));
  m.impl("nll_loss_forward", TORCH_FN(nll_loss_forward));
  m.impl("nll_loss_backward", TORCH_FN(nll_loss_backward));
  m.impl("_softmax", TORCH_FN(softmax));
  m.impl("_softmax_backward_data", TORCH_FN(softmax_backward));
  m.impl("native_layer_norm", TORCH_FN(native_layer_norm));
  m.impl("native_layer_norm_backward", TORCH_FN(native_layer_norm_backward));
  m.impl("native_batch_norm", TORCH_FN(native_batch_norm));
  m.impl("native_batch_norm_backward", TORCH_FN(native_batch_norm_backward));
  m.impl("index_select", TORCH_FN(index_select));
  m.impl("embedding_dense_backward", TORCH_FN(embedding_dense_backward));
  m.impl("mse_loss_backward", TORCH_FN(mse_loss_backward));
}

}  // namespace axle::torch_device
