//===- onnx_loader.h - ONNX files to the front end's Graph ------------------===//
//
// Reads ONNX's protobuf formats through Debian's libonnx (onnx::ModelProto,
// onnx::TensorProto) and converts them: a model to a graph::Graph, a tensor
// to a Literal. Every malformed input (not protobuf, truncated, a tensor
// whose data does not fill its shape, an unsupported element type, a
// non-tensor graph input, external data that is missing, out of bounds or
// outside the model's directory) is an error that names the file and the
// part at fault; nothing here crashes on bad bytes.
//
// Tensors stored outside the file (external data: initializers, Constant
// nodes' and other TENSOR attributes, subgraphs' initializers, .pb tensors;
// external_data_internal.h) are read from the directory of the file loaded. Bytes
// have no directory: ParseModel without one fails on the first external
// tensor (FailedPrecondition), as onnxruntime does, unless it is given.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_FRONTENDS_ONNX_ONNX_LOADER_H_
#define AXLE_FRONTENDS_ONNX_ONNX_LOADER_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "axle/core/literal.h"
#include "axle/frontends/graph/graph.h"

namespace axle::onnx {

// A model file (or its bytes) as a graph. `what` names the source in errors.
absl::StatusOr<graph::Graph> LoadModel(const std::string& path);
absl::StatusOr<graph::Graph> ParseModel(absl::string_view bytes, const std::string& what);
// The same, reading external data relative to `external_data_dir`.
absl::StatusOr<graph::Graph> ParseModel(absl::string_view bytes, const std::string& what,
                                        const std::string& external_data_dir);

// A serialized onnx::TensorProto (the node tests' input_K.pb / output_K.pb).
absl::StatusOr<Literal> LoadTensor(const std::string& path);
absl::StatusOr<Literal> ParseTensor(absl::string_view bytes, const std::string& what);

// A value of `info`'s kind: a TensorProto, or a SequenceProto as a tuple of
// its tensors, or an OptionalProto as a tuple of none or one value
// (graph::ValueKind).
absl::StatusOr<Literal> LoadValue(const std::string& path, const graph::ValueInfo& info);
absl::StatusOr<Literal> ParseValue(absl::string_view bytes, const graph::ValueInfo& info,
                                   const std::string& what);

// ONNX's TensorProto::DataType number to an element type; InvalidArgument
// for strings and unknown numbers.
absl::StatusOr<PrimitiveType> ElementTypeFromOnnx(int data_type);
int OnnxFromElementType(PrimitiveType type);  // 0 (UNDEFINED) when none

}  // namespace axle::onnx

#endif  // AXLE_FRONTENDS_ONNX_ONNX_LOADER_H_
