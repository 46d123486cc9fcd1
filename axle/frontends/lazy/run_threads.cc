//===- run_threads.cc - How many threads a compiled graph's runs use -------===//
#include "axle/frontends/lazy/run_threads.h"

#include <utility>

namespace axle::lazy {
namespace {

// The median of the first `count` times (the upper one of an even count),
// by an insertion sort of a copy: there are at most kProbeRuns.
int64_t Median(std::array<int64_t, RunThreadChoice::kProbeRuns> times, int count) {
  for (int i = 1; i < count; ++i) {
    for (int j = i; j > 0 && times[j] < times[j - 1]; --j) std::swap(times[j], times[j - 1]);
  }
  return times[count / 2];
}

}  // namespace

RunThreadChoice::Run RunThreadChoice::Next() {
  if (pool_threads_ < 2) return {pool_threads_, -1};
  std::lock_guard<std::mutex> lock(mutex_);
  const int64_t run = runs_++;
  // The first run warms the caches and is not timed.
  if (run == 0) return {pool_threads_, -1};
  const int64_t at = (run - 1) % kCycleRuns;
  if (at == 0) recorded_ = {};
  if (at < 2 * kProbeRuns) {
    const int setting = static_cast<int>(at % 2);
    return {setting == 0 ? pool_threads_ : 1, setting};
  }
  if (at == 2 * kProbeRuns && recorded_[0] > 0 && recorded_[1] > 0) {
    // A run of the probe that has not recorded yet (another thread's) is
    // left out.
    const int64_t pool = Median(times_[0], recorded_[0]);
    const int64_t one = Median(times_[1], recorded_[1]);
    chosen_threads_ = one < pool ? 1 : 0;
  }
  return {chosen_threads_ == 0 ? pool_threads_ : chosen_threads_, -1};
}

void RunThreadChoice::Record(const Run& run, int64_t nanoseconds) {
  if (run.slot < 0) return;
  std::lock_guard<std::mutex> lock(mutex_);
  int& count = recorded_[run.slot];
  if (count < kProbeRuns) times_[run.slot][count++] = nanoseconds;
}

int RunThreadChoice::chosen_threads() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return chosen_threads_ == 0 ? pool_threads_ : chosen_threads_;
}

}  // namespace axle::lazy
