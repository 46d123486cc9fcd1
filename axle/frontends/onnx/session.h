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
// Clustering (tf2xla's MarkForCompilationPass, graph/mark_for_compilation.h):
// the graph is split into clusters of nodes with kernels for the device and
// host nodes between them (ops whose output shape depends on the data, ops
// with only a host kernel). Each cluster compiles and caches on its own
// signature; a host node runs its host kernel (graph/host_kernel.h) on the
// values read back from the clusters before it. A model without host nodes
// is one cluster. Clustering() reports the clusters and the fallbacks with
// their run counts and time.
//
// With AXLE_CACHE_DIR set, compiled code persists across processes: the
// runtime's compilation cache (runtime/compilation_cache.h) stores what
// LocalClient::Compile builds there, and a later process's compile of the
// same cluster and signature loads it instead of generating code
// (metrics().disk_cache_hits).
//
// Sessions are thread-safe: compiles are serialized, runs are not.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_FRONTENDS_ONNX_SESSION_H_
#define AXLE_FRONTENDS_ONNX_SESSION_H_

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "axle/frontends/graph/mark_for_compilation.h"
#include "axle/frontends/graph/xla_compiler.h"
#include "axle/runtime/local_client.h"

namespace axle::onnx {

struct SessionMetrics {
  int64_t compiles = 0;    // per cluster and signature
  int64_t cache_hits = 0;  // per cluster run
  int64_t runs = 0;
  absl::Duration compile_time;  // XlaCompiler plus LocalClient::Compile, all compiles
  // Compiles whose code came from AXLE_CACHE_DIR (the runtime's disk hits
  // during this session's compiles).
  int64_t disk_cache_hits = 0;
  int64_t clusters = 0;  // in the plan
  int64_t host_kernel_runs = 0;
  absl::Duration host_kernel_time;  // all host kernel runs
};

// What Session::Clustering() reports.
struct ClusteringReport {
  struct Cluster {
    std::vector<std::string> nodes;  // node names, in order
    std::vector<std::string> inputs;
    std::vector<std::string> outputs;
    std::vector<std::string> constant_cuts;  // see graph::Cluster
  };
  struct Fallback {
    std::string node;  // "node 'nz' (NonZero)"
    std::string reason;
    int64_t runs = 0;
    absl::Duration time;
  };
  std::vector<Cluster> clusters;
  std::vector<Fallback> fallbacks;  // in execution order

  // One line per cluster and fallback.
  std::string ToString() const;
};

// The newest opset of the default ONNX domain the kernels know (ONNX 1.12,
// Debian's libonnx); a model importing a newer one is Unimplemented, since
// ops changed meaning in later opsets.
inline constexpr int64_t kMaxOnnxOpset = 17;

class Session {
 public:
  struct Options {
    std::string platform = "cpu";  // "cpu", "interpreter" or "cuda" (needs axle_gpu linked)
    // Names of graph inputs whose values are compile-time constants: each
    // distinct value compiles its own executable.
    std::set<std::string> constant_inputs;
    // device_type is taken from the platform. Weights (initializers) are
    // compiled in as constants up to 2^26 elements each, so the cpu backend
    // packs them for oneDNN once, at compile time, not on every run
    // (resnet18 at 224x224: 54 -> 43 ms a run, compile 90 -> 364 ms); a
    // smaller limit passes the larger ones as parameters instead.
    graph::XlaCompiler::Options compiler = {.initializer_constant_limit = int64_t{1} << 26};
  };

  static absl::StatusOr<std::unique_ptr<Session>> Load(const std::string& path, Options options);
  static absl::StatusOr<std::unique_ptr<Session>> FromGraph(graph::Graph graph, Options options);

  // Runs the model on `inputs` (one per graph input, in order); returns one
  // literal per graph output.
  absl::StatusOr<std::vector<Literal>> Run(absl::Span<const Literal> inputs);

  // The HLO text of the computations compiled for `inputs`' signature: the
  // one cluster's, or each cluster's after a "// cluster K" line (this runs
  // the model, since later clusters' signatures depend on host results).
  absl::StatusOr<std::string> HloText(absl::Span<const Literal> inputs);

  SessionMetrics metrics() const;
  ClusteringReport Clustering() const;
  // The model. Its initializers are those host nodes or graph outputs read;
  // the clusters hold the rest.
  const graph::Graph& graph() const { return graph_; }

 private:
  struct Compiled {
    graph::XlaCompilationResult result;
    std::unique_ptr<LocalExecutable> executable;
  };
  struct ClusterState {
    graph::Cluster cluster;
    std::vector<bool> constant_input;                        // per cluster input
    std::map<std::string, std::unique_ptr<Compiled>> cache;  // by signature
  };
  struct HostStats {
    int64_t runs = 0;
    absl::Duration time;
  };

  Session(graph::Graph graph, graph::ClusteringPlan plan, Options options, LocalClient* client);
  // Runs the plan; `compiled` (if set) receives each cluster's executable.
  absl::StatusOr<std::vector<Literal>> RunPlan(absl::Span<const Literal> inputs,
                                               std::vector<const Compiled*>* compiled);
  absl::StatusOr<std::vector<Literal>> RunCluster(ClusterState& state,
                                                  const std::vector<const Literal*>& inputs,
                                                  const Compiled** used);
  // The cache entry for `inputs`, compiled if missing.
  absl::StatusOr<const Compiled*> GetOrCompile(ClusterState& state,
                                               const std::vector<const Literal*>& inputs);
  // The device copy of a weight the cluster binds as a parameter, uploaded
  // on first use and shared by the clusters.
  absl::StatusOr<const ShapedBuffer*> InitializerBuffer(const ClusterState& state,
                                                        const std::string& name);

  graph::Graph graph_;
  Options options_;
  LocalClient* client_;
  mutable std::mutex mu_;
  std::vector<ClusterState> clusters_;
  std::vector<graph::ExecutionStep> steps_;
  std::map<int64_t, HostStats> host_stats_;  // by node index
  std::map<std::string, std::unique_ptr<ScopedShapedBuffer>> initializer_buffers_;
  SessionMetrics metrics_;
  // Cluster runs so far: each run's rng seed, so that random ops draw
  // afresh on every run and a new session repeats the same draws.
  std::atomic<int64_t> cluster_runs_{0};
};

}  // namespace axle::onnx

#endif  // AXLE_FRONTENDS_ONNX_SESSION_H_
