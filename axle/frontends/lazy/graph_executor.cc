//===- graph_executor.cc - Compile, cache and run lazy-tensor graphs -------===//
#include "axle/frontends/lazy/graph_executor.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "axle/base/environment_options.h"
#include "axle/core/shape_util.h"
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
  std::ofstream out(path);
  if (!out) return "";
  out << text;
  out.close();
  return out ? path : "";
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

size_t GraphExecutor::cache_size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return cache_.size();
}

void GraphExecutor::ClearCache() {
  std::lock_guard<std::mutex> lock(mutex_);
  cache_.clear();
  lru_.clear();
}

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

absl::StatusOr<std::vector<std::shared_ptr<DeviceData>>> GraphExecutor::Execute(
    absl::Span<const Value> roots, const std::function<bool(const DeviceData&)>& may_donate) {
  // Roots that are leaves are their data; the others are computed once each.
  std::vector<std::shared_ptr<DeviceData>> results(roots.size());
  std::vector<Value> computed;
  std::vector<int> slot(roots.size(), -1);
  absl::flat_hash_map<std::pair<const Node*, int>, int> seen;  // (node, output) -> slot
  for (size_t i = 0; i < roots.size(); ++i) {
    if (roots[i].node->data() != nullptr) {
      results[i] = roots[i].node->data();
      continue;
    }
    auto [it, inserted] = seen.emplace(std::make_pair(roots[i].node.get(), roots[i].index),
                                       static_cast<int>(computed.size()));
    if (inserted) computed.push_back(roots[i]);
    slot[i] = it->second;
  }
  if (computed.empty()) return results;

  PostOrder order = ComputePostOrder(computed);
  // The arguments (host values are transferred now).
  std::vector<const ShapedBuffer*> arguments;
  arguments.reserve(order.parameters.size());
  for (const auto& p : order.parameters) {
    absl::StatusOr<const ShapedBuffer*> buffer = p->Buffer();
    if (!buffer.ok()) return buffer.status();
    arguments.push_back(*buffer);
  }
  // Each dying buffer goes to the first result of its shape left.
  Aliases aliases;
  std::vector<bool> donated(order.parameters.size(), false);
  if (may_donate) {
    std::vector<bool> taken(computed.size(), false);
    for (size_t p = 0; p < order.parameters.size(); ++p) {
      const DeviceData& data = *order.parameters[p];
      if (data.shared() || !may_donate(data)) continue;
      for (size_t r = 0; r < computed.size(); ++r) {
        // Interned shapes: equal shapes are one object (the compare is
        // the fallback for a tuple element's shape).
        const Shape& shape = computed[r].shape();
        if (taken[r] || (&shape != &data.shape() && shape != data.shape())) continue;
        taken[r] = true;
        donated[p] = true;
        aliases.emplace_back(static_cast<int64_t>(r), static_cast<int64_t>(p));
        break;
      }
    }
  }
  absl::StatusOr<std::shared_ptr<Compiled>> compiled = GetOrCompile(computed, order, aliases);
  if (!compiled.ok()) return compiled.status();
  // Buffers the result may not share (each DeviceData owns its own): the
  // arguments that were only lent.
  absl::flat_hash_set<const void*> owned;
  for (size_t p = 0; p < arguments.size(); ++p) {
    if (!donated[p]) owned.insert(arguments[p]->root_buffer().opaque());
  }
  absl::StatusOr<ScopedShapedBuffer> result;
  {
    metrics::ScopedTimer timer("ExecuteTime");
    if (aliases.empty()) {
      result = (*compiled)->executable->Run(absl::MakeConstSpan(arguments), ExecutableRunOptions());
    } else {
      std::vector<ExecutionInput> inputs;
      inputs.reserve(arguments.size());
      for (size_t p = 0; p < arguments.size(); ++p) {
        inputs.push_back(donated[p] ? order.parameters[p]->Donate()
                                    : ExecutionInput::Borrow(*arguments[p]));
      }
      metrics::IncrementCounter("DonatedBuffers", static_cast<int64_t>(aliases.size()));
      absl::StatusOr<ExecutionOutput> output =
          (*compiled)->executable->Run(std::move(inputs), ExecutableRunOptions());
      if (output.ok()) {
        result = output->ConsumeResult();
      } else {
        result = output.status();
      }
    }
  }
  if (!result.ok()) return result.status();

  // Split the result tuple into one buffer per computed root and free the
  // tuple's index table. An element may share its buffer with another
  // element or with an argument (a program that returns the same value
  // twice); each DeviceData must own its own, so such an element is copied
  // (the lazy tensors' platforms keep device memory in host memory).
  se::DeviceMemoryAllocator* allocator = result->memory_allocator();
  int ordinal = result->device_ordinal();
  Shape tuple_shape = result->on_device_shape();
  ShapedBuffer raw = result->release();
  std::vector<std::shared_ptr<DeviceData>> outputs;
  outputs.reserve(computed.size());
  absl::Status status;
  for (size_t i = 0; i < computed.size(); ++i) {
    const auto index = static_cast<int64_t>(i);
    se::DeviceMemoryBase memory = raw.buffer({index});
    ScopedShapedBuffer element(tuple_shape.tuple_shapes(index), allocator, ordinal);
    if (!memory.is_null() && !owned.insert(memory.opaque()).second) {
      absl::StatusOr<se::OwningDeviceMemory> copy = allocator->Allocate(ordinal, memory.size());
      if (!copy.ok()) {
        status.Update(copy.status());
        continue;
      }
      std::memcpy(copy->ptr()->opaque(), memory.opaque(), memory.size());
      element.set_buffer(std::move(*copy), {});
    } else {
      element.set_buffer(se::OwningDeviceMemory(memory, ordinal, allocator), {});
    }
    outputs.push_back(std::make_shared<DeviceData>(std::move(element), computed[i].shape()));
  }
  se::DeviceMemoryBase table = raw.buffer({});
  if (!table.is_null()) allocator->Deallocate(ordinal, table).IgnoreError();
  if (!status.ok()) return status;
  for (size_t i = 0; i < roots.size(); ++i) {
    if (slot[i] >= 0) results[i] = outputs[slot[i]];
  }
  return results;
}

}  // namespace axle::lazy
