//===- mark_for_compilation.h - Clusters of compilable nodes, host between ---===//
//
// tf2xla's MarkForCompilationPass and its encapsulation, for the graph front
// end's JIT. The model's nodes are split into
//
//   clusters    nodes with a kernel for the device, each cluster a Graph of
//               its own that XlaCompiler compiles (and the session caches) on
//               its own signature: its inputs are the values it reads from
//               outside (graph inputs, host outputs, other clusters'
//               outputs), its outputs the values read after it;
//   host nodes  nodes with no kernel for the device but a host kernel
//               (host_kernel.h): every op whose output shape depends on the
//               data (NonZero, Unique, ...), and ops missing a device kernel.
//
// and a schedule of steps (a cluster, or a host node) that respects the
// dataflow. Placement is as early as possible, by level: clusters at even
// levels 0, 2, ..., host nodes at odd levels (-1 before the first cluster).
// A device node sits at the highest level its inputs ask for (a host
// output read at level h asks for h + 1); a host node at the level after the
// clusters it reads. Everything at one even level is one cluster, so a
// model without host nodes is exactly one cluster.
//
// Output shapes must be static given a cluster's input signature. A kernel's
// compile-time constant input (a Reshape's shape, a Resize's sizes) is fine
// when its value is static: computed from initializers, integer graph inputs
// (fed shapes, keyed by value as before) and shapes (metadata-only ops such
// as Shape), or read from outside the cluster (the session keys that cluster
// on the value). When it is computed from data inside a cluster (a Resize
// whose sizes come from a ReduceMax of a float input), the node moves to a
// later cluster and the value crosses the boundary: the shape of a dynamic
// Resize is computed by the first cluster and the Resize compiles per value.
//
// A node with neither a device nor a host kernel stays in a cluster, where
// compiling it reports the missing kernel (naming op, opset and node).
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_FRONTENDS_GRAPH_MARK_FOR_COMPILATION_H_
#define AXLE_FRONTENDS_GRAPH_MARK_FOR_COMPILATION_H_

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "axle/frontends/graph/graph.h"

namespace axle::graph {

struct Cluster {
  // The cluster's nodes as a graph: inputs (declared info copied for graph
  // inputs, untyped for intermediate values), the initializers it reads,
  // its nodes in topological order, and outputs.
  Graph graph;
  std::vector<int64_t> nodes;  // indices into the model's nodes
  // Why nodes of this cluster could not join an earlier one because a
  // compile-time constant input is computed from data ("node 'r' (Resize)
  // needs input 1 ('sizes') at compile time; it is computed from data").
  std::vector<std::string> constant_cuts;
};

struct ExecutionStep {
  enum Kind { kCluster, kHost } kind;
  int64_t index;  // kCluster: into clusters; kHost: into the model's nodes
};

struct ClusteringPlan {
  std::vector<Cluster> clusters;
  std::vector<int64_t> host_nodes;   // indices into the model's nodes
  std::vector<ExecutionStep> steps;  // in execution order
};

// Partitions `graph` for `device`. `constant_inputs` names graph inputs
// that are compile-time constants besides the integer ones. Errors: those
// of TopologicalOrder, and a node of a domain the model imports no opset for.
absl::StatusOr<ClusteringPlan> MarkForCompilation(const Graph& graph, const std::string& device,
                                                  const std::set<std::string>& constant_inputs);

}  // namespace axle::graph

#endif  // AXLE_FRONTENDS_GRAPH_MARK_FOR_COMPILATION_H_
