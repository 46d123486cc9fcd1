//===- gpu_thunks.cc - The GPU executable's own thunks ---------------------===//
#include "axle/gpu/gpu_thunks.h"

#include <algorithm>
#include <map>
#include <mutex>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "axle/base/status_macros.h"
#include "axle/gpu/gpu_graph.h"
#include "axle/hlo/analysis/conditional_branch.h"

namespace axle::gpu {
namespace {

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

void GpuNestedThunk::SetUses(GpuThunkValues own,
                             const std::vector<const GpuThunkSequence*>& nested) {
  uses_ = std::move(own);
  for (const GpuThunkSequence* sequence : nested) {
    for (const std::unique_ptr<GpuThunk>& thunk : *sequence) {
      const GpuThunkValues uses = thunk->buffer_uses();
      uses_.operands.insert(uses_.operands.end(), uses.operands.begin(), uses.operands.end());
      uses_.outputs.insert(uses_.outputs.end(), uses.outputs.begin(), uses.outputs.end());
      scratch_bytes_ = std::max(scratch_bytes_, thunk->scratch_bytes());
    }
  }
}

GpuSequenceThunk::GpuSequenceThunk(std::string name, GpuThunkSequence sequence)
    : GpuNestedThunk(std::move(name)), sequence_(std::move(sequence)) {
  SetUses({}, {&sequence_});
}

bool GpuSequenceThunk::CapturableInGraph() const { return SequenceCapturableInGraph(sequence_); }

bool GpuWhileThunk::CapturableInGraph() const {
  return trip_count_.has_value() && SequenceCapturableInGraph(body_);
}

GpuWhileThunk::GpuWhileThunk(std::string name, std::vector<std::pair<int64_t, int64_t>> init,
                             GpuThunkSequence condition, int64_t predicate, GpuThunkSequence body)
    : GpuNestedThunk(name),
      init_(std::move(name), std::move(init)),
      condition_(std::move(condition)),
      predicate_(predicate),
      body_(std::move(body)) {
  GpuThunkValues own = init_.buffer_uses();
  own.operands.push_back(predicate_);
  SetUses(std::move(own), {&condition_, &body_});
}

GpuWhileThunk::GpuWhileThunk(std::string name, std::vector<std::pair<int64_t, int64_t>> init,
                             int64_t trip_count, GpuThunkSequence body)
    : GpuNestedThunk(name),
      init_(std::move(name), std::move(init)),
      trip_count_(trip_count),
      body_(std::move(body)) {
  SetUses(init_.buffer_uses(), {&body_});
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
    : GpuNestedThunk(std::move(name)),
      selector_(selector),
      selector_is_pred_(selector_is_pred),
      branches_(std::move(branches)) {
  std::vector<const GpuThunkSequence*> nested;
  for (const GpuThunkSequence& branch : branches_) nested.push_back(&branch);
  SetUses(GpuThunkValues{{selector_}, {}}, nested);
}

absl::Status GpuConditionalThunk::Initialize(const CudaDevice& device) {
  for (const GpuThunkSequence& branch : branches_) {
    AXLE_RETURN_IF_ERROR(InitializeGpuThunkSequence(branch, device));
  }
  return absl::OkStatus();
}

absl::Status GpuConditionalThunk::Execute(const GpuThunkContext& context) const {
  int32_t value = 0;
  if (selector_is_pred_) {
    uint8_t pred = 0;
    AXLE_RETURN_IF_ERROR(ReadToHost(context, selector_, &pred, 1, "branch predicate"));
    value = pred;
  } else {
    AXLE_RETURN_IF_ERROR(ReadToHost(context, selector_, &value, sizeof(value), "branch index"));
  }
  const int64_t count = static_cast<int64_t>(branches_.size());
  return RunGpuThunkSequence(branches_[SelectedBranch(selector_is_pred_, value, count)], context);
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
