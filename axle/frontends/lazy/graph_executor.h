//===- graph_executor.h - Compile, cache and run lazy-tensor graphs --------===//
//
// torch-xla's graph executor. Execute(roots) computes the values `roots`:
// it walks their graph (lowering.h's post order), hashes it structurally
// (the roots' node hashes and the pattern of parameter uses: which leaves
// share one DeviceData), looks the hash up in an LRU cache of compiled
// graphs, lowers and compiles on a miss (LocalClient::Compile, which also
// uses the on-disk cache when AXLE_CACHE_DIR is set), runs the executable
// with the leaves' buffers as arguments and returns one DeviceData per
// root. The run is LocalExecutable::RunArrays: device memory in and out,
// with no ShapedBuffer, ExecutionInput or Shape copy per argument or root.
//
// Counters: UncachedCompile, CachedCompile, PersistentCacheHit (a compile
// whose code came from AXLE_CACHE_DIR: no code generated), GraphOutputs (the
// values the executions computed: distinct roots that are no leaves);
// timers: CompileTime,
// ExecuteTime. AXLE_DEBUG=1 prints each compile with its reason (a new
// graph, or which parameter's shape differs from the previous graph's) on
// stderr. When lowering or compiling fails and AXLE_DUMP_TO names a folder,
// the graph is written there (its IR as axle_lazy_graph_<hash>.ir when it
// did not lower, its HLO as .hlo when it did not compile) and the error
// names the file.
//
// Threads: a graph with no dot or convolution of kMinSplitMultiplyAdds
// multiply-adds and no value of kMinSplitElements elements (SplitsPay) runs
// on the calling thread alone (ExecutableRunOptions::intra_op_threads 1).
// Its kernels take microseconds each, about what handing half of one to the
// pool's worker costs when the worker sleeps or its core is busy: the MLP
// example's step graph ran in 0.13 ms at one thread and 0.22 ms (median) at
// two on a 2-core VM shared with other processes. Larger graphs run on the
// pool as before.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_FRONTENDS_LAZY_GRAPH_EXECUTOR_H_
#define AXLE_FRONTENDS_LAZY_GRAPH_EXECUTOR_H_

#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "axle/frontends/lazy/ir.h"
#include "axle/frontends/lazy/lowering.h"
#include "axle/runtime/local_client.h"

namespace axle::lazy {

class GraphExecutor {
 public:
  static constexpr size_t kDefaultCacheCapacity = 1024;

  // The process's executor.
  static GraphExecutor& Get();

  explicit GraphExecutor(size_t cache_capacity = kDefaultCacheCapacity)
      : capacity_(cache_capacity) {}

  // `may_donate`: whether a leaf's data dies with this execution (no tensor
  // holds it any more). Such a buffer is donated to a result of its shape
  // (input_output_alias: the result is written in place) and is invalid
  // afterwards. Counts DonatedBuffers.
  absl::StatusOr<std::vector<std::shared_ptr<DeviceData>>> Execute(
      absl::Span<const Value> roots,
      const std::function<bool(const DeviceData&)>& may_donate = nullptr);
  // The same into `results` (replaced: one per root), so that a caller
  // syncing every step keeps the array from step to step. A step's few
  // hundred results would otherwise be an allocation of a kilobyte or more
  // each step: glibc serves such a request only after merging every small
  // block freed since the last one (malloc_consolidate), which cost a
  // training step as much as the graph walk.
  absl::Status Execute(absl::Span<const Value> roots,
                       const std::function<bool(const DeviceData&)>& may_donate,
                       std::vector<std::shared_ptr<DeviceData>>* results);

  // The structural hash of the graph computing `roots` (Execute's key), with
  // its (root, parameter) aliases.
  static uint64_t GraphHash(absl::Span<const Value> roots, const PostOrder& order,
                            absl::Span<const std::pair<int64_t, int64_t>> aliases = {});

  // Whether the graph of `order` has work worth splitting across threads:
  // a dot_general or convolution of kMinSplitMultiplyAdds multiply-adds or
  // more (a convolution's counted as its output's elements times its
  // kernel's, an upper bound), or a value of kMinSplitElements elements or
  // more.
  static constexpr int64_t kMinSplitMultiplyAdds = int64_t{1} << 21;
  static constexpr int64_t kMinSplitElements = int64_t{1} << 18;
  static bool SplitsPay(const PostOrder& order);

  size_t cache_size() const;
  void ClearCache();

 private:
  struct Compiled {
    std::unique_ptr<LocalExecutable> executable;
    std::vector<Shape> parameter_shapes;
    bool one_thread = false;  // !SplitsPay
  };
  struct Entry {
    std::shared_ptr<Compiled> compiled;
    std::list<uint64_t>::iterator lru;
  };

  using Aliases = std::vector<std::pair<int64_t, int64_t>>;
  absl::StatusOr<std::shared_ptr<Compiled>> GetOrCompile(absl::Span<const Value> roots,
                                                         const PostOrder& order,
                                                         const Aliases& aliases);
  absl::StatusOr<std::shared_ptr<Compiled>> Compile(absl::Span<const Value> roots,
                                                    const PostOrder& order, uint64_t hash,
                                                    const Aliases& aliases);

  size_t capacity_;
  mutable std::mutex mutex_;
  std::unordered_map<uint64_t, Entry> cache_;
  std::list<uint64_t> lru_;  // most recently used first
  std::vector<Shape> last_parameter_shapes_;
  size_t last_num_nodes_ = 0;
};

}  // namespace axle::lazy

#endif  // AXLE_FRONTENDS_LAZY_GRAPH_EXECUTOR_H_
