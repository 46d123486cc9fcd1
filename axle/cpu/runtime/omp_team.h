//===- omp_team.h - Sizing oneDNN's OpenMP team for one thunk run ----------===//
//
// oneDNN (Debian's build) runs its primitives on libgomp's OpenMP team,
// whose size is a per-calling-thread setting. An OmpTeamShare, held for the
// duration of one oneDNN call, sets that size to the cores this run may use:
// the intra-op pool's size (capped by ExecutableRunOptions::intra_op_threads)
// divided among the oneDNN thunks (dot, convolution) running at that moment,
// so concurrent runs do not oversubscribe the machine, and capped by what the
// call's work can keep busy: waking a sleeping worker and joining it costs
// more than a small matmul's arithmetic (TeamSizeForWork).
//
// Spinning: libgomp's workers spin (by default up to 300000 rounds, a few
// ms) after each parallel region, i.e. after every oneDNN primitive; on a
// machine with few cores they then take the cores the intra-op pool's loop
// kernels run on (MLP step at 2 threads on 2 loaded cores: 206 ms with
// spinning workers, 84 ms with sleeping ones; 18-24% of a 2-thread bf16
// matmul's samples were libgomp spinning). libgomp reads its settings once,
// in its constructor, before any of Axle's runs, and an environment
// variable set before that is lost (libc's initializer resets `environ`
// after the executable's .preinit_array runs). What libgomp also reads
// then is the CPU affinity: when a team has more threads than the CPUs it
// saw, it spins only 100 rounds ("throttled") before sleeping. So, unless
// the user set OMP_WAIT_POLICY or GOMP_SPINCOUNT, omp_team.cc restricts the
// process to one CPU from the executable's .preinit_array and restores the
// affinity in a constructor that runs after libgomp's, before main.
// Side effect: threads that never set a team size (omp_set_num_threads,
// OMP_NUM_THREADS) default to teams of one; Axle sizes every oneDNN call's
// team itself (OmpTeamShare), and restores the main thread's default.
// Only Axle's own executables (tools, benchmarks, tests) carry this: it
// changes how libgomp starts for everything in the process, so a user's
// program that links the installed Axle::axle keeps its OpenMP behaviour,
// and opts in by linking Axle::omp_throttle, or sets OMP_WAIT_POLICY=PASSIVE.
// (Only executables have a .preinit_array: Axle linked into a shared
// library keeps libgomp's default spinning.)
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_CPU_RUNTIME_OMP_TEAM_H_
#define AXLE_CPU_RUNTIME_OMP_TEAM_H_

#include <cstdint>

#include "absl/functional/function_ref.h"
#include "axle/base/thread_pool.h"
#include "axle/core/primitive_type.h"
#include "axle/runtime/executable.h"

namespace axle::cpu {

// Whether Axle showed libgomp one CPU at process start, so that its workers
// spin briefly (false when the user had set OMP_WAIT_POLICY or
// GOMP_SPINCOUNT, on a one-CPU machine, or in a shared library).
bool OmpSpinningThrottledByAxle();

// What shows libgomp one CPU; run from an executable's .preinit_array
// (omp_team_preinit.cc, kept in executables only: a shared object may have
// no .preinit_array).
void ThrottleOmpSpinning(int argc, char** argv, char** envp);

// The process's intra-op pool (ThreadPool::Default()) as the cpu runtime
// uses it. With AXLE_CPU_THREAD_TEAM=omp (and two or more threads) its
// ParallelFor runs on libgomp's team, the one oneDNN's primitives run on
// (ThreadPool::UseTeam), instead of the pool's own workers, and dots get
// teams of two from 2M multiply-adds (kMinWorkPerSpinningOmpThread): one
// set of threads for the second core where libgomp's workers spin (the
// PyTorch device at libgomp's default). Not the default: on a 2-core VM
// under real-time priority it made the device's MLP step 20-25% faster
// and its mnist step 12% faster or 25% slower depending on the minute
// (docs/PERFORMANCE.md, issue 14). Decided once, on the first call.
ThreadPool& RuntimeThreadPool();

// Runs body() on a libgomp team of `threads` (ThreadPool::TeamRunner).
// The team's end is a barrier: the caller waits for every member, even one
// that got no block because the OS had descheduled it (other processes on
// the cores; spinning workers use up their share of them). The pool's own
// ParallelFor waits only for workers that joined. On a 2-core VM under
// load, without real-time priority, that made the MLP step 55-64 ms
// against 0.4-0.65 ms on the pool. So a call whose caller waited at the
// barrier longer than both kOmpTeamStallNanoseconds and its own share
// took (OmpTeamStalled) holds the team back for kOmpTeamHoldNanoseconds:
// bodies then run on the caller alone.
void RunOnOmpTeam(int threads, absl::FunctionRef<void()> body);
inline constexpr int64_t kOmpTeamStallNanoseconds = 200'000;
inline constexpr int64_t kOmpTeamHoldNanoseconds = 50'000'000;
bool OmpTeamStalled(int64_t caller_nanoseconds, int64_t waited_nanoseconds);
// Holds the team back for `nanoseconds` from now (as a stall does);
// whether it is held now.
void HoldOmpTeam(int64_t nanoseconds);
bool OmpTeamHeld();

// Multiply-adds (or other unit operations) that one more team member
// needs to pay for waking it and joining it. oneDNN f32 matmul, best of
// 2000 calls on a 2-core Zen 5 (us, 1 thread / 2 threads with workers that
// sleep between calls, as Axle's throttled spinning leaves them / 2 with
// workers spinning): [64,64]x[64,128] 6.3 / 13.8 / 6.7, [128,128]x[128,128]
// 21.5 / 29.7 / 13.9, [128,256]x[256,256] 78 / 89 / 45. The team's
// worker sleeps between calls, and a second thread paid at none of these
// sizes; at 2 x 2^21 (while_fixed_point's loop dot, [64,256]x[256,256] +
// tanh, every step) the team took 98-115 us against 85-92 on one thread
// (2026-11-29, 2-core Zen 5), so teams of two start at 2 x 2^22 (8.4M).
inline constexpr int64_t kMinWorkPerOmpThread = int64_t{1} << 22;
// The same where the team's workers spin between regions (the pool runs on
// libgomp's team, RuntimeThreadPool): a second thread paid from
// [128,128]x[128,128] (2.1M: 21.5 us on one thread, 13.9 on two spinning,
// above), not at [64,64]x[64,128] (0.5M: 6.3 / 6.7).
inline constexpr int64_t kMinWorkPerSpinningOmpThread = int64_t{1} << 20;

// The team size a call of `work` unit operations can keep busy: 1 below
// 2 x kMinWorkPerOmpThread, else one thread per kMinWorkPerOmpThread
// (kMinWorkPerSpinningOmpThread for a `spinning` team).
int TeamSizeForWork(int64_t work, bool spinning = false);

// The work of a dot of `multiply_adds` on `lhs` x `rhs` operands in f32
// multiply-adds, the unit TeamSizeForWork counts: oneDNN runs bf16 x bf16
// at twice f32's rate (PEERS.md), so each counts half. A GRU step's bf16
// [32,384] x [384,512] (6.3M) took 70 us on one thread and 96 us on a team
// of two (2-core Zen 5); a bf16 dot gets a team of two from 16.8M.
int64_t DotWorkInF32MultiplyAdds(int64_t multiply_adds, PrimitiveType lhs, PrimitiveType rhs);

class OmpTeamShare {
 public:
  // `max_threads` caps the team (TeamSizeForWork of the call's work).
  explicit OmpTeamShare(const ExecutableRunOptions* options, int max_threads = 1 << 30);
  ~OmpTeamShare();
  OmpTeamShare(const OmpTeamShare&) = delete;
  OmpTeamShare& operator=(const OmpTeamShare&) = delete;

  // The team size set for the call.
  int threads() const { return threads_; }

 private:
  int threads_ = 1;
};

// While one exists, the calling thread's oneDNN calls (and the primitives it
// creates) run on a team of one, no OpenMP worker involved: for oneDNN work
// that Axle itself splits across its intra-op pool. Restores the thread's
// team size after.
class OmpTeamOfOne {
 public:
  OmpTeamOfOne();
  ~OmpTeamOfOne();
  OmpTeamOfOne(const OmpTeamOfOne&) = delete;
  OmpTeamOfOne& operator=(const OmpTeamOfOne&) = delete;

 private:
  int previous_;
};

}  // namespace axle::cpu

#endif  // AXLE_CPU_RUNTIME_OMP_TEAM_H_
