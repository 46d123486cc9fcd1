//===- session.h - Run ONNX models: compile per signature, cache, execute ---===//
//
// The JIT half of the graph front end (tf2xla's XlaCompileOp / XlaRunOp and
// their cache). A Session holds a loaded graph; Run(inputs) looks up the
// executable for the inputs' signature (element type and dimensions of each
// input, plus the values of inputs marked constant), compiles it on a miss
// (XlaCompiler -> XlaComputation -> LocalClient::Compile) and runs it.
// A repeated signature never compiles again. Metrics count compiles, cache
// hits and compile time.
//
// Graph inputs that reach a kernel's compile-time constant input (a Reshape's
// shape fed by the caller, say) are found by the backwards constant analysis
// (graph::ConstantGraphInputs) and become part of the signature by value, as
// tf2xla's JIT does.
//
// Initializers that the compiler makes parameters (weights) are uploaded to
// the device once per session and bound on every run.
//
// Sessions are thread-safe: compiles are serialized, runs are not.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_FRONTENDS_ONNX_SESSION_H_
#define AXLE_FRONTENDS_ONNX_SESSION_H_

#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "axle/frontends/graph/xla_compiler.h"
#include "axle/runtime/local_client.h"

namespace axle::onnx {

struct SessionMetrics {
  int64_t compiles = 0;
  int64_t cache_hits = 0;
  int64_t runs = 0;
  absl::Duration compile_time;  // XlaCompiler plus LocalClient::Compile, all compiles
};

class Session {
 public:
  struct Options {
    std::string platform = "cpu";  // "cpu" or "interpreter"
    // Names of graph inputs whose values are compile-time constants: each
    // distinct value compiles its own executable.
    std::set<std::string> constant_inputs;
    // device_type is taken from the platform.
    graph::XlaCompiler::Options compiler;
  };

  static absl::StatusOr<std::unique_ptr<Session>> Load(const std::string& path, Options options);
  static absl::StatusOr<std::unique_ptr<Session>> FromGraph(graph::Graph graph, Options options);

  // Runs the model on `inputs` (one per graph input, in order); returns one
  // literal per graph output.
  absl::StatusOr<std::vector<Literal>> Run(absl::Span<const Literal> inputs);

  // The HLO text of the computation compiled for `inputs`' signature.
  absl::StatusOr<std::string> HloText(absl::Span<const Literal> inputs);

  SessionMetrics metrics() const;
  const graph::Graph& graph() const { return graph_; }

 private:
  struct Compiled {
    graph::XlaCompilationResult result;
    std::unique_ptr<LocalExecutable> executable;
  };

  Session(graph::Graph graph, Options options, LocalClient* client);
  // The cache entry for `inputs`, compiled if missing.
  absl::StatusOr<const Compiled*> GetOrCompile(absl::Span<const Literal> inputs);
  absl::StatusOr<const ShapedBuffer*> InitializerBuffer(const std::string& name);

  graph::Graph graph_;
  Options options_;
  LocalClient* client_;
  mutable std::mutex mu_;
  std::vector<bool> constant_input_;  // per graph input
  std::map<std::string, std::unique_ptr<Compiled>> cache_;
  std::map<std::string, std::unique_ptr<ScopedShapedBuffer>> initializer_buffers_;
  SessionMetrics metrics_;
};

}  // namespace axle::onnx

#endif  // AXLE_FRONTENDS_ONNX_SESSION_H_
