//===- kernel_util.h - Helpers shared by the ONNX op kernels ----------------===//
//
// Numpy-style (multidirectional) broadcasting, axis normalization, the
// scalar reducer computations and typed scalar constants the kernels use.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_FRONTENDS_ONNX_KERNELS_KERNEL_UTIL_H_
#define AXLE_FRONTENDS_ONNX_KERNELS_KERNEL_UTIL_H_

#include <vector>

#include "absl/status/statusor.h"
#include "axle/builder/xla_builder.h"
#include "axle/frontends/graph/xla_op_kernel.h"

namespace axle::onnx {

using graph::XlaOpKernel;
using graph::XlaOpKernelContext;

// The broadcast of the dimensions of inputs `indices`, or an error naming
// the node and the shapes.
absl::StatusOr<std::vector<int64_t>> BroadcastShape(const XlaOpKernelContext& ctx,
                                                    const std::vector<int>& indices);
// `op` (of dimensions `dims`) broadcast to `out` (numpy rules: aligned right).
XlaOp BroadcastTo(XlaOp op, const std::vector<int64_t>& dims, const std::vector<int64_t>& out);
// Inputs `indices` broadcast to their common shape.
absl::StatusOr<std::vector<XlaOp>> BroadcastInputs(XlaOpKernelContext* ctx,
                                                   const std::vector<int>& indices);

// `axis` in [-rank, rank) made non-negative, or an error naming it.
absl::StatusOr<int64_t> NormalizeAxis(const XlaOpKernelContext& ctx, int64_t axis, int64_t rank);
// The attribute 'axis' (`def` when absent) normalized for `rank`.
absl::StatusOr<int64_t> AxisAttr(const XlaOpKernelContext& ctx, int64_t def, int64_t rank);

enum class Reducer { kAdd, kMul, kMax, kMin };
// The scalar computation (x, y) -> x op y of `type`.
XlaComputation ReducerComputation(Reducer reducer, PrimitiveType type);
// The reducer's identity: 0, 1, lowest, highest.
XlaOp ReducerInit(XlaBuilder* b, Reducer reducer, PrimitiveType type);

// A scalar constant of `type` with value `value`.
XlaOp ScalarLike(XlaBuilder* b, PrimitiveType type, double value);

// Window attributes of Conv and the pools for `spatial` spatial dimensions:
// kernel_shape (from the weights when `kernel` is given), strides,
// dilations and pads, with auto_pad (SAME_UPPER, SAME_LOWER, VALID) resolved
// against `input` spatial sizes.
struct WindowAttrs {
  std::vector<int64_t> kernel, strides, dilations;
  std::vector<std::pair<int64_t, int64_t>> pads;
};
absl::StatusOr<WindowAttrs> GetWindowAttrs(const XlaOpKernelContext& ctx,
                                           const std::vector<int64_t>& input,
                                           const std::vector<int64_t>* kernel);

// For Conv and the pools: the pads are not negative and each dilated window
// fits its padded spatial dimension at least once (a kernel_shape of 2^40
// was compiled, and hung).
absl::Status CheckWindowFitsInput(const XlaOpKernelContext& ctx, const std::vector<int64_t>& input,
                                  const WindowAttrs& w);

// Whether `type` is a real floating-point type.
bool IsFloat(PrimitiveType type);

}  // namespace axle::onnx

#endif  // AXLE_FRONTENDS_ONNX_KERNELS_KERNEL_UTIL_H_
