//===- aten_foreach.cc - The multi-tensor (_foreach_*) kernels of the xla device ===//
//
// torch.optim's multi-tensor path (foreach=True, and zero_grad's with it)
// makes one _foreach_* call per step of the update over all parameters at
// once. PyTorch registers these ops for CPU and CUDA only, so on this
// device they fell back to the CPU: every list copied to the host and back
// each step. Here they take ATen's own per-tensor loops (the CPU's "slow"
// kernels: each tensor's op through the dispatcher, below autograd), whose
// per-tensor ops are this device's lowered kernels (counted as axle::add,
// axle::mul, ...). The step records the IR the per-parameter path records,
// with one Python call and one autograd dispatch per op instead of one
// per op and parameter. Only the ops whose per-tensor op is lowered are
// registered (not abs_ and neg_ in place, say): the rest still fall back
// as a whole and are counted as aten::_foreach_*.
//
//===----------------------------------------------------------------------===//
#include <ATen/ops/_foreach_abs_native.h>
#include <ATen/ops/_foreach_add_native.h>
#include <ATen/ops/_foreach_addcdiv_native.h>
#include <ATen/ops/_foreach_addcmul_native.h>
#include <ATen/ops/_foreach_ceil_native.h>
#include <ATen/ops/_foreach_cos_native.h>
#include <ATen/ops/_foreach_div_native.h>
#include <ATen/ops/_foreach_erf_native.h>
#include <ATen/ops/_foreach_exp_native.h>
#include <ATen/ops/_foreach_expm1_native.h>
#include <ATen/ops/_foreach_floor_native.h>
#include <ATen/ops/_foreach_log1p_native.h>
#include <ATen/ops/_foreach_log_native.h>
#include <ATen/ops/_foreach_maximum_native.h>
#include <ATen/ops/_foreach_minimum_native.h>
#include <ATen/ops/_foreach_mul_native.h>
#include <ATen/ops/_foreach_neg_native.h>
#include <ATen/ops/_foreach_round_native.h>
#include <ATen/ops/_foreach_sigmoid_native.h>
#include <ATen/ops/_foreach_sin_native.h>
#include <ATen/ops/_foreach_sqrt_native.h>
#include <ATen/ops/_foreach_sub_native.h>
#include <ATen/ops/_foreach_tanh_native.h>
#include <ATen/ops/_foreach_zero_native.h>
#include <torch/library.h>

namespace axle::torch_device {

TORCH_LIBRARY_IMPL(aten, XLA, m) {
  m.impl("_foreach_add.Scalar", TORCH_FN(at::native::foreach_tensor_add_scalar_kernel_slow));
  m.impl("_foreach_add_.Scalar", TORCH_FN(at::native::foreach_tensor_add_scalar_kernel_slow_));
  m.impl("_foreach_sub.Scalar", TORCH_FN(at::native::foreach_tensor_sub_scalar_kernel_slow));
  m.impl("_foreach_sub_.Scalar", TORCH_FN(at::native::foreach_tensor_sub_scalar_kernel_slow_));
  m.impl("_foreach_mul.Scalar", TORCH_FN(at::native::foreach_tensor_mul_scalar_kernel_slow));
  m.impl("_foreach_mul_.Scalar", TORCH_FN(at::native::foreach_tensor_mul_scalar_kernel_slow_));
  m.impl("_foreach_div.Scalar", TORCH_FN(at::native::foreach_tensor_div_scalar_kernel_slow));
  m.impl("_foreach_div_.Scalar", TORCH_FN(at::native::foreach_tensor_div_scalar_kernel_slow_));
  m.impl("_foreach_add.List", TORCH_FN(at::native::foreach_tensor_add_list_kernel_slow));
  m.impl("_foreach_add_.List", TORCH_FN(at::native::foreach_tensor_add_list_kernel_slow_));
  m.impl("_foreach_sub.List", TORCH_FN(at::native::foreach_tensor_sub_list_kernel_slow));
  m.impl("_foreach_sub_.List", TORCH_FN(at::native::foreach_tensor_sub_list_kernel_slow_));
  m.impl("_foreach_mul.List", TORCH_FN(at::native::foreach_tensor_mul_list_kernel_slow));
  m.impl("_foreach_mul_.List", TORCH_FN(at::native::foreach_tensor_mul_list_kernel_slow_));
  m.impl("_foreach_div.List", TORCH_FN(at::native::foreach_tensor_div_list_kernel_slow));
  m.impl("_foreach_div_.List", TORCH_FN(at::native::foreach_tensor_div_list_kernel_slow_));
  m.impl("_foreach_add.ScalarList",
         TORCH_FN(at::native::foreach_tensor_add_scalarlist_kernel_slow));
  m.impl("_foreach_add_.ScalarList",
         TORCH_FN(at::native::foreach_tensor_add_scalarlist_kernel_slow_));
  m.impl("_foreach_sub.ScalarList",
         TORCH_FN(at::native::foreach_tensor_sub_scalarlist_kernel_slow));
  m.impl("_foreach_sub_.ScalarList",
         TORCH_FN(at::native::foreach_tensor_sub_scalarlist_kernel_slow_));
  m.impl("_foreach_div.ScalarList",
         TORCH_FN(at::native::foreach_tensor_div_scalarlist_kernel_slow));
  m.impl("_foreach_div_.ScalarList",
         TORCH_FN(at::native::foreach_tensor_div_scalarlist_kernel_slow_));
  m.impl("_foreach_mul.ScalarList",
         TORCH_FN(at::native::foreach_tensor_mul_scalarlist_kernel_slow));
  m.impl("_foreach_mul_.ScalarList",
         TORCH_FN(at::native::foreach_tensor_mul_scalarlist_kernel_slow_));
  m.impl("_foreach_exp", TORCH_FN(at::native::foreach_tensor_exp_slow));
  m.impl("_foreach_zero_", TORCH_FN(at::native::foreach_tensor_zero_slow_));
  m.impl("_foreach_exp_", TORCH_FN(at::native::foreach_tensor_exp_slow_));
  m.impl("_foreach_sqrt", TORCH_FN(at::native::foreach_tensor_sqrt_slow));
  m.impl("_foreach_sqrt_", TORCH_FN(at::native::foreach_tensor_sqrt_slow_));
  m.impl("_foreach_abs", TORCH_FN(at::native::foreach_tensor_abs_slow));
  m.impl("_foreach_ceil", TORCH_FN(at::native::foreach_tensor_ceil_slow));
  m.impl("_foreach_ceil_", TORCH_FN(at::native::foreach_tensor_ceil_slow_));
  m.impl("_foreach_cos", TORCH_FN(at::native::foreach_tensor_cos_slow));
  m.impl("_foreach_cos_", TORCH_FN(at::native::foreach_tensor_cos_slow_));
  m.impl("_foreach_erf", TORCH_FN(at::native::foreach_tensor_erf_slow));
  m.impl("_foreach_erf_", TORCH_FN(at::native::foreach_tensor_erf_slow_));
  m.impl("_foreach_expm1", TORCH_FN(at::native::foreach_tensor_expm1_slow));
  m.impl("_foreach_expm1_", TORCH_FN(at::native::foreach_tensor_expm1_slow_));
  m.impl("_foreach_floor", TORCH_FN(at::native::foreach_tensor_floor_slow));
  m.impl("_foreach_floor_", TORCH_FN(at::native::foreach_tensor_floor_slow_));
  m.impl("_foreach_log", TORCH_FN(at::native::foreach_tensor_log_slow));
  m.impl("_foreach_log_", TORCH_FN(at::native::foreach_tensor_log_slow_));
  m.impl("_foreach_log1p", TORCH_FN(at::native::foreach_tensor_log1p_slow));
  m.impl("_foreach_log1p_", TORCH_FN(at::native::foreach_tensor_log1p_slow_));
  m.impl("_foreach_neg", TORCH_FN(at::native::foreach_tensor_neg_slow));
  m.impl("_foreach_tanh", TORCH_FN(at::native::foreach_tensor_tanh_slow));
  m.impl("_foreach_tanh_", TORCH_FN(at::native::foreach_tensor_tanh_slow_));
  m.impl("_foreach_sin", TORCH_FN(at::native::foreach_tensor_sin_slow));
  m.impl("_foreach_sin_", TORCH_FN(at::native::foreach_tensor_sin_slow_));
  m.impl("_foreach_round", TORCH_FN(at::native::foreach_tensor_round_slow));
  m.impl("_foreach_round_", TORCH_FN(at::native::foreach_tensor_round_slow_));
  m.impl("_foreach_sigmoid", TORCH_FN(at::native::foreach_tensor_sigmoid_slow));
  m.impl("_foreach_sigmoid_", TORCH_FN(at::native::foreach_tensor_sigmoid_slow_));
  m.impl("_foreach_addcdiv_.Scalar", TORCH_FN(at::native::foreach_tensor_addcdiv_scalar_slow_));
  m.impl("_foreach_addcmul_.Scalar", TORCH_FN(at::native::foreach_tensor_addcmul_scalar_slow_));
  m.impl("_foreach_addcdiv_.ScalarList",
         TORCH_FN(at::native::foreach_tensor_addcdiv_scalarlist_slow_));
  m.impl("_foreach_addcmul_.ScalarList",
         TORCH_FN(at::native::foreach_tensor_addcmul_scalarlist_slow_));
  m.impl("_foreach_addcdiv.Scalar", TORCH_FN(at::native::foreach_tensor_addcdiv_scalar_slow));
  m.impl("_foreach_addcmul.Scalar", TORCH_FN(at::native::foreach_tensor_addcmul_scalar_slow));
  m.impl("_foreach_addcdiv.ScalarList",
         TORCH_FN(at::native::foreach_tensor_addcdiv_scalarlist_slow));
  m.impl("_foreach_addcmul.ScalarList",
         TORCH_FN(at::native::foreach_tensor_addcmul_scalarlist_slow));
  m.impl("_foreach_maximum.List", TORCH_FN(at::native::foreach_tensor_maximum_slow));
  m.impl("_foreach_maximum_.List", TORCH_FN(at::native::foreach_tensor_maximum_slow_));
  m.impl("_foreach_minimum.List", TORCH_FN(at::native::foreach_tensor_minimum_slow));
  m.impl("_foreach_minimum_.List", TORCH_FN(at::native::foreach_tensor_minimum_slow_));
}

}  // namespace axle::torch_device
