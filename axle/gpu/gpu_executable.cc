//===- gpu_executable.cc - Programs compiled for a CUDA device -------------===//
#include "axle/gpu/gpu_executable.h"

#include <cstdio>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "axle/base/environment_options.h"
#include "axle/base/logging.h"
#include "axle/base/status_macros.h"
#include "axle/gpu/gpu_thunks.h"
#include "axle/gpu/rng_thunk.h"

namespace axle::gpu {
namespace {

// Offsets of temporaries and scratch memory in the arena: what cuBLAS and
// cuDNN want of their workspaces, and more than any kernel's vector loads.
constexpr int64_t kArenaAlignment = 256;

}  // namespace

GpuExecutable::GpuExecutable(std::shared_ptr<const HloModule> module, const se::Platform* platform,
                             const CudaDevice& device, se::DeviceMemoryAllocator* allocator,
                             GpuProgram program)
    : Executable(std::move(module), platform),
      device_(device),
      allocator_(allocator),
      program_(std::move(program)) {
  GpuBufferLayout layout = LayOutGpuBuffers(program_);
  assignment_ = std::move(layout.assignment);
  temporary_offsets_ = std::move(layout.temporary_offsets);
  scratch_offsets_ = std::move(layout.scratch_offsets);
  arena_size_ = layout.arena_size;
  temporary_result_leaf_ =
      TemporaryResultLeaves(program_.values, static_cast<int64_t>(program_.temporary_sizes.size()),
                            program_.result_leaves);
  graph_plan_ = GpuGraphPlan::Make(program_.thunks, GpuGraphOptionsFromEnv());
  if (EnvironmentOptions::Read().profile) {
    profile_ = std::make_unique<GpuProfile>();
    first_runs_profile_ = std::make_unique<GpuProfile>();
  }
}

GpuExecutable::~GpuExecutable() {
  if (profile_ != nullptr && (profile_->runs() > 0 || first_runs_profile_->runs() > 0)) {
    std::fprintf(stderr, "%s", ProfileReport().c_str());
  }
}

std::string GpuExecutable::ProfileReport() const {
  if (profile_ == nullptr) return "";
  // The later runs' table, and the first runs' totals; the first runs'
  // table when they are all there is.
  const bool later_runs = profile_->runs() > 0;
  std::string report = (later_runs ? profile_ : first_runs_profile_)->Report(module().name());
  if (later_runs && first_runs_profile_->runs() > 0) {
    const GpuProfile::Totals first = first_runs_profile_->TotalsPerRun();
    absl::StrAppend(&report, "  (not in the table: the first run on each of ",
                    first_runs_profile_->runs(), " streams, recording graphs and first library ",
                    "calls: ", absl::SixDigits(first.device_ms), " ms on the device, ",
                    absl::SixDigits(first.host_ms), " ms enqueueing, per run)\n");
  }
  absl::StrAppend(
      &report, "  (CUDA graphs: ",
      graph_plan_.enabled()
          ? absl::StrCat(graph_plan_.captured_segments(), " segments replacing ",
                         graph_plan_.captured_launches(), " launches; ", graphs_recorded(),
                         " recordings, ", graphs_launched(), " graph launches)\n")
          : "off)\n");
  return report;
}

int64_t GpuExecutable::graphs_recorded() const {
  std::lock_guard<std::mutex> lock(pool_mutex_);
  int64_t count = 0;
  for (const auto& resources : free_resources_) count += resources->graphs->recordings();
  return count;
}

int64_t GpuExecutable::graphs_launched() const {
  std::lock_guard<std::mutex> lock(pool_mutex_);
  int64_t count = 0;
  for (const auto& resources : free_resources_) count += resources->graphs->launches();
  return count;
}

absl::StatusOr<std::unique_ptr<GpuExecutable>> GpuExecutable::Create(
    std::shared_ptr<const HloModule> module, const se::Platform* platform, const CudaDevice& device,
    se::DeviceMemoryAllocator* allocator, GpuProgram program) {
  std::unique_ptr<GpuExecutable> executable(
      new GpuExecutable(std::move(module), platform, device, allocator, std::move(program)));
  AXLE_RETURN_IF_ERROR(executable->Initialize());
  return executable;
}

absl::Status GpuExecutable::Initialize() {
  CudaDevice::ScopedActivation active(device_);
  AXLE_RETURN_IF_ERROR(InitializeGpuThunkSequence(program_.thunks, device_));
  if (program_.constants.empty()) return absl::OkStatus();
  AXLE_ASSIGN_OR_RETURN(std::unique_ptr<CudaStream> stream, CudaStream::Create(device_));
  for (const Literal& constant : program_.constants) {
    const int64_t size = constant.size_bytes();
    if (size == 0) {
      constants_.emplace_back();
      continue;
    }
    absl::StatusOr<se::OwningDeviceMemory> memory = allocator_->Allocate(device_.ordinal(), size);
    if (!memory.ok()) {
      return absl::Status(memory.status().code(),
                          absl::StrCat("CUDA backend: allocating the constants of module '",
                                       module().name(), "': ", memory.status().message()));
    }
    se::DeviceMemoryBase destination = memory->cref();
    AXLE_RETURN_IF_ERROR(stream->MemcpyHostToDevice(&destination, constant.untyped_data(), size));
    constants_.push_back(*std::move(memory));
  }
  // The host literals stay in program_ (dumps); the copies are done here.
  absl::Status status = stream->Synchronize();
  if (!status.ok()) {
    return absl::Status(status.code(), absl::StrCat("CUDA backend: uploading the constants of "
                                                    "module '",
                                                    module().name(), "': ", status.message()));
  }
  return absl::OkStatus();
}

GpuBufferLayout LayOutGpuBuffers(const GpuProgram& program) {
  GpuBufferLayout layout;
  const int64_t num_temporaries = static_cast<int64_t>(program.temporary_sizes.size());
  const int64_t num_thunks = static_cast<int64_t>(program.thunks.size());
  // Live ranges of the temporaries over top-level thunk indices (a loop or
  // conditional is one step: every value its sequences touch lives
  // throughout it).
  std::vector<std::optional<StepUses>> steps;
  for (const std::unique_ptr<GpuThunk>& thunk : program.thunks) {
    GpuThunkValues uses = thunk->buffer_uses();
    steps.push_back(StepUses{std::move(uses.operands), std::move(uses.outputs)});
  }
  // Logical buffers: temporaries 0..n-1, then each thunk's scratch memory.
  std::vector<LogicalBuffer> buffers =
      TemporaryBuffers(program.values, program.temporary_sizes, program.result_leaves, steps);
  for (size_t v = 0; v < program.values.size(); ++v) {
    const GpuValue& value = program.values[v];
    if (value.kind != GpuValue::Kind::kTemporary) continue;
    LogicalBuffer& buffer = buffers[value.temporary];
    if (value.instruction != nullptr) {
      buffer.values.push_back({value.instruction, value.index});
    } else if (buffer.label.empty()) {
      buffer.label = value.name.empty() ? absl::StrCat("v", v) : value.name;
    }
  }
  layout.scratch_offsets.assign(num_thunks, -1);
  const std::vector<int64_t> scratch_buffer = AppendScratchBuffers(program.thunks, buffers);
  BufferAssignmentOptions options;
  options.alignment = kArenaAlignment;
  absl::StatusOr<std::unique_ptr<BufferAssignment>> assigned =
      AssignLogicalBuffers(std::move(buffers), options);
  CHECK(assigned.ok()) << assigned.status();  // the buffers above are well formed
  layout.assignment = std::move(assigned).value();
  layout.temporary_offsets.resize(num_temporaries);
  for (int64_t t = 0; t < num_temporaries; ++t) {
    layout.temporary_offsets[t] = layout.assignment->buffer_slice(t).offset;
  }
  for (int64_t i = 0; i < num_thunks; ++i) {
    if (scratch_buffer[i] >= 0) {
      layout.scratch_offsets[i] = layout.assignment->buffer_slice(scratch_buffer[i]).offset;
    }
  }
  layout.arena_size = layout.assignment->temp_allocation_total_size();
  return layout;
}

absl::StatusOr<std::unique_ptr<GpuExecutable::RunResources>> GpuExecutable::Acquire() const {
  {
    std::lock_guard<std::mutex> lock(pool_mutex_);
    if (!free_resources_.empty()) {
      std::unique_ptr<RunResources> resources = std::move(free_resources_.back());
      free_resources_.pop_back();
      return resources;
    }
  }
  auto resources = std::make_unique<RunResources>();
  resources->graphs = std::make_unique<GpuGraphCache>(device_);
  if (profile_ != nullptr) resources->timer = std::make_unique<GpuRunTimer>(device_);
  AXLE_ASSIGN_OR_RETURN(resources->stream, CudaStream::Create(device_));
  if (arena_size_ > 0) {
    absl::StatusOr<se::OwningDeviceMemory> arena =
        allocator_->Allocate(device_.ordinal(), arena_size_);
    if (!arena.ok()) {
      return absl::Status(
          arena.status().code(),
          absl::StrCat("CUDA backend: allocating the temporaries arena (", arena_size_,
                       " bytes) of module '", module().name(), "': ", arena.status().message()));
    }
    resources->arena = *std::move(arena);
  }
  arenas_allocated_.fetch_add(1);
  return resources;
}

void GpuExecutable::Release(std::unique_ptr<RunResources> resources) const {
  std::lock_guard<std::mutex> lock(pool_mutex_);
  free_resources_.push_back(std::move(resources));
}

absl::Status GpuExecutable::ExecuteOnBuffers(const ExecutableRunOptions& options,
                                             absl::Span<const ShapedBuffer* const> arguments,
                                             const ShapedBuffer& result) const {
  CudaDevice::ScopedActivation active(device_);
  AXLE_ASSIGN_OR_RETURN(std::unique_ptr<RunResources> resources, Acquire());
  char* const arena = static_cast<char*>(resources->arena.cref().opaque());
  CudaStream* const stream = resources->stream.get();

  // Temporaries written straight into their result buffer: not one an
  // argument holds (a donated buffer may still be read after it is
  // written).
  std::vector<se::DeviceMemoryBase> in_result(temporary_result_leaf_.size());
  for (size_t t = 0; t < temporary_result_leaf_.size(); ++t) {
    if (temporary_result_leaf_[t] < 0) continue;
    const auto& [index, id] = program_.result_leaves[temporary_result_leaf_[t]];
    const se::DeviceMemoryBase& destination = result.buffer(index);
    if (destination.is_null() ||
        static_cast<int64_t>(destination.size()) < program_.values[id].size_bytes) {
      continue;
    }
    bool in_argument = false;
    for (const ShapedBuffer* argument : arguments) {
      for (const auto& node : argument->buffers()) {
        in_argument |= node.second.opaque() == destination.opaque();
      }
    }
    if (!in_argument) in_result[t] = destination;
  }
  std::vector<se::DeviceMemoryBase> buffers;
  buffers.reserve(program_.values.size());
  for (const GpuValue& value : program_.values) {
    switch (value.kind) {
      case GpuValue::Kind::kParameter:
        buffers.push_back(arguments[value.parameter]->buffer(value.parameter_index));
        break;
      case GpuValue::Kind::kConstant:
        buffers.push_back(constants_[value.constant].cref());
        break;
      case GpuValue::Kind::kTemporary:
        if (!in_result[value.temporary].is_null()) {
          buffers.push_back(
              se::DeviceMemoryBase(in_result[value.temporary].opaque(), value.size_bytes));
        } else {
          buffers.push_back(se::DeviceMemoryBase(
              value.size_bytes > 0 ? arena + temporary_offsets_[value.temporary] : nullptr,
              value.size_bytes));
        }
        break;
    }
  }

  GpuThunkContext context;
  context.device = &device_;
  context.stream = stream;
  context.run_options = &options;
  context.buffers = buffers;
  GpuRngRunState rng;
  context.rng = &rng;
  std::vector<se::DeviceMemoryBase> scratch(program_.thunks.size());
  for (size_t i = 0; i < program_.thunks.size(); ++i) {
    if (scratch_offsets_[i] >= 0) {
      scratch[i] =
          se::DeviceMemoryBase(arena + scratch_offsets_[i], program_.thunks[i]->scratch_bytes());
    }
  }
  // The thunks, by the graph plan (and timed) where either applies.
  GpuRunState run_state;
  run_state.plan = graph_plan_.enabled() ? &graph_plan_ : nullptr;
  run_state.graphs = resources->graphs.get();
  run_state.timer = resources->timer.get();
  absl::Status status = absl::OkStatus();
  {
    const bool planned = run_state.plan != nullptr || run_state.timer != nullptr;
    ScopedGpuRunState scoped(planned ? &run_state : nullptr);
    status = RunPlannedSequence(program_.thunks, context, scratch);
  }
  if (status.ok()) {
    for (const auto& [index, id] : program_.result_leaves) {
      se::DeviceMemoryBase destination = result.buffer(index);
      const se::DeviceMemoryBase& source = buffers[id];
      const int64_t size = program_.values[id].size_bytes;
      if (size == 0 || destination.opaque() == source.opaque()) continue;
      status = stream->MemcpyDeviceToDevice(&destination, source, size);
      if (!status.ok()) break;
    }
  }
  // Every run ends synchronized: its errors are its own, and its buffers
  // (arguments, result, arena) are free to reuse once it returns.
  absl::Status synchronized = stream->Synchronize();
  if (!synchronized.ok() && status.ok()) {
    status = absl::Status(synchronized.code(),
                          absl::StrCat("CUDA run of module '", module().name(),
                                       "' failed on the device: ", synchronized.message()));
  }
  if (resources->timer != nullptr) {
    if (status.ok()) {
      GpuProfile& profile = resources->timed_runs == 0 ? *first_runs_profile_ : *profile_;
      absl::Status timed = resources->timer->Collect(profile);
      ++resources->timed_runs;
      if (timed.ok()) {
        profile.CountRun();
      } else {
        std::fprintf(stderr, "axle: AXLE_PROFILE: %s\n", std::string(timed.message()).c_str());
      }
    } else {
      resources->timer->Clear();
    }
  }
  if (synchronized.ok()) {
    Release(std::move(resources));
  }
  // A stream whose work failed is dropped (its arena goes back to the
  // allocator): a sticky error leaves the context unusable anyway.
  return status;
}

}  // namespace axle::gpu
