//===- gpu_thunks.cc - The GPU executable's own thunks ---------------------===//
#include "axle/gpu/gpu_thunks.h"

#include <algorithm>
#include <map>
#include <mutex>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "axle/base/status_macros.h"
#include "axle/gpu/gpu_graph.h"

namespace axle::gpu {
namespace {

void AppendUses(const GpuThunkValues& nested, GpuThunkValues& uses) {
  uses.operands.insert(uses.operands.end(), nested.operands.begin(), nested.operands.end());
  uses.outputs.insert(uses.outputs.end(), nested.outputs.begin(), nested.outputs.end());
}

void AppendSequence(const GpuThunkSequence& sequence, GpuThunkValues& uses, int64_t& scratch) {
  for (const std::unique_ptr<GpuThunk>& thunk : sequence) {
    AppendUses(thunk->buffer_uses(), uses);
    scratch = std::max(scratch, thunk->scratch_bytes());
  }
}

// Modules loaded per (device, kernel): thunks of identical fusions (one
// cached PtxKernel) share one module. Kernels are never evicted from the
// PTX cache, so their addresses are stable keys.
struct LoadedModules {
  std::mutex mu;
  std::map<std::pair<const CudaDevice*, const PtxKernel*>, std::weak_ptr<CudaModule>> modules;
};

LoadedModules& Loaded() {
  static auto* loaded = new LoadedModules();
  return *loaded;
}

// Reads `size` bytes of value `id` to the host: the stream's work so far is
// done when it returns (a loop's predicate, a conditional's selector).
// Through the stream's pinned staging buffer, waiting on an event after the
// copy (CudaStream::ReadToHost).
absl::Status ReadToHost(const GpuThunkContext& context, int64_t id, void* host, uint64_t size,
                        absl::string_view what) {
  absl::Status status = context.stream->ReadToHost(host, context.buffer(id), size);
  if (!status.ok()) {
    return absl::Status(status.code(),
                        absl::StrCat("reading the ", what, " to the host: ", status.message()));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status RunGpuThunkSequence(const GpuThunkSequence& sequence, const GpuThunkContext& context) {
  // By the run's plan where the executable installed one (graphs,
  // profiles), else each thunk in order.
  return RunPlannedSequence(sequence, context);
}

bool SequenceCapturableInGraph(const GpuThunkSequence& sequence) {
  return std::all_of(sequence.begin(), sequence.end(), [](const std::unique_ptr<GpuThunk>& thunk) {
    return thunk->CapturableInGraph();
  });
}

absl::Status InitializeGpuThunkSequence(const GpuThunkSequence& sequence,
                                        const CudaDevice& device) {
  for (const std::unique_ptr<GpuThunk>& thunk : sequence) {
    absl::Status status = thunk->Initialize(device);
    if (!status.ok()) {
      return absl::Status(status.code(),
                          absl::StrCat(status.message(), " (initializing %", thunk->name(), ")"));
    }
  }
  return absl::OkStatus();
}

absl::Status GpuKernelThunk::Initialize(const CudaDevice& device) {
  LoadedModules& loaded = Loaded();
  {
    std::lock_guard<std::mutex> lock(loaded.mu);
    auto it = loaded.modules.find({&device, kernel_.get()});
    if (it != loaded.modules.end()) module_ = it->second.lock();
  }
  if (module_ == nullptr) {
    absl::StatusOr<std::unique_ptr<CudaModule>> module = CudaModule::LoadPtx(device, kernel_->ptx);
    if (!module.ok()) {
      return absl::Status(module.status().code(),
                          absl::StrCat("CUDA: loading the PTX of kernel ", kernel_->name, ": ",
                                       module.status().message()));
    }
    module_ = std::shared_ptr<CudaModule>(std::move(module).value());
    std::lock_guard<std::mutex> lock(loaded.mu);
    loaded.modules[{&device, kernel_.get()}] = module_;
  }
  AXLE_ASSIGN_OR_RETURN(function_, module_->GetFunction(kernel_->name));
  return absl::OkStatus();
}

absl::Status GpuKernelThunk::Execute(const GpuThunkContext& context) const {
  if (function_ == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat("CUDA: kernel ", kernel_->name, " was not loaded (Initialize)"));
  }
  absl::InlinedVector<se::DeviceMemoryBase, 8> buffers;
  buffers.reserve(values_.operands.size() + values_.outputs.size());
  for (int64_t id : values_.operands) buffers.push_back(context.buffer(id));
  for (int64_t id : values_.outputs) buffers.push_back(context.buffer(id));
  absl::Status status =
      LaunchKernel(context.stream, function_, kernel_->grid, kernel_->block, buffers);
  if (!status.ok()) {
    return absl::Status(status.code(),
                        absl::StrCat("launching kernel ", kernel_->name, ": ", status.message()));
  }
  return absl::OkStatus();
}

absl::Status GpuCopyThunk::Execute(const GpuThunkContext& context) const {
  for (const auto& [from, to] : copies_) {
    se::DeviceMemoryBase destination = context.buffer(to);
    const se::DeviceMemoryBase& source = context.buffer(from);
    if (destination.size() == 0 || destination.opaque() == source.opaque()) continue;
    AXLE_RETURN_IF_ERROR(
        context.stream->MemcpyDeviceToDevice(&destination, source, destination.size()));
  }
  return absl::OkStatus();
}

GpuThunkValues GpuCopyThunk::buffer_uses() const {
  GpuThunkValues uses;
  for (const auto& [from, to] : copies_) {
    uses.operands.push_back(from);
    uses.outputs.push_back(to);
  }
  return uses;
}

absl::Status GpuMemsetThunk::Execute(const GpuThunkContext& context) const {
  se::DeviceMemoryBase destination = context.buffer(value_);
  return context.stream->Memset8(&destination, 0, destination.size());
}

GpuSequenceThunk::GpuSequenceThunk(std::string name, GpuThunkSequence sequence)
    : GpuThunk(std::move(name)), sequence_(std::move(sequence)) {
  AppendSequence(sequence_, uses_, scratch_bytes_);
}

bool GpuSequenceThunk::CapturableInGraph() const { return SequenceCapturableInGraph(sequence_); }

bool GpuWhileThunk::CapturableInGraph() const {
  return trip_count_.has_value() && SequenceCapturableInGraph(body_);
}

GpuWhileThunk::GpuWhileThunk(std::string name, std::vector<std::pair<int64_t, int64_t>> init,
                             GpuThunkSequence condition, int64_t predicate, GpuThunkSequence body)
    : GpuThunk(name),
      init_(std::move(name), std::move(init)),
      condition_(std::move(condition)),
      predicate_(predicate),
      body_(std::move(body)) {
  uses_ = init_.buffer_uses();
  uses_.operands.push_back(predicate_);
  AppendSequence(condition_, uses_, scratch_bytes_);
  AppendSequence(body_, uses_, scratch_bytes_);
}

GpuWhileThunk::GpuWhileThunk(std::string name, std::vector<std::pair<int64_t, int64_t>> init,
                             int64_t trip_count, GpuThunkSequence body)
    : GpuThunk(name),
      init_(std::move(name), std::move(init)),
      trip_count_(trip_count),
      body_(std::move(body)) {
  uses_ = init_.buffer_uses();
  AppendSequence(body_, uses_, scratch_bytes_);
}

absl::Status GpuWhileThunk::Initialize(const CudaDevice& device) {
  AXLE_RETURN_IF_ERROR(InitializeGpuThunkSequence(condition_, device));
  return InitializeGpuThunkSequence(body_, device);
}

absl::Status GpuWhileThunk::Execute(const GpuThunkContext& context) const {
  AXLE_RETURN_IF_ERROR(init_.Execute(context));
  if (trip_count_.has_value()) {
    // Enqueued back to back: the stream orders the iterations.
    for (int64_t iteration = 0; iteration < *trip_count_; ++iteration) {
      absl::Status status = RunGpuThunkSequence(body_, context);
      if (!status.ok()) {
        return absl::Status(status.code(),
                            absl::StrCat(status.message(), " (iteration ", iteration, ")"));
      }
    }
    return absl::OkStatus();
  }
  for (int64_t iteration = 0;; ++iteration) {
    AXLE_RETURN_IF_ERROR(RunGpuThunkSequence(condition_, context));
    uint8_t predicate = 0;
    absl::Status status = ReadToHost(context, predicate_, &predicate, 1, "loop predicate");
    if (!status.ok()) {
      return absl::Status(status.code(),
                          absl::StrCat(status.message(), " (iteration ", iteration, ")"));
    }
    if (predicate == 0) return absl::OkStatus();
    AXLE_RETURN_IF_ERROR(RunGpuThunkSequence(body_, context));
  }
}

GpuConditionalThunk::GpuConditionalThunk(std::string name, int64_t selector, bool selector_is_pred,
                                         std::vector<GpuThunkSequence> branches)
    : GpuThunk(std::move(name)),
      selector_(selector),
      selector_is_pred_(selector_is_pred),
      branches_(std::move(branches)) {
  uses_.operands.push_back(selector_);
  for (const GpuThunkSequence& branch : branches_) AppendSequence(branch, uses_, scratch_bytes_);
}

absl::Status GpuConditionalThunk::Initialize(const CudaDevice& device) {
  for (const GpuThunkSequence& branch : branches_) {
    AXLE_RETURN_IF_ERROR(InitializeGpuThunkSequence(branch, device));
  }
  return absl::OkStatus();
}

absl::Status GpuConditionalThunk::Execute(const GpuThunkContext& context) const {
  const int64_t count = static_cast<int64_t>(branches_.size());
  int64_t index = 0;
  if (selector_is_pred_) {
    uint8_t pred = 0;
    AXLE_RETURN_IF_ERROR(ReadToHost(context, selector_, &pred, 1, "branch predicate"));
    index = pred != 0 ? 0 : 1;
  } else {
    int32_t value = 0;
    AXLE_RETURN_IF_ERROR(ReadToHost(context, selector_, &value, sizeof(value), "branch index"));
    index = value < 0 || value >= count ? count - 1 : value;
  }
  return RunGpuThunkSequence(branches_[index], context);
}

absl::Status GpuCustomCallThunk::Execute(const GpuThunkContext& context) const {
  absl::InlinedVector<void*, 8> buffers;
  buffers.reserve(values_.operands.size() + values_.outputs.size());
  for (int64_t id : values_.operands) buffers.push_back(DeviceAddress(context.address(id)));
  for (int64_t id : values_.outputs) buffers.push_back(DeviceAddress(context.address(id)));
  // The target may call the runtime or libraries: the device's context is
  // current, as under XLA.
  CudaDevice::ScopedActivation active(*context.device);
  return target_.Call(context.stream->stream(), buffers.data());
}

}  // namespace axle::gpu
