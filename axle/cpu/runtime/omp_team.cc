// OmpTeamShare: oneDNN's OpenMP team sized per run (see omp_team.h).
#include "axle/cpu/runtime/omp_team.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>

#include "axle/base/environment_options.h"
#include "axle/base/thread_pool.h"

// libgomp (oneDNN's threading runtime in Debian's build).
extern "C" {
void omp_set_num_threads(int threads);
int omp_get_max_threads(void);
int omp_get_thread_num(void);
// What GCC's `#pragma omp parallel num_threads(n)` calls (libgomp 4.0+).
void GOMP_parallel(void (*fn)(void*), void* data, unsigned num_threads, unsigned flags);
}

namespace axle::cpu {
namespace {

// The oneDNN calls running right now, across all thunks and runs.
std::atomic<int> running_calls{0};

// The process's CPU affinity at start, while libgomp is shown one CPU.
cpu_set_t saved_affinity;
bool throttled_by_axle = false;

bool HasSetting(char** envp, const char* prefix) {
  const size_t length = std::strlen(prefix);
  for (char** entry = envp; *entry != nullptr; ++entry) {
    if (std::strncmp(*entry, prefix, length) == 0) return true;
  }
  return false;
}

}  // namespace

// Runs from the executable's .preinit_array (omp_team_preinit.cc), before any shared library's
// constructor (libgomp's reads the CPU count and the environment). A
// setenv here would not reach libgomp: libc's own initializer, which runs
// after this and before libgomp's, points `environ` back at the original
// `envp`. So instead, unless the user chose a wait policy, libgomp is shown
// one CPU (omp_team.h): its workers then spin only briefly (its
// "throttled" count) whenever a team has more threads than that.
void ThrottleOmpSpinning(int, char**, char** envp) {
  if (envp == nullptr || HasSetting(envp, "OMP_WAIT_POLICY=") ||
      HasSetting(envp, "GOMP_SPINCOUNT=")) {
    return;
  }
  if (sched_getaffinity(0, sizeof(saved_affinity), &saved_affinity) != 0 ||
      CPU_COUNT(&saved_affinity) < 2) {
    return;
  }
  cpu_set_t one;
  CPU_ZERO(&one);
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &saved_affinity)) {
      CPU_SET(cpu, &one);
      break;
    }
  }
  throttled_by_axle = sched_setaffinity(0, sizeof(one), &one) == 0;
}

namespace {

// An executable's constructors run after those of the shared libraries it
// uses (libgomp's among them): the process gets its CPUs back before main.
__attribute__((constructor)) void RestoreAffinity() {
  if (!throttled_by_axle) return;
  sched_setaffinity(0, sizeof(saved_affinity), &saved_affinity);
  // The main thread's default team size, which libgomp took from the one
  // CPU it saw.
  omp_set_num_threads(CPU_COUNT(&saved_affinity));
}

}  // namespace

bool OmpSpinningThrottledByAxle() { return throttled_by_axle; }

namespace {

// Until when (steady clock, ns) RunOnOmpTeam runs bodies on the caller
// alone, after a stall.
std::atomic<int64_t> team_held_until{0};

int64_t NowNanoseconds() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// What a team's threads share. libgomp's own barriers order the caller's
// writes before the team's reads and the team's work before the caller's
// return, but libgomp is not built with ThreadSanitizer, so the same order
// is also stated through these atomics (one release/acquire pair each way;
// nothing waits on them).
struct TeamCall {
  absl::FunctionRef<void()>* body;
  std::atomic<bool> published{false};
  // When the caller (the team's thread 0) finished its share.
  std::atomic<int64_t> caller_done{0};
  std::atomic<int> finished{0};
};

}  // namespace

bool OmpTeamStalled(int64_t caller_nanoseconds, int64_t waited_nanoseconds) {
  return waited_nanoseconds > std::max(kOmpTeamStallNanoseconds, caller_nanoseconds);
}

void HoldOmpTeam(int64_t nanoseconds) {
  team_held_until.store(NowNanoseconds() + nanoseconds, std::memory_order_relaxed);
}

bool OmpTeamHeld() { return NowNanoseconds() < team_held_until.load(std::memory_order_relaxed); }

void RunOnOmpTeam(int threads, absl::FunctionRef<void()> body) {
  const int64_t start = NowNanoseconds();
  if (threads < 2 || start < team_held_until.load(std::memory_order_relaxed)) {
    body();
    return;
  }
  TeamCall call{&body};
  call.published.store(true, std::memory_order_release);
  GOMP_parallel(
      [](void* data) {
        TeamCall& call = *static_cast<TeamCall*>(data);
        (void)call.published.load(std::memory_order_acquire);
        (*call.body)();
        if (omp_get_thread_num() == 0) {
          call.caller_done.store(NowNanoseconds(), std::memory_order_relaxed);
        }
        call.finished.fetch_add(1, std::memory_order_acq_rel);
      },
      &call, static_cast<unsigned>(threads), 0);
  (void)call.finished.load(std::memory_order_acquire);
  const int64_t end = NowNanoseconds();
  const int64_t caller_done = call.caller_done.load(std::memory_order_relaxed);
  if (caller_done > 0 && OmpTeamStalled(caller_done - start, end - caller_done)) {
    HoldOmpTeam(kOmpTeamHoldNanoseconds);
  }
}

ThreadPool& RuntimeThreadPool() {
  static ThreadPool* const pool = [] {
    ThreadPool* chosen = &ThreadPool::Default();
    if (chosen->num_threads() > 1 && EnvironmentOptions::Read().cpu_thread_team == "omp") {
      chosen->UseTeam(&RunOnOmpTeam);
    }
    return chosen;
  }();
  return *pool;
}

int TeamSizeForWork(int64_t work, bool spinning) {
  const int64_t per_thread = spinning ? kMinWorkPerSpinningOmpThread : kMinWorkPerOmpThread;
  return static_cast<int>(std::clamp<int64_t>(work / per_thread, 1, 1 << 30));
}

int64_t DotWorkInF32MultiplyAdds(int64_t multiply_adds, PrimitiveType lhs, PrimitiveType rhs) {
  return lhs == BF16 && rhs == BF16 ? multiply_adds / 2 : multiply_adds;
}

OmpTeamShare::OmpTeamShare(const ExecutableRunOptions* options, int max_threads) {
  int running = running_calls.fetch_add(1) + 1;
  int cores = ThreadPool::DefaultNumThreads();
  if (options != nullptr && options->intra_op_threads() > 0) {
    cores = std::min(cores, options->intra_op_threads());
  }
  threads_ = std::max(1, std::min(cores / running, max_threads));
  if (omp_get_max_threads() != threads_) omp_set_num_threads(threads_);
}

OmpTeamShare::~OmpTeamShare() { running_calls.fetch_sub(1); }

OmpTeamOfOne::OmpTeamOfOne() : previous_(omp_get_max_threads()) {
  if (previous_ != 1) omp_set_num_threads(1);
}

OmpTeamOfOne::~OmpTeamOfOne() {
  if (previous_ != 1) omp_set_num_threads(previous_);
}

}  // namespace axle::cpu
