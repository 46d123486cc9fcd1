//===- omp_team_test.cc - libgomp's workers spin briefly by default --------===//
//
// The test binary links the cpu runtime like any Axle program: unless the
// environment chose a wait policy, Axle showed libgomp one CPU while it
// initialized (so its workers use the short "throttled" spin) and gave the
// process its CPUs back before main.
//
//===----------------------------------------------------------------------===//
#include "axle/cpu/runtime/omp_team.h"

#include <sched.h>

#include <atomic>
#include <cstdlib>
#include <thread>
#include <vector>

#include "axle/base/thread_pool.h"
#include "gtest/gtest.h"

extern "C" int omp_get_max_threads(void);  // libgomp

namespace axle::cpu {
namespace {

TEST(OmpTeamTest, SpinningIsThrottledUnlessTheUserChoseAWaitPolicy) {
  if (!OmpSpinningThrottledByAxle()) {
    // Only a user's setting (or a single CPU) stops Axle from choosing.
    cpu_set_t cpus;
    ASSERT_EQ(sched_getaffinity(0, sizeof(cpus), &cpus), 0);
    EXPECT_TRUE(std::getenv("OMP_WAIT_POLICY") != nullptr ||
                std::getenv("GOMP_SPINCOUNT") != nullptr || CPU_COUNT(&cpus) < 2);
    return;
  }
  // The process has its CPUs back.
  cpu_set_t cpus;
  ASSERT_EQ(sched_getaffinity(0, sizeof(cpus), &cpus), 0);
  EXPECT_GE(CPU_COUNT(&cpus), 2);
  // libgomp saw one CPU: a new thread's default team has one thread (unless
  // OMP_NUM_THREADS says otherwise). (The main thread's default, restored
  // before main, is whatever the last OmpTeamShare on it set.)
  if (std::getenv("OMP_NUM_THREADS") == nullptr) {
    int new_thread_default = 0;
    std::thread([&] { new_thread_default = omp_get_max_threads(); }).join();
    EXPECT_EQ(new_thread_default, 1);
  }
}

// RunOnOmpTeam runs the body once on each of the team's threads, the
// caller among them (unless held back); a ThreadPool on it covers each
// index once.
TEST(OmpTeamTest, RunOnOmpTeamRunsTheBodyOnATeam) {
  HoldOmpTeam(0);  // not held back by an earlier stall
  std::atomic<int> runs{0};
  std::atomic<int> on_caller{0};
  const std::thread::id caller = std::this_thread::get_id();
  RunOnOmpTeam(2, [&] {
    runs.fetch_add(1);
    if (std::this_thread::get_id() == caller) on_caller.fetch_add(1);
  });
  EXPECT_EQ(runs.load(), 2);
  EXPECT_EQ(on_caller.load(), 1);
  ThreadPool pool(2);
  pool.UseTeam(&RunOnOmpTeam);
  for (int64_t n : {2, 9, 1000}) {
    std::vector<std::atomic<int>> visits(n);
    pool.ParallelFor(n, 1, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) visits[i].fetch_add(1);
    });
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(visits[i].load(), 1) << i << " of " << n;
  }
}

// A stall: the caller waited at the team's end longer than 200 us and
// than its own share. While held (after one), bodies run on the caller
// alone; HoldOmpTeam(0) ends the hold.
TEST(OmpTeamTest, AStalledTeamIsHeldBack) {
  EXPECT_FALSE(OmpTeamStalled(10'000, 150'000));
  EXPECT_TRUE(OmpTeamStalled(10'000, 250'000));
  EXPECT_FALSE(OmpTeamStalled(1'000'000, 900'000));
  EXPECT_TRUE(OmpTeamStalled(1'000'000, 1'100'000));
  HoldOmpTeam(int64_t{3600} * 1'000'000'000);
  EXPECT_TRUE(OmpTeamHeld());
  std::atomic<int> runs{0};
  const std::thread::id caller = std::this_thread::get_id();
  RunOnOmpTeam(2, [&] {
    runs.fetch_add(1);
    EXPECT_EQ(std::this_thread::get_id(), caller);
  });
  EXPECT_EQ(runs.load(), 1);
  HoldOmpTeam(0);
  EXPECT_FALSE(OmpTeamHeld());
}

TEST(OmpTeamTest, ShareSizesTheCallingThreadsTeam) {
  {
    OmpTeamShare share(nullptr);
    EXPECT_EQ(omp_get_max_threads(), ThreadPool::DefaultNumThreads());
  }
  ExecutableRunOptions one;
  one.set_intra_op_threads(1);
  OmpTeamShare share(&one);
  EXPECT_EQ(omp_get_max_threads(), 1);
}

TEST(OmpTeamTest, TeamSizeFollowsTheWork) {
  EXPECT_EQ(TeamSizeForWork(0), 1);
  EXPECT_EQ(TeamSizeForWork(2 * kMinWorkPerOmpThread - 1), 1);
  EXPECT_EQ(TeamSizeForWork(2 * kMinWorkPerOmpThread), 2);
  EXPECT_EQ(TeamSizeForWork(5 * kMinWorkPerOmpThread + 1), 5);
  EXPECT_EQ(TeamSizeForWork(int64_t{1} << 62), 1 << 30);
  // A spinning team: two threads from 2 x kMinWorkPerSpinningOmpThread.
  EXPECT_EQ(TeamSizeForWork(0, true), 1);
  EXPECT_EQ(TeamSizeForWork(2 * kMinWorkPerSpinningOmpThread - 1, true), 1);
  EXPECT_EQ(TeamSizeForWork(2 * kMinWorkPerSpinningOmpThread, true), 2);
  EXPECT_EQ(TeamSizeForWork(kMinWorkPerOmpThread, true), 4);
}

TEST(OmpTeamTest, Bf16DotsCountHalfTheirMultiplyAdds) {
  EXPECT_EQ(DotWorkInF32MultiplyAdds(1000, F32, F32), 1000);
  EXPECT_EQ(DotWorkInF32MultiplyAdds(1000, BF16, BF16), 500);
  // Mixed operands run as f32.
  EXPECT_EQ(DotWorkInF32MultiplyAdds(1000, BF16, F32), 1000);
  EXPECT_EQ(DotWorkInF32MultiplyAdds(1000, F16, F16), 1000);
  // A bf16 dot needs twice an f32 one's multiply-adds for a team of two.
  const int64_t two = 2 * kMinWorkPerOmpThread;
  EXPECT_EQ(TeamSizeForWork(DotWorkInF32MultiplyAdds(two, F32, F32)), 2);
  EXPECT_EQ(TeamSizeForWork(DotWorkInF32MultiplyAdds(two, BF16, BF16)), 1);
  EXPECT_EQ(TeamSizeForWork(DotWorkInF32MultiplyAdds(2 * two, BF16, BF16)), 2);
  // A GRU step's bf16 [32, 384] x [384, 512] and while_fixed_point's f32
  // [64, 256] x [256, 256] (every step of a loop) run on one thread.
  EXPECT_EQ(TeamSizeForWork(DotWorkInF32MultiplyAdds(int64_t{32} * 384 * 512, BF16, BF16)), 1);
  EXPECT_EQ(TeamSizeForWork(DotWorkInF32MultiplyAdds(int64_t{64} * 256 * 256, F32, F32)), 1);
}

TEST(OmpTeamTest, ShareReportsItsTeam) {
  OmpTeamShare share(nullptr, 1);
  EXPECT_EQ(share.threads(), 1);
  EXPECT_EQ(omp_get_max_threads(), 1);
}

TEST(OmpTeamTest, ShareCappedByTheWork) {
  {
    // A small call runs on the calling thread alone.
    OmpTeamShare share(nullptr, TeamSizeForWork(kMinWorkPerOmpThread));
    EXPECT_EQ(omp_get_max_threads(), 1);
  }
  // A large one gets the whole pool.
  OmpTeamShare share(nullptr, TeamSizeForWork(int64_t{1} << 40));
  EXPECT_EQ(omp_get_max_threads(), ThreadPool::DefaultNumThreads());
}

}  // namespace
}  // namespace axle::cpu
