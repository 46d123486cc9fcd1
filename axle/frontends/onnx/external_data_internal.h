//===- external_data_internal.h - Tensors stored outside the .onnx file ---===//
//
// ONNX keeps large tensors outside the model (a protobuf cannot pass 2 GiB):
// TensorProto.data_location = EXTERNAL and external_data's key/value pairs
// "location" (a path relative to the model file's directory), "offset" and
// "length" (bytes; offset 0 and the tensor's size when absent) and
// "checksum" (not checked, as neither onnx nor onnxruntime checks it).
//
// Read the way onnxruntime reads them, with its checks: the location must
// be relative and stay inside the model's directory once `..` and symbolic
// links are resolved; the file must exist; offset + length must lie within
// it; a length must equal the tensor's byte size; an external tensor holds
// no data of its own (and is not a string tensor: onnx_loader.cc checks
// that); any other key is an error
// (onnxruntime's own "prepacked..." keys are skipped). A model read from
// bytes has no directory: its external tensors are an error unless the
// caller names one (onnxruntime's session.model_external_initializers_file_
// folder_path plays that part there).
//
// Only onnx_loader.cc includes this (it names libonnx's TensorProto).
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_FRONTENDS_ONNX_EXTERNAL_DATA_INTERNAL_H_
#define AXLE_FRONTENDS_ONNX_EXTERNAL_DATA_INTERNAL_H_

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "onnx/onnx_pb.h"

namespace axle::onnx {

// True when `t` says its data is in a file (data_location EXTERNAL).
bool HasExternalData(const ::onnx::TensorProto& t);

// The `bytes` bytes of external tensor `t`. `base_dir` is the model's
// directory (nullopt: loaded from bytes); `name` names the tensor (and its
// node) in errors.
absl::StatusOr<std::string> ReadExternalData(const ::onnx::TensorProto& t, int64_t bytes,
                                             const std::optional<std::filesystem::path>& base_dir,
                                             const std::string& name);

}  // namespace axle::onnx

#endif  // AXLE_FRONTENDS_ONNX_EXTERNAL_DATA_INTERNAL_H_
