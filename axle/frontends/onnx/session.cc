//===- session.cc - Compile per cluster and signature, cache, execute -------===//
#include "axle/frontends/onnx/session.h"

#include <deque>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "axle/frontends/graph/host_kernel.h"
#include "axle/frontends/onnx/kernels/kernels.h"
#include "axle/frontends/onnx/onnx_loader.h"
#include "axle/frontends/onnx/schema_check.h"
#include "axle/runtime/compilation_cache.h"

namespace axle::onnx {
namespace {

// `shape` without layouts (a tuple's elements likewise).
Shape Normalized(const Shape& shape) {
  if (shape.IsArray()) return ShapeUtil::MakeShape(shape.element_type(), shape.dimensions());
  std::vector<Shape> elements;
  for (const Shape& s : shape.tuple_shapes()) elements.push_back(Normalized(s));
  return ShapeUtil::MakeTupleShape(elements);
}

// The kernels' device type for a platform name (PlatformUtil's names, any
// case): the JIT's DEVICE_XLA_CPU_JIT / DEVICE_XLA_GPU_JIT choice.
absl::StatusOr<std::string> DeviceTypeFor(const std::string& platform) {
  const std::string name = absl::AsciiStrToLower(platform);
  if (name == "cpu" || name == "host") return std::string(graph::DEVICE_CPU);
  if (name == "interpreter") return std::string(graph::DEVICE_INTERPRETER);
  if (name == "cuda" || name == "gpu") return std::string(graph::DEVICE_CUDA);
  return absl::InvalidArgumentError(
      absl::StrCat("platform '", platform, "' is not one of cpu, interpreter, cuda"));
}

// A run out of memory (a huge Pad, OneHot or window, say) names the node
// that computes the cluster's largest value, what it most likely failed to
// hold, with its shape and size (the runtime's message says the size of
// the allocation that failed).
absl::Status NameTheLargestValue(const graph::XlaCompilationResult& result, absl::Status status) {
  const graph::XlaCompilationResult::LargestValue& largest = result.largest_value;
  if (status.code() != absl::StatusCode::kResourceExhausted || largest.node.empty()) return status;
  return absl::ResourceExhaustedError(absl::StrCat(
      largest.node, ": out of memory: its output ", largest.shape.ToString(false), " takes ",
      largest.bytes, " bytes, the largest value of its cluster (", status.message(), ")"));
}

}  // namespace

std::string ClusteringReport::ToString() const {
  std::string out;
  for (size_t c = 0; c < clusters.size(); ++c) {
    const Cluster& cluster = clusters[c];
    absl::StrAppend(&out, "cluster ", c, ": ", cluster.nodes.size(), " nodes, inputs [",
                    absl::StrJoin(cluster.inputs, ", "), "], outputs [",
                    absl::StrJoin(cluster.outputs, ", "), "]\n");
    for (const std::string& cut : cluster.constant_cuts) absl::StrAppend(&out, "  ", cut, "\n");
  }
  for (const Fallback& f : fallbacks) {
    absl::StrAppend(&out, "host: ", f.node, ": ", f.reason, "; ", f.runs, " runs, ",
                    absl::FormatDuration(f.time), "\n");
  }
  return out;
}

Session::Session(graph::Graph graph, graph::ClusteringPlan plan, Options options,
                 LocalClient* client)
    : graph_(std::move(graph)), options_(std::move(options)), client_(client) {
  for (graph::Cluster& cluster : plan.clusters) {
    ClusterState state;
    state.cluster = std::move(cluster);
    const graph::Graph& g = state.cluster.graph;
    state.constant_input.assign(g.inputs.size(), false);
    for (int i : graph::ConstantGraphInputs(g, options_.compiler.device_type)) {
      state.constant_input[i] = true;
    }
    for (size_t i = 0; i < g.inputs.size(); ++i) {
      if (options_.constant_inputs.count(g.inputs[i].name)) state.constant_input[i] = true;
    }
    clusters_.push_back(std::move(state));
  }
  steps_ = std::move(plan.steps);
  for (int64_t node : plan.host_nodes) host_stats_[node] = {};
  metrics_.clusters = static_cast<int64_t>(clusters_.size());
  // The clusters hold copies of the initializers they read; the model keeps
  // only those that host nodes or graph outputs read, so weights are held
  // once.
  std::set<std::string> read_outside;
  for (const graph::ValueInfo& out : graph_.outputs) read_outside.insert(out.name);
  for (int64_t node : plan.host_nodes) {
    for (const std::string& in : graph_.nodes[node].inputs) read_outside.insert(in);
  }
  for (auto it = graph_.initializers.begin(); it != graph_.initializers.end();) {
    it = read_outside.count(it->first) ? std::next(it) : graph_.initializers.erase(it);
  }
}

absl::StatusOr<std::unique_ptr<Session>> Session::Load(const std::string& path, Options options) {
  absl::StatusOr<graph::Graph> graph = LoadModel(path);
  if (!graph.ok()) return graph.status();
  return FromGraph(std::move(*graph), std::move(options));
}

absl::StatusOr<std::unique_ptr<Session>> Session::FromGraph(graph::Graph graph, Options options) {
  (void)LinkOnnxKernels();
  absl::StatusOr<std::string> device = DeviceTypeFor(options.platform);
  if (!device.ok()) return device.status();
  options.compiler.device_type = *device;
  absl::StatusOr<se::Platform*> platform = PlatformUtil::GetPlatform(options.platform);
  if (!platform.ok()) return platform.status();
  absl::StatusOr<LocalClient*> client = ClientLibrary::GetOrCreateLocalClient(*platform);
  if (!client.ok()) return client.status();
  auto opset = graph.opsets.find("");
  if (opset != graph.opsets.end() && opset->second > kMaxOnnxOpset) {
    return absl::UnimplementedError(absl::StrCat(
        "the model imports opset ", opset->second, " of the default ONNX domain; the kernels ",
        "follow ONNX's operators up to opset ", kMaxOnnxOpset));
  }
  // The loader checks what it reads; graphs built in code are checked here.
  if (absl::Status s = CheckAgainstSchemas(graph); !s.ok()) return s;
  for (const std::string& name : options.constant_inputs) {
    bool found = false;
    for (const graph::ValueInfo& input : graph.inputs) found |= input.name == name;
    if (!found) {
      return absl::InvalidArgumentError(
          absl::StrCat("constant input '", name, "' is not an input of the graph"));
    }
  }
  // Checks the graph's structure (dangling edges, cycles) now rather than at
  // the first run.
  absl::StatusOr<graph::ClusteringPlan> plan =
      graph::MarkForCompilation(graph, *device, options.constant_inputs);
  if (!plan.ok()) return plan.status();
  return std::unique_ptr<Session>(
      new Session(std::move(graph), std::move(*plan), std::move(options), *client));
}

SessionMetrics Session::metrics() const {
  std::lock_guard<std::mutex> lock(mu_);
  return metrics_;
}

ClusteringReport Session::Clustering() const {
  ClusteringReport report;
  for (const ClusterState& state : clusters_) {
    ClusteringReport::Cluster c;
    for (const graph::Node& node : state.cluster.graph.nodes) c.nodes.push_back(node.name);
    for (const graph::ValueInfo& in : state.cluster.graph.inputs) c.inputs.push_back(in.name);
    for (const graph::ValueInfo& out : state.cluster.graph.outputs) c.outputs.push_back(out.name);
    c.constant_cuts = state.cluster.constant_cuts;
    report.clusters.push_back(std::move(c));
  }
  std::lock_guard<std::mutex> lock(mu_);
  for (const graph::ExecutionStep& step : steps_) {
    if (step.kind != graph::ExecutionStep::kHost) continue;
    const graph::Node& node = graph_.nodes[step.index];
    ClusteringReport::Fallback f;
    f.node = node.Describe();
    absl::StatusOr<int64_t> opset = graph_.OpsetFor(node.domain);
    const graph::HostKernelRegistry::Entry* entry =
        opset.ok() ? graph::HostKernelRegistry::Global().Find(node, *opset) : nullptr;
    f.reason = entry && entry->kind == graph::kDataDependentShape
                   ? "its output shape depends on the data"
                   : absl::StrCat("no kernel on device '", options_.compiler.device_type, "'");
    const HostStats& stats = host_stats_.at(step.index);
    f.runs = stats.runs;
    f.time = stats.time;
    report.fallbacks.push_back(std::move(f));
  }
  return report;
}

absl::StatusOr<const Session::Compiled*> Session::GetOrCompile(
    ClusterState& state, const std::vector<const Literal*>& inputs) {
  const graph::Graph& g = state.cluster.graph;
  std::string key;
  std::vector<graph::XlaArgument> args;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Shape& shape = inputs[i]->shape();
    bool tensor = g.inputs[i].kind == graph::ValueKind::kTensor;
    if (tensor ? !shape.IsArray() : !shape.IsTuple()) {
      return absl::InvalidArgumentError(
          absl::StrCat("input '", g.inputs[i].name, "' must be ",
                       tensor ? "an array" : "a tuple (a sequence or optional)", ", got ",
                       shape.ToString(false)));
    }
    graph::XlaArgument arg;
    arg.shape = Normalized(shape);
    absl::StrAppend(&key, arg.shape.ToString(false), ";");
    if (state.constant_input[i]) {
      arg.constant = inputs[i]->Clone();
      absl::StrAppend(&key, "=",
                      absl::string_view(static_cast<const char*>(inputs[i]->untyped_data()),
                                        inputs[i]->size_bytes()),
                      ";");
    }
    args.push_back(std::move(arg));
  }
  std::lock_guard<std::mutex> lock(mu_);
  auto it = state.cache.find(key);
  if (it != state.cache.end()) {
    ++metrics_.cache_hits;
    return it->second.get();
  }
  absl::Time start = absl::Now();
  graph::XlaCompiler compiler(options_.compiler);
  absl::StatusOr<graph::XlaCompilationResult> result = compiler.Compile(g, args);
  if (!result.ok()) return result.status();
  std::vector<const Shape*> layouts;
  for (const auto& p : result->parameters) layouts.push_back(&p.shape);
  int64_t disk_hits = CompilationCache::Global().stats().disk_hits;
  auto executables = client_->Compile(result->computation, layouts, ExecutableBuildOptions());
  if (!executables.ok()) return executables.status();
  metrics_.disk_cache_hits += CompilationCache::Global().stats().disk_hits - disk_hits;
  auto compiled = std::make_unique<Compiled>();
  compiled->result = std::move(*result);
  compiled->executable = std::move(executables->front());
  metrics_.compile_time += absl::Now() - start;
  ++metrics_.compiles;
  const Compiled* out = compiled.get();
  state.cache[key] = std::move(compiled);
  return out;
}

absl::StatusOr<const ShapedBuffer*> Session::InitializerBuffer(const ClusterState& state,
                                                               const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = initializer_buffers_.find(name);
  if (it != initializer_buffers_.end()) return it->second.get();
  absl::StatusOr<ScopedShapedBuffer> buffer =
      client_->LiteralToShapedBuffer(state.cluster.graph.initializers.at(name), 0);
  if (!buffer.ok()) return buffer.status();
  auto owned = std::make_unique<ScopedShapedBuffer>(std::move(*buffer));
  const ShapedBuffer* out = owned.get();
  initializer_buffers_[name] = std::move(owned);
  return out;
}

absl::StatusOr<std::vector<Literal>> Session::RunCluster(ClusterState& state,
                                                         const std::vector<const Literal*>& inputs,
                                                         const Compiled** used) {
  absl::StatusOr<const Compiled*> compiled = GetOrCompile(state, inputs);
  if (!compiled.ok()) return compiled.status();
  if (used) *used = *compiled;
  std::vector<ScopedShapedBuffer> owned;
  owned.reserve(inputs.size());
  std::vector<const ShapedBuffer*> args;
  for (const auto& p : (*compiled)->result.parameters) {
    if (p.kind == graph::XlaCompilationResult::Parameter::kInitializer) {
      absl::StatusOr<const ShapedBuffer*> buffer = InitializerBuffer(state, p.initializer);
      if (!buffer.ok()) return buffer.status();
      args.push_back(*buffer);
      continue;
    }
    absl::StatusOr<ScopedShapedBuffer> buffer =
        client_->LiteralToShapedBuffer(*inputs[p.input_index], 0);
    if (!buffer.ok()) return buffer.status();
    owned.push_back(std::move(*buffer));
    args.push_back(&owned.back());
  }
  // Each cluster run draws its random ops (kernels/random_ops.cc) from a
  // fresh seed: the session's count of cluster runs so far.
  ExecutableRunOptions run_options;
  run_options.set_rng_seed(static_cast<int>(cluster_runs_.fetch_add(1) & 0x7fffffff));
  absl::StatusOr<ScopedShapedBuffer> result =
      (*compiled)->executable->Run(absl::MakeConstSpan(args), run_options);
  if (!result.ok()) return NameTheLargestValue((*compiled)->result, result.status());
  absl::StatusOr<Literal> tuple = client_->ShapedBufferToLiteral(*result);
  if (!tuple.ok()) return tuple.status();
  return tuple->DecomposeTuple();
}

absl::StatusOr<std::vector<Literal>> Session::RunPlan(absl::Span<const Literal> inputs,
                                                      std::vector<const Compiled*>* compiled) {
  std::vector<graph::XlaArgument> signature;
  for (const Literal& input : inputs) signature.push_back({input.shape(), std::nullopt});
  if (absl::Status s = graph::XlaCompiler::CheckSignature(graph_, signature); !s.ok()) return s;
  // Every value by name: graph inputs, initializers, then what steps make.
  std::map<std::string, const Literal*> values;
  std::map<std::string, Literal*> made;
  std::deque<Literal> storage;
  for (size_t i = 0; i < inputs.size(); ++i) values[graph_.inputs[i].name] = &inputs[i];
  for (const auto& [name, literal] : graph_.initializers) values.emplace(name, &literal);
  auto keep = [&](const std::string& name, Literal value) {
    storage.push_back(std::move(value));
    values[name] = made[name] = &storage.back();
  };
  for (const graph::ExecutionStep& step : steps_) {
    if (step.kind == graph::ExecutionStep::kCluster) {
      ClusterState& state = clusters_[step.index];
      std::vector<const Literal*> args;
      for (const graph::ValueInfo& in : state.cluster.graph.inputs) {
        args.push_back(values.at(in.name));
      }
      const Compiled* used = nullptr;
      absl::StatusOr<std::vector<Literal>> outs = RunCluster(state, args, &used);
      if (!outs.ok()) return outs.status();
      if (compiled) compiled->push_back(used);
      for (size_t k = 0; k < outs->size(); ++k) {
        keep(state.cluster.graph.outputs[k].name, std::move((*outs)[k]));
      }
      continue;
    }
    const graph::Node& node = graph_.nodes[step.index];
    absl::StatusOr<int64_t> opset = graph_.OpsetFor(node.domain);
    if (!opset.ok()) return opset.status();
    std::vector<const Literal*> args;
    for (const std::string& in : node.inputs) args.push_back(in.empty() ? nullptr : values.at(in));
    absl::Time start = absl::Now();
    absl::StatusOr<std::vector<Literal>> outs = graph::RunHostKernel(node, *opset, args);
    absl::Duration time = absl::Now() - start;
    {
      std::lock_guard<std::mutex> lock(mu_);
      HostStats& stats = host_stats_[step.index];
      ++stats.runs;
      stats.time += time;
      ++metrics_.host_kernel_runs;
      metrics_.host_kernel_time += time;
    }
    if (!outs.ok()) return outs.status();
    for (size_t k = 0; k < node.outputs.size(); ++k) {
      if (!node.outputs[k].empty()) keep(node.outputs[k], std::move((*outs)[k]));
    }
  }
  std::map<std::string, int> uses;
  for (const graph::ValueInfo& out : graph_.outputs) ++uses[out.name];
  std::vector<Literal> outputs;
  for (const graph::ValueInfo& out : graph_.outputs) {
    auto it = made.find(out.name);
    if (it != made.end() && --uses[out.name] == 0) {
      outputs.push_back(std::move(*it->second));
    } else {
      outputs.push_back(values.at(out.name)->Clone());
    }
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++metrics_.runs;
  }
  return outputs;
}

absl::StatusOr<std::vector<Literal>> Session::Run(absl::Span<const Literal> inputs) {
  return RunPlan(inputs, nullptr);
}

absl::StatusOr<std::string> Session::HloText(absl::Span<const Literal> inputs) {
  std::vector<const Compiled*> compiled;
  absl::StatusOr<std::vector<Literal>> outputs = RunPlan(inputs, &compiled);
  if (!outputs.ok()) return outputs.status();
  if (compiled.size() == 1) return compiled[0]->result.computation.ToString();
  std::string out;
  for (size_t k = 0; k < compiled.size(); ++k) {
    absl::StrAppend(&out, "// cluster ", k, "\n", compiled[k]->result.computation.ToString());
  }
  return out;
}

}  // namespace axle::onnx
