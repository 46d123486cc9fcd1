#include "axle/runtime/local_client.h"

#include <algorithm>
#include <map>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "axle/base/status_macros.h"
#include "axle/core/host_feed.h"
#include "axle/runtime/transfer.h"

namespace axle {

LocalExecutable::LocalExecutable(std::unique_ptr<Executable> executable,
                                 se::DeviceMemoryAllocator* allocator,
                                 ExecutableBuildOptions build_options)
    : executable_(std::move(executable)),
      allocator_(allocator),
      build_options_(std::move(build_options)) {}

ExecutableRunOptions LocalExecutable::Complete(ExecutableRunOptions options) const {
  if (options.allocator() == nullptr) options.set_allocator(allocator_);
  return options;
}

absl::StatusOr<se::Stream*> LocalExecutable::StreamFor(const ExecutableRunOptions& options) const {
  if (options.stream() != nullptr) return options.stream();
  return executable_->platform()->DefaultStream(std::max(options.device_ordinal(), 0));
}

absl::StatusOr<ScopedShapedBuffer> LocalExecutable::Run(
    absl::Span<const ShapedBuffer* const> arguments, ExecutableRunOptions run_options) const {
  // The arguments may be results of runs still on the stream.
  AXLE_ASSIGN_OR_RETURN(se::Stream * stream, StreamFor(run_options));
  AXLE_RETURN_IF_ERROR(stream->BlockHostUntilDone());
  // Lent arguments: Executable::Execute reads them in place unless an
  // output aliases one (then it copy-protects it).
  return executable_->Execute(Complete(run_options), arguments);
}

absl::Status LocalExecutable::RunArrays(absl::Span<MaybeOwningDeviceMemory> arguments,
                                        ExecutableRunOptions run_options,
                                        std::vector<se::OwningDeviceMemory>* results) const {
  // The arguments may be results of runs still on the stream.
  AXLE_ASSIGN_OR_RETURN(se::Stream * stream, StreamFor(run_options));
  AXLE_RETURN_IF_ERROR(stream->BlockHostUntilDone());
  return executable_->ExecuteArrays(Complete(run_options), arguments, results);
}

absl::StatusOr<ExecutionOutput> LocalExecutable::Run(std::vector<ExecutionInput> arguments,
                                                     ExecutableRunOptions run_options) const {
  // The arguments may be results of runs still on the stream.
  AXLE_ASSIGN_OR_RETURN(se::Stream * stream, StreamFor(run_options));
  AXLE_RETURN_IF_ERROR(stream->BlockHostUntilDone());
  return executable_->Execute(Complete(run_options), std::move(arguments));
}

absl::StatusOr<ScopedShapedBuffer> LocalExecutable::RunAsync(
    absl::Span<const ShapedBuffer* const> arguments, ExecutableRunOptions run_options) const {
  std::vector<ExecutionInput> inputs;
  inputs.reserve(arguments.size());
  for (size_t i = 0; i < arguments.size(); ++i) {
    if (arguments[i] == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("argument ", i, " is null"));
    }
    inputs.push_back(ExecutionInput::Borrow(*arguments[i]));
  }
  AXLE_ASSIGN_OR_RETURN(ExecutionOutput output, RunAsync(std::move(inputs), run_options));
  return output.ConsumeResult();
}

absl::StatusOr<ExecutionOutput> LocalExecutable::RunAsync(std::vector<ExecutionInput> arguments,
                                                          ExecutableRunOptions run_options) const {
  AXLE_ASSIGN_OR_RETURN(se::Stream * stream, StreamFor(run_options));
  return executable_->ExecuteAsyncOnStream(Complete(run_options), stream, std::move(arguments));
}

LocalClient::LocalClient(se::Platform* platform)
    : platform_(platform),
      allocator_(platform->memory_allocator()),
      backend_(platform, allocator_) {}

absl::StatusOr<std::vector<std::unique_ptr<LocalExecutable>>> LocalClient::Compile(
    const XlaComputation& computation, absl::Span<const Shape* const> argument_layouts,
    const ExecutableBuildOptions& options) {
  if (computation.IsNull()) return absl::InvalidArgumentError("Compile: the computation is null");
  std::unique_ptr<HloModule> module = computation.CloneModule();
  HloComputation* entry = module->entry_computation();
  if (static_cast<int64_t>(argument_layouts.size()) != entry->num_parameters()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Compile: ", argument_layouts.size(), " argument layout(s) given; the computation '",
        computation.name(), "' has ", entry->num_parameters(), " parameter(s)"));
  }
  for (int64_t i = 0; i < entry->num_parameters(); ++i) {
    HloInstruction* parameter = entry->parameter_instruction(i);
    const Shape* layout = argument_layouts[i];
    if (layout == nullptr || !ShapeUtil::Compatible(*layout, parameter->shape())) {
      return absl::InvalidArgumentError(
          absl::StrCat("Compile: argument layout ", i, " is ",
                       layout == nullptr ? "null" : layout->ToString(true), "; parameter ", i, " (",
                       parameter->name(), ") has shape ", parameter->shape().ToString(false)));
    }
    // The caller's layout becomes the parameter's.
    Shape shape = *layout;
    ShapeUtil::SetToDefaultLayoutIfMissing(&shape);
    *parameter->mutable_shape() = shape;
  }
  if (const Shape* result_layout = options.result_layout()) {
    const Shape& root = entry->root_instruction()->shape();
    if (!ShapeUtil::Compatible(*result_layout, root)) {
      return absl::InvalidArgumentError(
          absl::StrCat("Compile: result layout ", result_layout->ToString(true),
                       " does not match the result shape ", root.ToString(false)));
    }
    if (!ShapeUtil::Equal(*result_layout, root) && root.has_layout()) {
      return absl::UnimplementedError(
          absl::StrCat("Compile: a result layout (", result_layout->ToString(true),
                       ") other than the computation's own (", root.ToString(true), ")"));
    }
  }
  AXLE_ASSIGN_OR_RETURN(std::unique_ptr<LocalExecutable> executable,
                        Compile(std::move(module), options));
  std::vector<std::unique_ptr<LocalExecutable>> result;
  result.push_back(std::move(executable));
  return result;
}

absl::StatusOr<std::unique_ptr<LocalExecutable>> LocalClient::Compile(
    std::unique_ptr<HloModule> module, const ExecutableBuildOptions& options) {
  if (module == nullptr) return absl::InvalidArgumentError("Compile: the module is null");
  if (options.device_ordinal() > 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("Compile: device ordinal ", options.device_ordinal(),
                     " does not exist on platform '", platform_->Name(), "'"));
  }
  if (options.num_replicas() > 1 || options.num_partitions() > 1) {
    return absl::UnimplementedError(absl::StrCat(
        "Compile: ", options.num_replicas(), " replica(s) x ", options.num_partitions(),
        " partition(s): platform '", platform_->Name(), "' runs one device"));
  }
  AXLE_RETURN_IF_ERROR(CheckModuleForPlatform(*module, *platform_));
  Compiler* compiler = platform_->compiler();
  if (compiler == nullptr) {
    return absl::InternalError(absl::StrCat("platform '", platform_->Name(), "' has no compiler"));
  }
  AXLE_ASSIGN_OR_RETURN(std::unique_ptr<Executable> executable,
                        compiler->Compile(std::move(module), options));
  return std::make_unique<LocalExecutable>(std::move(executable), allocator_, options);
}

absl::Status LocalClient::TransferToInfeedLocal(const Literal& literal, int device_ordinal) {
  if (device_ordinal < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("TransferToInfeedLocal: bad device ordinal ", device_ordinal));
  }
  HostFeed::Get(HostFeed::Direction::kInfeed, platform_->Name(), device_ordinal)
      .Push(literal.Clone());
  return absl::OkStatus();
}

absl::Status LocalClient::TransferFromOutfeedLocal(int device_ordinal, Literal* literal) {
  if (literal == nullptr || device_ordinal < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("TransferFromOutfeedLocal: needs a literal and a device ordinal >= 0, got ",
                     device_ordinal));
  }
  const Shape shape = literal->shape();
  AXLE_ASSIGN_OR_RETURN(
      *literal, HostFeed::Get(HostFeed::Direction::kOutfeed, platform_->Name(), device_ordinal)
                    .Pop(FeedTimeoutFromEnvironment(), &shape));
  return absl::OkStatus();
}

absl::StatusOr<Literal> LocalClient::TransferFromOutfeed(const Shape* shape_with_layout,
                                                         int64_t replica_id) {
  if (shape_with_layout == nullptr) {
    return absl::InvalidArgumentError("TransferFromOutfeed: needs the value's shape");
  }
  Literal literal(*shape_with_layout);
  AXLE_RETURN_IF_ERROR(TransferFromOutfeedLocal(static_cast<int>(replica_id), &literal));
  return literal;
}

absl::StatusOr<ScopedShapedBuffer> LocalClient::LiteralToShapedBuffer(
    const Literal& literal, int device_ordinal, se::DeviceMemoryAllocator* allocator) {
  if (device_ordinal != 0) {
    return absl::InvalidArgumentError(absl::StrCat("device ordinal ", device_ordinal,
                                                   " does not exist on platform '",
                                                   platform_->Name(), "'"));
  }
  TransferManager* transfer_manager = platform_->transfer_manager();
  AXLE_ASSIGN_OR_RETURN(
      ScopedShapedBuffer result,
      transfer_manager->AllocateScopedShapedBuffer(
          literal.shape(), allocator != nullptr ? allocator : allocator_, device_ordinal));
  // Fresh buffers: no work on the stream can touch them (the platform's
  // allocator frees in stream order), so they are written now, without
  // waiting for runs in flight.
  AXLE_RETURN_IF_ERROR(transfer_manager->TransferLiteralToFreshBuffer(literal, result));
  return result;
}

absl::StatusOr<Literal> LocalClient::ShapedBufferToLiteral(const ShapedBuffer& shaped_buffer) {
  AXLE_ASSIGN_OR_RETURN(se::Stream * stream,
                        platform_->DefaultStream(shaped_buffer.device_ordinal()));
  return platform_->transfer_manager()->TransferLiteralFromDevice(stream, shaped_buffer);
}

absl::StatusOr<LocalClient*> ClientLibrary::GetOrCreateLocalClient(se::Platform* platform) {
  if (platform == nullptr) {
    AXLE_ASSIGN_OR_RETURN(platform, PlatformUtil::GetDefaultPlatform());
  }
  static std::mutex mu;
  static auto* clients = new std::map<se::Platform*, std::unique_ptr<LocalClient>>();
  std::lock_guard<std::mutex> lock(mu);
  std::unique_ptr<LocalClient>& client = (*clients)[platform];
  if (client == nullptr) client = std::make_unique<LocalClient>(platform);
  return client.get();
}

absl::StatusOr<LocalClient*> ClientLibrary::GetOrCreateLocalClient(
    const LocalClientOptions& options) {
  if (options.number_of_replicas > 1) {
    return absl::UnimplementedError(absl::StrCat("LocalClient with ", options.number_of_replicas,
                                                 " replicas: host platforms run one"));
  }
  return GetOrCreateLocalClient(options.platform);
}

LocalClient* ClientLibrary::LocalClientOrDie() {
  absl::StatusOr<LocalClient*> client = GetOrCreateLocalClient(nullptr);
  CHECK(client.ok()) << client.status().ToString();
  return *client;
}

}  // namespace axle
