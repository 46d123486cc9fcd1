//===- gpu_graph.cc - CUDA graphs of thunk runs, and per-thunk profiles ----===//
#include "axle/gpu/gpu_graph.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <set>

#include "absl/strings/str_cat.h"
#include "axle/base/environment_options.h"
#include "axle/base/status_macros.h"

namespace axle::gpu {
namespace {

constexpr int64_t kManyLaunches = std::numeric_limits<int64_t>::max() / 4;

int64_t SaturatingAdd(int64_t a, int64_t b) { return std::min(kManyLaunches, a + b); }

int64_t SaturatingMultiply(int64_t a, int64_t b) {
  if (a == 0 || b == 0) return 0;
  return a > kManyLaunches / b ? kManyLaunches : a * b;
}

std::optional<int64_t> SequenceLaunches(const GpuThunkSequence& sequence) {
  int64_t launches = 0;
  for (const std::unique_ptr<GpuThunk>& thunk : sequence) {
    std::optional<int64_t> nested = CapturedLaunches(*thunk);
    if (!nested.has_value()) return std::nullopt;
    launches = SaturatingAdd(launches, *nested);
  }
  return launches;
}

// The sequences a thunk that is not captured runs (planned in turn).
std::vector<const GpuThunkSequence*> NestedSequences(const GpuThunk& thunk) {
  std::vector<const GpuThunkSequence*> nested;
  if (const auto* call = dynamic_cast<const GpuSequenceThunk*>(&thunk)) {
    nested.push_back(&call->sequence());
  } else if (const auto* loop = dynamic_cast<const GpuWhileThunk*>(&thunk)) {
    nested.push_back(&loop->condition());
    nested.push_back(&loop->body());
  } else if (const auto* conditional = dynamic_cast<const GpuConditionalThunk*>(&thunk)) {
    for (const GpuThunkSequence& branch : conditional->branches()) nested.push_back(&branch);
  }
  return nested;
}

thread_local GpuRunState* current_run_state = nullptr;

double MillisecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

std::string SegmentLabel(const GpuThunkSequence& sequence,
                         const GpuSequencePlan::Segment& segment) {
  return absl::StrCat("graph of ", segment.end - segment.begin, " thunks (", segment.launches,
                      " launches) %", sequence[segment.begin]->name(), " .. %",
                      sequence[segment.end - 1]->name());
}

absl::Status Annotate(absl::Status status, const GpuThunk& thunk) {
  if (status.ok()) return status;
  return absl::Status(status.code(), absl::StrCat(status.message(), " (in %", thunk.name(), ")"));
}

// Enqueues thunks [begin, end) of `sequence` one by one (timed when the
// state has a timer and is not recording).
absl::Status RunThunks(const GpuThunkSequence& sequence, size_t begin, size_t end,
                       const GpuThunkContext& context,
                       absl::Span<const se::DeviceMemoryBase> scratch, GpuRunState* state) {
  GpuThunkContext local = context;
  const bool timed = state != nullptr && state->timer != nullptr && !state->capturing;
  for (size_t i = begin; i < end; ++i) {
    const GpuThunk& thunk = *sequence[i];
    if (!scratch.empty()) local.scratch = scratch[i];
    if (!timed) {
      AXLE_RETURN_IF_ERROR(Annotate(thunk.Execute(local), thunk));
      continue;
    }
    AXLE_ASSIGN_OR_RETURN(
        size_t event, state->timer->Start(context.stream->stream(), absl::StrCat("%", thunk.name()),
                                          state->depth > 0));
    const auto start = std::chrono::steady_clock::now();
    ++state->depth;
    absl::Status status = thunk.Execute(local);
    --state->depth;
    const double host_ms = MillisecondsSince(start);
    AXLE_RETURN_IF_ERROR(Annotate(status, thunk));
    AXLE_RETURN_IF_ERROR(state->timer->Stop(context.stream->stream(), event, host_ms));
  }
  return absl::OkStatus();
}

// Records the segment into a graph (or updates the one recorded for other
// addresses). Returns false, with the entry marked failed, where capture or
// instantiation was refused: the caller runs the thunks directly.
absl::StatusOr<bool> Record(const GpuThunkSequence& sequence,
                            const GpuSequencePlan::Segment& segment, const GpuThunkContext& context,
                            absl::Span<const se::DeviceMemoryBase> scratch, GpuRunState& state,
                            GpuGraphCache::Entry& entry, std::vector<const void*> addresses) {
  const CudaDriver& driver = context.device->driver();
  CudaDevice::ScopedActivation active(*context.device);
  const CUstream stream = context.stream->stream();
  const std::string label = SegmentLabel(sequence, segment);
  auto refuse = [&](absl::string_view why) {
    entry.failed = true;
    std::fprintf(stderr, "axle: CUDA graph of %s not used: %s; its thunks run one by one\n",
                 label.c_str(), std::string(why).c_str());
    return false;
  };
  if (absl::Status begun =
          driver.ToStatus(driver.cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL),
                          "cuStreamBeginCapture");
      !begun.ok()) {
    return refuse(begun.message());
  }
  state.capturing = true;
  absl::Status thunks = RunThunks(sequence, segment.begin, segment.end, context, scratch, &state);
  state.capturing = false;
  CUgraph graph = nullptr;
  const absl::Status ended =
      driver.ToStatus(driver.cuStreamEndCapture(stream, &graph), "cuStreamEndCapture");
  if (!thunks.ok() || !ended.ok() || graph == nullptr) {
    if (graph != nullptr) driver.cuGraphDestroy(graph);
    return refuse(!thunks.ok() ? thunks.message() : ended.message());
  }
  size_t nodes = 0;
  absl::Status counted =
      driver.ToStatus(driver.cuGraphGetNodes(graph, nullptr, &nodes), "cuGraphGetNodes");
  if (counted.ok() && nodes == 0) {
    // Nothing to launch (every copy was to itself): remember that.
    if (entry.exec != nullptr) driver.cuGraphExecDestroy(entry.exec);
    entry.exec = nullptr;
  } else if (counted.ok()) {
    if (entry.exec != nullptr) {
      CUgraphExecUpdateResultInfo info{};
      if (driver.cuGraphExecUpdate(entry.exec, graph, &info) != CUDA_SUCCESS) {
        driver.cuGraphExecDestroy(entry.exec);
        entry.exec = nullptr;
      }
    }
    if (entry.exec == nullptr) {
      counted =
          driver.ToStatus(driver.cuGraphInstantiate(&entry.exec, graph, 0), "cuGraphInstantiate");
      if (!counted.ok()) entry.exec = nullptr;
    }
  }
  const absl::Status destroyed = driver.ToStatus(driver.cuGraphDestroy(graph), "cuGraphDestroy");
  if (!counted.ok()) return refuse(counted.message());
  AXLE_RETURN_IF_ERROR(destroyed);
  entry.addresses = std::move(addresses);
  entry.recorded = true;
  ++entry.recordings;
  return true;
}

absl::Status RunCaptured(const GpuThunkSequence& sequence, size_t index,
                         const GpuSequencePlan::Segment& segment, const GpuThunkContext& context,
                         absl::Span<const se::DeviceMemoryBase> scratch, GpuRunState& state) {
  GpuGraphCache::Entry& entry = state.graphs->Get(&sequence, index);
  if (entry.failed) {
    return RunThunks(sequence, segment.begin, segment.end, context, scratch, &state);
  }
  std::vector<const void*> addresses;
  addresses.reserve(segment.values.size() + segment.end - segment.begin);
  for (int64_t id : segment.values) addresses.push_back(context.buffer(id).opaque());
  if (scratch.empty()) {
    addresses.push_back(context.scratch.opaque());
  } else {
    for (size_t i = segment.begin; i < segment.end; ++i) addresses.push_back(scratch[i].opaque());
  }
  const bool timed = state.timer != nullptr;
  size_t event = 0;
  const auto start = std::chrono::steady_clock::now();
  if (timed) {
    AXLE_ASSIGN_OR_RETURN(
        event, state.timer->Start(context.stream->stream(), SegmentLabel(sequence, segment),
                                  state.depth > 0));
  }
  if (!entry.recorded || entry.addresses != addresses) {
    AXLE_ASSIGN_OR_RETURN(bool recorded, Record(sequence, segment, context, scratch, state, entry,
                                                std::move(addresses)));
    state.graphs->CountRecording();
    if (!recorded) {
      // Untimed as a graph: the thunks time themselves.
      if (timed) {
        AXLE_RETURN_IF_ERROR(state.timer->Stop(context.stream->stream(), event, 0));
      }
      return RunThunks(sequence, segment.begin, segment.end, context, scratch, &state);
    }
  }
  if (entry.exec != nullptr) {
    const CudaDriver& driver = context.device->driver();
    CudaDevice::ScopedActivation active(*context.device);
    absl::Status launched =
        driver.ToStatus(driver.cuGraphLaunch(entry.exec, context.stream->stream()),
                        absl::StrCat("cuGraphLaunch (", SegmentLabel(sequence, segment), ")"));
    AXLE_RETURN_IF_ERROR(launched);
    state.graphs->CountLaunch();
  }
  if (timed) {
    AXLE_RETURN_IF_ERROR(
        state.timer->Stop(context.stream->stream(), event, MillisecondsSince(start)));
  }
  return absl::OkStatus();
}

class CapturableThunk final : public GpuThunk {
 public:
  explicit CapturableThunk(std::unique_ptr<GpuThunk> inner)
      : GpuThunk(inner->name()), inner_(std::move(inner)) {}
  absl::Status Initialize(const CudaDevice& device) override { return inner_->Initialize(device); }
  absl::Status Execute(const GpuThunkContext& context) const override {
    return inner_->Execute(context);
  }
  GpuThunkValues buffer_uses() const override { return inner_->buffer_uses(); }
  int64_t scratch_bytes() const override { return inner_->scratch_bytes(); }
  bool CapturableInGraph() const override { return true; }

 private:
  std::unique_ptr<GpuThunk> inner_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<GpuThunk>> CapturableLibraryCall(
    absl::StatusOr<std::unique_ptr<GpuThunk>> thunk) {
  if (!thunk.ok() || *thunk == nullptr) return thunk;
  return std::unique_ptr<GpuThunk>(std::make_unique<CapturableThunk>(*std::move(thunk)));
}

GpuGraphOptions GpuGraphOptionsFromEnv() {
  GpuGraphOptions options;
  options.enabled = EnvironmentOptions::Read().gpu_graphs.value_or(true);
  return options;
}

std::optional<int64_t> CapturedLaunches(const GpuThunk& thunk) {
  if (!thunk.CapturableInGraph()) return std::nullopt;
  if (const auto* copy = dynamic_cast<const GpuCopyThunk*>(&thunk)) {
    return static_cast<int64_t>(copy->copies().size());
  }
  if (const auto* call = dynamic_cast<const GpuSequenceThunk*>(&thunk)) {
    return SequenceLaunches(call->sequence());
  }
  if (const auto* loop = dynamic_cast<const GpuWhileThunk*>(&thunk)) {
    if (!loop->trip_count().has_value()) return std::nullopt;
    std::optional<int64_t> body = SequenceLaunches(loop->body());
    if (!body.has_value()) return std::nullopt;
    return SaturatingAdd(static_cast<int64_t>(loop->init().copies().size()),
                         SaturatingMultiply(*body, *loop->trip_count()));
  }
  return 1;  // a kernel, memset or library call: at least one launch
}

GpuGraphPlan GpuGraphPlan::Make(const GpuThunkSequence& top_level, const GpuGraphOptions& options) {
  GpuGraphPlan plan;
  plan.enabled_ = options.enabled;
  if (options.enabled) plan.PlanSequence(top_level, options);
  return plan;
}

void GpuGraphPlan::PlanSequence(const GpuThunkSequence& sequence, const GpuGraphOptions& options) {
  GpuSequencePlan plan;
  auto add_direct = [&](size_t begin, size_t end) {
    if (begin == end) return;
    if (!plan.segments.empty() && !plan.segments.back().captured &&
        plan.segments.back().end == begin) {
      plan.segments.back().end = end;
      return;
    }
    GpuSequencePlan::Segment segment;
    segment.begin = begin;
    segment.end = end;
    plan.segments.push_back(std::move(segment));
  };
  size_t run_begin = 0;
  int64_t run_launches = 0;
  auto flush = [&](size_t end) {
    if (run_begin < end && run_launches >= options.min_launches) {
      GpuSequencePlan::Segment segment;
      segment.begin = run_begin;
      segment.end = end;
      segment.captured = true;
      segment.launches = run_launches;
      std::set<int64_t> values;
      for (size_t i = run_begin; i < end; ++i) {
        const GpuThunkValues uses = sequence[i]->buffer_uses();
        values.insert(uses.operands.begin(), uses.operands.end());
        values.insert(uses.outputs.begin(), uses.outputs.end());
      }
      segment.values.assign(values.begin(), values.end());
      plan.segments.push_back(std::move(segment));
    } else {
      add_direct(run_begin, end);
    }
    run_begin = end;
    run_launches = 0;
  };
  for (size_t i = 0; i < sequence.size(); ++i) {
    const GpuThunk& thunk = *sequence[i];
    const std::optional<int64_t> launches = CapturedLaunches(thunk);
    if (launches.has_value() && *launches <= options.max_nodes) {
      if (run_launches + *launches > options.max_nodes) flush(i);
      run_launches += *launches;
      continue;
    }
    flush(i);
    add_direct(i, i + 1);
    run_begin = i + 1;
    for (const GpuThunkSequence* nested : NestedSequences(thunk)) PlanSequence(*nested, options);
  }
  flush(sequence.size());
  plans_[&sequence] = std::move(plan);
}

const GpuSequencePlan* GpuGraphPlan::Find(const GpuThunkSequence& sequence) const {
  auto it = plans_.find(&sequence);
  return it == plans_.end() ? nullptr : &it->second;
}

int64_t GpuGraphPlan::captured_segments() const {
  int64_t count = 0;
  for (const auto& [sequence, plan] : plans_) {
    for (const GpuSequencePlan::Segment& segment : plan.segments) count += segment.captured;
  }
  return count;
}

int64_t GpuGraphPlan::captured_launches() const {
  int64_t count = 0;
  for (const auto& [sequence, plan] : plans_) {
    for (const GpuSequencePlan::Segment& segment : plan.segments) {
      if (segment.captured) count = SaturatingAdd(count, segment.launches);
    }
  }
  return count;
}

std::string GpuGraphPlan::ToString(const GpuThunkSequence& top_level) const {
  if (!enabled_) return "graphs off\n";
  std::string text;
  // Top level first, then the nested sequences in the order they appear.
  std::vector<const GpuThunkSequence*> order = {&top_level};
  std::set<const GpuThunkSequence*> seen = {&top_level};
  for (size_t k = 0; k < order.size(); ++k) {
    const GpuThunkSequence& sequence = *order[k];
    const GpuSequencePlan* plan = Find(sequence);
    if (plan == nullptr) continue;
    absl::StrAppend(&text, k == 0 ? "top level" : "nested", ":\n");
    for (const GpuSequencePlan::Segment& segment : plan->segments) {
      if (segment.captured) {
        absl::StrAppend(&text, "  ", SegmentLabel(sequence, segment), "\n");
        continue;
      }
      for (size_t i = segment.begin; i < segment.end; ++i) {
        absl::StrAppend(&text, "  %", sequence[i]->name(), "\n");
        for (const GpuThunkSequence* nested : NestedSequences(*sequence[i])) {
          if (Find(*nested) != nullptr && seen.insert(nested).second) order.push_back(nested);
        }
      }
    }
  }
  return text;
}

void GpuProfile::Add(const std::string& label, bool nested, double device_ms, double host_ms) {
  std::lock_guard<std::mutex> lock(mutex_);
  Entry& entry = entries_[{nested, label}];
  entry.device_ms += device_ms;
  entry.host_ms += host_ms;
  ++entry.calls;
}

std::string GpuProfile::Report(const std::string& module_name) const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (runs_ == 0) return "";
  const double runs = static_cast<double>(runs_);
  std::string report;
  for (const bool nested : {false, true}) {
    std::vector<std::pair<const std::string*, const Entry*>> rows;
    double device = 0, host = 0;
    for (const auto& [key, entry] : entries_) {
      if (key.first != nested) continue;
      rows.emplace_back(&key.second, &entry);
      device += entry.device_ms;
      host += entry.host_ms;
    }
    if (!nested) {
      absl::StrAppend(&report, "AXLE_PROFILE ", module_name, " (cuda): ", runs_, " runs, ",
                      absl::SixDigits(device / runs), " ms per run on the device, ",
                      absl::SixDigits(host / runs), " ms enqueueing, in ", rows.size(),
                      " segments (ms on the device, share, ms enqueueing, calls per run)\n");
    } else if (!rows.empty()) {
      absl::StrAppend(&report, "inside control flow:\n");
    }
    std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
      return a.second->device_ms > b.second->device_ms;
    });
    for (const auto& [label, entry] : rows) {
      char line[96];
      std::snprintf(line, sizeof(line), "  %10.4f ms %6.1f%%  host %9.4f ms %8.1f x  ",
                    entry->device_ms / runs, device > 0 ? 100.0 * entry->device_ms / device : 0.0,
                    entry->host_ms / runs, static_cast<double>(entry->calls) / runs);
      absl::StrAppend(&report, line, *label, "\n");
    }
  }
  return report;
}

GpuProfile::Totals GpuProfile::TotalsPerRun() const {
  std::lock_guard<std::mutex> lock(mutex_);
  Totals totals;
  if (runs_ == 0) return totals;
  for (const auto& [key, entry] : entries_) {
    if (key.first) continue;  // inside control flow: within a top-level one
    totals.device_ms += entry.device_ms;
    totals.host_ms += entry.host_ms;
  }
  totals.device_ms /= static_cast<double>(runs_);
  totals.host_ms /= static_cast<double>(runs_);
  return totals;
}

GpuGraphCache::~GpuGraphCache() {
  const CudaDriver& driver = device_.driver();
  CudaDevice::ScopedActivation active(device_);
  for (auto& [key, entry] : entries_) {
    if (entry.exec != nullptr) driver.cuGraphExecDestroy(entry.exec);
  }
}

GpuRunTimer::~GpuRunTimer() {
  const CudaDriver& driver = device_.driver();
  CudaDevice::ScopedActivation active(device_);
  for (CUevent event : events_) driver.cuEventDestroy(event);
}

absl::StatusOr<CUevent> GpuRunTimer::NewEvent() {
  if (used_ < events_.size()) return events_[used_++];
  const CudaDriver& driver = device_.driver();
  CudaDevice::ScopedActivation active(device_);
  CUevent event = nullptr;
  AXLE_CUDA_RETURN_IF_ERROR(&driver, driver.cuEventCreate(&event, CU_EVENT_DEFAULT),
                            "cuEventCreate (AXLE_PROFILE)");
  events_.push_back(event);
  ++used_;
  return event;
}

absl::StatusOr<size_t> GpuRunTimer::Start(CUstream stream, std::string label, bool nested) {
  Pending pending;
  pending.label = std::move(label);
  pending.nested = nested;
  AXLE_ASSIGN_OR_RETURN(pending.start, NewEvent());
  AXLE_ASSIGN_OR_RETURN(pending.stop, NewEvent());
  const CudaDriver& driver = device_.driver();
  CudaDevice::ScopedActivation active(device_);
  AXLE_CUDA_RETURN_IF_ERROR(&driver, driver.cuEventRecord(pending.start, stream),
                            "cuEventRecord (AXLE_PROFILE)");
  pending_.push_back(std::move(pending));
  return pending_.size() - 1;
}

absl::Status GpuRunTimer::Stop(CUstream stream, size_t index, double host_ms) {
  Pending& pending = pending_[index];
  pending.host_ms = host_ms;
  const CudaDriver& driver = device_.driver();
  CudaDevice::ScopedActivation active(device_);
  return driver.ToStatus(driver.cuEventRecord(pending.stop, stream),
                         "cuEventRecord (AXLE_PROFILE)");
}

absl::Status GpuRunTimer::Collect(GpuProfile& profile) {
  const CudaDriver& driver = device_.driver();
  CudaDevice::ScopedActivation active(device_);
  absl::Status status = absl::OkStatus();
  for (const Pending& pending : pending_) {
    float ms = 0;
    if (driver.cuEventElapsedTime != nullptr && status.ok()) {
      status = driver.ToStatus(driver.cuEventElapsedTime(&ms, pending.start, pending.stop),
                               "cuEventElapsedTime (AXLE_PROFILE)");
    }
    profile.Add(pending.label, pending.nested, ms, pending.host_ms);
  }
  pending_.clear();
  used_ = 0;
  return status;
}

ScopedGpuRunState::ScopedGpuRunState(GpuRunState* state) : previous_(current_run_state) {
  current_run_state = state;
}

ScopedGpuRunState::~ScopedGpuRunState() { current_run_state = previous_; }

GpuRunState* CurrentGpuRunState() { return current_run_state; }

absl::Status RunPlannedSequence(const GpuThunkSequence& sequence, const GpuThunkContext& context,
                                absl::Span<const se::DeviceMemoryBase> scratch) {
  GpuRunState* state = current_run_state;
  if (state == nullptr || state->capturing) {
    return RunThunks(sequence, 0, sequence.size(), context, scratch, nullptr);
  }
  const GpuSequencePlan* plan =
      state->plan != nullptr && state->graphs != nullptr ? state->plan->Find(sequence) : nullptr;
  if (plan == nullptr) return RunThunks(sequence, 0, sequence.size(), context, scratch, state);
  for (size_t k = 0; k < plan->segments.size(); ++k) {
    const GpuSequencePlan::Segment& segment = plan->segments[k];
    if (segment.captured) {
      AXLE_RETURN_IF_ERROR(RunCaptured(sequence, k, segment, context, scratch, *state));
    } else {
      AXLE_RETURN_IF_ERROR(
          RunThunks(sequence, segment.begin, segment.end, context, scratch, state));
    }
  }
  return absl::OkStatus();
}

}  // namespace axle::gpu
