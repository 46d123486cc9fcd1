//===- tensor_impl.cc - The PyTorch tensor of the Axle (XLA) device --------===//
#include "axle/frontends/torch/tensor_impl.h"

#include <c10/core/impl/DeviceGuardImplInterface.h>

#include <atomic>
#include <cstring>
#include <mutex>
#include <string>
#include <typeinfo>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "axle/core/shape_util.h"

namespace axle::torch_device {

AxleTensorImpl::AxleTensorImpl(std::shared_ptr<lazy::LazyTensor> tensor, at::ScalarType dtype,
                               c10::Device device)
    : c10::TensorImpl(c10::DispatchKeySet{c10::DispatchKey::XLA, c10::DispatchKey::AutogradXLA},
                      c10::scalarTypeToTypeMeta(dtype), device),
      tensor_(std::move(tensor)) {
  RefreshSizes();
}

void AxleTensorImpl::RefreshSizes() {
  const auto& dims = tensor_->shape().dimensions();
  sizes_and_strides_.set_sizes(dims);
  // Contiguous strides, innermost first.
  int64_t stride = 1;
  for (size_t i = dims.size(); i-- > 0;) {
    sizes_and_strides_.stride_at_unchecked(i) = stride;
    stride *= std::max<int64_t>(dims[i], 1);
  }
  refresh_numel();
  refresh_contiguous();
}

namespace {

// The ids of values replaced by resize_ while something else held them (a
// view's base, an alias). `any_resized` spares the common case the lock.
struct Resized {
  std::mutex mutex;
  absl::flat_hash_set<int64_t> ids;
};

Resized& ResizedValues() {
  static auto* resized = new Resized();
  return *resized;
}

std::atomic<bool> any_resized{false};

bool WasResized(const lazy::LazyTensor& t) {
  if (!any_resized.load(std::memory_order_acquire)) return false;
  Resized& r = ResizedValues();
  std::lock_guard<std::mutex> lock(r.mutex);
  return r.ids.contains(t.id());
}

}  // namespace

const std::shared_ptr<lazy::LazyTensor>& AxleTensorImpl::tensor() const {
  TORCH_CHECK(!WasResized(*tensor_),
              "axle: this tensor shares its value (detach(), .data) with "
              "one resized since (resize_); take it again from the resized tensor");
  if (view_ != nullptr && view_->base != tensor_) {
    TORCH_CHECK(!WasResized(*view_->base),
                "axle: this view's base was resized (resize_) after "
                "the view was made; make the view again from the resized tensor");
    if (view_->base->version() != view_->base_version) {
      uint64_t version = 0;
      lazy::Value current = view_->base->GetIrValue(&version);
      tensor_->SetIrValue(ApplyView(current, view_->ops));
      tensor_->MarkViewOfBase();
      view_->base_version = version;
    }
    AdoptUnheldBase();
  }
  return tensor_;
}

void AxleTensorImpl::AdoptUnheldBase() const {
  // Only the ViewInfo (shared by this tensor and its aliases) holds the
  // base: no other tensor or view can read or write it.
  if (view_->base.use_count() != 1) return;
  for (const ViewOp& op : view_->ops) {
    // An expanded view's elements are not independent (writing one is an
    // error, Inverse): it stays a view.
    if (op.kind == ViewOp::Kind::kExpand) return;
  }
  view_->base = tensor_;
  view_->ops.clear();
  view_->base_version = tensor_->version();
  // The value, no longer a view's, is computed by the step marker.
  if (tensor_->is_view_of_base()) tensor_->SetIrValue(tensor_->GetIrValue());
}

void AxleTensorImpl::AssignToView(const lazy::Value& value) {
  if (view_ != nullptr && view_->base != tensor_) AdoptUnheldBase();
  if (view_ == nullptr || view_->base == tensor_) {  // not a view, or an alias
    tensor_->SetIrValue(value);
    return;
  }
  lazy::Value base = UpdateBase(view_->base->GetIrValue(), view_->ops, value);
  view_->base_version = view_->base->SetIrValue(base);
  tensor_->SetIrValue(value);
  tensor_->MarkViewOfBase();
}

void AxleTensorImpl::set_tensor(std::shared_ptr<lazy::LazyTensor> tensor) {
  tensor_ = std::move(tensor);
  view_ = nullptr;  // a new value (resize_): no longer the view of its base's
  RefreshSizes();
}

void AxleTensorImpl::Resize(std::shared_ptr<lazy::LazyTensor> tensor) {
  // Others hold the old value when it is a view's base or an alias's value.
  if (tensor_.use_count() > 1) {
    Resized& r = ResizedValues();
    std::lock_guard<std::mutex> lock(r.mutex);
    r.ids.insert(tensor_->id());
    any_resized.store(true, std::memory_order_release);
  }
  set_tensor(std::move(tensor));
}

c10::intrusive_ptr<c10::TensorImpl> AxleTensorImpl::shallow_copy_and_detach(
    const c10::VariableVersion& version_counter, bool allow_tensor_metadata_change) const {
  auto impl =
      c10::make_intrusive<AxleTensorImpl>(tensor_, c10::typeMetaToScalarType(dtype()), device());
  copy_tensor_metadata(this, impl.get(), version_counter, allow_tensor_metadata_change);
  impl->view_ = view_;
  return impl;
}

c10::intrusive_ptr<c10::TensorImpl> AxleTensorImpl::shallow_copy_and_detach(
    c10::VariableVersion&& version_counter, bool allow_tensor_metadata_change) const {
  auto impl =
      c10::make_intrusive<AxleTensorImpl>(tensor_, c10::typeMetaToScalarType(dtype()), device());
  copy_tensor_metadata(this, impl.get(), std::move(version_counter), allow_tensor_metadata_change);
  impl->view_ = view_;
  return impl;
}

void AxleTensorImpl::shallow_copy_from(const c10::intrusive_ptr<c10::TensorImpl>& impl) {
  auto* other = dynamic_cast<AxleTensorImpl*>(impl.get());
  TORCH_CHECK(other != nullptr, "axle: shallow_copy_from a tensor that is not on the xla device");
  copy_tensor_metadata(other, this, version_counter(), allow_tensor_metadata_change());
  set_tensor(other->tensor_);
  view_ = other->view_;
}

PrimitiveType ToPrimitiveType(at::ScalarType dtype) {
  switch (dtype) {
    case at::kFloat:
      return F32;
    case at::kDouble:
      return F64;
    case at::kHalf:
      return F16;
    case at::kBFloat16:
      return BF16;
    case at::kLong:
      return S64;
    case at::kInt:
      return S32;
    case at::kShort:
      return S16;
    case at::kChar:
      return S8;
    case at::kByte:
      return U8;
    case at::kBool:
      return PRED;
    default:
      TORCH_CHECK(false, "axle: the xla device does not support dtype ", dtype);
  }
}

at::ScalarType ToScalarType(PrimitiveType type) {
  switch (type) {
    case F32:
      return at::kFloat;
    case F64:
      return at::kDouble;
    case F16:
      return at::kHalf;
    case BF16:
      return at::kBFloat16;
    case S64:
      return at::kLong;
    case S32:
      return at::kInt;
    case S16:
      return at::kShort;
    case S8:
      return at::kChar;
    case U8:
      return at::kByte;
    case PRED:
      return at::kBool;
    default:
      TORCH_CHECK(false, "axle: no PyTorch dtype for element type ",
                  std::string(primitive_util::LowercasePrimitiveTypeName(type)));
  }
}

AxleTensorImpl* GetImpl(const at::Tensor& t, const char* what) {
  TORCH_CHECK(t.defined(), "axle: ", what, " is an undefined tensor");
  c10::TensorImpl* base = t.unsafeGetTensorImpl();
  // Every operand of every kernel comes here: the exact type is checked
  // first (a compare), the cast's search only for other tensors.
  if (typeid(*base) == typeid(AxleTensorImpl)) return static_cast<AxleTensorImpl*>(base);
  auto* impl = dynamic_cast<AxleTensorImpl*>(base);
  TORCH_CHECK(impl != nullptr, "axle: expected ", what, " on the xla device, but it is on ",
              t.device(), " (move it with .to(torch_axle.device()))");
  return impl;
}

at::Tensor MakeTensor(std::shared_ptr<lazy::LazyTensor> tensor, at::ScalarType dtype,
                      c10::Device device) {
  return at::Tensor(c10::make_intrusive<AxleTensorImpl>(std::move(tensor), dtype, device));
}

at::Tensor LiteralToCpuTensor(const Literal& literal, at::ScalarType dtype) {
  const auto& dims = literal.shape().dimensions();
  std::vector<int64_t> sizes(dims.begin(), dims.end());
  at::Tensor t = at::empty(sizes, at::TensorOptions().dtype(dtype).device(at::kCPU));
  TORCH_CHECK(static_cast<int64_t>(t.nbytes()) == literal.size_bytes(), "axle: a device value of ",
              literal.size_bytes(), " bytes for a tensor of ", t.nbytes());
  if (t.nbytes() > 0) std::memcpy(t.data_ptr(), literal.untyped_data(), t.nbytes());
  return t;
}

Literal CpuTensorToLiteral(const at::Tensor& t) {
  at::Tensor c = t.contiguous();
  std::vector<int64_t> sizes(c.sizes().begin(), c.sizes().end());
  Literal literal(ShapeUtil::MakeShape(ToPrimitiveType(c.scalar_type()), sizes));
  if (c.nbytes() > 0) std::memcpy(literal.untyped_data(), c.data_ptr(), c.nbytes());
  return literal;
}

namespace {

// One device, xla:0, with one stream.
struct AxleGuardImpl final : public c10::impl::DeviceGuardImplInterface {
  at::DeviceType type() const override { return at::DeviceType::XLA; }
  c10::Device exchangeDevice(c10::Device device) const override {
    CheckDevice(device);
    return c10::Device(at::DeviceType::XLA, 0);
  }
  c10::Device getDevice() const override { return c10::Device(at::DeviceType::XLA, 0); }
  void setDevice(c10::Device device) const override { CheckDevice(device); }
  void uncheckedSetDevice(c10::Device) const noexcept override {}
  c10::Stream getStream(c10::Device device) const noexcept override {
    return c10::Stream(c10::Stream::DEFAULT, device);
  }
  c10::Stream exchangeStream(c10::Stream stream) const noexcept override {
    return c10::Stream(c10::Stream::DEFAULT, stream.device());
  }
  c10::DeviceIndex deviceCount() const noexcept override { return 1; }

  static void CheckDevice(c10::Device device) {
    TORCH_CHECK(device.type() == at::DeviceType::XLA && device.index() <= 0,
                "axle: there is one xla device, xla:0; got ", device);
  }
};

C10_REGISTER_GUARD_IMPL(XLA, AxleGuardImpl);

}  // namespace

}  // namespace axle::torch_device
