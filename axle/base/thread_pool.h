//===- thread_pool.h - The process-wide intra-op thread pool ---------------===//
//
// One pool of worker threads per process, shared by every kernel the
// runtime splits (DESIGN.md "Threads": two pools on two cores fight). Its
// size is the machine's (`std::thread::hardware_concurrency()`), or
// `AXLE_NUM_THREADS` when that environment variable holds a positive
// integer; the pool counts the calling thread, so N threads means N-1
// workers.
//
// `ParallelFor(n, min_block, fn)` cuts [0, n) into contiguous blocks of at
// least `min_block` items, runs `fn(begin, end)` on each, and returns when
// all have run. The caller runs blocks too. Workers sleep on a condition
// variable when idle (no spinning), threads are created once, and a call
// made from inside a block (nested parallelism) or while every worker is
// busy with another caller's blocks simply runs its blocks inline, so
// calls from many threads at once are safe and never deadlock.
//
// Spinning: waking a sleeping worker, and the caller's waking when the last
// worker leaves, each cost tens of microseconds on a VM, as much as a small
// kernel (an RNN step's dot) takes. So a caller out of blocks waits for the
// workers still inside spinning, up to kSpinMicroseconds, before it sleeps;
// and while a SpinScope is open (a while loop runs, thunks back to back),
// an idle worker waits for the next job spinning, up to kSpinMicroseconds
// after its last one, before it sleeps. A caller that will publish its next
// job within microseconds (a run of thunks that each split over the pool)
// asks the same of the workers of one job (AfterJob::kSpin). Otherwise idle
// workers sleep at once, so they never take cores from other thread pools
// (oneDNN's OpenMP team) for long. While a SpinPause is open (a oneDNN call
// on an OpenMP team of two or more runs) idle workers do not spin at all:
// a spinning worker holds the core the team's thread is woken on (a GRU
// step's bf16 [32,384] x [384,512] on a team of two took 96 us beside a
// spinning worker, 70 us on one thread, 2 cores).
// A split that finds a worker spinning (IdleWorkerSpinning) costs its
// caller 1-2 us; one that must wake a sleeping worker ~10 us (2-core Zen 5
// VM): callers that decide per run whether small work is worth splitting
// ask which it is.
//
// Another runtime's team: UseTeam(runner) makes ParallelFor run its blocks
// on a team `runner` starts (libgomp's, which oneDNN's primitives run on:
// cpu/runtime/omp_team.h) instead of the pool's workers, so one set of
// threads takes the second core for both, where two sets fought (a process
// whose libgomp workers spin after every region, e.g. PyTorch's). A call
// that finds the team busy with another caller's blocks runs inline, as
// with the pool. SpinScopes and SpinPauses then change nothing (the team's
// workers wait as their runtime says), and IdleWorkerSpinning is false.
//
// `fn` must not throw (the project builds without exceptions in mind:
// report errors through state the caller owns, e.g. one absl::Status per
// block).
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_BASE_THREAD_POOL_H_
#define AXLE_BASE_THREAD_POOL_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"

namespace axle {

class ThreadPool {
 public:
  // A pool of `num_threads` threads in all (the caller included), so
  // `num_threads - 1` workers. `num_threads` < 1 is treated as 1.
  explicit ThreadPool(int num_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // The process-wide pool, created on first use with DefaultNumThreads().
  static ThreadPool& Default();
  // AXLE_NUM_THREADS if set to a positive integer, else the hardware's.
  static int DefaultNumThreads();
  // Parses an AXLE_NUM_THREADS value: a positive integer, at most 1024.
  static absl::StatusOr<int> ParseNumThreads(const char* text);

  int num_threads() const { return static_cast<int>(workers_.size()) + 1; }

  // What the workers of a job do once it has no blocks left: sleep (unless
  // a SpinScope is open), or wait for the next job spinning, up to
  // kSpinMicroseconds.
  enum class AfterJob { kSleep, kSpin };

  // Runs fn(begin, end) over blocks covering [0, n), on at most
  // `max_threads` threads (<= 0: all of the pool's). Blocks hold at least
  // `min_block` items (< 1 means 1). n <= 0 runs nothing.
  void ParallelFor(int64_t n, int64_t min_block,
                   absl::FunctionRef<void(int64_t begin, int64_t end)> fn, int max_threads = 0,
                   AfterJob after = AfterJob::kSleep);

  // Runs body() on `threads` threads at once, the caller among them, and
  // returns when every one has returned (fewer threads when the runtime
  // gives fewer).
  using TeamRunner = void (*)(int threads, absl::FunctionRef<void()> body);
  // From now on ParallelFor runs its blocks on `runner`'s team (null: on
  // the pool's workers again). Not while a ParallelFor runs.
  void UseTeam(TeamRunner runner) { team_runner_.store(runner, std::memory_order_release); }
  bool UsesTeam() const { return team_runner_.load(std::memory_order_acquire) != nullptr; }

  // Whether the current thread is running a block of this pool's ParallelFor
  // (then a nested ParallelFor runs inline).
  static bool InParallelRegion();

  // How long a waiting thread spins before it sleeps (see above).
  static constexpr int64_t kSpinMicroseconds = 50;

  // While one exists, idle workers of `pool` (null: none) wait for the next
  // job spinning (see above). Scopes nest and may be opened from any
  // thread.
  // Whether a SpinScope is open (a run of thunks or a loop: the pool's
  // workers spin between the jobs that follow each other closely).
  bool WorkersSpinning() const { return spin_scopes_.load(std::memory_order_relaxed) > 0; }
  // Whether a worker is awake now, spinning for the next job (then a split
  // costs the caller a microsecond or two; waking a sleeping worker ~10).
  bool IdleWorkerSpinning() const { return spinning_workers_.load(std::memory_order_relaxed) > 0; }

  class SpinScope {
   public:
    explicit SpinScope(ThreadPool* pool);
    ~SpinScope();
    SpinScope(const SpinScope&) = delete;
    SpinScope& operator=(const SpinScope&) = delete;

   private:
    ThreadPool* pool_;
  };

  // While one exists, idle workers of `pool` (null: none) sleep instead of
  // spinning, whatever SpinScopes are open: another thread pool (oneDNN's
  // OpenMP team) runs on the cores meanwhile. Pauses nest and may be
  // opened from any thread.
  class SpinPause {
   public:
    explicit SpinPause(ThreadPool* pool);
    ~SpinPause();
    SpinPause(const SpinPause&) = delete;
    SpinPause& operator=(const SpinPause&) = delete;

   private:
    ThreadPool* pool_;
  };

 private:
  struct Job;

  void WorkerLoop();
  // Runs blocks of `job` until none are left.
  static void RunBlocks(Job& job);

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable work_available_;
  // The job workers should help with (null: none); guarded by mutex_.
  Job* current_job_ = nullptr;
  uint64_t job_generation_ = 0;
  bool shutting_down_ = false;
  // job_generation_ as last published, read by spinning workers without
  // the mutex; open SpinScopes.
  std::atomic<uint64_t> published_generation_{0};
  std::atomic<int> spin_scopes_{0};
  // Workers spinning for the next job now; open SpinPauses.
  std::atomic<int> spinning_workers_{0};
  std::atomic<int> spin_pauses_{0};
  // UseTeam's runner, and whether a ParallelFor runs on its team now.
  std::atomic<TeamRunner> team_runner_{nullptr};
  std::atomic<bool> team_busy_{false};
};

}  // namespace axle

#endif  // AXLE_BASE_THREAD_POOL_H_
