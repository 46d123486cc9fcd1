//===- run_threads.h - How many threads a compiled graph's runs use --------===//
//
// A lazy graph runs once per training step, on the intra-op pool (its
// kernels split, its dots on oneDNN's OpenMP team). On a machine of few
// cores shared with other work, and on a VM whose idle vCPUs halt, a split
// waits for a worker that must be woken or that another process holds, and
// the whole graph can run slower on the pool than on the calling thread
// alone: an MNIST-sized MLP's step graph (784-256-256-10, batch 64) took a
// median 1.6-1.7 ms at 2 threads against 1.0 ms at 1 on the 2-core Zen 4
// VM with other builds running (2026-11-29), while on a quiet machine its
// dots gain from the second core. Which one wins depends on the machine and
// its load at the time, so each compiled graph measures it:
// RunThreadChoice alternates its runs between the pool's size and one
// thread for kProbeRuns runs of each (after one run to warm the caches),
// keeps the setting whose median run was shorter, and probes again every
// kCycleRuns runs, since the load changes. A pool of one thread has
// nothing to choose.
//
// The results do not depend on the choice: a split kernel computes each
// element as the unsplit one does, and a chunked reduction's chunks are
// fixed by the kernel, not by the number of threads. (oneDNN may order a
// dot's sums differently with another team size; that is within rounding.)
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_FRONTENDS_LAZY_RUN_THREADS_H_
#define AXLE_FRONTENDS_LAZY_RUN_THREADS_H_

#include <array>
#include <cstdint>
#include <mutex>

namespace axle::lazy {

class RunThreadChoice {
 public:
  static constexpr int kProbeRuns = 5;        // runs timed at each setting
  static constexpr int64_t kCycleRuns = 256;  // runs from one probe to the next

  // `pool_threads`: the intra-op pool's size.
  explicit RunThreadChoice(int pool_threads) : pool_threads_(pool_threads) {}

  struct Run {
    int threads;  // the run's intra-op threads: the pool's size or 1
    int slot;     // where to Record its time, or -1 for none
  };
  // The setting of the next run. Safe to call from several threads.
  Run Next();
  // The time of a run that Next gave a slot.
  void Record(const Run& run, int64_t nanoseconds);

  // The setting the last probe chose (the pool's size until one ends).
  int chosen_threads() const;

 private:
  const int pool_threads_;
  mutable std::mutex mutex_;
  int64_t runs_ = 0;
  int chosen_threads_ = 0;  // 0 until the first probe ends: the pool's size
  // Per setting (0: the pool's size, 1: one thread): the probe's times,
  // and how many of them were recorded.
  std::array<std::array<int64_t, kProbeRuns>, 2> times_{};
  std::array<int, 2> recorded_{};
};

}  // namespace axle::lazy

#endif  // AXLE_FRONTENDS_LAZY_RUN_THREADS_H_
