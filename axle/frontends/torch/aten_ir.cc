//===- aten_ir.cc - IR building blocks of the xla device's ATen kernels ----===//
#include "axle/frontends/torch/aten_ir.h"

#include <ATen/ExpandUtils.h>
#include <ATen/ops/_local_scalar_dense_native.h>
#include <ATen/ops/result_type_native.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "axle/base/environment_options.h"
#include "axle/core/primitive_type.h"
#include "axle/core/shape_util.h"
#include "axle/frontends/lazy/metrics.h"

namespace axle::torch_device {

bool DebugEnabled() {
  static const bool enabled = EnvironmentOptions::Read().debug;
  return enabled;
}

void Count(const char* op) {
  // The counter per op string (the kernels pass literals, so an address
  // names one op): a direct-mapped per-thread cache by the address in front
  // of a per-thread map by the address (no string built or hashed per op;
  // two addresses of one name share the counter GetCounter gives the name).
  // Literals sit a few bytes apart, so the slot is a multiplicative hash of
  // the whole address, not its low bits.
  struct Slot {
    const char* op = nullptr;
    lazy::metrics::Counter* counter = nullptr;
  };
  constexpr int kSlotBits = 7;
  thread_local std::array<Slot, size_t{1} << kSlotBits> slots;
  Slot& slot = slots[(reinterpret_cast<uintptr_t>(op) * 0x9e3779b97f4a7c15ULL) >> (64 - kSlotBits)];
  if (slot.op != op) {
    thread_local absl::flat_hash_map<const char*, lazy::metrics::Counter*> counters;
    lazy::metrics::Counter*& counter = counters[op];
    if (counter == nullptr) counter = lazy::metrics::GetCounter(std::string("axle::") + op);
    slot = Slot{op, counter};
  }
  slot.counter->Increment();
}

void Check(const absl::Status& status) {
  TORCH_CHECK(status.ok(), "axle: ", std::string(status.message()));
}

Ints ToInts(at::IntArrayRef a) { return Ints(a.begin(), a.end()); }
Ints ToInts(c10::SymIntArrayRef a) { return ToInts(c10::asIntArrayRefSlow(a)); }

Ints Dims(const Value& v) {
  const auto& d = v.shape().dimensions();
  return Ints(d.begin(), d.end());
}
PrimitiveType TypeOf(const Value& v) { return v.shape().element_type(); }
const Shape& MakeShape(PrimitiveType type, absl::Span<const int64_t> dims) {
  return lazy::InternShape(type, dims);
}
const Shape& ShapeLike(const Value& v, PrimitiveType type) {
  return lazy::InternShape(type, v.shape().dimensions());
}

at::ScalarType ResultType(const at::Tensor& a, const at::Tensor& b) {
  return at::native::result_type(a, b);
}
at::ScalarType ResultType(const at::Tensor& a, const at::Scalar& b) {
  return at::native::result_type(a, b);
}

namespace {

template <typename T>
Literal ScalarLiteralOf(const at::Scalar& s, PrimitiveType type) {
  Literal literal(MakeShape(type, {}));
  T value = s.to<T>();  // PyTorch's conversion (and its overflow check)
  static_assert(std::is_trivially_copyable_v<T>);
  std::memcpy(literal.untyped_data(), &value, sizeof(T));
  return literal;
}

// `s` as a host literal of `type`, as at::scalar_tensor converts it (without
// making a CPU tensor).
Literal ScalarLiteral(const at::Scalar& s, PrimitiveType type) {
  switch (type) {
    case F32:
      return ScalarLiteralOf<float>(s, type);
    case F64:
      return ScalarLiteralOf<double>(s, type);
    case F16:
      return ScalarLiteralOf<c10::Half>(s, type);
    case BF16:
      return ScalarLiteralOf<c10::BFloat16>(s, type);
    case S64:
      return ScalarLiteralOf<int64_t>(s, type);
    case S32:
      return ScalarLiteralOf<int32_t>(s, type);
    case S16:
      return ScalarLiteralOf<int16_t>(s, type);
    case S8:
      return ScalarLiteralOf<int8_t>(s, type);
    case U8:
      return ScalarLiteralOf<uint8_t>(s, type);
    case PRED:
      return ScalarLiteralOf<bool>(s, type);
    default:
      return CpuTensorToLiteral(
          at::scalar_tensor(s, at::TensorOptions().dtype(ToScalarType(type))));
  }
}

}  // namespace

// A scalar the graph takes as a parameter (its value may change from step
// to step without a recompile), except the values 0 and 1, which are
// constants as in torch-xla.
Value ScalarValue(const at::Scalar& s, PrimitiveType type) {
  double d = s.isBoolean() ? static_cast<double>(s.toBool()) : s.toDouble();
  if (!s.isComplex() && (d == 0 || d == 1))
    return Value{Node::MakeConstant(d, MakeShape(type, {})), 0};
  // One transfer per distinct value: a step reuses the last step's. An
  // optimizer's step takes the same few scalars for every parameter: a
  // per-thread cache by (type, value) answers them without building a
  // literal or taking ScalarData's lock.
  struct Slot {
    PrimitiveType type = PRIMITIVE_TYPE_INVALID;
    uint64_t bits = 0;
    std::shared_ptr<lazy::DeviceData> data;
  };
  constexpr size_t kSlots = 64;
  thread_local std::array<Slot, kSlots> cache;
  uint64_t bits = 0;
  bool cacheable = s.isFloatingPoint() && primitive_util::IsFloatingPointType(type);
  if (cacheable) {
    std::memcpy(&bits, &d, sizeof(bits));  // s holds d: the literal is d converted to type
  }
  Slot& slot =
      cache[(bits ^ (bits >> 29) ^ (static_cast<uint64_t>(type) * 0x9e3779b97f4a7c15ULL)) % kSlots];
  if (cacheable && slot.data != nullptr && slot.type == type && slot.bits == bits) {
    return Value{Node::MakeDeviceData(slot.data), 0};
  }
  std::shared_ptr<lazy::DeviceData> data = lazy::ScalarData(ScalarLiteral(s, type));
  if (cacheable) slot = Slot{type, bits, data};
  return Value{Node::MakeDeviceData(std::move(data)), 0};
}

Value Constant(double value, PrimitiveType type, const Ints& dims) {
  return Value{Node::MakeConstant(value, MakeShape(type, dims)), 0};
}

Value Convert(const Value& v, PrimitiveType type) {
  if (TypeOf(v) == type) return v;
  return MakeValue("convert", {v}, ShapeLike(v, type));
}

Value Reshape(const Value& v, const Ints& dims) {
  if (absl::MakeConstSpan(v.shape().dimensions()) == absl::MakeConstSpan(dims)) return v;
  return MakeValue("reshape", {v}, MakeShape(TypeOf(v), dims));
}

// NumPy broadcasting of `v` to `out`.
Value BroadcastTo(const Value& v, const Ints& out) {
  if (absl::MakeConstSpan(v.shape().dimensions()) == absl::MakeConstSpan(out)) return v;
  Ints dims = Dims(v);
  TORCH_CHECK(dims.size() <= out.size(), "axle: cannot broadcast shape ", at::IntArrayRef(dims),
              " to ", at::IntArrayRef(out));
  size_t offset = out.size() - dims.size();
  Ints kept;
  Ints result_dims;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == out[offset + i]) {
      kept.push_back(dims[i]);
      result_dims.push_back(static_cast<int64_t>(offset + i));
    } else {
      TORCH_CHECK(dims[i] == 1, "axle: cannot broadcast shape ", at::IntArrayRef(dims), " to ",
                  at::IntArrayRef(out));
    }
  }
  return MakeValue("broadcast_in_dim", {Reshape(v, kept)}, MakeShape(TypeOf(v), out),
                   {result_dims});
}

// An operand's IR: an xla tensor's value, or a CPU 0-dim tensor (a wrapped
// Python number) as a scalar.
Value Operand(const at::Tensor& t, const char* what) {
  if (t.defined() && t.device().is_cpu() && t.dim() == 0) {
    // A dense CPU value is read in place: item() is a dispatcher call
    // (CompositeImplicit, then _local_scalar_dense's CPU kernel, which this
    // is), and every wrapped Python number comes here.
    at::Scalar value = t.layout() == at::kStrided && !t.is_quantized()
                           ? at::native::_local_scalar_dense_cpu(t)
                           : t.item();
    return ScalarValue(value, ToPrimitiveType(t.scalar_type()));
  }
  return GetImpl(t, what)->tensor()->GetIrValue();
}

at::Tensor Wrap(const Value& v) {
  return MakeTensor(LazyTensor::FromIr(v), ToScalarType(TypeOf(v)), kDevice);
}

void CheckNotView(const at::Tensor& self) {
  TORCH_CHECK(!self.is_view() || GetImpl(self, "self")->view() != nullptr,
              "axle: in-place update of a view made by an op that runs on the CPU (no lowering): "
              "its base would not change. Update a copy (.clone()) or the base tensor instead");
}

at::Tensor& Assign(at::Tensor& self, const Value& v) {
  AxleTensorImpl* impl = GetImpl(self, "self");
  CheckNotView(self);
  Value converted = Convert(v, ToPrimitiveType(self.scalar_type()));
  TORCH_CHECK(absl::MakeConstSpan(converted.shape().dimensions()) ==
                  absl::MakeConstSpan(self.sizes().data(), self.sizes().size()),
              "axle: an in-place result of shape ", at::IntArrayRef(Dims(converted)),
              " for a tensor of shape ", self.sizes());
  impl->AssignToView(converted);
  return self;
}

Value Elementwise(const char* op, const Value& a, const Value& b) {
  return MakeValue(op, {a, b}, ShapeLike(a, TypeOf(a)));
}

Value Unary(const char* op, const Value& a) { return MakeValue(op, {a}, ShapeLike(a, TypeOf(a))); }

namespace {

// `a op b` computed in `compute`, giving `result` elements.
Value BinaryOf(const char* op, const Value& a, const Value& b, PrimitiveType compute,
               PrimitiveType result) {
  Value ca = Convert(a, compute);
  Value cb = Convert(b, compute);
  const auto& da = ca.shape().dimensions();
  const auto& db = cb.shape().dimensions();
  if (da == db) return MakeValue(op, {ca, cb}, ShapeLike(ca, result));
  // A rank-0 operand (a wrapped Python number, an optimizer's
  // hyperparameter) stays rank 0: the lowering's binary op broadcasts it
  // (XLA's implicit scalar broadcast, the same HLO broadcast), so recording
  // `x * 0.9` takes one node, not a broadcast_in_dim and its shape
  // arithmetic as well.
  if (da.empty()) return MakeValue(op, {ca, cb}, ShapeLike(cb, result));
  if (db.empty()) return MakeValue(op, {ca, cb}, ShapeLike(ca, result));
  Ints out = ToInts(at::infer_size(da, db));
  return MakeValue(op, {BroadcastTo(ca, out), BroadcastTo(cb, out)}, MakeShape(result, out));
}

}  // namespace

// `a op b` with PyTorch's type promotion (to `compute`) and broadcasting.
Value BinaryValues(const char* op, const Value& a, const Value& b, PrimitiveType compute) {
  return BinaryOf(op, a, b, compute, compute);
}

Value CompareValues(const char* op, const Value& a, const Value& b, PrimitiveType compute) {
  return BinaryOf(op, a, b, compute, PRED);
}

Value Binary(const char* op, const at::Tensor& a, const at::Tensor& b, at::ScalarType compute) {
  return BinaryValues(op, Operand(a, "self"), Operand(b, "other"), ToPrimitiveType(compute));
}

Value IrOf(const at::Tensor& t) { return GetImpl(t, "the result")->tensor()->GetIrValue(); }

Value SumValue(const Value& v, const Ints& dims, bool keepdim) {
  Ints in = Dims(v);
  Ints out;
  Ints keep_shape;
  for (int64_t i = 0; i < static_cast<int64_t>(in.size()); ++i) {
    bool reduced = std::find(dims.begin(), dims.end(), i) != dims.end();
    if (!reduced) out.push_back(in[i]);
    keep_shape.push_back(reduced ? 1 : in[i]);
  }
  Value r = MakeValue("reduce", {v}, MakeShape(TypeOf(v), out), {dims, std::string("sum")});
  return keepdim ? Reshape(r, keep_shape) : r;
}

Value ReduceKind(const Value& v, int64_t dim, const char* kind, bool keepdim) {
  Ints in = Dims(v);
  Ints out;
  Ints keep = in;
  for (int64_t i = 0; i < static_cast<int64_t>(in.size()); ++i) {
    if (i != dim) out.push_back(in[i]);
  }
  keep[dim] = 1;
  Value r = MakeValue("reduce", {v}, MakeShape(TypeOf(v), out), {Ints{dim}, std::string(kind)});
  return keepdim ? Reshape(r, keep) : r;
}

Value DotValue(const Value& a, const Value& b, const Ints& lc, const Ints& rc, const Ints& lb,
               const Ints& rb, const Ints& out) {
  return MakeValue("dot_general", {a, b}, MakeShape(TypeOf(a), out), {lc, rc, lb, rb});
}

Value PermuteValue(const Value& v, const Ints& perm) {
  Ints in = Dims(v);
  Ints out;
  out.reserve(perm.size());
  for (int64_t p : perm) out.push_back(in[p]);
  bool identity = true;
  for (size_t i = 0; i < perm.size(); ++i) identity &= perm[i] == static_cast<int64_t>(i);
  if (identity) return v;
  return MakeValue("transpose", {v}, MakeShape(TypeOf(v), out), {perm});
}

}  // namespace axle::torch_device
