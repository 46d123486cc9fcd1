//===- tensor_impl.h - The PyTorch tensor of the Axle (XLA) device ---------===//
//
// torch-xla's XLATensorImpl: a c10::TensorImpl with the XLA and AutogradXLA
// dispatch keys and no storage. Its value is a lazy::LazyTensor (device
// data or pending IR); its sizes are its shape's, with contiguous strides.
// Shallow copies (detach(), .data) share the LazyTensor, so an in-place
// operation on one is seen by the other.
//
// Only the torch front end's own files include this header (PyTorch's are
// heavy).
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_FRONTENDS_TORCH_TENSOR_IMPL_H_
#define AXLE_FRONTENDS_TORCH_TENSOR_IMPL_H_

#include <ATen/ATen.h>
#include <c10/core/TensorImpl.h>

#include <memory>

#include "axle/frontends/lazy/lazy_tensor.h"

namespace axle::torch_device {

class AxleTensorImpl : public c10::TensorImpl {
 public:
  AxleTensorImpl(std::shared_ptr<lazy::LazyTensor> tensor, at::ScalarType dtype,
                 c10::Device device);

  const std::shared_ptr<lazy::LazyTensor>& tensor() const { return tensor_; }
  // Replaces the value (and the sizes, when its shape differs).
  void set_tensor(std::shared_ptr<lazy::LazyTensor> tensor);

  c10::intrusive_ptr<c10::TensorImpl> shallow_copy_and_detach(
      const c10::VariableVersion& version_counter,
      bool allow_tensor_metadata_change) const override;
  c10::intrusive_ptr<c10::TensorImpl> shallow_copy_and_detach(
      c10::VariableVersion&& version_counter, bool allow_tensor_metadata_change) const override;
  void shallow_copy_from(const c10::intrusive_ptr<c10::TensorImpl>& impl) override;

 private:
  void RefreshSizes();

  std::shared_ptr<lazy::LazyTensor> tensor_;
};

// The element type of a PyTorch dtype; a c10::Error naming the dtype when
// the device does not support it.
PrimitiveType ToPrimitiveType(at::ScalarType dtype);
at::ScalarType ToScalarType(PrimitiveType type);

// The impl of an xla tensor; a c10::Error naming `what` when `t` is on
// another device.
AxleTensorImpl* GetImpl(const at::Tensor& t, const char* what);
// A new xla tensor holding `tensor`.
at::Tensor MakeTensor(std::shared_ptr<lazy::LazyTensor> tensor, at::ScalarType dtype,
                      c10::Device device);

// The host value of a literal as a CPU tensor, and back.
at::Tensor LiteralToCpuTensor(const Literal& literal, at::ScalarType dtype);
Literal CpuTensorToLiteral(const at::Tensor& t);  // t: CPU, any strides

}  // namespace axle::torch_device

#endif  // AXLE_FRONTENDS_TORCH_TENSOR_IMPL_H_
