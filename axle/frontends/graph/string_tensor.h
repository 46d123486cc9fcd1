//===- string_tensor.h - String tensors as literals -------------------------===//
//
// A string tensor (ValueKind::kStringTensor: ONNX's tensor(string)) has no
// device type; it lives on the host between clusters, and host kernels read
// and write it. Its literal is a tuple (u8[total bytes], s64[dims...]): the
// strings' bytes back to back, and for each element, in row-major order,
// the offset where its string ends, so the second element's shape is the
// tensor's shape.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_FRONTENDS_GRAPH_STRING_TENSOR_H_
#define AXLE_FRONTENDS_GRAPH_STRING_TENSOR_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "axle/core/literal.h"

namespace axle::graph {

// A string tensor of `dims` holding `strings` (row-major; as many as dims
// has elements).
Literal MakeStringTensor(const std::vector<std::string>& strings, const std::vector<int64_t>& dims);

// Whether `shape` is a string tensor's: (u8[n], s64[...]).
bool IsStringTensorShape(const Shape& shape);

// The tensor's dimensions.
std::vector<int64_t> StringTensorDims(const Literal& tensor);

// The tensor's strings, row-major; an error (naming `what`) when the
// literal is not a well-formed string tensor.
absl::StatusOr<std::vector<std::string>> ReadStringTensor(const Literal& tensor,
                                                          const std::string& what);

}  // namespace axle::graph

#endif  // AXLE_FRONTENDS_GRAPH_STRING_TENSOR_H_
