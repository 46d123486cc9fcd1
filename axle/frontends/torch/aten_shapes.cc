//===- aten_shapes.cc - Shape and view ATen kernels of the xla device -------===//
//
// The views (permute/transpose/t/view/expand/(un)squeeze/slice/select,
// alias/detach: each records how it views its base, views.cc), the
// backwards of slice and select, _unsafe_view and cat.
//
//===----------------------------------------------------------------------===//
#include <ATen/ATen.h>
#include <ATen/InferSize.h>
#include <ATen/WrapDimUtils.h>
#include <torch/library.h>

#include <algorithm>
#include <limits>
#include <memory>
#include <utility>

#include "axle/core/shape_util.h"
#include "axle/frontends/torch/aten_ir.h"

namespace axle::torch_device {
namespace {

// --- Views (views.cc: reading and writing through them) -------------------------

// A view of `self` one step further: its base is self's base (self when
// self is no view). Its value is self's current value (recomputed from the
// base first if that changed) taken one step further: the steps before
// are recorded once, not again for every view of a view.
at::Tensor MakeView(const at::Tensor& self, ViewOp op) {
  AxleTensorImpl* impl = GetImpl(self, "self");
  const std::shared_ptr<LazyTensor>& current = impl->tensor();  // refreshes a view's value
  auto info = std::make_shared<ViewInfo>();
  Value value;
  if (const std::shared_ptr<ViewInfo>& from = impl->view();
      from != nullptr && from->base != current) {
    // tensor() made self's value the base's at from->base_version.
    info->base = from->base;
    info->ops = from->ops;
    info->base_version = from->base_version;
    value = current->GetIrValue();
  } else {
    info->base = current;
    value = current->GetIrValue(&info->base_version);
  }
  value = ApplyView(value, absl::MakeConstSpan(&op, 1));
  info->ops.push_back(std::move(op));
  at::Tensor out = Wrap(value);
  AxleTensorImpl* out_impl = GetImpl(out, "view");
  out_impl->set_view(std::move(info));
  out_impl->tensor()->MarkViewOfBase();  // the sync computes the base instead
  return out;
}

ViewOp Step(ViewOp::Kind kind, Ints dims) {
  ViewOp op{kind, std::move(dims)};
  return op;
}

// detach() and alias() share the value: in-place updates are seen by both.
at::Tensor Alias(const at::Tensor& self) {
  AxleTensorImpl* impl = GetImpl(self, "self");
  at::Tensor out = MakeTensor(impl->tensor(), self.scalar_type(), kDevice);
  std::shared_ptr<ViewInfo> info = impl->view();
  if (info == nullptr) {  // the alias of a base: the base itself, no steps
    info = std::make_shared<ViewInfo>();
    info->base = impl->tensor();
  }
  GetImpl(out, "alias")->set_view(std::move(info));
  return out;
}

at::Tensor permute(const at::Tensor& self, at::IntArrayRef dims) {
  Count("permute");
  TORCH_CHECK(static_cast<int64_t>(dims.size()) == self.dim(), "axle: permute of a ", self.dim(),
              "-D tensor by ", dims);
  Ints perm;
  for (int64_t d : dims) perm.push_back(at::maybe_wrap_dim(d, self.dim()));
  return MakeView(self, Step(ViewOp::Kind::kPermute, perm));
}

at::Tensor transpose_int(const at::Tensor& self, int64_t dim0, int64_t dim1) {
  Count("transpose");
  int64_t n = self.dim();
  if (n == 0) return Alias(self);
  Ints perm;
  for (int64_t i = 0; i < n; ++i) perm.push_back(i);
  std::swap(perm[at::maybe_wrap_dim(dim0, n)], perm[at::maybe_wrap_dim(dim1, n)]);
  return MakeView(self, Step(ViewOp::Kind::kPermute, perm));
}

at::Tensor t(const at::Tensor& self) {
  TORCH_CHECK(self.dim() <= 2, "axle: t() expects a tensor of at most 2 dimensions, got ",
              self.dim());
  if (self.dim() < 2) {
    Count("t");
    return Alias(self);
  }
  return transpose_int(self, 0, 1);
}

at::Tensor view(const at::Tensor& self, c10::SymIntArrayRef size) {
  Count("view");
  Ints dims = ToInts(at::infer_size_dv(c10::asIntArrayRefSlow(size), self.numel()));
  return MakeView(self, Step(ViewOp::Kind::kReshape, dims));
}

// Not a view for PyTorch (its input is a temporary): a new value.
at::Tensor unsafe_view(const at::Tensor& self, c10::SymIntArrayRef size) {
  Count("view");
  Ints dims = ToInts(at::infer_size_dv(c10::asIntArrayRefSlow(size), self.numel()));
  return Wrap(Reshape(Operand(self, "self"), dims));
}

at::Tensor expand(const at::Tensor& self, c10::SymIntArrayRef size, bool implicit) {
  Count("expand");
  Ints want = ToInts(size);
  Ints have = ToInts(self.sizes());
  TORCH_CHECK(want.size() >= have.size(), "axle: expand of shape ", self.sizes(), " to ",
              at::IntArrayRef(want));
  size_t offset = want.size() - have.size();
  for (size_t i = 0; i < want.size(); ++i) {
    if (want[i] == -1) {
      TORCH_CHECK(i >= offset, "axle: expand: -1 for a new dimension");
      want[i] = have[i - offset];
    }
  }
  for (size_t i = 0; i < have.size(); ++i) {
    TORCH_CHECK(have[i] == want[offset + i] || have[i] == 1, "axle: cannot expand shape ",
                self.sizes(), " to ", at::IntArrayRef(want));
  }
  return MakeView(self, Step(ViewOp::Kind::kExpand, want));
}

at::Tensor unsqueeze(const at::Tensor& self, int64_t dim) {
  Count("unsqueeze");
  int64_t d = at::maybe_wrap_dim(dim, self.dim() + 1);
  Ints dims = ToInts(self.sizes());
  dims.insert(dims.begin() + d, 1);
  return MakeView(self, Step(ViewOp::Kind::kReshape, dims));
}

at::Tensor squeeze(const at::Tensor& self) {
  Count("squeeze");
  Ints dims;
  for (int64_t s : self.sizes()) {
    if (s != 1) dims.push_back(s);
  }
  return MakeView(self, Step(ViewOp::Kind::kReshape, dims));
}

at::Tensor squeeze_dim(const at::Tensor& self, int64_t dim) {
  Count("squeeze");
  Ints dims = ToInts(self.sizes());
  if (self.dim() > 0) {
    int64_t d = at::maybe_wrap_dim(dim, self.dim());
    if (dims[d] == 1) dims.erase(dims.begin() + d);
  }
  return MakeView(self, Step(ViewOp::Kind::kReshape, dims));
}

int64_t SymOr(const c10::optional<c10::SymInt>& v, int64_t otherwise) {
  return v.has_value() ? v->expect_int() : otherwise;
}

// PyTorch's clamping of slice bounds; returns {start, end} with end >= start.
std::pair<int64_t, int64_t> SliceBounds(int64_t size, int64_t start, int64_t end) {
  if (start < 0) start += size;
  if (end < 0) end += size;
  start = std::clamp<int64_t>(start, 0, size);
  end = std::clamp<int64_t>(end, start, size);
  return {start, end};
}

// The dispatcher checks kernels against the schema's C++ types: SymInts by value.
// NOLINTBEGIN(performance-unnecessary-value-param)
at::Tensor slice(const at::Tensor& self, int64_t dim, c10::optional<c10::SymInt> start,
                 c10::optional<c10::SymInt> end, c10::SymInt step) {
  Count("slice");
  int64_t axis = at::maybe_wrap_dim(dim, self.dim());
  int64_t s = step.expect_int();
  TORCH_CHECK(s > 0, "axle: slice step must be positive, got ", s);
  auto [lo, hi] = SliceBounds(self.size(axis), SymOr(start, 0),
                              SymOr(end, std::numeric_limits<int64_t>::max()));
  ViewOp op = Step(ViewOp::Kind::kSlice, {});
  op.axis = axis;
  op.start = lo;
  op.end = hi;
  op.step = s;
  return MakeView(self, std::move(op));
}
// NOLINTEND(performance-unnecessary-value-param)

at::Tensor select(const at::Tensor& self, int64_t dim, int64_t index) {
  Count("select");
  int64_t axis = at::maybe_wrap_dim(dim, self.dim());
  int64_t size = self.size(axis);
  TORCH_CHECK(index >= -size && index < size, "axle: select index ", index,
              " is out of range for dimension ", axis, " of size ", size);
  if (index < 0) index += size;
  ViewOp op = Step(ViewOp::Kind::kSelect, {});
  op.axis = axis;
  op.start = index;
  return MakeView(self, std::move(op));
}

// The gradient of a slice: `grad` placed at [start, end) by `step` in zeros.
Value PadInto(const Value& grad, const Ints& input_sizes, int64_t axis, int64_t start,
              int64_t step) {
  Ints g = Dims(grad);
  size_t n = input_sizes.size();
  Ints low(n, 0), high(n, 0), interior(n, 0);
  low[axis] = start;
  interior[axis] = g[axis] > 0 ? step - 1 : 0;
  int64_t covered = g[axis] > 0 ? start + (g[axis] - 1) * step + 1 : start;
  high[axis] = input_sizes[axis] - covered;
  PrimitiveType t = TypeOf(grad);
  return MakeValue("pad", {grad, Constant(0, t, {})}, MakeShape(t, input_sizes),
                   {low, high, interior});
}

// The dispatcher checks kernels against the schema's C++ types: SymInts by value.
// NOLINTBEGIN(performance-unnecessary-value-param)
at::Tensor slice_backward(const at::Tensor& grad_output, c10::SymIntArrayRef input_sizes,
                          int64_t dim, c10::SymInt start, c10::SymInt end, c10::SymInt step) {
  Count("slice_backward");
  Ints sizes = ToInts(input_sizes);
  int64_t axis = at::maybe_wrap_dim(dim, static_cast<int64_t>(sizes.size()));
  auto [lo, hi] = SliceBounds(sizes[axis], start.expect_int(), end.expect_int());
  return Wrap(PadInto(Operand(grad_output, "grad_output"), sizes, axis, lo, step.expect_int()));
}
// NOLINTEND(performance-unnecessary-value-param)

at::Tensor select_backward(const at::Tensor& grad_output, c10::SymIntArrayRef input_sizes,
                           int64_t dim, int64_t index) {
  Count("select_backward");
  Ints sizes = ToInts(input_sizes);
  int64_t axis = at::maybe_wrap_dim(dim, static_cast<int64_t>(sizes.size()));
  if (index < 0) index += sizes[axis];
  Ints g = sizes;
  g[axis] = 1;
  return Wrap(PadInto(Reshape(Operand(grad_output, "grad_output"), g), sizes, axis, index, 1));
}

at::Tensor cat(const at::ITensorListRef& tensors, int64_t dim) {
  Count("cat");
  std::vector<Value> values;
  at::ScalarType type = at::ScalarType::Undefined;
  Ints out;
  int64_t axis = 0;
  for (const at::Tensor& t : tensors) {
    // PyTorch skips 1-D empty tensors in cat.
    if (t.dim() == 1 && t.numel() == 0) continue;
    type = type == at::ScalarType::Undefined ? t.scalar_type()
                                             : at::promote_types(type, t.scalar_type());
    if (out.empty()) {
      axis = at::maybe_wrap_dim(dim, t.dim());
      out = ToInts(t.sizes());
      out[axis] = 0;
    }
    TORCH_CHECK(t.dim() == static_cast<int64_t>(out.size()), "axle: cat of tensors of ", out.size(),
                " and ", t.dim(), " dimensions");
    out[axis] += t.size(axis);
    values.push_back(Operand(t, "tensors"));
  }
  TORCH_CHECK(!values.empty(), "axle: cat of no (non-empty) tensors");
  for (Value& v : values) v = Convert(v, ToPrimitiveType(type));
  if (values.size() == 1) return Wrap(values[0]);
  return Wrap(MakeValue("concatenate", values, MakeShape(ToPrimitiveType(type), out), {axis}));
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, XLA, m) {
  m.impl("permute", TORCH_FN(permute));
  m.impl("transpose.int", TORCH_FN(transpose_int));
  m.impl("t", TORCH_FN(t));
  m.impl("view", TORCH_FN(view));
  m.impl("_unsafe_view", TORCH_FN(unsafe_view));
  m.impl("expand", TORCH_FN(expand));
  m.impl("unsqueeze", TORCH_FN(unsqueeze));
  m.impl("squeeze", TORCH_FN(squeeze));
  m.impl("squeeze.dim", TORCH_FN(squeeze_dim));
  m.impl("slice.Tensor", TORCH_FN(slice));
  m.impl("select.int", TORCH_FN(select));
  m.impl("slice_backward", TORCH_FN(slice_backward));
  m.impl("select_backward", TORCH_FN(select_backward));
  m.impl("cat", TORCH_FN(cat));
  m.impl("alias", TORCH_FN(Alias));
  m.impl("detach", TORCH_FN(Alias));
}

}  // namespace axle::torch_device
