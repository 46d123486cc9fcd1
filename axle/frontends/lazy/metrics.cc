//===- metrics.cc - Counters and timers of the lazy-tensor runtime ---------===//
#include "axle/frontends/lazy/metrics.h"

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace axle::lazy::metrics {
namespace {

struct Registry {
  std::mutex mutex;
  // Counters are never removed (handles stay valid); ClearAll() marks them unused.
  std::map<std::string, std::unique_ptr<Counter>, std::less<>> counters;
  std::map<std::string, MetricData, std::less<>> timers;
};

Registry& Get() {
  static auto* registry = new Registry();
  return *registry;
}

}  // namespace

struct CounterAccess {
  static int64_t Value(const Counter& c) { return c.value_.load(std::memory_order_relaxed); }
  static bool Used(const Counter& c) { return c.used_.load(std::memory_order_acquire); }
  static void Clear(Counter& c) {
    c.used_.store(false, std::memory_order_release);
    c.value_.store(0, std::memory_order_relaxed);
  }
};

void Counter::Increment(int64_t amount) {
  value_.fetch_add(amount, std::memory_order_relaxed);
  if (!used_.load(std::memory_order_relaxed)) used_.store(true, std::memory_order_release);
}

Counter* GetCounter(absl::string_view name) {
  Registry& r = Get();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.counters.find(name);
  if (it == r.counters.end()) {
    it = r.counters.emplace(std::string(name), std::make_unique<Counter>()).first;
  }
  return it->second.get();
}

void IncrementCounter(absl::string_view name, int64_t amount) {
  GetCounter(name)->Increment(amount);
}

std::optional<int64_t> CounterValue(absl::string_view name) {
  Registry& r = Get();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.counters.find(name);
  if (it == r.counters.end() || !CounterAccess::Used(*it->second)) return std::nullopt;
  return CounterAccess::Value(*it->second);
}

std::vector<std::string> CounterNames() {
  Registry& r = Get();
  std::lock_guard<std::mutex> lock(r.mutex);
  std::vector<std::string> names;
  names.reserve(r.counters.size());
  for (const auto& [name, counter] : r.counters) {
    if (CounterAccess::Used(*counter)) names.push_back(name);
  }
  return names;
}

void RecordTime(absl::string_view name, double seconds) {
  Registry& r = Get();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.timers.find(name);
  if (it == r.timers.end()) it = r.timers.emplace(std::string(name), MetricData()).first;
  MetricData& m = it->second;
  m.min_seconds = m.count == 0 ? seconds : std::min(m.min_seconds, seconds);
  m.max_seconds = m.count == 0 ? seconds : std::max(m.max_seconds, seconds);
  m.total_seconds += seconds;
  ++m.count;
}

std::optional<MetricData> Metric(absl::string_view name) {
  Registry& r = Get();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.timers.find(name);
  if (it == r.timers.end()) return std::nullopt;
  return it->second;
}

std::vector<std::string> MetricNames() {
  Registry& r = Get();
  std::lock_guard<std::mutex> lock(r.mutex);
  std::vector<std::string> names;
  names.reserve(r.timers.size());
  for (const auto& [name, value] : r.timers) names.push_back(name);
  return names;
}

std::string Report() {
  Registry& r = Get();
  std::lock_guard<std::mutex> lock(r.mutex);
  std::string out;
  for (const auto& [name, m] : r.timers) {
    absl::StrAppendFormat(&out,
                          "Metric: %s\n  TotalSamples: %d\n  Accumulator: %.3fms\n"
                          "  Mean: %.3fms\n  Min: %.3fms\n  Max: %.3fms\n",
                          name, m.count, m.total_seconds * 1e3,
                          m.count ? m.total_seconds * 1e3 / m.count : 0.0, m.min_seconds * 1e3,
                          m.max_seconds * 1e3);
  }
  for (const auto& [name, counter] : r.counters) {
    if (!CounterAccess::Used(*counter)) continue;
    absl::StrAppend(&out, "Counter: ", name, "\n  Value: ", CounterAccess::Value(*counter), "\n");
  }
  return out;
}

void ClearAll() {
  Registry& r = Get();
  std::lock_guard<std::mutex> lock(r.mutex);
  for (auto& [name, counter] : r.counters) CounterAccess::Clear(*counter);
  r.timers.clear();
}

}  // namespace axle::lazy::metrics
