//===- lowering.h - Lazy-tensor IR to an XlaComputation ---------------------===//
//
// Each op kind has a lowering: a function from its node and its operands'
// XlaOps to its outputs' XlaOps, built through XlaBuilder. LowerGraph lowers
// the graph that computes a list of roots into one computation whose
// parameters are the graph's device-data leaves (in the order given) and
// whose result is the tuple of the roots.
//
// The op kinds (attributes in order):
//   constant {value}                      every element `value`
//   add sub mul div max min pow rem atan2 and or xor      same shapes
//   eq ne lt le gt ge                     same shapes, PRED result
//   neg exp expm1 log log1p sqrt rsqrt tanh logistic abs sign floor ceil
//   round erf sin cos not                 elementwise
//   select                                pred, on_true, on_false
//   convert                               to the node's element type
//   reshape                               to the node's dimensions
//   transpose {permutation}
//   broadcast_in_dim {operand dims in the result}
//   reduce {dimensions, "sum"|"prod"|"max"|"min"|"and"|"or"}
//   dot_general {lhs contracting, rhs contracting, lhs batch, rhs batch}
//   slice {starts, limits, strides}
//   concatenate {dimension}
//   iota {dimension}
//   pad {low, high, interior}             operand, scalar padding value
//   rev {dimensions}
//   convolution {strides, padding low, padding high, lhs dilation, rhs
//     dilation, dimension numbers (flattened: lowering.cc), feature groups,
//     batch groups (optional, 1)}
//   reduce_window {window, strides, base dilations, window dilations,
//     padding low, padding high, "sum"|"max"}
//   reduce_window_argmax {window, strides, window dilations, padding low,
//     padding high}                       value, index -> (max, its index)
//   select_and_scatter {window, strides, padding low, padding high}
//                                         operand, source (max pool's grad)
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_FRONTENDS_LAZY_LOWERING_H_
#define AXLE_FRONTENDS_LAZY_LOWERING_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "axle/builder/xla_builder.h"
#include "axle/frontends/lazy/ir.h"

namespace axle::lazy {

using LowerFn = absl::StatusOr<std::vector<XlaOp>> (*)(XlaBuilder* builder, const Node& node,
                                                       absl::Span<const XlaOp> operands);

// Adds (or replaces) the lowering of `op`.
void RegisterLowering(const std::string& op, LowerFn fn);
bool HasLowering(const std::string& op);

// What makes a device-data leaf one parameter of the graph: its DeviceData
// (leaves of one value share a parameter), or the leaf itself for a shared
// DeviceData (a cached scalar: DeviceData::shared()).
inline const void* ParameterKey(const Node& leaf) {
  return leaf.data()->shared() ? static_cast<const void*>(&leaf)
                               : static_cast<const void*>(leaf.data().get());
}

// The graph's nodes, operands before users, each once; its device-data
// leaves' data, one per parameter (ParameterKey), in first-use order; and
// the hash of which parameter each leaf in `nodes` reads (leaves sharing a
// DeviceData share a parameter, which changes the computation).
struct PostOrder {
  std::vector<const Node*> nodes;
  std::vector<std::shared_ptr<DeviceData>> parameters;
  uint64_t leaf_parameters_hash = 0;
};
PostOrder ComputePostOrder(absl::Span<const Value> roots);
// The same into `order` (emptied first), reusing its arrays' and
// `scratch`'s memory: the graph executor walks a step's graph each step.
// Nodes and data are marked as visited in place (Node::FirstVisit,
// DeviceData::ParameterIn), so walks are serialized (a lock).
struct PostOrderScratch {
  std::vector<std::pair<const Node*, size_t>> stack;
};
void ComputePostOrder(absl::Span<const Value> roots, PostOrder* order, PostOrderScratch* scratch);

// The computation of `roots` (a tuple of them). Unimplemented naming the op
// when one has no lowering; InvalidArgument naming the node when building
// it fails.
// `aliases`: (root, parameter) pairs whose result may reuse the parameter's
// buffer (input_output_alias), for donated parameters.
absl::StatusOr<XlaComputation> LowerGraph(
    absl::Span<const Value> roots, const PostOrder& order, const std::string& name = "lazy_graph",
    absl::Span<const std::pair<int64_t, int64_t>> aliases = {});

}  // namespace axle::lazy

#endif  // AXLE_FRONTENDS_LAZY_LOWERING_H_
