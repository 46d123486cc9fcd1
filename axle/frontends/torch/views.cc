//===- views.cc - Views of xla tensors: reading and writing through them ---===//
//
// A view's value is its base's, taken through the view's steps (reshape,
// permute, slice, select, expand). Writing a view (an in-place op on it)
// writes its base: the new value goes back through the steps in reverse,
// each inverse placing its part into the older value (slices by a pad and a
// select), so the base and every other view of it see the update.
//
//===----------------------------------------------------------------------===//
#include <ATen/ATen.h>

#include <vector>

#include "axle/core/shape_util.h"
#include "axle/frontends/torch/aten_ir.h"

namespace axle::torch_device {
namespace {

Value SliceOf(const Value& v, int64_t axis, int64_t start, int64_t end, int64_t step) {
  Ints d = Dims(v);
  Ints starts(d.size(), 0), limits = d, strides(d.size(), 1);
  starts[axis] = start;
  limits[axis] = end;
  strides[axis] = step;
  Ints out = d;
  out[axis] = end > start ? (end - start + step - 1) / step : 0;
  return MakeValue("slice", {v}, MakeShape(TypeOf(v), out), {starts, limits, strides});
}

Value Apply(const Value& v, const ViewOp& op) {
  switch (op.kind) {
    case ViewOp::Kind::kReshape:
      return Reshape(v, op.dims);
    case ViewOp::Kind::kPermute:
      return PermuteValue(v, op.dims);
    case ViewOp::Kind::kSlice:
      return SliceOf(v, op.axis, op.start, op.end, op.step);
    case ViewOp::Kind::kSelect: {
      Ints out = Dims(v);
      out.erase(out.begin() + op.axis);
      return Reshape(SliceOf(v, op.axis, op.start, op.start + 1, 1), out);
    }
    case ViewOp::Kind::kExpand:
      return BroadcastTo(v, op.dims);
  }
  TORCH_CHECK(false, "axle: unknown view step");
}

// `part` placed where the slice of `old` along `axis` ([start, ...) by
// `step`) was.
Value PlaceSlice(const Value& old, const Value& part, int64_t axis, int64_t start, int64_t step) {
  Ints in = Dims(old), p = Dims(part);
  if (p[axis] == 0) return old;
  size_t n = in.size();
  Ints low(n, 0), high(n, 0), interior(n, 0);
  low[axis] = start;
  interior[axis] = step - 1;
  high[axis] = in[axis] - (start + (p[axis] - 1) * step + 1);
  PrimitiveType t = TypeOf(old);
  Value padded =
      MakeValue("pad", {part, Constant(0, t, {})}, MakeShape(t, in), {low, high, interior});
  Value mask = MakeValue("pad", {Constant(1, PRED, p), Constant(0, PRED, {})}, MakeShape(PRED, in),
                         {low, high, interior});
  return MakeValue("select", {mask, padded, old}, MakeShape(t, in));
}

// The value before `op` once the value after it becomes `update`.
Value Inverse(const Value& before, const ViewOp& op, const Value& update) {
  switch (op.kind) {
    case ViewOp::Kind::kReshape:
      return Reshape(update, Dims(before));
    case ViewOp::Kind::kPermute: {
      Ints inverse(op.dims.size());
      for (size_t i = 0; i < op.dims.size(); ++i) inverse[op.dims[i]] = static_cast<int64_t>(i);
      return PermuteValue(update, inverse);
    }
    case ViewOp::Kind::kSlice:
      return PlaceSlice(before, update, op.axis, op.start, op.step);
    case ViewOp::Kind::kSelect: {
      Ints kept = Dims(before);
      kept[op.axis] = 1;
      return PlaceSlice(before, Reshape(update, kept), op.axis, op.start, 1);
    }
    case ViewOp::Kind::kExpand:
      if (Dims(before) == op.dims) return update;
      TORCH_CHECK(false, "axle: in-place update of an expanded view (of shape ",
                  at::IntArrayRef(Dims(before)), " expanded to ", at::IntArrayRef(op.dims),
                  "): several of its elements are one element of the base");
  }
  TORCH_CHECK(false, "axle: unknown view step");
}

}  // namespace

Value ApplyView(const Value& base, absl::Span<const ViewOp> ops) {
  Value v = base;
  for (const ViewOp& op : ops) v = Apply(v, op);
  return v;
}

Value UpdateBase(const Value& base, absl::Span<const ViewOp> ops, const Value& update) {
  std::vector<Value> before;  // the value before each step
  before.reserve(ops.size());
  Value v = base;
  for (const ViewOp& op : ops) {
    before.push_back(v);
    v = Apply(v, op);
  }
  Value result = Convert(update, TypeOf(base));
  for (size_t i = ops.size(); i-- > 0;) result = Inverse(before[i], ops[i], result);
  return result;
}

}  // namespace axle::torch_device
