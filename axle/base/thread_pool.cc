//===- thread_pool.cc - The process-wide intra-op thread pool --------------===//
//
// One job at a time: a ParallelFor publishes its Job (on the caller's stack)
// as current_job_, wakes as many workers as it can use and claims blocks
// itself through an atomic counter. Workers that wake join the job under
// the mutex (so the caller knows who still touches it), claim blocks until
// none are left, and leave. The caller, out of blocks, withdraws the job and
// waits until every worker that joined has left; then all blocks are done.
// A second caller that finds a job published runs its own blocks inline.
// Waits spin before they sleep as thread_pool.h says: the caller's for the
// workers to leave (Job::active_workers is atomic for that, still changed
// under the mutex only, and the caller takes the mutex once it reads zero,
// so no worker touches the job after the caller returns), a worker's for
// the next generation to be published (published_generation_).
//
//===----------------------------------------------------------------------===//
#include "axle/base/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "axle/base/environment_options.h"

namespace axle {
namespace {

thread_local bool in_parallel_region = false;

// One short wait of a spinning thread.
inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// Spins until `done()` or kSpinMicroseconds passed; returns done().
template <typename Done>
bool SpinUntil(Done done) {
  // The clock is read every 64 rounds (a pause is ~40-140 cycles).
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::microseconds(ThreadPool::kSpinMicroseconds);
  for (int round = 1;; ++round) {
    if (done()) return true;
    CpuRelax();
    if (round % 64 == 0 && std::chrono::steady_clock::now() >= deadline) return done();
  }
}

// Sets in_parallel_region for the lifetime of the object.
class ParallelRegion {
 public:
  ParallelRegion() : previous_(in_parallel_region) { in_parallel_region = true; }
  ~ParallelRegion() { in_parallel_region = previous_; }

 private:
  bool previous_;
};

}  // namespace

struct ThreadPool::Job {
  absl::FunctionRef<void(int64_t, int64_t)> fn;
  int64_t n = 0;
  int64_t block_size = 0;
  int64_t num_blocks = 0;
  ThreadPool::AfterJob after = ThreadPool::AfterJob::kSleep;
  std::atomic<int64_t> next_block{0};
  // Workers that may still join, and workers inside; guarded by the pool's
  // mutex.
  int open_seats = 0;
  std::atomic<int> active_workers{0};
  std::condition_variable workers_left;
};

ThreadPool::ThreadPool(int num_threads) {
  const int workers = std::max(num_threads, 1) - 1;
  workers_.reserve(workers);
  for (int i = 0; i < workers; ++i) workers_.emplace_back([this] { WorkerLoop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    shutting_down_ = true;
  }
  work_available_.notify_all();
  for (std::thread& worker : workers_) worker.join();
}

absl::StatusOr<int> ThreadPool::ParseNumThreads(const char* text) {
  int value = 0;
  if (text == nullptr || !absl::SimpleAtoi(text, &value) || value < 1 || value > 1024) {
    return absl::InvalidArgumentError(
        absl::StrCat("AXLE_NUM_THREADS must be an integer in [1, 1024], got \"",
                     text == nullptr ? "" : text, "\""));
  }
  return value;
}

int ThreadPool::DefaultNumThreads() {
  // Read once: every oneDNN call sizes its team from this (OmpTeamShare),
  // and reading the whole environment (EnvironmentOptions: some 30
  // variables) on each was ~0.3% of the PyTorch device's block128 step.
  static const int threads = [] {
    if (std::optional<std::string> text = EnvironmentOptions::Read().num_threads) {
      absl::StatusOr<int> parsed = ParseNumThreads(text->c_str());
      if (parsed.ok()) return *parsed;
    }
    return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  }();
  return threads;
}

ThreadPool& ThreadPool::Default() {
  // Never destroyed: workers must outlive static destructors that may run
  // kernels.
  static ThreadPool* pool = new ThreadPool(DefaultNumThreads());
  return *pool;
}

bool ThreadPool::InParallelRegion() { return in_parallel_region; }

void ThreadPool::RunBlocks(Job& job) {
  ParallelRegion region;
  for (;;) {
    const int64_t block = job.next_block.fetch_add(1, std::memory_order_relaxed);
    if (block >= job.num_blocks) return;
    const int64_t begin = block * job.block_size;
    job.fn(begin, std::min(job.n, begin + job.block_size));
  }
}

void ThreadPool::WorkerLoop() {
  uint64_t seen_generation = 0;
  // Whether the last job asked for AfterJob::kSpin.
  bool spin_after_job = false;
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    auto has_work = [&] {
      return shutting_down_ || (current_job_ != nullptr && job_generation_ != seen_generation &&
                                current_job_->open_seats > 0);
    };
    auto paused = [&] { return spin_pauses_.load(std::memory_order_relaxed) > 0; };
    if (!has_work() && (spin_after_job || spin_scopes_.load(std::memory_order_relaxed) > 0) &&
        !paused()) {
      // In a spin scope, or after a job that asked for it: the next job is
      // likely microseconds away. (The current one, if any, has no seat
      // left.)
      seen_generation = job_generation_;
      const bool keep_spinning = spin_after_job;
      lock.unlock();
      spinning_workers_.fetch_add(1, std::memory_order_relaxed);
      SpinUntil([&] {
        return published_generation_.load(std::memory_order_relaxed) != seen_generation ||
               (!keep_spinning && spin_scopes_.load(std::memory_order_relaxed) == 0) || paused();
      });
      spinning_workers_.fetch_sub(1, std::memory_order_relaxed);
      lock.lock();
    }
    spin_after_job = false;
    work_available_.wait(lock, has_work);
    if (shutting_down_) return;
    seen_generation = job_generation_;
    Job* job = current_job_;
    --job->open_seats;
    ++job->active_workers;
    spin_after_job = job->after == AfterJob::kSpin;
    lock.unlock();
    RunBlocks(*job);
    lock.lock();
    if (--job->active_workers == 0) job->workers_left.notify_one();
  }
}

void ThreadPool::ParallelFor(int64_t n, int64_t min_block,
                             absl::FunctionRef<void(int64_t begin, int64_t end)> fn,
                             int max_threads, AfterJob after) {
  if (n <= 0) return;
  min_block = std::max<int64_t>(min_block, 1);
  int threads = num_threads();
  if (max_threads > 0) threads = std::min(threads, max_threads);
  // A few blocks per thread, so a thread the OS delays does not hold up
  // the rest; never smaller than min_block.
  const int64_t max_blocks = (n + min_block - 1) / min_block;
  const int64_t num_blocks = std::min<int64_t>(max_blocks, int64_t{4} * threads);
  if (threads <= 1 || num_blocks <= 1 || in_parallel_region) {
    fn(0, n);
    return;
  }
  Job job{fn};
  job.after = after;
  job.n = n;
  job.block_size = (n + num_blocks - 1) / num_blocks;
  job.num_blocks = (n + job.block_size - 1) / job.block_size;
  const int helpers = static_cast<int>(std::min<int64_t>(threads - 1, job.num_blocks - 1));
  if (TeamRunner runner = team_runner_.load(std::memory_order_acquire)) {
    bool idle = false;
    if (!team_busy_.compare_exchange_strong(idle, true, std::memory_order_acquire)) {
      // Another caller has the team: run inline rather than wait.
      ParallelRegion region;
      fn(0, n);
      return;
    }
    runner(helpers + 1, [&job] { RunBlocks(job); });
    team_busy_.store(false, std::memory_order_release);
    return;
  }
  bool published = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (current_job_ == nullptr) {
      job.open_seats = helpers;
      current_job_ = &job;
      ++job_generation_;
      published_generation_.store(job_generation_, std::memory_order_relaxed);
      published = true;
    }
  }
  if (!published) {
    // Another caller has the workers: run inline rather than wait.
    ParallelRegion region;
    fn(0, n);
    return;
  }
  for (int i = 0; i < helpers; ++i) work_available_.notify_one();
  RunBlocks(job);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    current_job_ = nullptr;
    job.open_seats = 0;
  }
  // The workers inside are running their last blocks: spin a while rather
  // than sleep and be woken.
  auto left = [&] { return job.active_workers.load(std::memory_order_acquire) == 0; };
  SpinUntil(left);
  std::unique_lock<std::mutex> lock(mutex_);
  job.workers_left.wait(lock, left);
}

ThreadPool::SpinScope::SpinScope(ThreadPool* pool) : pool_(pool) {
  if (pool_ != nullptr) pool_->spin_scopes_.fetch_add(1, std::memory_order_relaxed);
}

ThreadPool::SpinScope::~SpinScope() {
  if (pool_ != nullptr) pool_->spin_scopes_.fetch_sub(1, std::memory_order_relaxed);
}

ThreadPool::SpinPause::SpinPause(ThreadPool* pool) : pool_(pool) {
  if (pool_ != nullptr) pool_->spin_pauses_.fetch_add(1, std::memory_order_relaxed);
}

ThreadPool::SpinPause::~SpinPause() {
  if (pool_ != nullptr) pool_->spin_pauses_.fetch_sub(1, std::memory_order_relaxed);
}

}  // namespace axle
