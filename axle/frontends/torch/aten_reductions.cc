//===- aten_reductions.cc - Reductions and matrix products (xla device) ---===//
//
// sum and mean (over dimensions, keepdim, dtype), mm/addmm/bmm/baddbmm.
//
//===----------------------------------------------------------------------===//
#include <ATen/ATen.h>
#include <ATen/WrapDimUtils.h>
#include <torch/library.h>

#include <algorithm>

#include "axle/core/shape_util.h"
#include "axle/frontends/torch/aten_ir.h"

namespace axle::torch_device {
namespace {

// --- Reductions ---------------------------------------------------------------

Ints ReduceDims(const at::Tensor& self, at::OptionalIntArrayRef dim) {
  Ints dims;
  if (!dim.has_value() || dim->empty()) {
    for (int64_t i = 0; i < self.dim(); ++i) dims.push_back(i);
    return dims;
  }
  for (int64_t d : *dim) dims.push_back(at::maybe_wrap_dim(d, self.dim()));
  std::sort(dims.begin(), dims.end());
  dims.erase(std::unique(dims.begin(), dims.end()), dims.end());
  return dims;
}

at::ScalarType SumType(const at::Tensor& self, c10::optional<at::ScalarType> dtype) {
  if (dtype.has_value()) return *dtype;
  if (at::isIntegralType(self.scalar_type(), /*includeBool=*/true)) return at::kLong;
  return self.scalar_type();
}

at::Tensor sum_dim(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                   c10::optional<at::ScalarType> dtype) {
  Count("sum");
  Value v = Convert(Operand(self, "self"), ToPrimitiveType(SumType(self, dtype)));
  return Wrap(SumValue(v, ReduceDims(self, dim), keepdim));
}
at::Tensor sum(const at::Tensor& self, c10::optional<at::ScalarType> dtype) {
  return sum_dim(self, c10::nullopt, false, dtype);
}

at::Tensor mean_dim(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                    c10::optional<at::ScalarType> dtype) {
  Count("mean");
  at::ScalarType type = dtype.value_or(self.scalar_type());
  TORCH_CHECK(at::isFloatingType(type), "axle: mean of a tensor of dtype ", type,
              " (a floating dtype is needed)");
  Value v = Convert(Operand(self, "self"), ToPrimitiveType(type));
  Ints dims = ReduceDims(self, dim);
  int64_t count = 1;
  for (int64_t d : dims) count *= self.size(d);
  Value s = SumValue(v, dims, keepdim);
  return Wrap(Elementwise("div", s, Constant(static_cast<double>(count), TypeOf(s), Dims(s))));
}
at::Tensor mean(const at::Tensor& self, c10::optional<at::ScalarType> dtype) {
  return mean_dim(self, c10::nullopt, false, dtype);
}

// --- Linear algebra -----------------------------------------------------------

Value MmValue(const at::Tensor& self, const at::Tensor& mat2) {
  TORCH_CHECK(self.dim() == 2 && mat2.dim() == 2, "axle: mm expects 2-D tensors, got ",
              self.sizes(), " and ", mat2.sizes());
  TORCH_CHECK(self.size(1) == mat2.size(0), "axle: mm shapes ", self.sizes(), " and ", mat2.sizes(),
              " cannot be multiplied");
  PrimitiveType t = ToPrimitiveType(ResultType(self, mat2));
  return DotValue(Convert(Operand(self, "self"), t), Convert(Operand(mat2, "mat2"), t), {1}, {0},
                  {}, {}, {self.size(0), mat2.size(1)});
}

at::Tensor mm(const at::Tensor& self, const at::Tensor& mat2) {
  Count("mm");
  return Wrap(MmValue(self, mat2));
}

at::Tensor addmm(const at::Tensor& self, const at::Tensor& mat1, const at::Tensor& mat2,
                 const at::Scalar& beta, const at::Scalar& alpha) {
  Count("addmm");
  Value product = MmValue(mat1, mat2);
  PrimitiveType t = TypeOf(product);
  if (alpha.toDouble() != 1.0) product = BinaryValues("mul", product, ScalarValue(alpha, t), t);
  if (beta.toDouble() == 0.0) return Wrap(product);
  Value bias = Convert(Operand(self, "self"), t);
  if (beta.toDouble() != 1.0) bias = BinaryValues("mul", bias, ScalarValue(beta, t), t);
  return Wrap(BinaryValues("add", product, bias, t));
}

Value BmmValue(const at::Tensor& self, const at::Tensor& mat2, const char* op) {
  TORCH_CHECK(self.dim() == 3 && mat2.dim() == 3 && self.size(0) == mat2.size(0) &&
                  self.size(2) == mat2.size(1),
              "axle: ", op, " shapes ", self.sizes(), " and ", mat2.sizes(),
              " cannot be multiplied");
  PrimitiveType t = ToPrimitiveType(ResultType(self, mat2));
  return DotValue(Convert(Operand(self, "self"), t), Convert(Operand(mat2, "mat2"), t), {2}, {1},
                  {0}, {0}, {self.size(0), self.size(1), mat2.size(2)});
}

at::Tensor bmm(const at::Tensor& self, const at::Tensor& mat2) {
  Count("bmm");
  return Wrap(BmmValue(self, mat2, "bmm"));
}

// beta * self + alpha * (batch1 @ batch2), self broadcast (attention's
// additive mask in nn.MultiheadAttention).
Value BaddbmmValue(const at::Tensor& self, const at::Tensor& batch1, const at::Tensor& batch2,
                   const at::Scalar& beta, const at::Scalar& alpha) {
  Count("baddbmm");
  Value product = BmmValue(batch1, batch2, "baddbmm");
  PrimitiveType t = TypeOf(product);
  if (alpha.toDouble() != 1.0) product = BinaryValues("mul", product, ScalarValue(alpha, t), t);
  if (beta.toDouble() == 0.0) return product;  // self is ignored, NaNs included
  Value bias = Convert(Operand(self, "self"), t);
  if (beta.toDouble() != 1.0) bias = BinaryValues("mul", bias, ScalarValue(beta, t), t);
  return BinaryValues("add", bias, product, t);
}

at::Tensor baddbmm(const at::Tensor& self, const at::Tensor& batch1, const at::Tensor& batch2,
                   const at::Scalar& beta, const at::Scalar& alpha) {
  return Wrap(BaddbmmValue(self, batch1, batch2, beta, alpha));
}
at::Tensor& baddbmm_(at::Tensor& self, const at::Tensor& batch1, const at::Tensor& batch2,
                     const at::Scalar& beta, const at::Scalar& alpha) {
  return Assign(self, BaddbmmValue(self, batch1, batch2, beta, alpha));
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, XLA, m) {
  m.impl("sum", TORCH_FN(sum));
  m.impl("sum.dim_IntList", TORCH_FN(sum_dim));
  m.impl("mean", TORCH_FN(mean));
  m.impl("mean.dim", TORCH_FN(mean_dim));
  m.impl("mm", TORCH_FN(mm));
  m.impl("addmm", TORCH_FN(addmm));
  m.impl("bmm", TORCH_FN(bmm));
  m.impl("baddbmm", TORCH_FN(baddbmm));
  m.impl("baddbmm_", TORCH_FN(baddbmm_));
}

}  // namespace axle::torch_device
