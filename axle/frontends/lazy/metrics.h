//===- metrics.h - Counters and timers of the lazy-tensor runtime ----------===//
//
// torch-xla's metrics, process-wide and thread-safe. A counter is a named
// integer (UncachedCompile, CachedCompile, MarkStep, CreateTensor,
// DestroyTensor, aten::<op> for each CPU fallback, axle::<op> for each
// lowered op); a timer (a "metric") collects durations (CompileTime,
// ExecuteTime, TransferToDeviceTime, TransferFromDeviceTime). A counter or
// timer exists from its first use until ClearAll().
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_FRONTENDS_LAZY_METRICS_H_
#define AXLE_FRONTENDS_LAZY_METRICS_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace axle::lazy::metrics {

void IncrementCounter(absl::string_view name, int64_t amount = 1);

// A counter's handle, for a hot path: incrementing it takes no lock and no
// lookup. Valid for the whole process (ClearAll() resets it, it stays).
class Counter {
 public:
  void Increment(int64_t amount = 1);

 private:
  friend Counter* GetCounter(absl::string_view name);
  friend struct CounterAccess;
  std::atomic<int64_t> value_{0};
  std::atomic<bool> used_{false};  // incremented since the last ClearAll()
};
Counter* GetCounter(absl::string_view name);
// The counter's value, or nullopt when it was never incremented.
std::optional<int64_t> CounterValue(absl::string_view name);
std::vector<std::string> CounterNames();  // sorted

struct MetricData {
  int64_t count = 0;
  double total_seconds = 0;
  double min_seconds = 0;
  double max_seconds = 0;
};
void RecordTime(absl::string_view name, double seconds);
std::optional<MetricData> Metric(absl::string_view name);
std::vector<std::string> MetricNames();  // sorted

// Every counter and timer, one per line, in torch-xla's style.
std::string Report();
// Forgets every counter and timer.
void ClearAll();

// Records the time from construction to destruction under `name`.
class ScopedTimer {
 public:
  explicit ScopedTimer(std::string name)
      : name_(std::move(name)), start_(std::chrono::steady_clock::now()) {}
  ~ScopedTimer() {
    RecordTime(name_,
               std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count());
  }
  ScopedTimer(const ScopedTimer&) = delete;
  ScopedTimer& operator=(const ScopedTimer&) = delete;

 private:
  std::string name_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace axle::lazy::metrics

#endif  // AXLE_FRONTENDS_LAZY_METRICS_H_
