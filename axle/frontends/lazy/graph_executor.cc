//===- graph_executor.cc - Compile, cache and run lazy-tensor graphs -------===//
#include "axle/frontends/lazy/graph_executor.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "axle/base/environment_options.h"
#include "axle/base/file_io.h"
#include "axle/core/shape_util.h"
#include "axle/frontends/lazy/block_pool.h"
#include "axle/frontends/lazy/compile_cache.h"
#include "axle/frontends/lazy/device.h"
#include "axle/frontends/lazy/metrics.h"
#include "axle/runtime/compilation_cache.h"

namespace axle::lazy {
namespace {

bool DebugEnabled() {
  static const bool enabled = EnvironmentOptions::Read().debug;
  return enabled;
}

// Writes `text` (a graph that failed to lower or compile) to
// $AXLE_DUMP_TO/axle_lazy_graph_<hash>.<extension>; the file's path, or ""
// when AXLE_DUMP_TO is unset or the file cannot be written.
std::string DumpFailedGraph(const std::string& text, uint64_t hash, const char* extension) {
  const std::string dir = EnvironmentOptions::Read().dump_to;
  if (dir.empty()) return "";
  std::string path = absl::StrFormat("%s/axle_lazy_graph_%016x.%s", dir, hash, extension);
  return WriteWholeFile(path, text).ok() ? path : "";
}

std::string DumpNote(const std::string& path) {
  return path.empty() ? " (set AXLE_DUMP_TO=<dir> to dump the graph)"
                      : absl::StrCat(" (the graph is in ", path, ")");
}

std::string IrText(const PostOrder& order) {
  std::string text;
  std::unordered_map<const Node*, size_t> ids;
  for (const Node* node : order.nodes) {
    ids.emplace(node, ids.size());
    absl::StrAppend(&text, "%", ids.at(node), " = ", node->ToString(), " [");
    for (const Value& v : node->operands()) absl::StrAppend(&text, " %", ids.at(v.node.get()));
    absl::StrAppend(&text, " ]\n");
  }
  return text;
}

}  // namespace

GraphExecutor& GraphExecutor::Get() {
  static auto* executor = new GraphExecutor();
  return *executor;
}

uint64_t GraphExecutor::GraphHash(absl::Span<const Value> roots, const PostOrder& order,
                                  absl::Span<const std::pair<int64_t, int64_t>> aliases) {
  uint64_t h = HashCombine(0x4752415048ULL, roots.size());
  h = HashCombine(h, aliases.size());
  for (const auto& [output, parameter] : aliases) {
    h = HashCombine(HashCombine(h, static_cast<uint64_t>(output)),
                    static_cast<uint64_t>(parameter));
  }
  for (const Value& root : roots) h = HashCombine(h, root.hash());
  // Which leaves share a DeviceData changes the computation's parameters.
  return HashCombine(h, order.leaf_parameters_hash);
}

bool GraphExecutor::SplitsPay(const PostOrder& order) {
  for (const Node* node : order.nodes) {
    if (node->shape().IsTuple()) {
      for (const Shape& element : node->shape().tuple_shapes()) {
        if (element.IsArray() && ShapeUtil::ElementsIn(element) >= kMinSplitElements) return true;
      }
      continue;
    }
    const int64_t elements = ShapeUtil::ElementsIn(node->shape());
    if (elements >= kMinSplitElements) return true;
    int64_t per_element = 0;  // multiply-adds per output element
    if (node->op() == "dot_general") {
      per_element = 1;
      const auto& lhs = node->operand(0).shape().dimensions();
      for (int64_t d : node->attr_ints(0)) per_element *= lhs[d];
    } else if (node->op() == "convolution") {
      per_element = ShapeUtil::ElementsIn(node->operand(1).shape());
    }
    if (per_element > 0 && elements * per_element >= kMinSplitMultiplyAdds) return true;
  }
  return false;
}

size_t GraphExecutor::cache_size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return cache_.size();
}

void GraphExecutor::ClearCache() {
  std::lock_guard<std::mutex> lock(mutex_);
  cache_.clear();
  lru_.clear();
}

void ClearCompileCache() { GraphExecutor::Get().ClearCache(); }

absl::StatusOr<std::shared_ptr<GraphExecutor::Compiled>> GraphExecutor::Compile(
    absl::Span<const Value> roots, const PostOrder& order, uint64_t hash, const Aliases& aliases) {
  metrics::ScopedTimer timer("CompileTime");
  absl::StatusOr<XlaComputation> computation =
      LowerGraph(roots, order, absl::StrFormat("lazy_graph_%016x", hash), aliases);
  if (!computation.ok()) {
    std::string dumped = DumpFailedGraph(IrText(order), hash, "ir");
    return absl::Status(computation.status().code(),
                        absl::StrCat(computation.status().message(), DumpNote(dumped)));
  }
  absl::StatusOr<LocalClient*> client = GetClient();
  if (!client.ok()) return client.status();
  auto compiled = std::make_shared<Compiled>();
  std::vector<const Shape*> layouts;
  compiled->parameter_shapes.reserve(order.parameters.size());
  for (const auto& p : order.parameters) compiled->parameter_shapes.push_back(p->shape());
  layouts.reserve(compiled->parameter_shapes.size());
  for (const Shape& s : compiled->parameter_shapes) layouts.push_back(&s);
  auto executables = (*client)->Compile(*computation, layouts, ExecutableBuildOptions());
  if (!executables.ok()) {
    std::string dumped = DumpFailedGraph(computation->ToString(), hash, "hlo");
    return absl::Status(
        executables.status().code(),
        absl::StrCat("lazy tensors: compiling a graph of ", order.nodes.size(),
                     " nodes failed: ", executables.status().message(), DumpNote(dumped)));
  }
  compiled->executable = std::move(executables->front());
  compiled->one_thread = !SplitsPay(order);
  return compiled;
}

absl::StatusOr<std::shared_ptr<GraphExecutor::Compiled>> GraphExecutor::GetOrCompile(
    absl::Span<const Value> roots, const PostOrder& order, const Aliases& aliases) {
  uint64_t hash = GraphHash(roots, order, aliases);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = cache_.find(hash);
    if (it != cache_.end()) {
      lru_.splice(lru_.begin(), lru_, it->second.lru);
      metrics::IncrementCounter("CachedCompile");
      return it->second.compiled;
    }
  }
  if (DebugEnabled()) {
    std::lock_guard<std::mutex> lock(mutex_);
    std::string reason = "a new graph";
    if (!last_parameter_shapes_.empty()) {
      reason = absl::StrCat("the graph changed (", last_num_nodes_, " -> ", order.nodes.size(),
                            " nodes)");
      if (last_parameter_shapes_.size() == order.parameters.size()) {
        for (size_t i = 0; i < order.parameters.size(); ++i) {
          if (last_parameter_shapes_[i] != order.parameters[i]->shape()) {
            reason = absl::StrCat("input ", i, "'s shape changed from ",
                                  last_parameter_shapes_[i].ToString(false), " to ",
                                  order.parameters[i]->shape().ToString(false));
            break;
          }
        }
      }
    }
    std::fprintf(stderr, "axle: compiling graph %016llx (%zu nodes, %zu inputs): %s\n",
                 static_cast<unsigned long long>(hash), order.nodes.size(), order.parameters.size(),
                 reason.c_str());
  }
  // A compile whose code came from AXLE_CACHE_DIR (another process compiled
  // the graph) is a PersistentCacheHit, not an UncachedCompile.
  int64_t disk_hits = CompilationCache::Global().stats().disk_hits;
  absl::StatusOr<std::shared_ptr<Compiled>> compiled = Compile(roots, order, hash, aliases);
  bool from_disk = CompilationCache::Global().stats().disk_hits > disk_hits;
  metrics::IncrementCounter(from_disk ? "PersistentCacheHit" : "UncachedCompile");
  if (!compiled.ok()) return compiled.status();
  if (from_disk && DebugEnabled()) {
    std::fprintf(stderr, "axle: graph %016llx loaded from AXLE_CACHE_DIR\n",
                 static_cast<unsigned long long>(hash));
  }
  std::lock_guard<std::mutex> lock(mutex_);
  last_parameter_shapes_ = (*compiled)->parameter_shapes;
  last_num_nodes_ = order.nodes.size();
  auto it = cache_.find(hash);
  if (it != cache_.end()) return it->second.compiled;  // another thread compiled it
  lru_.push_front(hash);
  cache_[hash] = Entry{*compiled, lru_.begin()};
  while (cache_.size() > capacity_) {
    cache_.erase(lru_.back());
    lru_.pop_back();
  }
  return *compiled;
}

namespace {

// Execute's containers, kept from run to run on each thread (cleared, not
// freed): a training step runs a graph of a few hundred roots and
// parameters, and allocating these afresh each step costs more than the
// bookkeeping itself.
struct ExecuteScratch {
  PostOrder order;
  PostOrderScratch walk;
  std::vector<Value> computed;
  // The roots computed: ((node, output), root), sorted to find repeats.
  std::vector<std::pair<std::pair<const Node*, int>, int>> seen;
  std::vector<se::DeviceMemoryBase> arguments;
  std::vector<MaybeOwningDeviceMemory> inputs;  // the run's: donated or lent
  std::vector<bool> donated;
  std::vector<bool> taken;
  // A computed root's shape (interned) -> its position in `by_shape`.
  std::vector<std::pair<const Shape*, int>> by_shape;
  std::vector<se::OwningDeviceMemory> outputs;
  std::vector<std::shared_ptr<DeviceData>> computed_data;  // one per computed root
  std::vector<int> slot;  // per root: its computed root, or -1 for a leaf
  // The parameters that may be donated, sorted by their data's address.
  std::vector<std::pair<const DeviceData*, int>> donatable;
  std::vector<bool> may_donate;    // per parameter
  std::vector<bool> root_aliased;  // per computed root
  // (depth, computed root, parameter) candidates of AssignUpdateAliases,
  // and its walk's frontiers.
  std::vector<std::tuple<int, int, int>> near;
  std::vector<const Node*> frontier, next;
  std::vector<std::pair<int64_t, int64_t>> aliases;  // (computed root, parameter)

  void Clear() {
    order.nodes.clear();
    order.parameters.clear();
    order.leaf_parameters_hash = 0;
    computed.clear();
    seen.clear();
    arguments.clear();
    inputs.clear();
    donated.clear();
    taken.clear();
    donatable.clear();
    may_donate.clear();
    root_aliased.clear();
    near.clear();
    frontier.clear();
    next.clear();
    aliases.clear();
    by_shape.clear();
    outputs.clear();
    computed_data.clear();
    slot.clear();
  }
};

// Pairs computed roots with donatable parameters their values read near
// the top: a parameter leaf found within kMaxDepth operands of the root,
// through nodes of the root's shape (at most kMaxFrontier a level). The
// nearest pairs are taken first, each root and parameter once, so an
// update `w - lr * v` of a buffer w goes to w rather than to another
// buffer of its shape: the compiled kernel can then write it in place
// (an elementwise operand read at the output index) where another buffer
// would be a copy after the run. Appends to `aliases`, marks s.donated
// and s.root_aliased.
void AssignUpdateAliases(ExecuteScratch& s, std::vector<std::pair<int64_t, int64_t>>& aliases) {
  constexpr int kMaxDepth = 3;
  constexpr size_t kMaxFrontier = 8;
  s.root_aliased.assign(s.computed.size(), false);
  s.near.clear();
  if (s.donatable.empty()) return;
  for (size_t r = 0; r < s.computed.size(); ++r) {
    const Value& root = s.computed[r];
    const Shape* shape = &InternShape(root.shape());
    s.frontier.assign(1, root.node.get());
    for (int depth = 1; depth <= kMaxDepth && !s.frontier.empty(); ++depth) {
      s.next.clear();
      for (const Node* node : s.frontier) {
        for (const Value& operand : node->operands()) {
          if (&InternShape(operand.shape()) != shape) continue;
          if (const std::shared_ptr<DeviceData>& data = operand.node->data(); data != nullptr) {
            auto it = std::lower_bound(
                s.donatable.begin(), s.donatable.end(), data.get(),
                [](const auto& entry, const DeviceData* key) { return entry.first < key; });
            if (it != s.donatable.end() && it->first == data.get()) {
              s.near.emplace_back(depth, static_cast<int>(r), it->second);
            }
          } else if (s.next.size() < kMaxFrontier) {
            s.next.push_back(operand.node.get());
          }
        }
      }
      std::swap(s.frontier, s.next);
    }
  }
  std::sort(s.near.begin(), s.near.end());
  for (const auto& [depth, r, p] : s.near) {
    if (s.root_aliased[r] || s.donated[p]) continue;
    s.root_aliased[r] = true;
    s.donated[p] = true;
    aliases.emplace_back(static_cast<int64_t>(r), static_cast<int64_t>(p));
  }
}

}  // namespace

absl::StatusOr<std::vector<std::shared_ptr<DeviceData>>> GraphExecutor::Execute(
    absl::Span<const Value> roots, const std::function<bool(const DeviceData&)>& may_donate) {
  std::vector<std::shared_ptr<DeviceData>> results;
  absl::Status status = Execute(roots, may_donate, &results);
  if (!status.ok()) return status;
  return results;
}

absl::Status GraphExecutor::Execute(absl::Span<const Value> roots,
                                    const std::function<bool(const DeviceData&)>& may_donate,
                                    std::vector<std::shared_ptr<DeviceData>>* results_out) {
  thread_local ExecuteScratch scratch;
  ExecuteScratch& s = scratch;
  s.Clear();
  // Cleared on every way out, so no value or graph outlives the run here.
  struct ClearOnExit {
    ExecuteScratch& s;
    ~ClearOnExit() { s.Clear(); }
  } clear_on_exit{s};

  // Roots that are leaves are their data; the others are computed once each
  // (a value that several roots share, by views and aliases, is computed
  // for the first of them).
  std::vector<std::shared_ptr<DeviceData>>& results = *results_out;
  results.clear();
  results.resize(roots.size());
  std::vector<int>& slot = s.slot;
  slot.assign(roots.size(), -1);
  for (size_t i = 0; i < roots.size(); ++i) {
    if (roots[i].node->data() != nullptr) {
      results[i] = roots[i].node->data();
    } else {
      s.seen.push_back({{roots[i].node.get(), roots[i].index}, static_cast<int>(i)});
    }
  }
  std::sort(s.seen.begin(), s.seen.end());
  for (size_t k = 0; k < s.seen.size(); ++k) {
    // -2 - first: the root whose value this one repeats.
    if (k > 0 && s.seen[k].first == s.seen[k - 1].first) {
      int first =
          slot[s.seen[k - 1].second] >= 0 ? s.seen[k - 1].second : -2 - slot[s.seen[k - 1].second];
      slot[s.seen[k].second] = -2 - first;
    } else {
      slot[s.seen[k].second] = 0;  // computed (numbered below)
    }
  }
  for (size_t i = 0; i < roots.size(); ++i) {
    if (slot[i] == 0) {
      slot[i] = static_cast<int>(s.computed.size());
      s.computed.push_back(roots[i]);
    } else if (slot[i] <= -2) {
      slot[i] = slot[-2 - slot[i]];  // its first root's, numbered already
    }
  }
  if (s.computed.empty()) return absl::OkStatus();
  static metrics::Counter* const outputs_counter = metrics::GetCounter("GraphOutputs");
  outputs_counter->Increment(static_cast<int64_t>(s.computed.size()));

  PostOrder& order = s.order;
  ComputePostOrder(s.computed, &order, &s.walk);
  // The arguments' memory (host values are transferred now).
  s.arguments.reserve(order.parameters.size());
  for (const auto& p : order.parameters) {
    absl::StatusOr<se::DeviceMemoryBase> memory = p->Memory();
    if (!memory.ok()) return memory.status();
    s.arguments.push_back(*memory);
  }
  // A dying buffer goes first to a result that reads it near the top of
  // the same shape's elementwise chain (AssignUpdateAliases: an optimizer's
  // `w - lr * v` gets w's buffer, `m * v + g` v's), so the executable can
  // compute the result in place instead of copying it there after the run;
  // the others to the first result of its shape left: the computed roots
  // are bucketed by shape (interned: equal shapes are one object), each
  // bucket in root order.
  Aliases& aliases = s.aliases;
  s.donated.assign(order.parameters.size(), false);
  if (may_donate) {
    s.donatable.clear();
    s.may_donate.assign(order.parameters.size(), false);
    for (size_t p = 0; p < order.parameters.size(); ++p) {
      const DeviceData& data = *order.parameters[p];
      if (data.shared() || !may_donate(data)) continue;
      s.may_donate[p] = true;
      s.donatable.emplace_back(&data, static_cast<int>(p));
    }
    std::sort(s.donatable.begin(), s.donatable.end());
    AssignUpdateAliases(s, aliases);
    for (size_t r = 0; r < s.computed.size(); ++r) {
      if (s.root_aliased[r]) continue;
      s.by_shape.emplace_back(&InternShape(s.computed[r].shape()), static_cast<int>(r));
    }
    std::stable_sort(s.by_shape.begin(), s.by_shape.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    s.taken.assign(s.by_shape.size(), false);
    for (size_t p = 0; p < order.parameters.size(); ++p) {
      if (!s.may_donate[p] || s.donated[p]) continue;
      const DeviceData& data = *order.parameters[p];
      const Shape* shape = &InternShape(data.shape());
      auto it =
          std::lower_bound(s.by_shape.begin(), s.by_shape.end(), shape,
                           [](const auto& entry, const Shape* key) { return entry.first < key; });
      for (; it != s.by_shape.end() && it->first == shape; ++it) {
        size_t at = static_cast<size_t>(it - s.by_shape.begin());
        if (s.taken[at]) continue;
        s.taken[at] = true;
        s.donated[p] = true;
        aliases.emplace_back(static_cast<int64_t>(it->second), static_cast<int64_t>(p));
        break;
      }
    }
  }
  absl::StatusOr<std::shared_ptr<Compiled>> compiled = GetOrCompile(s.computed, order, aliases);
  if (!compiled.ok()) return compiled.status();
  // The run takes the donated buffers (their values are invalid from now
  // on) and lends the others.
  for (size_t p = 0; p < s.arguments.size(); ++p) {
    if (s.donated[p]) {
      s.inputs.emplace_back(order.parameters[p]->Donate());
    } else {
      s.inputs.emplace_back(s.arguments[p]);
    }
  }
  if (!aliases.empty()) {
    metrics::IncrementCounter("DonatedBuffers", static_cast<int64_t>(aliases.size()));
  }
  {
    metrics::ScopedTimer timer("ExecuteTime");
    ExecutableRunOptions options;
    if ((*compiled)->one_thread) options.set_intra_op_threads(1);
    absl::Status status =
        (*compiled)->executable->RunArrays(absl::MakeSpan(s.inputs), options, &s.outputs);
    if (!status.ok()) return status;
  }
  // One DeviceData per computed root (pooled blocks: block_pool.h). Each
  // owns its buffer: ExecuteArrays
  // returns a fresh buffer per element, or the donated argument's, and no
  // argument is donated to two elements.
  std::vector<std::shared_ptr<DeviceData>>& outputs = s.computed_data;
  for (size_t i = 0; i < s.computed.size(); ++i) {
    outputs.push_back(std::allocate_shared<DeviceData>(
        PoolAllocator<DeviceData>(), std::move(s.outputs[i]), InternShape(s.computed[i].shape())));
  }
  for (size_t i = 0; i < roots.size(); ++i) {
    if (slot[i] >= 0) results[i] = outputs[slot[i]];
  }
  return absl::OkStatus();
}

}  // namespace axle::lazy
