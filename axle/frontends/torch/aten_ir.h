//===- aten_ir.h - IR building blocks of the xla device's ATen kernels -----===//
//
// What every family of lowered ATen kernels (aten_pointwise.cc,
// aten_reductions.cc, aten_shapes.cc, aten_nn.cc, aten_conv.cc,
// aten_creation.cc) shares: reading a tensor's IR value, recording IR with
// PyTorch's broadcasting and type promotion, wrapping a value as a new xla
// tensor, and assigning one to a tensor updated in place. Each kernel counts
// itself as axle::<op>.
//
// Internal to axle/frontends/torch (it includes PyTorch's headers).
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_FRONTENDS_TORCH_ATEN_IR_H_
#define AXLE_FRONTENDS_TORCH_ATEN_IR_H_

#include <ATen/ATen.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "axle/frontends/lazy/ir.h"
#include "axle/frontends/lazy/lazy_tensor.h"
#include "axle/frontends/torch/tensor_impl.h"

namespace axle::torch_device {

using lazy::LazyTensor;
using lazy::MakeValue;
using lazy::Node;
using lazy::Value;
using Ints = std::vector<int64_t>;

inline const c10::Device kDevice(at::DeviceType::XLA, 0);

// AXLE_DEBUG set (and not "0").
bool DebugEnabled();
// Counts a lowered kernel: axle::<op>.
void Count(const char* op);
// A c10::Error with the status's message when it is not ok.
void Check(const absl::Status& status);

Ints ToInts(at::IntArrayRef a);
Ints ToInts(c10::SymIntArrayRef a);
Ints Dims(const Value& v);
PrimitiveType TypeOf(const Value& v);
// The interned array shape (lazy::InternShape): no copy per node.
const Shape& MakeShape(PrimitiveType type, absl::Span<const int64_t> dims);
// The shape of `v` with element type `type`.
const Shape& ShapeLike(const Value& v, PrimitiveType type);
inline bool Defined(const c10::optional<at::Tensor>& t) { return t.has_value() && t->defined(); }

// PyTorch's type promotion of two operands (at::result_type) without a
// dispatcher call: its kernel is the same composite for every backend.
at::ScalarType ResultType(const at::Tensor& a, const at::Tensor& b);
at::ScalarType ResultType(const at::Tensor& a, const at::Scalar& b);

// A scalar the graph takes as a parameter (its value may change from step
// to step without a recompile), except the values 0 and 1, which are
// constants as in torch-xla.
Value ScalarValue(const at::Scalar& s, PrimitiveType type);
// A constant of `dims`, every element `value` (part of the graph's hash).
Value Constant(double value, PrimitiveType type, const Ints& dims);
Value Convert(const Value& v, PrimitiveType type);
Value Reshape(const Value& v, const Ints& dims);
// NumPy broadcasting of `v` to `out`.
Value BroadcastTo(const Value& v, const Ints& out);
Value PermuteValue(const Value& v, const Ints& perm);

// An operand's IR: an xla tensor's value, or a CPU 0-dim tensor (a wrapped
// Python number) as a scalar. A c10::Error naming `what` for a tensor on
// another device.
Value Operand(const at::Tensor& t, const char* what);
// A new xla tensor holding `v`.
at::Tensor Wrap(const Value& v);
// An in-place op's result: `self` takes the value `v` (in self's dtype);
// when `self` is a view, its base too.
at::Tensor& Assign(at::Tensor& self, const Value& v);
// Refuses an in-place update of a view the device does not track (made by
// the CPU fallback).
void CheckNotView(const at::Tensor& self);
// The IR of an xla tensor just made by a kernel.
Value IrOf(const at::Tensor& t);

Value Elementwise(const char* op, const Value& a, const Value& b);
Value Unary(const char* op, const Value& a);
// `a op b` with PyTorch's type promotion (to `compute`) and broadcasting.
Value BinaryValues(const char* op, const Value& a, const Value& b, PrimitiveType compute);
// A comparison ("eq", "lt", ...) of `a` and `b` promoted to `compute`: a
// PRED result.
Value CompareValues(const char* op, const Value& a, const Value& b, PrimitiveType compute);
Value Binary(const char* op, const at::Tensor& a, const at::Tensor& b, at::ScalarType compute);

// Sum over `dims` (sorted, distinct); `keepdim` keeps them as 1s.
Value SumValue(const Value& v, const Ints& dims, bool keepdim);
// A reduction ("sum", "max", ...) over one dimension.
Value ReduceKind(const Value& v, int64_t dim, const char* kind, bool keepdim);
Value DotValue(const Value& a, const Value& b, const Ints& lc, const Ints& rc, const Ints& lb,
               const Ints& rb, const Ints& out);

}  // namespace axle::torch_device

#endif  // AXLE_FRONTENDS_TORCH_ATEN_IR_H_
