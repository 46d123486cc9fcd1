//===- schema_check.h - Nodes against ONNX's operator schemas ---------------===//
//
// Checks every node of a graph (and of its subgraphs) against the schema
// ONNX declares for its op at the graph's opset, through Debian's libonnx
// (onnx::OpSchemaRegistry), as onnxruntime does when it loads a model:
//   - the number of inputs and outputs is within the schema's range, and no
//     required (single, non-optional) input or output is left empty;
//   - every required attribute is present, and every attribute the schema
//     declares has the declared type.
// Errors are InvalidArgument naming the node, the op and its opset version.
// Ops that the registry does not know (other domains, Axle's own), and
// opsets newer than the registry's, pass: the kernel registry reports them. The kernels may then
// assume that their required inputs exist.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_FRONTENDS_ONNX_SCHEMA_CHECK_H_
#define AXLE_FRONTENDS_ONNX_SCHEMA_CHECK_H_

#include "absl/status/status.h"
#include "axle/frontends/graph/graph.h"

namespace axle::onnx {

absl::Status CheckAgainstSchemas(const graph::Graph& graph);

}  // namespace axle::onnx

#endif  // AXLE_FRONTENDS_ONNX_SCHEMA_CHECK_H_
