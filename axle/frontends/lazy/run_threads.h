//===- run_threads.h - How many threads a compiled graph's runs use --------===//
//
// A lazy graph runs once per training step, on the intra-op pool (its
// kernels split, its dots on oneDNN's OpenMP team). On a machine of few
// cores shared with other work, and on a VM whose idle vCPUs halt, a split
// waits for a worker that must be woken or that another process holds, and
// the whole graph can run slower on the pool than on the calling thread
// alone. Which one wins depends on the machine and its load at the time,
// so each compiled graph measures it: RunThreadChoice alternates its runs
// between the pool's size and one thread for kProbeRuns runs of each (after
// one run to warm the caches), keeps the setting whose median was shorter,
// and probes again every kCycleRuns runs, since the load changes. A pool of
// one thread has nothing to choose.
//
// What is timed is the step: from one run's start to the next run's (the
// run, then the recording of the next step), not the run alone. On Linux's
// scheduler a process that used more CPU time on one core waits longer when
// one of its threads wakes (PyTorch's backward runs on its autograd device
// thread, woken twice a step): measured on the 2-core VM with other builds
// running (2026-11-29), an MNIST-sized MLP's graph ran in a median 1.2 ms
// on one thread against 1.3-3.9 on two, but the backward's median grew from
// 0.17 to 2.4 ms with it.
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
    int slot;     // the setting probed (0: the pool's size, 1: one thread), or -1
  };
  // The setting of the run starting at `now_nanoseconds` (a steady clock).
  // Safe to call from several threads (the steps' times then mean little).
  Run Next(int64_t now_nanoseconds);

  // The setting the last probe chose (the pool's size until one ends).
  int chosen_threads() const;

 private:
  Run Choose();  // with mutex_ held

  const int pool_threads_;
  mutable std::mutex mutex_;
  int64_t runs_ = 0;
  int chosen_threads_ = 0;  // 0 until the first probe ends: the pool's size
  // The previous run's start and probed setting (-1: none).
  int64_t last_start_ = 0;
  int last_slot_ = -1;
  // Per setting: the probe's step times, and how many were recorded.
  std::array<std::array<int64_t, kProbeRuns>, 2> times_{};
  std::array<int, 2> recorded_{};
};

}  // namespace axle::lazy

#endif  // AXLE_FRONTENDS_LAZY_RUN_THREADS_H_
