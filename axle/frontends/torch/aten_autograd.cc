//===- aten_autograd.cc - Autograd overrides of the xla device ---------------===//
//
// Ops whose derivative the device records itself (aten_ops.yaml's autograd
// section), registered for AutogradXLA as torch-xla registers its autograd
// overrides: a custom autograd Function whose forward and backward record
// lazy IR directly.
//
// linear: PyTorch's composite kernel makes it t() and addmm (matmul with
// reshapes for inputs of rank 3 and more), and addmm's derivative is two
// mm, three t() and a sum: about eight dispatcher calls a layer, each making
// a tensor (and a view for each t()). Here one call records the product and
// the bias, and its backward records the gradients' dots and the bias's sum
// with no dispatcher call. Inputs the override does not cover (a 1-D input,
// mixed dtypes, another device, forward-mode AD) and a backward that is
// itself differentiated (create_graph) take PyTorch's composite.
//
//===----------------------------------------------------------------------===//
#include <ATen/ATen.h>
#include <ATen/ops/linear_native.h>
#include <torch/csrc/autograd/custom_function.h>
#include <torch/library.h>

#include <vector>

#include "axle/frontends/torch/aten_ir.h"

namespace axle::torch_device {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

bool OnDevice(const at::Tensor& t) { return t.device().type() == at::DeviceType::XLA; }

// No forward-mode gradient (a dual tensor): the Function has no jvp.
bool NoForwardGrad(const at::Tensor& t) { return !t._fw_grad(/*level=*/0).defined(); }

// Whether the override records this linear (else the composite does).
bool Covered(const at::Tensor& input, const at::Tensor& weight, const at::Tensor& bias) {
  if (!input.defined() || !weight.defined() || !OnDevice(input) || !OnDevice(weight)) return false;
  if (input.dim() < 2 || weight.dim() != 2 || input.size(-1) != weight.size(1)) return false;
  if (!at::isFloatingType(input.scalar_type()) || weight.scalar_type() != input.scalar_type()) {
    return false;
  }
  if (!NoForwardGrad(input) || !NoForwardGrad(weight)) return false;
  if (bias.defined()) {
    if (!OnDevice(bias) || bias.dim() != 1 || bias.size(0) != weight.size(0) ||
        bias.scalar_type() != input.scalar_type() || !NoForwardGrad(bias)) {
      return false;
    }
  }
  return true;
}

// The rows of `t` as one dimension: [prod(sizes[:-1]), sizes[-1]].
Ints Rows(const at::Tensor& t) { return {t.numel() / t.size(-1), t.size(-1)}; }

struct LinearFunction : public torch::autograd::Function<LinearFunction> {
  // `bias`: absent or defined (an undefined tensor is no autograd input).
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& input, const at::Tensor& weight,
                            const c10::optional<at::Tensor>& bias) {
    Count("linear");
    const int64_t out = weight.size(0);
    Ints rows = Rows(input);
    // [n, in] x [out, in] contracting `in`: [n, out].
    Value y = DotValue(Reshape(Operand(input, "input"), rows), Operand(weight, "weight"), {1}, {1},
                       {}, {}, {rows[0], out});
    if (bias.has_value()) y = Elementwise("add", y, BroadcastTo(Operand(*bias, "bias"), Dims(y)));
    Ints dims = ToInts(input.sizes());
    dims.back() = out;
    // The bias only says whether there is one (the edges' count).
    ctx->save_for_backward({input, weight, bias.has_value() ? *bias : at::Tensor()});
    return Wrap(Reshape(y, dims));
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    variable_list saved = ctx->get_saved_variables();
    const at::Tensor& input = saved[0];
    const at::Tensor& weight = saved[1];
    const at::Tensor& grad = grads[0];
    const bool want_input = ctx->needs_input_grad(0);
    const bool want_weight = ctx->needs_input_grad(1);
    // An absent bias has no edge.
    const bool want_bias = saved[2].defined() && ctx->needs_input_grad(2);
    at::Tensor grad_input;
    at::Tensor grad_weight;
    at::Tensor grad_bias;
    if (at::GradMode::is_enabled()) {
      // create_graph: the gradients must be differentiable themselves.
      at::Tensor grad_rows = grad.reshape({-1, grad.size(-1)});
      if (want_input) grad_input = grad.matmul(weight);
      if (want_weight) grad_weight = grad_rows.t().mm(input.reshape({-1, input.size(-1)}));
      if (want_bias) grad_bias = grad_rows.sum(0);
      return {grad_input, grad_weight, grad_bias};
    }
    Count("linear_backward");
    Ints rows = Rows(input);
    const int64_t out = weight.size(0);
    Value g = Reshape(Operand(grad, "grad"), {rows[0], out});
    if (want_input) {
      // [n, out] x [out, in] contracting `out`: [n, in].
      Value v = DotValue(g, Operand(weight, "weight"), {1}, {0}, {}, {}, rows);
      grad_input = Wrap(Reshape(v, ToInts(input.sizes())));
    }
    if (want_weight) {
      // [n, out] x [n, in] contracting the rows: [out, in].
      Value x = Reshape(Operand(input, "input"), rows);
      grad_weight = Wrap(DotValue(g, x, {0}, {0}, {}, {}, {out, rows[1]}));
    }
    if (want_bias) grad_bias = Wrap(SumValue(g, {0}, false));
    return {grad_input, grad_weight, grad_bias};
  }
};

at::Tensor linear(const at::Tensor& input, const at::Tensor& weight,
                  const c10::optional<at::Tensor>& bias) {
  const at::Tensor b = Defined(bias) ? *bias : at::Tensor();
  if (!Covered(input, weight, b)) return at::native::linear(input, weight, bias);
  return LinearFunction::apply(input, weight,
                               b.defined() ? c10::optional<at::Tensor>(b) : c10::nullopt);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, AutogradXLA, m) { m.impl("linear", TORCH_FN(linear)); }

}  // namespace axle::torch_device
