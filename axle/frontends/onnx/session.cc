//===- session.cc - Compile per signature, cache, execute -------------------===//
#include "axle/frontends/onnx/session.h"

#include "absl/strings/str_cat.h"
#include "axle/frontends/onnx/kernels/kernels.h"
#include "axle/frontends/onnx/onnx_loader.h"

namespace axle::onnx {
namespace {

absl::StatusOr<std::string> DeviceTypeFor(const std::string& platform) {
  if (platform == "cpu" || platform == "Host") return std::string(graph::DEVICE_CPU);
  if (platform == "interpreter" || platform == "Interpreter") {
    return std::string(graph::DEVICE_INTERPRETER);
  }
  return absl::InvalidArgumentError(
      absl::StrCat("platform '", platform, "' is not one of cpu, interpreter"));
}

}  // namespace

Session::Session(graph::Graph graph, Options options, LocalClient* client)
    : graph_(std::move(graph)), options_(std::move(options)), client_(client) {
  constant_input_.assign(graph_.inputs.size(), false);
  for (int i : graph::ConstantGraphInputs(graph_, options_.compiler.device_type)) {
    constant_input_[i] = true;
  }
  for (size_t i = 0; i < graph_.inputs.size(); ++i) {
    if (options_.constant_inputs.count(graph_.inputs[i].name)) constant_input_[i] = true;
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
  // Check the graph's structure now rather than at the first run.
  absl::StatusOr<std::vector<int64_t>> order = graph::TopologicalOrder(graph);
  if (!order.ok()) return order.status();
  for (const std::string& name : options.constant_inputs) {
    bool found = false;
    for (const graph::ValueInfo& input : graph.inputs) found |= input.name == name;
    if (!found) {
      return absl::InvalidArgumentError(
          absl::StrCat("constant input '", name, "' is not an input of the graph"));
    }
  }
  return std::unique_ptr<Session>(new Session(std::move(graph), std::move(options), *client));
}

SessionMetrics Session::metrics() const {
  std::lock_guard<std::mutex> lock(mu_);
  return metrics_;
}

absl::StatusOr<const Session::Compiled*> Session::GetOrCompile(absl::Span<const Literal> inputs) {
  if (inputs.size() != graph_.inputs.size()) {
    return absl::InvalidArgumentError(absl::StrCat("the model has ", graph_.inputs.size(),
                                                   " inputs but ", inputs.size(), " were given"));
  }
  std::string key;
  std::vector<graph::XlaArgument> args;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Shape& shape = inputs[i].shape();
    if (!shape.IsArray()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "input '", graph_.inputs[i].name, "' must be an array, got ", shape.ToString(false)));
    }
    graph::XlaArgument arg;
    arg.shape = ShapeUtil::MakeShape(shape.element_type(), shape.dimensions());
    absl::StrAppend(&key, arg.shape.ToString(false), ";");
    if (constant_input_[i]) {
      arg.constant = inputs[i].Clone();
      absl::StrAppend(&key, "=",
                      absl::string_view(static_cast<const char*>(inputs[i].untyped_data()),
                                        inputs[i].size_bytes()),
                      ";");
    }
    args.push_back(std::move(arg));
  }
  std::lock_guard<std::mutex> lock(mu_);
  auto it = cache_.find(key);
  if (it != cache_.end()) {
    ++metrics_.cache_hits;
    return it->second.get();
  }
  absl::Time start = absl::Now();
  graph::XlaCompiler compiler(options_.compiler);
  absl::StatusOr<graph::XlaCompilationResult> result = compiler.Compile(graph_, args);
  if (!result.ok()) return result.status();
  std::vector<const Shape*> layouts;
  for (const auto& p : result->parameters) layouts.push_back(&p.shape);
  auto executables = client_->Compile(result->computation, layouts, ExecutableBuildOptions());
  if (!executables.ok()) return executables.status();
  auto compiled = std::make_unique<Compiled>();
  compiled->result = std::move(*result);
  compiled->executable = std::move(executables->front());
  metrics_.compile_time += absl::Now() - start;
  ++metrics_.compiles;
  const Compiled* out = compiled.get();
  cache_[key] = std::move(compiled);
  return out;
}

absl::StatusOr<const ShapedBuffer*> Session::InitializerBuffer(const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = initializer_buffers_.find(name);
  if (it != initializer_buffers_.end()) return it->second.get();
  absl::StatusOr<ScopedShapedBuffer> buffer =
      client_->LiteralToShapedBuffer(graph_.initializers.at(name), 0);
  if (!buffer.ok()) return buffer.status();
  auto owned = std::make_unique<ScopedShapedBuffer>(std::move(*buffer));
  const ShapedBuffer* out = owned.get();
  initializer_buffers_[name] = std::move(owned);
  return out;
}

absl::StatusOr<std::vector<Literal>> Session::Run(absl::Span<const Literal> inputs) {
  absl::StatusOr<const Compiled*> compiled = GetOrCompile(inputs);
  if (!compiled.ok()) return compiled.status();
  std::vector<ScopedShapedBuffer> owned;
  owned.reserve(inputs.size());
  std::vector<const ShapedBuffer*> args;
  for (const auto& p : (*compiled)->result.parameters) {
    if (p.kind == graph::XlaCompilationResult::Parameter::kInitializer) {
      absl::StatusOr<const ShapedBuffer*> buffer = InitializerBuffer(p.initializer);
      if (!buffer.ok()) return buffer.status();
      args.push_back(*buffer);
      continue;
    }
    absl::StatusOr<ScopedShapedBuffer> buffer =
        client_->LiteralToShapedBuffer(inputs[p.input_index], 0);
    if (!buffer.ok()) return buffer.status();
    owned.push_back(std::move(*buffer));
    args.push_back(&owned.back());
  }
  absl::StatusOr<ScopedShapedBuffer> result =
      (*compiled)->executable->Run(absl::MakeConstSpan(args), ExecutableRunOptions());
  if (!result.ok()) return result.status();
  absl::StatusOr<Literal> tuple = client_->ShapedBufferToLiteral(*result);
  if (!tuple.ok()) return tuple.status();
  std::vector<Literal> outputs;
  for (int64_t i = 0; i < tuple->tuple_size(); ++i) {
    outputs.push_back(std::move(tuple->mutable_tuple_element(i)));
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++metrics_.runs;
  }
  return outputs;
}

absl::StatusOr<std::string> Session::HloText(absl::Span<const Literal> inputs) {
  absl::StatusOr<const Compiled*> compiled = GetOrCompile(inputs);
  if (!compiled.ok()) return compiled.status();
  return (*compiled)->result.computation.ToString();
}

}  // namespace axle::onnx
