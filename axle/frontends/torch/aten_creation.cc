//===- aten_creation.cc - Creation, copies, transfers of the xla device ---===//
//
// empty/fill_/zero_/clone, copy_ in every direction, resize_, the
// transfers to the CPU, and the boxed CPU fallback for every op without a
// lowering (run by PyTorch's cpu_fallback, counted as aten::<op>).
//
//===----------------------------------------------------------------------===//
#include <ATen/ATen.h>
#include <ATen/native/CPUFallback.h>
#include <torch/library.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "axle/core/shape_util.h"
#include "axle/frontends/lazy/metrics.h"
#include "axle/frontends/torch/aten_ir.h"

namespace axle::torch_device {
namespace {

// --- Creation, copies, transfers ------------------------------------------------

at::ScalarType DtypeOr(c10::optional<at::ScalarType> dtype) {
  return dtype.value_or(at::typeMetaToScalarType(at::get_default_dtype()));
}

void CheckDevice(c10::optional<at::Device> device) {
  TORCH_CHECK(!device.has_value() || device->type() == at::DeviceType::XLA,
              "axle: a tensor for device ", *device, " created by the xla device's kernel");
  TORCH_CHECK(!device.has_value() || device->index() <= 0,
              "axle: there is one xla device, xla:0; got ", *device);
}

at::Tensor Full(const Ints& dims, double value, at::ScalarType dtype) {
  return Wrap(Constant(value, ToPrimitiveType(dtype), dims));
}

at::Tensor empty(c10::SymIntArrayRef size, c10::optional<at::ScalarType> dtype,
                 c10::optional<at::Layout> layout, c10::optional<at::Device> device,
                 c10::optional<bool> pin_memory, c10::optional<at::MemoryFormat> memory_format) {
  Count("empty");
  CheckDevice(device);
  TORCH_CHECK(!layout.has_value() || *layout == at::kStrided, "axle: layout ", *layout,
              " is not supported on the xla device");
  // Uninitialized memory reads as zeros here.
  return Full(ToInts(size), 0, DtypeOr(dtype));
}

at::Tensor empty_strided(c10::SymIntArrayRef size, c10::SymIntArrayRef stride,
                         c10::optional<at::ScalarType> dtype, c10::optional<at::Layout> layout,
                         c10::optional<at::Device> device, c10::optional<bool> pin_memory) {
  return empty(size, dtype, layout, device, pin_memory, c10::nullopt);
}

at::Tensor new_empty_strided(const at::Tensor& self, c10::SymIntArrayRef size,
                             c10::SymIntArrayRef stride, c10::optional<at::ScalarType> dtype,
                             c10::optional<at::Layout> layout, c10::optional<at::Device> device,
                             c10::optional<bool> pin_memory) {
  return empty(size, dtype.value_or(self.scalar_type()), layout, device, pin_memory, c10::nullopt);
}

at::Tensor& fill_(at::Tensor& self, const at::Scalar& value) {
  Count("fill_");
  PrimitiveType t = ToPrimitiveType(self.scalar_type());
  return Assign(self, BroadcastTo(ScalarValue(value, t), ToInts(self.sizes())));
}

at::Tensor& zero_(at::Tensor& self) {
  Count("zero_");
  return Assign(self, Constant(0, ToPrimitiveType(self.scalar_type()), ToInts(self.sizes())));
}

at::Tensor clone(const at::Tensor& self, c10::optional<at::MemoryFormat> memory_format) {
  Count("clone");
  return Wrap(Operand(self, "self"));
}

// The value of an xla tensor as a CPU tensor (computing it if pending).
at::Tensor ToCpu(const at::Tensor& t) {
  AxleTensorImpl* impl = GetImpl(t, "tensor");
  absl::StatusOr<Literal> literal = impl->tensor()->ToLiteral();
  Check(literal.status());
  return LiteralToCpuTensor(*literal, t.scalar_type());
}

at::Tensor& copy_(at::Tensor& self, const at::Tensor& src, bool non_blocking) {
  Count("copy_");
  bool self_xla = self.device().type() == at::DeviceType::XLA;
  bool src_xla = src.device().type() == at::DeviceType::XLA;
  if (self_xla && !src_xla) {
    TORCH_CHECK(src.device().is_cpu(), "axle: copy to the xla device from ", src.device(),
                " (only cpu tensors can be copied in)");
    at::Tensor host = src.to(self.scalar_type()).expand(self.sizes()).contiguous();
    auto data = std::make_shared<lazy::DeviceData>(CpuTensorToLiteral(host));
    AxleTensorImpl* impl = GetImpl(self, "self");
    if (impl->view() != nullptr) {  // a view: its base takes the data too
      return Assign(self, Value{Node::MakeDeviceData(std::move(data)), 0});
    }
    CheckNotView(self);
    impl->tensor()->SetData(std::move(data));
    return self;
  }
  if (!self_xla) {
    self.copy_(ToCpu(src));
    return self;
  }
  Value v = Convert(Operand(src, "src"), ToPrimitiveType(self.scalar_type()));
  return Assign(self, BroadcastTo(v, ToInts(self.sizes())));
}

at::Tensor copy_from(const at::Tensor& self, const at::Tensor& dst, bool non_blocking) {
  at::Tensor d = dst;
  copy_(d, self, non_blocking);
  return d;
}

at::Tensor copy_from_and_resize(const at::Tensor& self, const at::Tensor& dst) {
  if (dst.device().type() == at::DeviceType::XLA && dst.sizes() != self.sizes()) {
    AxleTensorImpl* impl = GetImpl(dst, "dst");
    impl->Resize(
        LazyTensor::FromIr(Constant(0, ToPrimitiveType(dst.scalar_type()), ToInts(self.sizes()))));
  }
  return copy_from(self, dst, false);
}

// PyTorch 1.13 declares resize_ with a const self.
const at::Tensor& resize_(const at::Tensor& self, c10::SymIntArrayRef size,
                          c10::optional<at::MemoryFormat> memory_format) {
  Count("resize_");
  Ints dims = ToInts(size);
  if (dims == ToInts(self.sizes())) return self;
  // Fresh storage (PyTorch keeps the old elements where they fit; the
  // fallback's out= copies, its only user here, overwrite them all).
  GetImpl(self, "self")
      ->Resize(LazyTensor::FromIr(Constant(0, ToPrimitiveType(self.scalar_type()), dims)));
  return self;
}

std::vector<at::Tensor> to_cpu(at::TensorList tensors) {
  std::vector<std::shared_ptr<LazyTensor>> lazies;
  for (const at::Tensor& t : tensors) {
    if (t.defined() && t.device().type() == at::DeviceType::XLA) {
      lazies.push_back(GetImpl(t, "tensor")->tensor());
    }
  }
  Check(lazy::Sync(lazies));  // one graph for all
  std::vector<at::Tensor> out;
  out.reserve(tensors.size());
  for (const at::Tensor& t : tensors) {
    if (!t.defined() || t.device().type() != at::DeviceType::XLA) {
      out.push_back(t);
    } else {
      out.push_back(ToCpu(t));
    }
  }
  return out;
}

at::Scalar local_scalar_dense(const at::Tensor& self) {
  Count("_local_scalar_dense");
  return ToCpu(self).item();
}

// --- The CPU fallback ---------------------------------------------------------------

void CpuFallback(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const std::string& name = op.schema().operator_name().name;
  lazy::metrics::IncrementCounter(name);  // "aten::<op>"
  if (DebugEnabled()) {
    std::fprintf(stderr, "axle: %s runs on the CPU (no lowering)\n", name.c_str());
  }
  at::native::cpu_fallback(op, stack);
}

}  // namespace

TORCH_LIBRARY_IMPL(_, XLA, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&CpuFallback>());
}

TORCH_LIBRARY_IMPL(aten, XLA, m) {
  m.impl("empty.memory_format", TORCH_FN(empty));
  m.impl("empty_strided", TORCH_FN(empty_strided));
  m.impl("new_empty_strided", TORCH_FN(new_empty_strided));
  m.impl("fill_.Scalar", TORCH_FN(fill_));
  m.impl("zero_", TORCH_FN(zero_));
  m.impl("clone", TORCH_FN(clone));
  m.impl("copy_", TORCH_FN(copy_));
  m.impl("_copy_from", TORCH_FN(copy_from));
  m.impl("_copy_from_and_resize", TORCH_FN(copy_from_and_resize));
  m.impl("resize_", TORCH_FN(resize_));
  m.impl("_to_cpu", TORCH_FN(to_cpu));
  m.impl("_local_scalar_dense", TORCH_FN(local_scalar_dense));
}

}  // namespace axle::torch_device
