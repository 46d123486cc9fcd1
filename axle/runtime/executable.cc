#include "axle/runtime/executable.h"

#include "absl/cleanup/cleanup.h"
#include "absl/container/inlined_vector.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "axle/base/status_macros.h"
#include "axle/hlo/analysis/hlo_verifier.h"
#include "axle/hlo/ir/hlo_instructions.h"
#include "axle/hlo/transforms/sharding_remover.h"
#include "axle/runtime/custom_call_registry.h"
#include "axle/runtime/host_ffi.h"

namespace axle {
namespace {

std::string IndexString(const ShapeIndex& index) {
  return absl::StrCat("{", absl::StrJoin(index, ","), "}");
}

Shape WithDefaultLayout(Shape shape) {
  ShapeUtil::SetToDefaultLayoutIfMissing(&shape);
  return shape;
}

// Array shapes equal in type and dimensions, and in layout where both have
// one.
bool SameArrayShape(const Shape& a, const Shape& b) {
  if (!a.IsArray() || !b.IsArray() || !ShapeUtil::Compatible(a, b)) return false;
  if (a.has_layout() && b.has_layout()) {
    return a.layout().minor_to_major() == b.layout().minor_to_major();
  }
  return true;
}

// The verifier has checked that every alias and donor names an existing
// parameter, index and output, that sizes match and that no buffer is
// aliased twice. Running aliased code in place also needs the parameter and
// the output to be arrays of one byte size on the device; as in XLA, their
// types, dimensions and layouts may differ (bf16[11,10,12] may alias
// bf16[10,11,12]): the output is written over the parameter's bytes.
absl::Status CheckAliasing(const HloModule& module) {
  const HloComputation& entry = *module.entry_computation();
  const Shape& result = entry.root_instruction()->shape();
  for (const HloInputOutputAliasConfig::Alias& alias :
       module.input_output_alias_config().aliases()) {
    const Shape parameter = WithDefaultLayout(ShapeUtil::GetSubshape(
        entry.parameter_instruction(alias.parameter_number)->shape(), alias.parameter_index));
    const Shape output = WithDefaultLayout(ShapeUtil::GetSubshape(result, alias.output_index));
    if (!parameter.IsArray() || !output.IsArray() ||
        DeviceBufferSize(parameter) != DeviceBufferSize(output)) {
      return absl::InvalidArgumentError(
          absl::StrCat("input_output_alias ", IndexString(alias.output_index), ": (",
                       alias.parameter_number, ", ", IndexString(alias.parameter_index),
                       "): the output ", output.ToString(true), " and the parameter ",
                       parameter.ToString(true), " must be arrays of the same size in bytes"));
    }
  }
  return absl::OkStatus();
}

// jaxlib's Python host callbacks (jax.debug.print, jax.pure_callback,
// io_callback): xla_{ffi_,ffi_partitioned_,buffer_,}python_{cpu,gpu}_callback.
bool IsJaxPythonCallback(absl::string_view target) {
  for (absl::string_view prefix :
       {"xla_python_", "xla_ffi_python_", "xla_ffi_partitioned_python_", "xla_buffer_python_"}) {
    if (absl::StartsWith(target, prefix) && absl::EndsWith(target, "_callback")) return true;
  }
  return false;
}

absl::Status CheckCustomCall(const HloCustomCallInstruction& custom_call,
                             const se::Platform& platform) {
  if (platform.compiler() != nullptr && platform.compiler()->ComputesCustomCall(custom_call)) {
    return absl::OkStatus();
  }
  const std::string& target = custom_call.custom_call_target();
  // JAX's sharding annotations: every platform's compiler removes them
  // (sharding_remover.h), or says why it cannot.
  if (IsShardingAnnotationTarget(target)) return absl::OkStatus();
  const std::string& cc_platform = platform.custom_call_platform();
  auto context = [&] {
    return absl::StrCat(" (instruction %", custom_call.name(), ", compiling for platform '",
                        platform.Name(), "')");
  };
  if (custom_call.api_version() == API_VERSION_TYPED_FFI) {
    if (FfiHandlerRegistry::Global()->Find(target, cc_platform).ok()) {
      absl::StatusOr<FfiAttributes> attributes = ParseFfiAttributes(custom_call.opaque());
      if (!attributes.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat("custom-call target '", target,
                         "': bad backend_config: ", attributes.status().message(), context()));
      }
      return absl::OkStatus();
    }
  } else {
    absl::StatusOr<void*> address =
        CustomCallTargetRegistry::Global()->LookupOrError(target, cc_platform);
    if (address.ok()) return absl::OkStatus();
    if (address.status().code() == absl::StatusCode::kFailedPrecondition) {
      return absl::Status(address.status().code(),
                          absl::StrCat(address.status().message(), context()));
    }
  }
  if (IsJaxPythonCallback(target)) {
    return absl::UnimplementedError(absl::StrCat(
        "custom-call target '", target,
        "' is a JAX Python host callback (jax.debug.print, jax.pure_callback, io_callback): it "
        "calls into the Python process that traced the program, which a module run here does "
        "not have",
        context()));
  }
  // XLA:GPU's cuDNN convolution calls: the cuda compiler rewrites them into
  // convolutions (axle/gpu/cudnn_conv_calls.h); nothing else runs them.
  if (absl::StartsWith(target, "__cudnn$conv")) {
    return absl::UnimplementedError(absl::StrCat(
        "custom-call target '", target,
        "' is XLA:GPU's cuDNN convolution, which only the cuda platform computes", context()));
  }
  std::vector<std::string> platforms = CustomCallTargetRegistry::Global()->PlatformsOf(target);
  if (std::find(platforms.begin(), platforms.end(), kCudaPlatformName) != platforms.end()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "custom-call target '", target, "' is registered only for platform \"",
        absl::StrJoin(platforms, "\", \""),
        "\" (the GPU calling convention: stream, buffers, opaque); platform '", platform.Name(),
        "' runs \"", cc_platform, "\" targets and has no CUDA device", context()));
  }
  std::string elsewhere =
      platforms.empty()
          ? ""
          : absl::StrCat("; it is registered for \"", absl::StrJoin(platforms, "\", \""), "\"");
  if (custom_call.api_version() == API_VERSION_TYPED_FFI &&
      CustomCallTargetRegistry::Global()->Lookup(target, cc_platform) != nullptr) {
    elsewhere = "; a non-FFI function is registered under that name: check api_version";
  }
  return absl::NotFoundError(absl::StrCat("custom-call target '", target,
                                          "' is not registered for platform \"", cc_platform, "\"",
                                          elsewhere, context()));
}

// The nodes of a ShapeTree (shape_tree.h) are its shape's in pre-order: the
// helpers below walk the shape alongside, by position, so that a run
// allocates the result and writes its index tables without looking nodes
// up by index or building indices.

// Gives node `position` of `result` a buffer of `size` bytes unless it needs
// none or has one (an aliased output has its parameter's).
void AllocateResultNode(int64_t size, size_t position, se::DeviceMemoryAllocator* allocator,
                        int device_ordinal, ScopedShapedBuffer* result, absl::Status* status) {
  se::DeviceMemoryBase& buffer =
      (result->buffers().begin() + static_cast<ptrdiff_t>(position))->second;
  if (size == 0 || !buffer.is_null() || !status->ok()) return;
  absl::StatusOr<se::OwningDeviceMemory> memory = allocator->Allocate(device_ordinal, size);
  if (memory.ok()) {
    buffer = memory->Release();
  } else {
    *status = memory.status();
  }
}

// AllocateResultNode for node `position` of shape `shape` and the nodes
// under it; returns the next position.
size_t AllocateResultNodes(const Shape& shape, size_t position,
                           se::DeviceMemoryAllocator* allocator, int device_ordinal,
                           ScopedShapedBuffer* result, absl::Status* status) {
  AllocateResultNode(DeviceBufferSize(shape), position, allocator, device_ordinal, result, status);
  size_t next = position + 1;
  if (shape.IsTuple()) {
    for (const Shape& element : shape.tuple_shapes()) {
      next = AllocateResultNodes(element, next, allocator, device_ordinal, result, status);
    }
  }
  return next;
}

// Allocates the result's nodes. `element_bytes`: the DeviceBufferSize of
// each element of a tuple `shape` that is an array (0 for the others), as
// Executable keeps them: a flat tuple's sizes take no shape arithmetic.
absl::Status AllocateResult(const Shape& shape, absl::Span<const int64_t> element_bytes,
                            se::DeviceMemoryAllocator* allocator, int device_ordinal,
                            ScopedShapedBuffer* result) {
  absl::Status status;
  if (!shape.IsTuple() || element_bytes.size() != static_cast<size_t>(shape.tuple_shapes_size())) {
    AllocateResultNodes(shape, 0, allocator, device_ordinal, result, &status);
    return status;
  }
  AllocateResultNode(DeviceBufferSize(shape), 0, allocator, device_ordinal, result, &status);
  size_t next = 1;
  for (size_t i = 0; i < element_bytes.size(); ++i) {
    const Shape& element = shape.tuple_shapes(static_cast<int64_t>(i));
    if (element.IsArray()) {
      AllocateResultNode(element_bytes[i], next++, allocator, device_ordinal, result, &status);
    } else {
      next = AllocateResultNodes(element, next, allocator, device_ordinal, result, &status);
    }
  }
  return status;
}

// The result's tuple index tables (each element's address), written
// through the platform's memcpy: device memory is not host memory on every
// platform (cuda). On host platforms this is WriteTupleIndexTables. Returns
// the next position.
size_t WriteResultTupleTables(const se::Platform& platform, const Shape& shape, size_t position,
                              const ShapedBuffer& result, absl::Status* status) {
  if (!shape.IsTuple()) return position + 1;
  const auto nodes = result.buffers().begin();
  absl::InlinedVector<const void*, 8> table;
  size_t next = position + 1;
  for (const Shape& element : shape.tuple_shapes()) {
    table.push_back((nodes + static_cast<ptrdiff_t>(next))->second.opaque());
    next = WriteResultTupleTables(platform, element, next, result, status);
  }
  se::DeviceMemoryBase destination = (nodes + static_cast<ptrdiff_t>(position))->second;
  if (!destination.is_null() && status->ok()) {
    *status =
        platform.SynchronousMemcpy(&destination, table.data(), table.size() * sizeof(const void*));
  }
  return next;
}

absl::Status WriteResultTupleTables(const se::Platform& platform, const ShapedBuffer& result) {
  absl::Status status;
  WriteResultTupleTables(platform, result.on_device_shape(), 0, result, &status);
  return status;
}

}  // namespace

absl::Status CheckModuleForPlatform(const HloModule& module, const se::Platform& platform) {
  if (module.entry_computation() == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("module '", module.name(), "' has no entry computation"));
  }
  AXLE_RETURN_IF_ERROR(VerifyHloModule(module));
  AXLE_RETURN_IF_ERROR(CheckAliasing(module));
  for (const HloComputation* computation : module.computations()) {
    for (const HloInstruction* instruction : computation->instructions()) {
      if (const auto* custom_call = dyn_cast<HloCustomCallInstruction>(instruction)) {
        AXLE_RETURN_IF_ERROR(CheckCustomCall(*custom_call, platform));
      }
    }
  }
  return absl::OkStatus();
}

std::string ExecutableBuildOptions::ToString() const {
  return absl::StrCat("device_ordinal=", device_ordinal_,
                      " result_layout=", result_layout_ ? result_layout_->ToString(true) : "none",
                      " num_replicas=", num_replicas_, " num_partitions=", num_partitions_);
}

Executable::Executable(std::shared_ptr<const HloModule> module, const se::Platform* platform)
    : module_(std::move(module)), platform_(platform) {
  const HloComputation& entry = *module_->entry_computation();
  for (const HloInstruction* parameter : entry.parameter_instructions()) {
    parameter_shapes_.push_back(WithDefaultLayout(parameter->shape()));
  }
  result_ = IndexedShape::Make(WithDefaultLayout(entry.root_instruction()->shape()));
  const Shape& result_shape = result_->shape();

  arrays_only_ = result_shape.IsTuple();
  for (const Shape& parameter : parameter_shapes_) {
    arrays_only_ = arrays_only_ && parameter.IsArray();
    parameter_bytes_.push_back(parameter.IsArray() ? DeviceBufferSize(parameter) : 0);
  }
  if (result_shape.IsTuple()) {
    for (const Shape& element : result_shape.tuple_shapes()) {
      arrays_only_ = arrays_only_ && element.IsArray();
      result_bytes_.push_back(element.IsArray() ? DeviceBufferSize(element) : 0);
    }
  }
  result_alias_.assign(result_bytes_.size(), -1);
  result_must_alias_.assign(result_bytes_.size(), false);
  for (const HloInputOutputAliasConfig::Alias& alias :
       module_->input_output_alias_config().aliases()) {
    // Arrays to a tuple of arrays: an alias is ({i}, parameter, {}).
    if (alias.output_index.size() != 1 || !alias.parameter_index.empty()) {
      arrays_only_ = false;
      continue;
    }
    const int64_t element = alias.output_index[0];
    if (element < 0 || element >= static_cast<int64_t>(result_alias_.size())) continue;
    result_alias_[element] = alias.parameter_number;
    result_must_alias_[element] = alias.must_alias();
  }
}

Executable::~Executable() = default;

namespace {

// The checks of a run, shared by Prepare and the run of lent arguments.
// Strings are built only on an error: a run must not build them.
std::string ArgumentName(const HloModule& module, size_t i) {
  return absl::StrCat("argument ", i, " (parameter ",
                      module.entry_computation()->parameter_instruction(i)->name(), ")");
}

// The device ordinal to run on.
absl::StatusOr<int> CheckRun(const HloModule& module, const se::Platform& platform,
                             absl::Span<const Shape> parameter_shapes,
                             const ExecutableRunOptions& options, size_t num_arguments) {
  if (num_arguments != parameter_shapes.size()) {
    return absl::InvalidArgumentError(absl::StrCat("module '", module.name(), "' takes ",
                                                   parameter_shapes.size(), " argument(s); got ",
                                                   num_arguments));
  }
  int device_ordinal = options.device_ordinal() < 0 ? 0 : options.device_ordinal();
  if (device_ordinal != 0) {
    return absl::InvalidArgumentError(absl::StrCat("device ordinal ", device_ordinal,
                                                   " does not exist on platform '", platform.Name(),
                                                   "' (it has device 0)"));
  }
  return device_ordinal;
}

absl::Status CheckArgument(const HloModule& module, absl::Span<const Shape> parameter_shapes,
                           size_t i, const Shape& given) {
  const Shape& expected = parameter_shapes[i];
  // An array (what most arguments are): type, dimensions and layout, with
  // no walk over leaves.
  if (expected.IsArray() && given.IsArray() && SameArrayShape(given, expected)) {
    return absl::OkStatus();
  }
  if (!ShapeUtil::Compatible(given, expected)) {
    return absl::InvalidArgumentError(absl::StrCat(ArgumentName(module, i), " has shape ",
                                                   given.ToString(false), "; expected ",
                                                   expected.ToString(false)));
  }
  bool layouts_match = true;
  ShapeUtil::ForEachLeafShape(expected, [&](const Shape& leaf, const ShapeIndex& index) {
    if (leaf.IsArray() && !SameArrayShape(leaf, ShapeUtil::GetSubshape(given, index))) {
      layouts_match = false;
    }
  });
  if (!layouts_match) {
    return absl::InvalidArgumentError(absl::StrCat(ArgumentName(module, i), " has layout ",
                                                   given.ToString(true), "; expected ",
                                                   expected.ToString(true)));
  }
  return absl::OkStatus();
}

// `bytes`: the parameter's DeviceBufferSize when it is an array (its
// argument has its shape, checked before), else 0.
absl::Status CheckBuffers(const HloModule& module, size_t i, const ShapedBuffer& buffer,
                          int64_t bytes) {
  if (bytes > 0 && buffer.buffers().size() == 1) {
    const se::DeviceMemoryBase& memory = buffer.buffers().begin()->second;
    if (!memory.is_null() && memory.size() >= static_cast<uint64_t>(bytes)) {
      return absl::OkStatus();
    }
  } else if (buffer.CheckValid("").ok()) {
    return absl::OkStatus();
  }
  return buffer.CheckValid(ArgumentName(module, i));
}

}  // namespace

absl::StatusOr<ScopedShapedBuffer> Executable::Execute(
    const ExecutableRunOptions& options, absl::Span<const ShapedBuffer* const> arguments) const {
  for (size_t i = 0; i < arguments.size(); ++i) {
    if (arguments[i] == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("argument ", i, " is null"));
    }
  }
  const HloInputOutputAliasConfig& aliases = module_->input_output_alias_config();
  if (aliases.aliases().empty()) {
    // Nothing to copy-protect: the run reads the caller's buffers through
    // the caller's ShapedBuffers, with no ExecutionInput and no view (each
    // copied the argument's shape).
    AXLE_ASSIGN_OR_RETURN(int device_ordinal, CheckRun(*module_, *platform_, parameter_shapes_,
                                                       options, arguments.size()));
    for (size_t i = 0; i < arguments.size(); ++i) {
      AXLE_RETURN_IF_ERROR(
          CheckArgument(*module_, parameter_shapes_, i, arguments[i]->on_device_shape()));
      AXLE_RETURN_IF_ERROR(CheckBuffers(*module_, i, *arguments[i], parameter_bytes_[i]));
    }
    se::DeviceMemoryAllocator* allocator =
        options.allocator() != nullptr ? options.allocator() : platform_->memory_allocator();
    ScopedShapedBuffer result(result_, allocator, device_ordinal);
    AXLE_RETURN_IF_ERROR(
        AllocateResult(result_shape(), result_bytes_, allocator, device_ordinal, &result));
    AXLE_RETURN_IF_ERROR(WriteResultTupleTables(*platform_, result));
    AXLE_RETURN_IF_ERROR(ExecuteOnBuffers(options, arguments, result));
    return result;
  }
  std::vector<ExecutionInput> inputs;
  inputs.reserve(arguments.size());
  for (const ShapedBuffer* argument : arguments) {
    inputs.push_back(ExecutionInput::Borrow(*argument));
  }
  AXLE_ASSIGN_OR_RETURN(ExecutionOutput output, Execute(options, std::move(inputs)));
  return output.ConsumeResult();
}

// What Prepare leaves for the run: the argument views the backend reads
// (copy-protected leaves replaced by their copies), the copies to make
// first, and the arguments, which own the donated buffers until the run is
// done.
struct Executable::PreparedRun {
  struct Copy {
    se::DeviceMemoryBase source;
    se::DeviceMemoryBase destination;
  };
  std::vector<ShapedBuffer> views;
  std::vector<Copy> copies;
  std::vector<ExecutionInput> arguments;

  std::vector<const ShapedBuffer*> ViewPointers() const {
    std::vector<const ShapedBuffer*> pointers;
    for (const ShapedBuffer& view : views) pointers.push_back(&view);
    return pointers;
  }
};

absl::StatusOr<ExecutionOutput> Executable::Prepare(const ExecutableRunOptions& options,
                                                    std::vector<ExecutionInput> arguments,
                                                    PreparedRun* run) const {
  AXLE_ASSIGN_OR_RETURN(int device_ordinal, CheckRun(*module_, *platform_, parameter_shapes_,
                                                     options, arguments.size()));
  std::vector<ShapedBuffer>& views = run->views;
  views.reserve(arguments.size());
  for (size_t i = 0; i < arguments.size(); ++i) {
    AXLE_RETURN_IF_ERROR(CheckArgument(*module_, parameter_shapes_, i, arguments[i].shape()));
    views.push_back(arguments[i].ToShapedBuffer(device_ordinal));
    AXLE_RETURN_IF_ERROR(CheckBuffers(*module_, i, views.back(), parameter_bytes_[i]));
  }

  se::DeviceMemoryAllocator* allocator =
      options.allocator() != nullptr ? options.allocator() : platform_->memory_allocator();
  ExecutionOutput output(ScopedShapedBuffer(result_, allocator, device_ordinal));
  ScopedShapedBuffer* result = output.MutableResult();
  const HloInputOutputAliasConfig& aliases = module_->input_output_alias_config();
  // The aliased outputs first (donated or copy protected); AllocateResult
  // then allocates the others.
  for (const HloInputOutputAliasConfig::Alias& alias_entry : aliases.aliases()) {
    const ShapeIndex& index = alias_entry.output_index;
    const HloInputOutputAliasConfig::Alias* alias = aliases.GetAliasedParameter(index);
    if (alias != &alias_entry) continue;  // (an output's first alias is the one)
    const int64_t size = DeviceBufferSize(ShapeUtil::GetSubshape(result_shape(), index));
    if (size == 0) continue;
    ExecutionInput& argument = arguments[alias->parameter_number];
    MaybeOwningDeviceMemory* given = argument.MutableBuffer(alias->parameter_index);
    bool donated =
        given->HasOwnership() && argument.unowned_indices().count(alias->parameter_index) == 0;
    if (donated) {
      // The output lives in the donated buffer: same address, no copy.
      result->set_buffer(*given->Release(), index);
      output.AddAliasedIndex(index);
      continue;
    }
    if (alias->kind == HloInputOutputAliasConfig::AliasKind::kMustAlias) {
      return absl::InvalidArgumentError(absl::StrCat(
          "output ", IndexString(index), " must alias argument ", alias->parameter_number, " at ",
          IndexString(alias->parameter_index),
          " (must-alias), but that argument buffer was not donated: pass it with ownership "
          "(e.g. ExecutionInput::Donate)"));
    }
    // Copy protection: the program updates a copy (made by the platform
    // before the run); the caller's value stays.
    AXLE_ASSIGN_OR_RETURN(se::OwningDeviceMemory copy, allocator->Allocate(device_ordinal, size));
    run->copies.push_back({given->AsDeviceMemoryBase(), copy.cref()});
    views[alias->parameter_number].set_buffer(copy.cref(), alias->parameter_index);
    result->set_buffer(std::move(copy), index);
  }
  AXLE_RETURN_IF_ERROR(
      AllocateResult(result_shape(), result_bytes_, allocator, device_ordinal, result));
  AXLE_RETURN_IF_ERROR(WriteResultTupleTables(*platform_, *result));
  run->arguments = std::move(arguments);
  return output;
}

absl::StatusOr<ExecutionOutput> Executable::Execute(const ExecutableRunOptions& options,
                                                    std::vector<ExecutionInput> arguments) const {
  PreparedRun run;
  AXLE_ASSIGN_OR_RETURN(ExecutionOutput output, Prepare(options, std::move(arguments), &run));
  for (PreparedRun::Copy& copy : run.copies) {
    AXLE_RETURN_IF_ERROR(
        platform_->SynchronousMemcpy(&copy.destination, copy.source, copy.destination.size()));
  }
  AXLE_RETURN_IF_ERROR(ExecuteOnBuffers(options, run.ViewPointers(), output.Result()));

  // Donated buffers the result did not take go back to the caller to free.
  for (ExecutionInput& argument : run.arguments) {
    for (auto&& [index, buffer] : *argument.MutableBuffers()) {
      if (argument.unowned_indices().count(index)) continue;
      if (std::optional<se::OwningDeviceMemory> owned = buffer.Release()) {
        output.AddToBeReleased(std::move(*owned));
      }
    }
  }
  return output;
}

absl::StatusOr<ExecutionOutput> Executable::ExecuteAsyncOnStream(
    const ExecutableRunOptions& options, se::Stream* stream,
    std::vector<ExecutionInput> arguments) const {
  if (stream == nullptr) return absl::InvalidArgumentError("ExecuteAsyncOnStream: null stream");
  if (stream->platform() != platform_) {
    return absl::InvalidArgumentError(absl::StrCat(
        "module '", module_->name(), "' was compiled for platform '", platform_->Name(),
        "'; the stream is of platform '", stream->platform()->Name(), "'"));
  }
  auto run = std::make_unique<PreparedRun>();
  AXLE_ASSIGN_OR_RETURN(ExecutionOutput output, Prepare(options, std::move(arguments), run.get()));
  for (PreparedRun::Copy& copy : run->copies) {
    AXLE_RETURN_IF_ERROR(stream->Memcpy(&copy.destination, copy.source, copy.destination.size()));
  }
  // The run writes the result through a view; the caller owns the buffers.
  ShapedBuffer result(result_, output.Result().device_ordinal());
  result.buffers() = output.Result().buffers();
  AXLE_RETURN_IF_ERROR(stream->DoHostCallbackWithStatus(
      [self = weak_from_this().lock(), this, options, run = std::move(run),
       result = std::move(result)]() mutable -> absl::Status {
        absl::Status status = ExecuteOnBuffers(options, run->ViewPointers(), result);
        run.reset();  // frees the donated buffers the result did not take
        if (status.ok()) return status;
        return absl::Status(status.code(), absl::StrCat("asynchronous run of module '",
                                                        module_->name(), "': ", status.message()));
      }));
  return output;
}

absl::Status Executable::ExecuteArrays(const ExecutableRunOptions& options,
                                       absl::Span<MaybeOwningDeviceMemory> arguments,
                                       std::vector<se::OwningDeviceMemory>* results) const {
  results->clear();
  if (!arrays_only_) {
    return absl::InvalidArgumentError(absl::StrCat(
        "ExecuteArrays: module '", module_->name(),
        "' is not arrays to a tuple of arrays (parameters and result: ", result_shape().ToString(),
        "; aliases between tuple elements); use Execute"));
  }
  AXLE_ASSIGN_OR_RETURN(int device_ordinal, CheckRun(*module_, *platform_, parameter_shapes_,
                                                     options, arguments.size()));
  for (size_t i = 0; i < arguments.size(); ++i) {
    se::DeviceMemoryBase memory = arguments[i].AsDeviceMemoryBase();
    if (parameter_bytes_[i] > 0 &&
        (memory.is_null() || static_cast<int64_t>(memory.size()) < parameter_bytes_[i])) {
      return absl::InvalidArgumentError(
          absl::StrCat(ArgumentName(*module_, i), " of ", parameter_shapes_[i].ToString(false),
                       " needs a buffer of ", parameter_bytes_[i], " bytes; got ",
                       memory.is_null() ? "none" : absl::StrCat(memory.size(), " bytes")));
    }
  }
  // On failure no result is returned and the donated buffers are freed.
  auto fail = [&](absl::Status status) {
    results->clear();
    for (MaybeOwningDeviceMemory& argument : arguments) {
      if (std::optional<se::OwningDeviceMemory> owned = argument.Release()) {
        owned->Free().IgnoreError();
      }
    }
    return status;
  };
  se::DeviceMemoryAllocator* allocator =
      options.allocator() != nullptr ? options.allocator() : platform_->memory_allocator();
  // The arguments' and results' addresses for the backend, kept per thread
  // (a traced graph has hundreds of each; allocating them is measurable).
  // A run nested in this one on the same thread (a custom call that runs
  // an executable) gets vectors of its own: the outer run still reads these.
  thread_local std::vector<se::DeviceMemoryBase> reused_argument_memory;
  thread_local std::vector<se::DeviceMemoryBase> reused_result_memory;
  thread_local bool reused_in_use = false;
  std::vector<se::DeviceMemoryBase> nested_argument_memory;
  std::vector<se::DeviceMemoryBase> nested_result_memory;
  const bool nested = reused_in_use;
  std::vector<se::DeviceMemoryBase>& argument_memory =
      nested ? nested_argument_memory : reused_argument_memory;
  std::vector<se::DeviceMemoryBase>& result_memory =
      nested ? nested_result_memory : reused_result_memory;
  reused_in_use = true;
  absl::Cleanup release_reused = [nested] {
    if (!nested) reused_in_use = false;
  };
  argument_memory.clear();
  result_memory.clear();
  for (const MaybeOwningDeviceMemory& argument : arguments) {
    argument_memory.push_back(argument.AsDeviceMemoryBase());
  }
  results->reserve(result_bytes_.size());
  for (size_t i = 0; i < result_bytes_.size(); ++i) {
    const int64_t parameter = result_alias_[i];
    if (parameter >= 0 && arguments[parameter].HasOwnership()) {
      // The output lives in the donated buffer: same address, no copy.
      results->push_back(*arguments[parameter].Release());
      result_memory.push_back(results->back().cref());
      continue;
    }
    if (parameter >= 0 && result_must_alias_[i]) {
      return fail(absl::InvalidArgumentError(absl::StrCat(
          "output {", i, "} must alias argument ", parameter,
          " (must-alias), but that argument buffer was not donated: pass it with ownership")));
    }
    absl::StatusOr<se::OwningDeviceMemory> memory =
        allocator->Allocate(device_ordinal, result_bytes_[i]);
    if (!memory.ok()) return fail(memory.status());
    results->push_back(std::move(*memory));
    result_memory.push_back(results->back().cref());
    if (parameter >= 0) {
      // Copy protection: the program updates a copy of the lent argument.
      se::DeviceMemoryBase destination = result_memory.back();
      absl::Status copied =
          platform_->SynchronousMemcpy(&destination, argument_memory[parameter], result_bytes_[i]);
      if (!copied.ok()) return fail(copied);
      argument_memory[parameter] = destination;
    }
  }
  absl::Status status = ExecuteOnArrays(options, argument_memory, result_memory);
  if (!status.ok()) return fail(status);
  // Donated buffers no output took are freed now, as the other runs do.
  for (MaybeOwningDeviceMemory& argument : arguments) {
    if (std::optional<se::OwningDeviceMemory> owned = argument.Release()) {
      owned->Free().IgnoreError();
    }
  }
  return absl::OkStatus();
}

absl::Status Executable::ExecuteOnArrays(const ExecutableRunOptions& options,
                                         absl::Span<const se::DeviceMemoryBase> arguments,
                                         absl::Span<const se::DeviceMemoryBase> results) const {
  const int device_ordinal = options.device_ordinal() < 0 ? 0 : options.device_ordinal();
  std::vector<ShapedBuffer> views;
  std::vector<const ShapedBuffer*> pointers;
  views.reserve(arguments.size());
  for (size_t i = 0; i < arguments.size(); ++i) {
    views.emplace_back(parameter_shapes_[i], device_ordinal);
    views.back().set_buffer(arguments[i], {});
    pointers.push_back(&views.back());
  }
  se::DeviceMemoryAllocator* allocator =
      options.allocator() != nullptr ? options.allocator() : platform_->memory_allocator();
  ScopedShapedBuffer result(result_, allocator, device_ordinal);
  AXLE_ASSIGN_OR_RETURN(se::OwningDeviceMemory table,
                        allocator->Allocate(device_ordinal, DeviceBufferSize(result_shape())));
  result.set_buffer(std::move(table), {});
  for (size_t i = 0; i < results.size(); ++i) {
    (result.buffers().begin() + 1 + static_cast<int64_t>(i))->second = results[i];
  }
  absl::Status status = WriteResultTupleTables(*platform_, result);
  if (status.ok()) status = ExecuteOnBuffers(options, pointers, result);
  // The elements are the caller's: only the index table is freed here.
  for (auto it = result.buffers().begin() + 1; it != result.buffers().end(); ++it) {
    it->second = se::DeviceMemoryBase();
  }
  return status;
}

}  // namespace axle
