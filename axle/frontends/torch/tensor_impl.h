//===- tensor_impl.h - The PyTorch tensor of the Axle (XLA) device ---------===//
//
// torch-xla's XLATensorImpl: a c10::TensorImpl with the XLA and AutogradXLA
// dispatch keys and no storage. Its value is a lazy::LazyTensor (device
// data or pending IR); its sizes are its shape's, with contiguous strides.
// Shallow copies (detach(), .data) share the LazyTensor, so an in-place
// operation on one is seen by the other. A view (view, slice, select,
// transpose, ...) holds its own value, recomputed from its base's when that
// changes; an in-place update of a view updates its base (ViewInfo).
//
// A view whose base no tensor holds any more but the view (and its
// aliases) takes the base's place when next read or written: its own value
// becomes the one the step marker computes, and the base is dropped. A
// weight's gradient is such a view: autograd's AccumulateGrad keeps the
// transpose of the matmul that computed it (our strides are always
// contiguous, so the layout contract holds and it is not copied), and the
// step would otherwise compute the matmul's result and transpose it again
// for every optimizer update that reads the gradient. Taking the base's
// place changes nothing anyone can observe: no other tensor reads the
// base. (Expanded views stay views: writing one is an error.)
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
#include <vector>

#include "absl/types/span.h"
#include "axle/frontends/lazy/lazy_tensor.h"

namespace axle::torch_device {

// One step from a view's base to the view (torch-xla's ViewInfo).
struct ViewOp {
  enum class Kind { kReshape, kPermute, kSlice, kSelect, kExpand };
  Kind kind;
  std::vector<int64_t> dims;  // kReshape, kExpand: the result's; kPermute: the permutation
  int64_t axis = 0;           // kSlice, kSelect
  int64_t start = 0;          // kSlice: [start, end) by step; kSelect: the index
  int64_t end = 0;
  int64_t step = 1;
};

// A view's link to its base: the base's value, the steps from it to the
// view, and the base's version (LazyTensor::version) the view's value was
// last computed from (the view's value is recomputed when the base's
// changed: an in-place update of the base or of another view of it, a
// sync).
struct ViewInfo {
  std::shared_ptr<lazy::LazyTensor> base;
  std::vector<ViewOp> ops;
  uint64_t base_version = 0;
};

// The view of `base` that `ops` make (views.cc).
lazy::Value ApplyView(const lazy::Value& base, absl::Span<const ViewOp> ops);
// The base's value once the view that `ops` make of `base` takes the value
// `update` (views.cc). A c10::Error for a view that cannot be written
// (expand: several elements would share one).
lazy::Value UpdateBase(const lazy::Value& base, absl::Span<const ViewOp> ops,
                       const lazy::Value& update);

class AxleTensorImpl final : public c10::TensorImpl {
 public:
  AxleTensorImpl(std::shared_ptr<lazy::LazyTensor> tensor, at::ScalarType dtype,
                 c10::Device device);

  // The value; for a view whose base changed since its value was computed,
  // recomputed from the base first.
  const std::shared_ptr<lazy::LazyTensor>& tensor() const;
  // How this tensor views another (null when it does not); detach() and
  // alias() share it with the tensor they alias.
  const std::shared_ptr<ViewInfo>& view() const { return view_; }
  void set_view(std::shared_ptr<ViewInfo> view) { view_ = std::move(view); }
  // The value of a view, updated in place: its base takes the value too.
  void AssignToView(const lazy::Value& value);
  // Replaces the value (and the sizes, when its shape differs).
  void set_tensor(std::shared_ptr<lazy::LazyTensor> tensor);
  // Replaces the value by one of another shape (resize_). Views of the old
  // value and tensors that share it (detach(), .data) cannot follow (their
  // elements were the old shape's): reading or updating one afterwards is
  // an error naming resize_, not a stale value.
  void Resize(std::shared_ptr<lazy::LazyTensor> tensor);

  c10::intrusive_ptr<c10::TensorImpl> shallow_copy_and_detach(
      const c10::VariableVersion& version_counter,
      bool allow_tensor_metadata_change) const override;
  c10::intrusive_ptr<c10::TensorImpl> shallow_copy_and_detach(
      c10::VariableVersion&& version_counter, bool allow_tensor_metadata_change) const override;
  void shallow_copy_from(const c10::intrusive_ptr<c10::TensorImpl>& impl) override;

 private:
  void RefreshSizes();
  // For a view (not an alias) whose base only its ViewInfo holds: the
  // view's value becomes the base (ViewInfo's base = tensor_, no ops).
  void AdoptUnheldBase() const;

  std::shared_ptr<lazy::LazyTensor> tensor_;
  std::shared_ptr<ViewInfo> view_;
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
