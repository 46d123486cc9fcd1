//===- gpu_graph.h - CUDA graphs of thunk runs, and per-thunk profiles -----===//
//
// Launching a kernel costs the host a few microseconds; a program of small
// kernels (a training step, a random-number loop) spends more time there
// than on the device. XLA:GPU records runs of its thunks into CUDA graphs
// ("command buffers") and replays them; so does the GPU executable here.
//
// The plan (made once per executable, no device needed): each thunk
// sequence (the entry's, and those of loops, conditionals and calls that
// are not captured whole) is cut into segments. A maximal run of thunks
// that are CapturableInGraph (gpu_thunk.h: kernels, copies, memsets,
// Axle's own library kernels, sequences and known-trip-count loops of
// those) enqueueing at least `min_launches` launches is a captured segment;
// the rest run as before, one thunk at a time. A predicate loop or a
// conditional reads the host, so it ends a segment, and its own sequences
// are planned in turn (a loop's body becomes one graph launched per
// iteration). A known-trip-count loop that would unroll into more than
// `max_nodes` launches is not captured whole either: its body is.
//
// At run time (RunPlannedSequence, with a GpuRunState installed on the
// thread): a captured segment's thunks are recorded once by stream capture
// (cuStreamBeginCapture in thread-local mode, the thunks' Execute,
// cuStreamEndCapture), instantiated (cuGraphInstantiate) and launched
// (cuGraphLaunch). The graph bakes in buffer addresses, so each segment's
// graph is kept with the addresses of the values and scratch its thunks
// touch; a later run with the same addresses launches it as it is, one with
// others records the segment again and updates the executable graph in
// place (cuGraphExecUpdate), or instantiates it anew where the update is
// refused. A segment whose capture fails (a library refusing capture) runs
// its thunks directly, now and in later runs. Graphs belong to one run's
// resources (stream and arena: GpuGraphCache), so concurrent runs never
// share one. AXLE_GPU_GRAPHS=0 turns graphs off (GpuGraphOptionsFromEnv).
//
// Profiles (AXLE_PROFILE=1): each segment a run executes, a graph or one
// thunk, is timed on the device by a pair of CUDA events and on the host
// by the time its enqueueing took; the executable prints, when destroyed,
// the table of device and host milliseconds per run, slowest first, as the
// cpu backend does (the top-level segments, then those run inside control
// flow).
//
// Internal to axle/gpu: this header includes cuda.h.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_GPU_GPU_GRAPH_H_
#define AXLE_GPU_GPU_GRAPH_H_

#include <cuda.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "axle/gpu/gpu_thunks.h"

namespace axle::gpu {

struct GpuGraphOptions {
  // False: no segment is captured (every thunk enqueued as it runs).
  bool enabled = true;
  // A segment is captured when its thunks enqueue at least this many
  // launches (one kernel gains nothing from a graph).
  int64_t min_launches = 2;
  // A known-trip-count loop is captured whole only up to this many
  // launches (its body's times the trips); beyond, its body is captured.
  int64_t max_nodes = 16384;
};
// The defaults, with AXLE_GPU_GRAPHS=0 (or "false", "off") turning graphs
// off.
GpuGraphOptions GpuGraphOptionsFromEnv();

// The launches (kernels, copies, memsets, library calls) `thunk` enqueues
// in a run when it is CapturableInGraph; nullopt when it is not.
std::optional<int64_t> CapturedLaunches(const GpuThunk& thunk);

struct GpuSequencePlan {
  struct Segment {
    size_t begin = 0;  // thunks [begin, end) of the sequence
    size_t end = 0;
    bool captured = false;
    int64_t launches = 0;  // captured segments: what one graph launch replaces
    // Captured segments: the value ids their thunks read and write (sorted,
    // unique): the addresses the graph was recorded with.
    std::vector<int64_t> values;
  };
  std::vector<Segment> segments;
};

class GpuGraphPlan {
 public:
  GpuGraphPlan() = default;
  // Plans `top_level` and every sequence reachable from it through thunks
  // that are not captured.
  static GpuGraphPlan Make(const GpuThunkSequence& top_level, const GpuGraphOptions& options);

  // The plan of `sequence`, or null when it was not planned (it runs inside
  // a captured segment, or graphs are off).
  const GpuSequencePlan* Find(const GpuThunkSequence& sequence) const;
  bool enabled() const { return enabled_; }
  // Captured segments in all sequences, and the launches they replace (per
  // execution of each sequence).
  int64_t captured_segments() const;
  int64_t captured_launches() const;
  // One line per sequence planned, top level first: "graph %a..%b (N
  // thunks, L launches)" or "%name" for each segment.
  std::string ToString(const GpuThunkSequence& top_level) const;

 private:
  void PlanSequence(const GpuThunkSequence& sequence, const GpuGraphOptions& options);

  bool enabled_ = false;
  std::map<const GpuThunkSequence*, GpuSequencePlan> plans_;
};

// Device and host time per segment of a run (AXLE_PROFILE), summed over the
// runs. Thread-safe.
class GpuProfile {
 public:
  // One segment's times in one run; `label` names it, `nested` when it ran
  // inside control flow.
  void Add(const std::string& label, bool nested, double device_ms, double host_ms);
  void CountRun() {
    std::lock_guard<std::mutex> lock(mutex_);
    ++runs_;
  }
  int64_t runs() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return runs_;
  }
  // "AXLE_PROFILE <module>: N runs, D ms per run on the device (H ms
  // enqueueing) in S segments" and a line per segment, slowest first (ms
  // per run on the device, share, host ms, calls per run, label); then
  // "inside control flow:" and those segments. Empty without runs.
  std::string Report(const std::string& module_name) const;
  // Device and host milliseconds per run, over the top-level segments.
  struct Totals {
    double device_ms = 0;
    double host_ms = 0;
  };
  Totals TotalsPerRun() const;

 private:
  struct Entry {
    double device_ms = 0;
    double host_ms = 0;
    int64_t calls = 0;
  };
  mutable std::mutex mutex_;
  int64_t runs_ = 0;
  std::map<std::pair<bool, std::string>, Entry> entries_;
};

// The graphs of one run's resources (a stream and an arena), per captured
// segment. Not thread-safe: one run uses it at a time.
class GpuGraphCache {
 public:
  explicit GpuGraphCache(const CudaDevice& device) : device_(device) {}
  ~GpuGraphCache();
  GpuGraphCache(const GpuGraphCache&) = delete;
  GpuGraphCache& operator=(const GpuGraphCache&) = delete;

  struct Entry {
    std::vector<const void*> addresses;  // those the graph was recorded with
    CUgraphExec exec = nullptr;
    bool recorded = false;  // addresses and exec (null: the graph is empty) set
    bool failed = false;    // capture refused: run the thunks directly
    int64_t recordings = 0;
  };
  Entry& Get(const GpuThunkSequence* sequence, size_t segment) {
    return entries_[{sequence, segment}];
  }
  // Recordings (first captures and re-captures for new addresses), and
  // launches of recorded graphs, over the cache's life.
  int64_t recordings() const { return recordings_; }
  int64_t launches() const { return launches_; }
  void CountRecording() { ++recordings_; }
  void CountLaunch() { ++launches_; }
  const CudaDevice& device() const { return device_; }

 private:
  const CudaDevice& device_;
  std::map<std::pair<const GpuThunkSequence*, size_t>, Entry> entries_;
  int64_t recordings_ = 0;
  int64_t launches_ = 0;
};

// Timing events of one run (AXLE_PROFILE): pairs recorded around each
// segment, read once the run is synchronized. Events are reused across the
// runs of one resources object.
class GpuRunTimer {
 public:
  explicit GpuRunTimer(const CudaDevice& device) : device_(device) {}
  ~GpuRunTimer();
  GpuRunTimer(const GpuRunTimer&) = delete;
  GpuRunTimer& operator=(const GpuRunTimer&) = delete;

  // Records a start event on `stream`; returns its index for Stop.
  absl::StatusOr<size_t> Start(CUstream stream, std::string label, bool nested);
  absl::Status Stop(CUstream stream, size_t index, double host_ms);
  // After the stream's work is done: adds every pair to `profile`, forgets
  // them.
  absl::Status Collect(GpuProfile& profile);
  // Forgets the pairs of a failed run.
  void Clear() { pending_.clear(); }

 private:
  absl::StatusOr<CUevent> NewEvent();
  struct Pending {
    std::string label;
    bool nested = false;
    CUevent start = nullptr;
    CUevent stop = nullptr;
    double host_ms = 0;
  };
  const CudaDevice& device_;
  std::vector<CUevent> events_;  // every event made, for the destructor
  size_t used_ = 0;              // events_[0, used_) are in pending_
  std::vector<Pending> pending_;
};

// What the executable installs on the running thread for one run: the plan
// and that run's graphs, and the run's timer when profiling.
struct GpuRunState {
  const GpuGraphPlan* plan = nullptr;
  GpuGraphCache* graphs = nullptr;
  GpuRunTimer* timer = nullptr;
  // Set while a segment is being recorded: nested sequences then enqueue
  // their thunks into the recording, unplanned and untimed.
  bool capturing = false;
  int depth = 0;  // control flow entered (profiles: "inside control flow")
};

// `thunk` as CapturableInGraph: for library thunks whose calls are known to
// capture (cuBLAS, given its workspace, as XLA's command buffers record
// it). Everything else is the wrapped thunk's.
absl::StatusOr<std::unique_ptr<GpuThunk>> CapturableLibraryCall(
    absl::StatusOr<std::unique_ptr<GpuThunk>> thunk);

// Installs `state` (may be null) on this thread until destroyed; restores
// the one before.
class ScopedGpuRunState {
 public:
  explicit ScopedGpuRunState(GpuRunState* state);
  ~ScopedGpuRunState();
  ScopedGpuRunState(const ScopedGpuRunState&) = delete;
  ScopedGpuRunState& operator=(const ScopedGpuRunState&) = delete;

 private:
  GpuRunState* previous_;
};
GpuRunState* CurrentGpuRunState();

// Runs `sequence` by the installed state's plan: captured segments as
// graphs, the other thunks one by one, each timed when profiling. Without
// a state, or while recording, or for a sequence the plan does not know,
// every thunk is enqueued in order. `scratch`: each thunk's scratch memory
// (the top level's), or empty to pass context.scratch to all. Failures name
// the thunk ("... (in %name)").
absl::Status RunPlannedSequence(const GpuThunkSequence& sequence, const GpuThunkContext& context,
                                absl::Span<const se::DeviceMemoryBase> scratch = {});

}  // namespace axle::gpu

#endif  // AXLE_GPU_GPU_GRAPH_H_
