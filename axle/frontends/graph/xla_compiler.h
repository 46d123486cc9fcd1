//===- xla_compiler.h - A graph and a signature to one XlaComputation -------===//
//
// tf2xla's XlaCompiler: symbolic execution of a graph. For one argument
// signature (a static shape per graph input, and which inputs are
// compile-time constants) it walks the nodes in topological order, runs each
// node's kernel (XlaOpKernel::Compile) on one XlaBuilder and returns the
// built computation with its input and output mapping.
//
// Parameters: the non-constant graph inputs in order, then the initializers
// that become parameters. Result: always a tuple, one element per graph
// output.
//
// Initializer policy: an initializer of at most
// Options::initializer_constant_limit elements becomes a constant in the
// computation (shapes, axes, scales, small biases: foldable and free to
// pass); a larger one (weights) becomes a parameter, so the executable does
// not embed the weights and the caller binds them once (the Session uploads
// each one to the device a single time). Either way its value is known to
// ConstantInput, since initializers are fixed when the model is loaded.
//
// Dynamic dimensions: a graph input's declared dimensions may be symbols
// (ONNX's dim_param) or unknown. The signature gives every dimension; a fixed
// declared dimension must match it, and each symbol must take one size across
// all inputs. The computation is fully static.
//
// Constant folding: a node whose inputs are all known constants (and no
// larger than Options::constant_fold_limit elements each) is compiled on a
// scratch builder and evaluated by the reference interpreter; its outputs
// become constants. This is how Shape -> Gather -> Concat -> Reshape chains
// become static shapes.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_FRONTENDS_GRAPH_XLA_COMPILER_H_
#define AXLE_FRONTENDS_GRAPH_XLA_COMPILER_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "axle/builder/xla_computation.h"
#include "axle/frontends/graph/graph.h"
#include "axle/frontends/graph/xla_op_registry.h"

namespace axle::graph {

// One graph input of a signature.
struct XlaArgument {
  Shape shape;
  // When set, the input is a compile-time constant with this value (its
  // shape is `shape`) and no parameter is made for it.
  std::optional<Literal> constant;
};

struct XlaCompilationResult {
  struct Parameter {
    enum Kind { kInput, kInitializer } kind;
    int64_t input_index = -1;  // kInput: index into the graph's inputs
    std::string initializer;   // kInitializer: its name
    Shape shape;
  };
  XlaComputation computation;
  // parameters[k] describes parameter k of the computation.
  std::vector<Parameter> parameters;
  // The shape of each graph output (the result tuple's elements).
  std::vector<Shape> output_shapes;
  // How many nodes were folded to constants at compile time.
  int64_t folded_nodes = 0;
  // The largest value a node computes at run time (not folded, outside
  // subgraphs): what a run that runs out of memory most likely failed to
  // hold, so that the error can name the node (Session::RunCluster).
  struct LargestValue {
    std::string node;  // Node::Describe(); empty when no node computes an array
    Shape shape;
    int64_t bytes = 0;
  } largest_value;
};

class XlaCompiler {
 public:
  struct Options {
    std::string device_type = DEVICE_CPU;
    int64_t initializer_constant_limit = 1024;
    int64_t constant_fold_limit = 1 << 16;
  };

  explicit XlaCompiler(Options options) : options_(std::move(options)) {}

  absl::StatusOr<XlaCompilationResult> Compile(const Graph& graph,
                                               absl::Span<const XlaArgument> args) const;

  // Compiles a subgraph (a branch of If, the body of Loop or Scan) onto
  // `builder`, tf2xla's way for the functions of XlaIfOp/XlaWhileOp: the
  // caller makes a sub-builder, binds every input and capture of `graph` in
  // `values` (by name; an op of `builder`, or a constant), and builds the
  // computation from the returned expressions of graph.outputs, in order.
  // The subgraph's initializers become constants.
  absl::StatusOr<std::vector<XlaExpression>> CompileSubgraph(
      XlaBuilder* builder, const Graph& graph, std::map<std::string, XlaExpression> values) const;

  // Checks `args` against the graph's declared inputs (count, element type,
  // rank, fixed and symbolic dimensions).
  static absl::Status CheckSignature(const Graph& graph, absl::Span<const XlaArgument> args);

 private:
  // Runs the kernels of graph.nodes in `order` on `builder`; `values` holds
  // every value read, and receives the nodes' outputs; `largest` (if set)
  // the largest array a node computes.
  absl::Status RunNodes(XlaBuilder* builder, const Graph& graph, const std::vector<int64_t>& order,
                        std::map<std::string, XlaExpression>& values, int64_t* folded_nodes,
                        XlaCompilationResult::LargestValue* largest) const;

  Options options_;
};

}  // namespace axle::graph

#endif  // AXLE_FRONTENDS_GRAPH_XLA_COMPILER_H_
